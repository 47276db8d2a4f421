"""Builds round4_styles_dev.json: a DEVELOPMENT (tuning) set for memory retrieval in the
styles of the round-four held-out set, written blind (see README.md beside this file).

Every case is hand-written below: the question, its target memory (two in `two_memories`),
one deliberately close same-save decoy, and topic tags. The rest of the 6-8 same-save
memories are drawn from the hand-written pools of the case's game and language; a pool
item that shares a tag with the case, or is dated after `currentDay`, is never drawn, and
in small talk no memory shares a content word with the question. Each case has one leak
bait from save "s2": in retrieval every third one is the target word for word, the others
the target on another day; in small talk a pool item. Draws are seeded by the case id, so
the build is deterministic.

usage: python3 eval/dev/build_round4_styles_dev.py
"""

# The memory texts and questions are hand-written sentences, kept whole on one line each.
# ruff: noqa: E501

from __future__ import annotations

import json
import os
import random
import re
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "round4_styles_dev.json")

GAMES = {"sv": "stardew-valley", "dst": "dont-starve-together", "oni": "oxygen-not-included"}

# The no-shared-word heuristic of validate_dev.py, used here for small talk against every
# memory of the case (the validator checks retrieval questions against their targets).
_EN_STOP_WORDS = """a an the i i'd i'm me my mine we our you your he she it its they them their this that
those these there here is are was were be been am do did does done have has had of to in on at by for
from with and or but not no yes so if then than what what's what'd where where'd when who whom which why
how ever yet again one ok alright any some get got up out off over about into did'nt lol thing stuff"""
EN_STOP = set(_EN_STOP_WORDS.split())
ZH_STOP = {"玩家", "什么", "时候", "一个", "这个", "那个", "我们", "已经", "没有", "是不", "不是"}


def cjk_bigrams(s: str) -> set[str]:
    out = set()
    for run in re.findall(r"[\u4e00-\u9fff]+", s):
        for i in range(len(run) - 1):
            out.add(run[i : i + 2])
    return out - ZH_STOP


def stem(w: str) -> str:
    for suf in ("ing", "ed", "es", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            return w[: -len(suf)]
    return w


def en_tokens(s: str) -> set[str]:
    return {
        stem(w)
        for w in re.findall(r"[a-z0-9']+", s.lower())
        if w not in EN_STOP and not w.isdigit() and len(w) > 1
    }


def shares_word(a: str, b: str) -> bool:
    return bool(cjk_bigrams(a) & cjk_bigrams(b) or en_tokens(a) & en_tokens(b))


# ---------------------------------------------------------------- dates

SEASONS_ZH = ["春季", "夏季", "秋季", "冬季"]
SEASONS_EN = ["Spring", "Summer", "Fall", "Winter"]
YEARS_ZH = {2: "第二年", 3: "第三年"}

DATE_PATTERNS = {
    ("sv", "zh"): re.compile(r"^(?:第(二|三)年)?(春季|夏季|秋季|冬季)第(\d+)天，"),
    ("sv", "en"): re.compile(r"^(?:Year (\d) )?(Spring|Summer|Fall|Winter) (\d+): "),
    ("dst", "zh"): re.compile(r"^第(\d+)天，"),
    ("dst", "en"): re.compile(r"^Day (\d+): "),
    ("oni", "zh"): re.compile(r"^第(\d+)周期，"),
    ("oni", "en"): re.compile(r"^Cycle (\d+): "),
}


def text_lang(text: str) -> str:
    return "zh" if re.search(r"[\u4e00-\u9fff]", text) else "en"


def parse_date(game: str, text: str) -> tuple[int, str]:
    """The memory's day and the text after its date prefix."""
    lang = text_lang(text)
    m = DATE_PATTERNS[(game, lang)].match(text)
    if not m:
        raise ValueError("no date prefix: " + text)
    rest = text[m.end() :]
    if game != "sv":
        return int(m.group(1)), rest
    if lang == "zh":
        year = {"二": 2, "三": 3}.get(m.group(1) or "", 1)
        season = SEASONS_ZH.index(m.group(2))
    else:
        year = int(m.group(1) or 1)
        season = SEASONS_EN.index(m.group(2))
    return (year - 1) * 112 + season * 28 + int(m.group(3)), rest


def date_prefix(game: str, lang: str, day: int) -> str:
    if game == "dst":
        return f"第{day}天，" if lang == "zh" else f"Day {day}: "
    if game == "oni":
        return f"第{day}周期，" if lang == "zh" else f"Cycle {day}: "
    year, rem = divmod(day - 1, 112)
    season, dom = divmod(rem, 28)
    if lang == "zh":
        return f"{YEARS_ZH.get(year + 1, '')}{SEASONS_ZH[season]}第{dom + 1}天，"
    lead = f"Year {year + 1} " if year else ""
    return f"{lead}{SEASONS_EN[season]} {dom + 1}: "


def redated(game: str, text: str, shift: int) -> str:
    """The same memory on another day (within the season for Stardew)."""
    day, rest = parse_date(game, text)
    if game == "sv":
        dom = (day - 1) % 28
        new = day + shift if dom + shift < 28 else day - shift
    else:
        new = day + shift if day - shift < 1 else day - shift
    return date_prefix(game, text_lang(text), new) + rest


# ---------------------------------------------------------------- cases

CASES: list[dict[str, Any]] = []


def case(
    cid: str,
    part: str,
    style: str,
    lang: str,
    question: str,
    targets: list[str],
    decoy: str | None,
    tags: str = "",
    cur: int | None = None,
) -> None:
    CASES.append(
        {
            "id": "r4d-" + cid,
            "game": cid.split("-")[0],
            "part": part,
            "style": style,
            "lang": lang,
            "question": question,
            "targets": targets,
            "decoy": decoy,
            "tags": set(tags.split()),
            "cur": cur,
        }
    )


def talk(cid: str, part: str, lang: str, question: str, tags: str = "") -> None:
    case(cid, part, "smalltalk", lang, question, [], None, tags)


P, H, W = "paraphrase", "harder_words", "players_words"

# ---------------------------------------------------------------- pools (filler memories)

POOLS: dict[tuple[str, str], list[tuple[str, str]]] = {
    ("sv", "zh"): [
        ("春季第1天，玩家搬进了爷爷留下的农场，清理了屋前的杂草。", "farm"),
        ("春季第3天，玩家在皮埃尔的杂货店买了十五包防风草种子。", "crops shop"),
        ("春季第4天，玩家在海滩捡了几个贝壳和一只珊瑚。", "beach forage"),
        ("春季第6天，玩家在镇上挨家挨户打了招呼。", "social"),
        ("春季第8天，玩家把第一批防风草收了，卖了三百多金。", "crops"),
        ("春季第10天，玩家在农场东边砍了一片树。", "wood farm"),
        ("春季第12天，玩家去矿井下了前五层。", "mines"),
        ("春季第16天，玩家在镇上的公告板接了一个送鱼的委托。", "quest fish"),
        ("春季第19天，玩家去山上的湖边捡了一堆韭葱。", "forage mountain"),
        ("春季第26天，玩家修好了屋后的旧围栏。", "farm"),
        ("夏季第7天，玩家做了一个蜂房，放在农场边上。", "artisan"),
        ("夏季第16天，玩家在酒吧打了一晚上台球。", "saloon"),
        ("夏季第24天，玩家在木匠铺买了三十块木材。", "robin building"),
        ("秋季第9天，玩家摘了一整天的黑莓。", "forage"),
        ("秋季第13天，玩家在博物馆捐了一把生锈的剑。", "museum"),
        ("秋季第21天，玩家在矿井第60层挖到了一些金矿石。", "mines"),
        ("冬季第5天，玩家在雪地里挖到了几颗雪山药。", "forage winter"),
        ("冬季第8天，玩家在冰雪节的钓鱼比赛拿了第二名。", "festival fish"),
        ("冬季第11天，玩家在家里待了一天，做了几道菜。", "cooking house"),
        ("冬季第20天，玩家把农场的栅栏全换成了石头栅栏。", "farm"),
    ],
    ("sv", "en"): [
        ("Spring 2: Cleared the weeds and rocks in front of the farmhouse.", "farm"),
        ("Spring 4: Picked up a few shells and a coral on the beach.", "beach forage"),
        ("Spring 5: Bought fifteen parsnip seeds at Pierre's.", "crops shop"),
        ("Spring 7: Took the quest on the town board to deliver a sardine.", "quest fish"),
        ("Spring 11: Found a rusty spoon in the trash by the saloon.", "saloon"),
        ("Spring 13: Went down the first five floors of the mines.", "mines"),
        ("Spring 16: Said hello to everyone in town.", "social"),
        ("Spring 17: Picked up daffodils and leeks around town.", "forage"),
        ("Spring 23: Repaired the old fence behind the house.", "farm"),
        ("Summer 4: Built a bee house next to the flowers.", "artisan"),
        ("Summer 9: Spent the evening playing pool at the saloon.", "saloon"),
        ("Summer 23: Donated a dwarf scroll to the museum.", "museum"),
        ("Fall 3: Harvested the first batch of pumpkins.", "crops"),
        ("Fall 12: Mined gold ore on floor 85 of the mines.", "mines"),
        ("Fall 23: Cooked a pumpkin soup in the farmhouse kitchen.", "cooking house"),
        ("Winter 4: Dug up some snow yams near the bus stop.", "forage winter"),
        ("Winter 9: Fixed the fence around the animal pasture.", "animals farm"),
        ("Winter 19: Spent a snowy afternoon reading in the library.", "museum winter"),
    ],
    ("dst", "zh"): [
        ("第1天，玩家在出生点附近采了胡萝卜和浆果。", "food berry"),
        ("第2天，玩家做了斧头和镐子。", "tools"),
        ("第3天，玩家在草原上抓了两只兔子。", "rabbit animals"),
        ("第4天，玩家在草原上割了一大捆干草。", "grass"),
        ("第5天，玩家在猪人村旁边建了营地。", "base pig"),
        ("第6天，玩家在路边捡了一堆树枝。", "grass"),
        ("第8天，玩家在洞穴入口往下看了一眼，没敢下去。", "cave"),
        ("第7天，玩家用树枝和干草做了一个背包。", "tools"),
        ("第12天，玩家在池塘边钓了两条鱼。", "fish pond"),
        ("第14天，玩家在大石头旁边捡了一堆燧石。", "rocks"),
        ("第18天，玩家在营地周围种了一圈松果。", "base wood"),
        ("第23天，玩家用牛毛做了一顶冬帽。", "winter beefalo clothes"),
        ("第26天，玩家在营地周围砌了一圈石墙。", "base wall"),
        ("第38天，玩家把种子种进了改良农田。", "farm"),
        ("第44天，玩家采了一把花瓣，做了一个花环。", "sanity flower"),
        ("第51天，玩家用蜂蜜做了一份蜜汁火腿。", "food bee cooking"),
        ("第57天，玩家做了一把伞挡太阳。", "summer rain"),
        ("第64天，玩家在营地搭了一个吸热火坑。", "summer fire"),
    ],
    ("dst", "en"): [
        ("Day 1: Picked carrots and berries near the spawn point.", "food berry"),
        ("Day 2: Crafted an axe and a pickaxe.", "tools"),
        ("Day 3: Cut a stack of grass tufts on the savanna.", "grass"),
        ("Day 4: Set up camp next to the pig village.", "base pig"),
        ("Day 5: Gathered twigs along the road.", "grass"),
        ("Day 8: Peeked into a cave entrance but did not go down.", "cave"),
        ("Day 6: Made a backpack from twigs and grass.", "tools"),
        ("Day 11: Fished two freshwater fish at the pond.", "fish pond"),
        ("Day 13: Collected flint and rocks by the boulders.", "rocks"),
        ("Day 16: Planted pine cones around the base.", "base wood"),
        ("Day 22: Made a winter hat from beefalo wool.", "winter beefalo clothes"),
        ("Day 28: Put stone walls around the camp.", "base wall"),
        ("Day 39: Built two improved farm plots.", "farm"),
        ("Day 45: Made a garland from flower petals.", "sanity flower"),
        ("Day 52: Cooked honey ham in the crock pot.", "food bee cooking"),
        ("Day 58: Made an umbrella for the heat.", "summer rain"),
        ("Day 63: Built an endothermic fire pit.", "summer fire"),
    ],
    ("oni", "zh"): [
        ("第1周期，复制人挖开了出生点周围的砂岩。", "dig"),
        ("第2周期，玩家建了第一个户外厕所。", "toilet"),
        ("第3周期，玩家建了研究站，开始研究基础技术。", "research"),
        ("第4周期，玩家给复制人排了工作优先级。", "jobs"),
        ("第5周期，玩家给每个复制人放了一张简易床。", "bed"),
        ("第6周期，复制人挖出了一条往下的竖井。", "dig"),
        ("第9周期，玩家铺了一排梯子通往上层。", "building"),
        ("第10周期，玩家做了一个储物箱放在中间。", "storage"),
        ("第12周期，玩家在走廊里摆了一盆花。", "decor"),
        ("第14周期，玩家挖了一个水池存清水。", "water"),
        ("第18周期，玩家研究完了农业技术。", "research farm"),
        ("第20周期，复制人在左边挖到了一片铜矿。", "dig"),
        ("第24周期，玩家在右边建了一个储物区。", "storage"),
        ("第32周期，玩家在宿舍门口挂了一幅画。", "decor bed"),
        ("第46周期，玩家修了一条消防滑杆通往底层。", "building"),
        ("第53周期，玩家铺了一条高负荷电线。", "power"),
        ("第68周期，玩家建了一个冰箱存放食物。", "food cold"),
        ("第102周期，玩家铺了一层网格砖做农场。", "farm"),
        ("第135周期，玩家用金属精炼器炼了一批钢。", "metal"),
    ],
    ("oni", "en"): [
        ("Cycle 1: Dug out the sandstone around the printing pod.", "dig"),
        ("Cycle 2: Built the first outhouse.", "toilet"),
        ("Cycle 3: Built a research station.", "research"),
        ("Cycle 4: Set the job priorities for every dupe.", "jobs"),
        ("Cycle 5: Gave every dupe a cot.", "bed"),
        ("Cycle 6: Dug a shaft straight down.", "dig"),
        ("Cycle 9: Built ladders up to the top level.", "building"),
        ("Cycle 8: Put a storage bin in the middle of the base.", "storage"),
        ("Cycle 12: Placed a flower pot in the hallway.", "decor"),
        ("Cycle 13: Dug a reservoir pit for clean water.", "water"),
        ("Cycle 17: Finished researching agriculture.", "research farm"),
        ("Cycle 21: Found a patch of copper ore to the left.", "dig"),
        ("Cycle 24: Built a storage area to the right.", "storage"),
        ("Cycle 31: Hung a painting next to the barracks.", "decor bed"),
        ("Cycle 43: Added a fire pole down to the lower levels.", "building"),
        ("Cycle 54: Laid heavi-watt wire for the generators.", "power"),
        ("Cycle 67: Built a refrigerator for the mush bars.", "food cold"),
        ("Cycle 101: Built a mesh tile farm floor.", "farm"),
        ("Cycle 134: Refined a batch of steel.", "metal"),
    ],
}

# ---------------------------------------------------------------- Stardew Valley

# paraphrase: describe
case(
    "sv-p01",
    P,
    "describe",
    "zh",
    "挡住树林里那条小路的粗圆木，我是哪天弄开的？",
    ["春季第20天，玩家用钢斧劈开了森林西边入口的大木头，进了秘密森林，砍了几个大树桩拿到硬木。"],
    "春季第25天，玩家在煤矿森林的河边砍了一个大树桩，只拿到了两块硬木。",
    "forage mountain",
)
case(
    "sv-p02",
    P,
    "describe",
    "zh",
    "那次让一堆绿色果冻一样蹦来蹦去的小怪包了饺子，差点挂了，是在哪？",
    ["秋季第2天，玩家在矿井第30层被一群史莱姆围住，血掉到只剩一点，吃了三个煎蛋才逃出来。"],
    "秋季第9天，玩家在矿井第45层被一群蝙蝠追着咬，跑回了电梯。",
    "mines",
)
case(
    "sv-p03",
    P,
    "describe",
    "zh",
    "我头一回去那片满地黄沙、热得要命的地方，是干嘛去的？",
    ["夏季第15天，玩家第一次坐巴士去了卡利科沙漠，在绿洲店买了杨桃种子。"],
    "夏季第22天，玩家坐巴士去沙漠找了桑迪，送了她一束水仙花。",
    "crops shop",
)
case(
    "sv-p04",
    P,
    "describe",
    "en",
    "What did I get from that shady creature who lives under the town in the tunnels?",
    ["Fall 10: Bought a Stardrop from Krobus in the sewers for 20,000g."],
    "Winter 1: Gave Krobus a void egg for his birthday.",
    "shop",
)
case(
    "sv-p05",
    P,
    "describe",
    "en",
    "What did those tiny colorful forest sprites repair after I filled the scrolls in the handiwork corner?",
    [
        "Spring 27: Finished the bundles in the Community Center's crafts room; the Junimos fixed the bridge to the quarry."
    ],
    "Summer 20: Finished the pantry bundles in the Community Center and the greenhouse was restored.",
    "",
)
# paraphrase: other-name
case(
    "sv-p06",
    P,
    "other-name",
    "zh",
    "我把村长丢的那件贴身衣物还回去，是哪天的事？",
    ["春季第13天，玩家在玛妮家找到刘易斯的紫色短裤，交还给了他，拿到了奖励。"],
    "春季第21天，玩家完成了刘易斯在公告板上要的十个防风草的委托。",
    "quest crops",
)
case(
    "sv-p07",
    P,
    "other-name",
    "zh",
    "海边那个老渔夫给我的最早那根竿子，是哪天拿到手的？",
    ["春季第2天，威利送了玩家一根竹制鱼竿，还教了钓鱼。"],
    "夏季第2天，玩家在威利的店里花了1800金买了玻璃纤维鱼竿。",
    "fish quest",
)
case(
    "sv-p08",
    P,
    "other-name",
    "zh",
    "我把农具拿给打铁那位加强，掏了多少钱？",
    ["春季第14天，玩家把锄头交给克林特升级成铜锄头，花了2000金。"],
    "春季第23天，玩家在克林特那里砸开了十个晶球。",
    "mines",
)
case(
    "sv-p09",
    P,
    "other-name",
    "en",
    "What did the woman who drives the bus tell me at the bar?",
    [
        "Summer 14: Pam had a few drinks at the saloon and talked about Penny growing up in the trailer."
    ],
    "Summer 18: Gave Pam a beer at the saloon; she loved it.",
    "saloon",
)
# paraphrase: synonym
case(
    "sv-p10",
    P,
    "synonym",
    "zh",
    "赶集那天我摆摊比赛夺冠了没？",
    ["秋季第16天，玩家在星露谷展览会上的展台拿了第一名，赢了一千星星币。"],
    "秋季第27天，玩家参加了万灵节，穿过迷宫拿到了金南瓜。",
    "festival",
)
case(
    "sv-p11",
    P,
    "synonym",
    "zh",
    "农场那个大棚重新能用了是哪天来着？",
    ["夏季第28天，玩家在社区中心交齐了茶水间的收集包，温室修复了。"],
    "秋季第5天，玩家在社区中心交齐了锅炉房的收集包，矿车修好了。",
    "",
)
case(
    "sv-p12",
    P,
    "synonym",
    "en",
    "When did I cut down the large timber beside my house?",
    ["Spring 10: Chopped the big oak tree next to the farmhouse for wood."],
    "Spring 14: Planted a maple seed next to the farmhouse.",
    "farm",
)
# paraphrase: cause
case(
    "sv-p13",
    P,
    "cause",
    "zh",
    "为啥我田里那些果子突然一夜之间全蔫了？",
    ["秋季第1天，换季了，玩家地里没收的蓝莓全都枯死了。"],
    "夏季第10天，乌鸦吃掉了玩家地里的几株甜瓜，因为没有插稻草人。",
    "crops",
)
case(
    "sv-p14",
    P,
    "cause",
    "zh",
    "那个金头发爱拍照的姑娘为啥突然对我冷冰冰的？",
    ["春季第20天，玩家送了海莉一块黏土，她很讨厌，好感掉了。"],
    "春季第22天，玩家送了艾米丽一块紫水晶，她很喜欢。",
    "",
)
case(
    "sv-p15",
    P,
    "cause",
    "en",
    "Why did I end up at the doctor's losing some of my things?",
    [
        "Summer 12: Fainted on mine floor 72 when a skeleton drained my health; woke up at Harvey's clinic with items and gold missing."
    ],
    "Summer 15: Stayed out past 2 AM in town and collapsed; woke up at home with a letter saying 1,000g was gone.",
    "mines",
)
# harder words: complaint_story
case(
    "sv-h01",
    H,
    "complaint_story",
    "zh",
    "我记得好像有一次好不容易种大的那棵树，结果天上劈下来一下，长出来的全是黑乎乎的玩意儿，气死",
    ["夏季第13天，雷雨天一道闪电劈中了玩家的桃树，几天里结的果子都变成了煤炭。"],
    "夏季第20天，雷雨天玩家装的避雷针接住了一道闪电，得到一块电池。",
    "crops",
)
case(
    "sv-h02",
    H,
    "complaint_story",
    "zh",
    "诶我记得有次冬天那个晚上的集市，我兴冲冲下海去钓，结果就弄上来一个软趴趴的玩意儿，白等那么久，郁闷",
    ["冬季第16天，玩家在夜市排了半天队坐潜水艇，只钓到了一条海参。"],
    "冬季第17天，玩家在夜市的船上买了一幅画挂在客厅。",
    "fish festival",
)
case(
    "sv-h03",
    H,
    "complaint_story",
    "en",
    "ok so I remember those black birds ruined my crops in the first weeks and I was so mad, what did I end up putting up?",
    ["Spring 9: Crows ate six cauliflower; placed three scarecrows across the field afterwards."],
    "Spring 20: A crow pecked two parsnips in the far corner of the field.",
    "crops",
    cur=22,
)
# harder words: misremembered (one detail wrong, the event right)
case(
    "sv-h04",
    H,
    "misremembered",
    "zh",
    "那回春天满镇子找蛋，我输给了山姆那小子，我一共翻出来几颗？",
    ["春季第13天，复活节上阿比盖尔拿了寻蛋比赛第一，玩家只捡到五个。"],
    "春季第13天，复活节上玩家在皮埃尔的摊位买了草莓种子。",
    "festival shop",
)
case(
    "sv-h05",
    H,
    "misremembered",
    "zh",
    "夏天半夜那个弯弯绕绕的鬼屋，我钻到头拿了个啥奖？",
    ["秋季第27天，万灵节的夜里玩家穿过了迷宫，拿到了金南瓜。"],
    "夏季第28天，月光水母节的晚上玩家和镇上的人一起在海边看水母。",
    "festival",
)
case(
    "sv-h06",
    H,
    "misremembered",
    "en",
    "What did I hand Haley when she turned a year older, back when it was snowing?",
    ["Winter 23: Gave Leah a goat cheese for her birthday and she loved it."],
    "Spring 14: Gave Haley a sunflower on her birthday.",
    "",
)
# harder words: via_consequence
case(
    "sv-h07",
    H,
    "via_consequence",
    "zh",
    "我那个天天能捞出鱼籽的水池子是啥时候弄的？",
    ["春季第18天，玩家在农场建了一个鱼塘，放进去一条大嘴鲈鱼。"],
    "春季第25天，玩家在农场建了一个鸡舍，买了两只鸡。",
    "fish building robin",
)
case(
    "sv-h08",
    H,
    "via_consequence",
    "zh",
    "我从哪天开始能在屋里自己炒菜的？",
    ["秋季第10天，罗宾把玩家的房子扩建完了，多了一个厨房。"],
    "冬季第3天，罗宾帮玩家在农场东边盖了一个筒仓。",
    "cooking house building robin",
)
case(
    "sv-h09",
    H,
    "via_consequence",
    "zh",
    "后来那些小精灵写的星星符号我突然都认得了，那之前发生了啥？",
    ["春季第7天，玩家在巫师塔里喝了巫师给的药水，能看懂祝尼魔的文字了。"],
    "春季第9天，玩家第二次去巫师塔，巫师说想要一颗虚空精华。",
    "",
)
# harder words: voice_typo
case(
    "sv-h10",
    H,
    "voice_typo",
    "zh",
    "嗯那个啥就是说我在海边那个木桥上拉上来的那个会鼓成球的和吞鱼是哪天来着",
    ["夏季第17天，玩家用铱金鱼竿在东边码头钓到了一条河豚。"],
    "夏季第22天，玩家在东边码头钓到了一条金枪鱼。",
    "fish beach",
)
case(
    "sv-h11",
    H,
    "voice_typo",
    "en",
    "um so like uh when did I catch that wall-eye thing you know the wet weather one",
    ["Fall 19: Caught a Walleye in the river at night during rain."],
    "Fall 25: Caught a Catfish in the river during rain.",
    "fish quest",
)
# harder words: very_short
case(
    "sv-h12",
    H,
    "very_short",
    "zh",
    "小矮子店？",
    ["夏季第9天，玩家在矿井入口附近发现了矮人的小铺，买了一颗炸弹。"],
    "夏季第12天，玩家在矿井第20层遇到了一只岩石蟹。",
    "mines shop",
)
case(
    "sv-h13",
    H,
    "very_short",
    "en",
    "choo choo?",
    [
        "Summer 3: Watched a train pass by the railroad and picked up coal and an omni geode from the tracks."
    ],
    "Summer 6: Soaked in the spa near the railroad to get my energy back.",
    "",
)
# harder words: en_zh_names
case(
    "sv-h14",
    H,
    "en_zh_names",
    "zh",
    "What did I give 哈维 when he threw a party?",
    ["Winter 14: Gave Harvey a coffee for his birthday, he loved it."],
    "Winter 18: Gave Shane a beer at the saloon.",
    "saloon",
)
case(
    "sv-h15",
    H,
    "en_zh_names",
    "zh",
    "did I land anything in 煤矿森林 when it was pouring?",
    ["Spring 20: Caught a Catfish in the river at Cindersap Forest while it rained."],
    "Spring 22: Caught a Sunfish in the town river.",
    "fish quest",
)
# harder words: numerals
case(
    "sv-h16",
    H,
    "numerals",
    "zh",
    "我开春那会儿一下子撒了四十八颗啥菜籽来着？",
    ["春季第15天，玩家一口气种了48颗防风草种子。"],
    "春季第17天，玩家种了20颗土豆。",
    "crops shop",
)
case(
    "sv-h17",
    H,
    "numerals",
    "zh",
    "八十层那回挖到几块宝石来着，是不是三块？",
    ["冬季第10天，玩家在矿井第80层捡到了3颗钻石。"],
    "冬季第12天，玩家在矿井第90层挖到了一颗红宝石。",
    "mines",
)
case(
    "sv-h18",
    H,
    "numerals",
    "en",
    "When did I sell a hundred and fifty of those little blue berries?",
    ["Summer 20: Shipped 150 blueberries at once and earned 7,500g."],
    "Summer 24: Shipped 80 hops from the trellis rows.",
    "crops",
)
# harder words: two_memories
case(
    "sv-h19",
    H,
    "two_memories",
    "zh",
    "我都给在博物馆边上教小孩念书的那个红发姑娘塞过些啥？",
    [
        "夏季第2天，玩家送了潘妮一个甜瓜，她很开心。",
        "秋季第2天，玩家送了潘妮一颗祖母绿，她超喜欢。",
    ],
    "夏季第9天，玩家送了海莉一朵向日葵。",
    "museum",
)
case(
    "sv-h20",
    H,
    "two_memories",
    "en",
    "What did the carpenter construct for me on my land, both of them?",
    [
        "Spring 26: Robin built a coop on the farm for 4,000g.",
        "Summer 15: Robin finished a barn next to the pond for 6,000g.",
    ],
    "Summer 19: Bought 50 hardwood from Robin's shop.",
    "building robin farm animals",
)
# players' words
case(
    "sv-w01",
    W,
    "slang",
    "zh",
    "沙漠底下那个洞我被干碎了一回，爆了一地装备，哪天啊",
    ["秋季第25天，玩家在骷髅洞穴第25层被一群飞蛇围攻打倒了，掉了背包里好几样东西。"],
    "秋季第26天，玩家在骷髅洞穴里找到一个宝箱，开出了铱金锭。",
    "mines",
)
case(
    "sv-w02",
    W,
    "slang",
    "en",
    "when did my booze barrels make me stupid rich?",
    ["Summer 27: Sold 40 starfruit wine from the kegs for 90,000g."],
    "Summer 10: Built ten kegs in the shed.",
    "artisan",
)
case(
    "sv-w03",
    W,
    "nickname",
    "zh",
    "蓝毛姐那次收了我啥？",
    ["春季第27天，玩家送了艾米丽一块布料，她说要给玩家做件衣服。"],
    "春季第21天，玩家送了海莉一块布料，她不太喜欢。",
    "",
)
case(
    "sv-w04",
    W,
    "typo",
    "zh",
    "我家后面那个山东里最后要的是磨姑还是编蝠啊",
    ["春季第8天，德米特里厄斯来到农场，玩家在山洞里选了蘑菇。"],
    "夏季第3天，德米特里厄斯让玩家帮他采一些洞穴胡萝卜做研究。",
    "farm",
)
case(
    "sv-w05",
    W,
    "homophone",
    "zh",
    "来那思弄丢那个筐我帮他寻回去了没",
    ["秋季第18天，玩家把莱纳斯丢的黑莓篮子找到了，还给了他。"],
    "秋季第20天，玩家在莱纳斯的帐篷边送了他一朵黄水仙。",
    "forage quest",
)
# small talk
talk("sv-s01", P, "zh", "为啥每到周日晚上我就开始焦虑啊")
talk("sv-s02", P, "zh", "怎么一到放假就下雨，老天跟我有仇吧", "rain")
talk("sv-s03", P, "en", "why does my landlord never answer the phone, seriously")
talk("sv-s04", P, "zh", "今天食堂的红烧肉也太咸了吧", "cooking")
talk("sv-s05", W, "zh", "我咋老是排到我就卖完了，服了")
talk("sv-s06", W, "zh", "你平时都喜欢干嘛呀小汤圆")
talk("sv-s07", W, "en", "ugh why is traffic always this bad on fridays")
talk("sv-s08", H, "zh", "哎这谁扛得住啊，又要加班到十点")
talk("sv-s09", H, "zh", "我家猫今天把我新买的杯子推下桌了", "animals")
talk("sv-s10", H, "en", "what kind of music do you like?")


# ---------------------------------------------------------------- Don't Starve Together

# paraphrase: describe
case(
    "dst-p01",
    P,
    "describe",
    "zh",
    "那个一直跟在我屁股后头、肚子里能塞东西的毛绒箱子，是哪天捡来的？",
    ["第4天，玩家在草原上拾起了眼骨，切斯特从此跟着玩家跑。"],
    "第40天，玩家在洞穴里找到了星空，哈奇从此跟着玩家。",
    "",
)
case(
    "dst-p02",
    P,
    "describe",
    "zh",
    "开春那会儿家门口冒出来一坨长满小眼睛的怪草，掉落的东西全被它吃掉，是哪天？",
    ["第38天，基地旁边长出了一株食人花，把玩家放在地上的肉都吞了。"],
    "第41天，玩家在沼泽边砍了一株食人花，拿到了肉球。",
    "base",
)
case(
    "dst-p03",
    P,
    "describe",
    "zh",
    "冰天雪地里那个带着儿子和狗、拿吹箭射我的大胡子胖子，我是哪天干掉他的？",
    ["第25天，玩家在冰原上的海象营地杀了麦克塔斯克，拿到了海象牙和苏格兰帽。"],
    "第29天，玩家被海象营地里的冰狗群追着咬，逃回了基地。",
    "winter",
)
case(
    "dst-p04",
    P,
    "describe",
    "en",
    "when did I give those huge shaggy cow things a haircut at night?",
    ["Day 12: Shaved three beefalo while they slept and got beefalo wool."],
    "Day 17: A beefalo in heat chased me across the savanna.",
    "beefalo",
)
case(
    "dst-p05",
    P,
    "describe",
    "en",
    "when did that fat fuzzy fly that drops goo start tagging along?",
    ["Day 10: Found Glommer's flower at the statue during the full moon; Glommer follows me now."],
    "Day 14: Chester started following me after I picked up the Eye Bone.",
    "flower",
)
# paraphrase: other-name
case(
    "dst-p06",
    P,
    "other-name",
    "zh",
    "冬天那个大boss我是哪天放倒的，掉的那颗眼珠子后来做成啥了？",
    ["第31天，玩家用陷阱和长矛打死了巨鹿，拿到了它的眼球，做了一把眼球伞。"],
    "第45天，玩家在草原上打死了麋鹿鹅，拿到了羽毛。",
    "",
)
case(
    "dst-p07",
    P,
    "other-name",
    "zh",
    "那头秋天的大狗熊跑来我家乱砸是哪天？",
    ["第16天，熊獾闯进基地，把玩家种的浆果丛和蜂箱全拍烂了。"],
    "第19天，一群猎犬冲进基地，玩家躲在猪人村里让猪人帮忙打。",
    "base berry bee",
)
case(
    "dst-p08",
    P,
    "other-name",
    "zh",
    "我玩大力士那会儿，吃撑了秒掉了个啥厉害的虫子？",
    ["第8天，玩家换成了沃尔夫冈，吃饱了变得很壮，一拳打死了一只蜘蛛战士。"],
    "第11天，玩家用沃尔夫冈饿着肚子时被一只蜘蛛战士打得落荒而逃。",
    "",
)
case(
    "dst-p09",
    P,
    "other-name",
    "en",
    "when did the frosty blue wolves show up at my camp?",
    ["Day 26: Ice hounds attacked at dusk; killed them near the firepit."],
    "Day 14: A pack of black hounds attacked at noon.",
    "base",
)
# paraphrase: synonym
case(
    "dst-p10",
    P,
    "synonym",
    "zh",
    "开荒那会儿我伐了多少树木？",
    ["第2天，玩家砍了二十多棵树，攒了一堆木头准备造科学机器。"],
    "第3天，玩家挖了不少石头，做了一个火坑。",
    "wood tools",
    cur=9,
)
case(
    "dst-p11",
    P,
    "synonym",
    "zh",
    "那次脑子快不行了、眼前冒出黑影怪把我揍了，是哪天来着？",
    ["第27天，玩家理智太低，看到了暗影生物，被爬行恐惧打了好几下。"],
    "第32天，玩家戴上花环慢慢把理智回满了。",
    "sanity",
)
case(
    "dst-p12",
    P,
    "synonym",
    "en",
    "when did I die of cold coming home from the marsh after dark?",
    ["Day 33: Froze to death while running back from the swamp at night."],
    "Day 24: Nearly froze on the way back but made it to a campfire and warmed up.",
    "winter",
)
# paraphrase: cause
case(
    "dst-p13",
    P,
    "cause",
    "zh",
    "入夏那阵子我为啥老是在扣生命值？",
    ["第58天，大热天玩家没穿隔热的衣服也没靠近吸热火坑，体温过高一直掉血。"],
    "第25天，玩家体温太低冻得一直掉血，后来点了火坑。",
    "summer fire",
)
case(
    "dst-p14",
    P,
    "cause",
    "zh",
    "为啥我家门口那几棵果树后来都不长东西了？",
    ["第13天，玩家的浆果丛采了太多次，枯掉了，需要施肥才能再结。"],
    "第15天，玩家的浆果丛被一群火鸡偷吃光了。",
    "berry farm",
)
case(
    "dst-p15",
    P,
    "cause",
    "en",
    "how come I ended up with a baby bird pet?",
    ["Day 7: My tallbird egg hatched into a smallbird because I kept it warm beside the fire."],
    "Day 9: Stole a tallbird egg from a nest and cooked it.",
    "",
)
# harder words: complaint_story
case(
    "dst-h01",
    H,
    "complaint_story",
    "zh",
    "我记得好像带着那个会跟人的小箱子去掏虫窝，结果它挂了，装的宝贝撒了满地，心态炸了",
    ["第17天，切斯特在蜘蛛巢旁边被打死了，肚子里的东西全掉了一地。"],
    "第19天，玩家在蜘蛛巢旁边被两只蜘蛛战士追着打，逃回了营地。",
    "",
)
case(
    "dst-h02",
    H,
    "complaint_story",
    "zh",
    "我想起来就来气，就那次在湿地蹲着甩竿子，一堆呱呱叫的小东西扑上来把我打倒了，后来咋活过来的？",
    ["第45天，玩家在沼泽钓鱼时被一群青蛙围攻，死了一次，在触碰石复活了。"],
    "第46天，玩家在沼泽边被触手抽死了，用生命护符复活。",
    "fish pond",
)
case(
    "dst-h03",
    H,
    "complaint_story",
    "en",
    "ok so I remember I was clearing out the woods and then some angry giant wooden guy came after me, when was that?",
    [
        "Day 21: Cut down too many evergreens and a Treeguard woke up and chased me through the forest."
    ],
    "Day 27: Burned down a patch of forest by accident with a torch.",
    "wood fire",
)
# harder words: misremembered
case(
    "dst-h04",
    H,
    "misremembered",
    "zh",
    "我玩温蒂那会儿把猪村一把火烧了是哪天",
    ["第14天，玩家用薇洛的打火机点着了猪人村，猪人全都追着玩家打。"],
    "第16天，玩家用温蒂召唤阿比盖尔帮忙打了一群蜘蛛。",
    "pig base fire",
)
case(
    "dst-h05",
    H,
    "misremembered",
    "zh",
    "秋天那场暴风雨里打雷把我附近的林子点着了，还记得吗",
    ["第36天，开春第一场雷雨，闪电劈中了玩家身边的树，旁边的草全烧起来了。"],
    "第12天，玩家在草原上不小心用火把点着了一片树林。",
    "fire rain",
)
case(
    "dst-h06",
    H,
    "misremembered",
    "en",
    "that time Willow's ghost twin cleared out a bug nest for me?",
    ["Day 33: As Wendy, Abigail killed a whole spider den for me."],
    "Day 35: As Willow, burned down a spider den with her lighter.",
    "fire",
)
# harder words: via_consequence
case(
    "dst-h07",
    H,
    "via_consequence",
    "zh",
    "我哪天开始淋雨也不怕、身上一点都不潮了？",
    ["第39天，玩家用巨鹿的眼球做了一把眼球伞。"],
    "第42天，玩家用猪皮做了一顶橄榄球头盔。",
    "rain summer clothes",
)
case(
    "dst-h08",
    H,
    "via_consequence",
    "zh",
    "啥时候开始我的肉放好久都不臭的？",
    ["第18天，玩家造了一个冰箱，把肉都放进去了。"],
    "第20天，玩家造了一个烹饪锅，做了第一份肉丸。",
    "food cooking",
)
case(
    "dst-h09",
    H,
    "via_consequence",
    "zh",
    "入冬以后我是从哪天起没那么容易冻僵的？",
    ["第22天，玩家用兔毛做了一顶兔耳罩戴上了。"],
    "第24天，玩家在陷阱里抓了五只兔子烤着吃了。",
    "winter clothes rabbit",
)
# harder words: voice_typo
case(
    "dst-h10",
    H,
    "voice_typo",
    "zh",
    "额就是说我在地下那个老古董废墟里弄的那个机器台子哪天弄好的来着嗯嗯",
    ["第44天，玩家在洞穴里找到了远古遗迹，修好了一个远古伪科学站。"],
    "第48天，玩家在洞穴里被一群发条骑士追着跑。",
    "cave",
)
case(
    "dst-h11",
    H,
    "voice_typo",
    "en",
    "um so uh when did I put up the sigh ants thingy you know the first crafty box",
    ["Day 9: Built a Science Machine and an Alchemy Engine next to the base."],
    "Day 15: Built a Prestihatitator near the pond.",
    "base",
)
# harder words: very_short
case(
    "dst-h12",
    H,
    "very_short",
    "zh",
    "蜂窝？",
    ["第21天，玩家在草原上拆了两个野生蜂巢，被蜜蜂蛰了好几下，拿到了蜂蜜。"],
    "第26天，玩家在基地造了三个蜂箱。",
    "bee food",
)
case(
    "dst-h13",
    H,
    "very_short",
    "en",
    "toads from the sky?",
    ["Day 47: It rained frogs all afternoon and they beat me up near the pond."],
    "Day 49: Caught three fish in the pond with a fishing rod.",
    "pond fish rain",
)
# harder words: en_zh_names
case(
    "dst-h14",
    H,
    "en_zh_names",
    "zh",
    "when did I run into 巨鹿?",
    ["Day 30: Deerclops walked into the camp and smashed the crock pot."],
    "Day 34: Killed a MacTusk near the ice pond.",
    "base cooking",
)
case(
    "dst-h15",
    H,
    "en_zh_names",
    "zh",
    "did I ever make it to 月岛?",
    ["Day 60: Sailed a boat to the Lunar Island and picked stone fruit."],
    "Day 62: Built a second boat at the coast.",
    "",
)
# harder words: numerals
case(
    "dst-h16",
    H,
    "numerals",
    "zh",
    "我摆的那八个捉兔笼子是哪天摆的？",
    ["第10天，玩家做了8个陷阱放在兔子洞旁边。"],
    "第13天，玩家做了2个捕鸟陷阱。",
    "rabbit animals",
)
case(
    "dst-h17",
    H,
    "numerals",
    "zh",
    "我熬满七十天那天在干嘛？",
    ["第70天，玩家撑过了一整年，在基地开了个烧烤派对庆祝。"],
    "第20天，玩家撑过了第一个秋天。",
    "base",
)
case(
    "dst-h18",
    H,
    "numerals",
    "en",
    "when did I make a dozen of those meat-ball thingies?",
    ["Day 55: Cooked 12 meatballs in the crock pots before summer."],
    "Day 53: Cooked 4 pierogi.",
    "food cooking",
)
# harder words: two_memories
case(
    "dst-h19",
    H,
    "two_memories",
    "zh",
    "我挂掉的那两回都是咋回事？",
    [
        "第15天，玩家晚上没点火，被黑暗里的查理打死了。",
        "第42天，玩家在洞穴里被一群蝙蝠围攻死了。",
    ],
    "第30天，玩家差点冻死，最后靠火坑救了回来。",
    "cave",
)
case(
    "dst-h20",
    H,
    "two_memories",
    "en",
    "which bosses have I taken down so far?",
    [
        "Day 18: Killed Bearger with a team of pigs and got its thick fur.",
        "Day 31: Killed Deerclops in the ice field and took its eyeball.",
    ],
    "Day 40: Ran away from the Moose/Goose at its nest.",
    "pig",
)
# players' words
case(
    "dst-w01",
    W,
    "slang",
    "zh",
    "那次被一窝狗子直接送走了是哪天？",
    ["第27天，一大群猎犬半夜冲过来，玩家被咬死了。"],
    "第33天，猎犬来袭，玩家躲在牙齿陷阱后面全杀了。",
    "base",
)
case(
    "dst-w02",
    W,
    "slang",
    "en",
    "when did I cheese the webby mama using the porky guys?",
    ["Day 25: Killed the Spider Queen by kiting her around pig houses; got a Spiderhat."],
    "Day 23: A Spider Queen spawned from a tier-3 nest near the base.",
    "pig base",
)
case(
    "dst-w03",
    W,
    "nickname",
    "zh",
    "我玩小蛛蛛那会儿拉着一堆八爪跟班去揍谁了？",
    ["第11天，玩家用韦伯和蜘蛛交朋友，带了一群蜘蛛去打猪人。"],
    "第14天，玩家用韦伯被蜘蛛女王追着打。",
    "pig",
)
case(
    "dst-w04",
    W,
    "typo",
    "zh",
    "雪求发谢器是啥时候弄的",
    ["第35天，玩家在基地造了一个雪球发射器，防止起火。"],
    "第37天，玩家在基地旁边造了一个避雷针。",
    "fire base",
)
case(
    "dst-w05",
    W,
    "homophone",
    "zh",
    "哥螺母拉的那个粘粘的东西哪天捡的",
    ["第52天，玩家带着格罗姆去沼泽，格罗姆拉了好几坨黏液。"],
    "第50天，玩家在满月的时候找到了格罗姆的花。",
    "flower",
)
# small talk
talk("dst-s01", P, "zh", "怎么又降温了啊，冻得我手都僵了", "winter")
talk("dst-s02", P, "zh", "这谁顶得住啊，老板又甩锅给我")
talk("dst-s03", P, "en", "why does my neighbor always mow the lawn at 7am")
talk("dst-s04", W, "zh", "为什么我做的饭总是糊锅啊", "cooking food")
talk("dst-s05", W, "zh", "我怎么这么倒霉，出门就踩到水坑", "rain")
talk("dst-s06", W, "zh", "我家狗子今天学会握手了", "animals")
talk("dst-s07", W, "en", "ugh how is it raining again, I just washed my car", "rain")
talk("dst-s08", H, "zh", "你会不会觉得无聊啊")
talk("dst-s09", H, "zh", "周五了终于，快乐")
talk("dst-s10", H, "en", "are you a cat person or a dog person?", "animals")


# ---------------------------------------------------------------- Oxygen Not Included

# paraphrase: describe
case(
    "oni-p01",
    P,
    "describe",
    "zh",
    "那台把水分解成能呼吸的气和另一种轻飘飘的气的机器，我是哪一轮搭起来的？",
    ["第35周期，玩家在基地中间造了两台电解器，氧气问题解决了。"],
    "第41周期，玩家在右边又造了一台藻类制氧机。",
    "water",
)
case(
    "oni-p02",
    P,
    "describe",
    "zh",
    "那个飘来飘去、老是喷脏空气的粉色胖球，是哪轮跑来的？",
    ["第22周期，厕所旁边冒出了一只莫尔卜，一直在放污染氧。"],
    "第25周期，玩家把厕所换成了冲水马桶。",
    "toilet",
)
case(
    "oni-p03",
    P,
    "describe",
    "zh",
    "那个能把管道里的液体冰下去、自己却烫得要命的大铁盒子，我哪一轮装上的？",
    ["第120周期，玩家造了一台液冷机，接在冷却回路上给农场降温。"],
    "第125周期，玩家在工业区又造了一台液冷机，结果过热坏掉了。",
    "farm cold",
)
case(
    "oni-p04",
    P,
    "describe",
    "en",
    "when did I start penning up those little burrowing critters that chew stone?",
    ["Cycle 14: Wrangled six Hatches into a ranch room and fed them sandstone."],
    "Cycle 18: Built a stable for Pufts near the polluted oxygen.",
    "dig",
)
case(
    "oni-p05",
    P,
    "describe",
    "en",
    "when did I start making that gross paste food out of soil?",
    ["Cycle 6: Built a Microbe Musher and cooked the first Mush Bars from dirt and water."],
    "Cycle 12: Built an Electric Grill and made Liceloaf.",
    "food water",
)
# paraphrase: other-name
case(
    "oni-p06",
    P,
    "other-name",
    "zh",
    "我哪一轮挖到冰区的？",
    ["第48周期，复制人挖进了左上方的寒冷生态区，发现了冰霜麦。"],
    "第52周期，复制人挖进了右边的沙漠生态区。",
    "dig cold",
)
case(
    "oni-p07",
    P,
    "other-name",
    "zh",
    "吸碳机我哪轮装的？",
    ["第27周期，玩家在基地最底下放了两台碳素脱离器，二氧化碳少多了。"],
    "第33周期，玩家在农场区又放了一台碳素脱离器。",
    "",
)
case(
    "oni-p08",
    P,
    "other-name",
    "zh",
    "抽水泵是哪一轮装好的？",
    ["第19周期，玩家在水池上放了一台液体泵，把水送到了厕所和洗手池。"],
    "第24周期，玩家在污水池上也放了一台液体泵。",
    "water toilet",
)
case(
    "oni-p09",
    P,
    "other-name",
    "en",
    "when did I start farming the flying space cows up top?",
    ["Cycle 210: Ranched Gassy Moos on the surface and fed them gas grass."],
    "Cycle 207: Planted gas grass in a planter on the surface.",
    "farm",
)
# paraphrase: synonym
case(
    "oni-p10",
    P,
    "synonym",
    "zh",
    "那阵子小人们吃不上饭是哪几轮？",
    ["第11周期，食物不够了，好几个复制人饿着肚子干活。"],
    "第16周期，玩家种了一片米虱木，粮食够吃了。",
    "food farm",
)
case(
    "oni-p11",
    P,
    "synonym",
    "zh",
    "那回屋里闷得发烫，我田里的庄稼全蔫了，是哪一轮？",
    ["第36周期，基地温度太高，种的米虱木全都枯萎了。"],
    "第44周期，工业区温度太高，一台电解器过热坏了。",
    "farm food",
)
case(
    "oni-p12",
    P,
    "synonym",
    "en",
    "when did I switch to the proper toilets with plumbing?",
    ["Cycle 52: Swapped the outhouses for lavatories that flush."],
    "Cycle 55: Built a sink by the bathroom.",
    "toilet water",
)
# paraphrase: cause
case(
    "oni-p13",
    P,
    "cause",
    "zh",
    "那次所有机器一下子都歇菜了是因为啥？",
    ["第31周期，煤炭发电机没煤了，基地停电了一整天。"],
    "第34周期，电线过载烧断了，左边的几台设备停了。",
    "power",
)
case(
    "oni-p14",
    P,
    "cause",
    "zh",
    "那个小人为啥上吐下泻的？",
    ["第58周期，复制人阿什坎得了食物中毒，因为喝了没处理的污水。"],
    "第60周期，复制人巴博斯压力太大吐了一地。",
    "water toilet",
)
case(
    "oni-p15",
    P,
    "cause",
    "en",
    "why did my crops stall for a while?",
    ["Cycle 73: The mealwood stopped growing; the farm room had dropped below 10 degrees."],
    "Cycle 76: Harvested a full batch of bristle berries.",
    "farm food cold",
)
# harder words: complaint_story
case(
    "oni-h01",
    H,
    "complaint_story",
    "zh",
    "我记得好像有一次挖到一个大水池子，结果水哗一下全冲到卧室里，小人全泡水里了，烦死",
    ["第17周期，复制人挖穿了一堵墙，上面的污水全灌进了宿舍。"],
    "第20周期，复制人挖开了一个天然气口袋，天然气飘进了厕所。",
    "dig water bed toilet",
)
case(
    "oni-h02",
    H,
    "complaint_story",
    "zh",
    "啊想起来了那次没关门，滚烫的气全窜进来，菜地全完了，后来我是咋补救的来着",
    ["第88周期，岩浆区的热量漏进农场后，玩家在中间加了一层隔热砖。"],
    "第90周期，玩家给液冷机外面套了一层隔热砖。",
    "farm",
)
case(
    "oni-h03",
    H,
    "complaint_story",
    "en",
    "ok so I remember half the colony kept catching a bug from the bathroom, what did I do about that?",
    ["Cycle 45: Put a Wash Basin next to the outhouses so the germs stop spreading."],
    "Cycle 47: Built a shower next to the barracks.",
    "toilet water bed",
)
# harder words: misremembered
case(
    "oni-h04",
    H,
    "misremembered",
    "zh",
    "特纳那次心态崩了猛炫饭，吃掉多少？",
    ["第66周期，复制人露比压力爆表，开始狂吃东西，一口气吃光了三天的存粮。"],
    "第70周期，复制人特纳压力太大在走廊里哭了一地。",
    "food",
)
case(
    "oni-h05",
    H,
    "misremembered",
    "zh",
    "五十来轮那会儿我头一回把大炮仗送上去，去看了啥？",
    ["第95周期，玩家的第一枚蒸汽火箭上了天，去探测了最近的小行星。"],
    "第50周期，玩家在顶上造了一台望远镜。",
    "",
)
case(
    "oni-h06",
    H,
    "misremembered",
    "en",
    "when did Ellie have to crash on the ground since we ran out of beds?",
    ["Cycle 38: Jorge slept on the floor of the barracks because there weren't enough cots."],
    "Cycle 41: Ellie got a new cot in the barracks.",
    "bed decor",
)
# harder words: via_consequence
case(
    "oni-h07",
    H,
    "via_consequence",
    "zh",
    "从哪轮起那个脏水池的水慢慢变干净能喝了？",
    ["第26周期，玩家在基地下面装了一台净水器，污水变成了清水。"],
    "第28周期，玩家在农场旁边装了一台液体泵。",
    "water",
)
case(
    "oni-h08",
    H,
    "via_consequence",
    "zh",
    "后来小人们吃饭的时候心情都好起来了，是从哪一轮开始的？",
    ["第42周期，玩家在宿舍边上建了一个有餐桌和装饰的大餐厅。"],
    "第45周期，玩家在宿舍边上建了一个洗手间。",
    "food decor toilet",
)
case(
    "oni-h09",
    H,
    "via_consequence",
    "zh",
    "我那个睡觉的屋子从啥时候开始半夜也有点亮光了？",
    ["第21周期，玩家把光虫放进了卧室。"],
    "第23周期，玩家在卧室里铺了地毯。",
    "bed decor",
)
# harder words: voice_typo
case(
    "oni-h10",
    H,
    "voice_typo",
    "zh",
    "嗯那个那个就是说最早那台仁立法点机就让小人蹬圈圈的那个哪轮搞的来着对对对",
    ["第8周期，玩家造了第一台人力发电机，让复制人踩着跑。"],
    "第12周期，玩家又造了一台人力发电机放在厨房边。",
    "power",
)
case(
    "oni-h11",
    H,
    "voice_typo",
    "en",
    "uh so like when did I set up the uh hydro gin power things you know off the water splitter",
    ["Cycle 58: Hooked up two Hydrogen Generators to the electrolyzer line."],
    "Cycle 61: Built a natural gas generator near the geyser.",
    "power",
)
# harder words: very_short
case(
    "oni-h12",
    H,
    "very_short",
    "zh",
    "小鱼？",
    ["第37周期，玩家在水池里放了五条帕库，专门吃藻类。"],
    "第39周期，玩家给水池加了一台液体泵。",
    "water",
)
case(
    "oni-h13",
    H,
    "very_short",
    "en",
    "the slime lungs thing?",
    ["Cycle 20: Two dupes caught slimelung from the swamp and coughed a lot."],
    "Cycle 22: A dupe got food poisoning from the outhouse.",
    "toilet",
)
# harder words: en_zh_names
case(
    "oni-h14",
    H,
    "en_zh_names",
    "zh",
    "when did we first dig into the 油田?",
    ["Cycle 140: Broke into the oil biome and found a crude oil pool."],
    "Cycle 145: Built an oil refinery.",
    "dig",
)
case(
    "oni-h15",
    H,
    "en_zh_names",
    "zh",
    "what were the 哈奇兽 chewing on back then?",
    ["Cycle 16: The hatches munched sandstone and left a pile of coal for the generator."],
    "Cycle 18: The pufts drifted into the polluted oxygen and made slime.",
    "dig power",
)
# harder words: numerals
case(
    "oni-h16",
    H,
    "numerals",
    "zh",
    "一百轮的时候我手底下有几个小人？",
    ["第100周期，基地撑过了100个周期，复制人一共有12个。"],
    "第50周期，基地有8个复制人。",
    "",
)
case(
    "oni-h17",
    H,
    "numerals",
    "zh",
    "我那十个会自己报电量的蓄电块是哪轮装的？",
    ["第77周期，玩家在电池房里放了10块智能电池。"],
    "第80周期，玩家又加了4块普通电池。",
    "power",
)
case(
    "oni-h18",
    H,
    "numerals",
    "en",
    "when did I stash twenty tons of the wet stuff?",
    ["Cycle 44: Stored 20,000 kg of water in the reservoir."],
    "Cycle 46: Stored 5,000 kg of polluted water in a second reservoir.",
    "water storage",
)
# harder words: two_memories
case(
    "oni-h19",
    H,
    "two_memories",
    "zh",
    "那两回小人喘不上气险些挂掉，都是咋回事？",
    [
        "第9周期，复制人在底层挖矿，二氧化碳太多，差点窒息。",
        "第47周期，复制人游过水区时没气了，差点淹死。",
    ],
    "第30周期，复制人在卧室里被污染氧熏得很不舒服。",
    "dig water",
)
case(
    "oni-h20",
    H,
    "two_memories",
    "en",
    "what spouts from the ground have I put to use?",
    [
        "Cycle 80: Capped the cool steam vent and pumped its water to the farms.",
        "Cycle 110: Piped the natural gas geyser into three gas generators.",
    ],
    "Cycle 115: Found a hot water geyser but left it untouched.",
    "water power farm",
)
# players' words
case(
    "oni-w01",
    W,
    "slang",
    "zh",
    "那次差点全员寄了是哪一轮？",
    ["第61周期，氧气供应断了，复制人大半都快窒息了，玩家赶紧修好了电解器。"],
    "第64周期，电解器被水淹了，玩家把它挪到了高处。",
    "",
)
case(
    "oni-w02",
    W,
    "slang",
    "en",
    "when did the colony go full meltdown?",
    ["Cycle 92: Three dupes hit max stress at once and smashed the bathroom."],
    "Cycle 95: Built a massage table to calm everyone down.",
    "toilet",
)
case(
    "oni-w03",
    W,
    "nickname",
    "zh",
    "萤火虫子是哪轮抓的？",
    ["第28周期，玩家抓了三只光虫放进了走廊。"],
    "第30周期，玩家在走廊里装了一排顶灯。",
    "decor",
)
case(
    "oni-w04",
    W,
    "typo",
    "zh",
    "能分开绿气的汽题过虑器哪轮弄的",
    ["第26周期，玩家造了一台气体过滤器，把氯气分了出去。"],
    "第29周期，玩家又造了一台液体过滤器。",
    "water",
)
case(
    "oni-w05",
    W,
    "homophone",
    "zh",
    "咪丝木我最早哪轮种的",
    ["第7周期，玩家种了六株米虱木，做出了第一批米虱饼。"],
    "第15周期，玩家在农场种了几株毛刺花。",
    "farm food",
)
# small talk
talk("oni-s01", P, "zh", "为啥每次我想早睡都睡不着啊", "bed")
talk("oni-s02", P, "zh", "我咋这么背，刚买的奶茶就洒了", "food")
talk("oni-s03", P, "en", "why do mondays feel twice as long, I swear")
talk("oni-s04", W, "zh", "怎么又停电了，小区这破线路", "power")
talk("oni-s05", W, "zh", "中午那碗牛肉面好饱啊", "food")
talk("oni-s06", W, "en", "my dog just ate my sock lol", "food")
talk("oni-s07", H, "zh", "这谁受得了，楼上又开始装修了", "building decor")
talk("oni-s08", H, "zh", "小汤圆你是男生还是女生呀")
talk("oni-s09", H, "zh", "外面下雪了耶，好冷", "cold")
talk("oni-s10", H, "en", "how are you doing today?")


# ---------------------------------------------------------------- build

FIRST_DAY_AHEAD = {
    "sv": 2,
    "dst": 2,
    "oni": 3,
}  # currentDay: a little after the latest hand-written memory


def build_case(c: dict[str, Any], retrieval_index: int) -> dict[str, Any]:
    game, lang, cid = c["game"], c["lang"], c["id"]
    mem_lang = "en" if c["style"] == "en_zh_names" else lang
    rng = random.Random(cid)
    fixed = list(c["targets"]) + ([c["decoy"]] if c["decoy"] else [])
    days = [parse_date(game, t)[0] for t in fixed]
    cur = c["cur"] or (max(days) + FIRST_DAY_AHEAD[game] if days else 0)
    pool = POOLS[(game, mem_lang)]
    if not days:  # small talk: a save some way in
        cur = c["cur"] or max(parse_date(game, t)[0] for t, _ in pool)
    cands = [
        t
        for t, tags in pool
        if parse_date(game, t)[0] <= cur
        and not set(tags.split()) & c["tags"]
        and t not in fixed
        and not (c["style"] == "smalltalk" and shares_word(c["question"], t))
    ]
    want = 6 + rng.randrange(3) - len(fixed)
    if len(cands) < want:
        raise SystemExit(f"{cid}: {len(cands)} pool items for {want} places")
    texts = fixed + rng.sample(cands, want)
    rng.shuffle(texts)
    memories = []
    for n, t in enumerate(texts, 1):
        memories.append(
            {"key": f"{cid}-m{n}", "text": t, "day": parse_date(game, t)[0], "kind": "event"}
        )
    expected = [m["key"] for m in memories if m["text"] in c["targets"]]
    if c["targets"]:
        target = c["targets"][0]
        leak = target if retrieval_index % 3 == 0 else redated(game, target, 1 + rng.randrange(4))
    else:
        leak = rng.choice([t for t, _ in pool if t not in texts])
    checked = c["targets"] if c["targets"] else texts
    for t in checked:
        if shares_word(c["question"], t):
            q = c["question"]
            both = sorted(cjk_bigrams(q) & cjk_bigrams(t)) + sorted(en_tokens(q) & en_tokens(t))
            raise SystemExit(f"{cid}: the question shares {both} with {t}")
    if mem_lang == "en" and re.search(r"[\u4e00-\u9fff]", "".join(texts)):
        raise SystemExit(cid + ": an English case with a Chinese memory")
    extra = {"memLang": mem_lang} if mem_lang != lang else {}
    return {
        "id": cid,
        "gameId": GAMES[game],
        "saveId": "s1",
        "currentDay": cur,
        "memories": memories,
        "otherSaveMemories": [{"saveId": "s2", "text": leak}],
        "question": c["question"],
        "expected": expected,
        "style": c["style"],
        "lang": lang,
        "part": c["part"],
        **extra,
    }


def main() -> None:
    out, errors = [], []
    retrieval_index = 0
    for c in CASES:
        try:
            out.append(build_case(c, retrieval_index))
        except SystemExit as e:
            errors.append(str(e))
        if c["targets"]:
            retrieval_index += 1
    if errors:
        raise SystemExit("\n".join(errors))
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(out, f, ensure_ascii=False, indent=1)
        f.write("\n")
    print(f"wrote {len(out)} cases to {OUT}")


if __name__ == "__main__":
    main()
