# ruff: noqa: E501  (one case a line: the data reads best unwrapped)
"""Build ``smalltalk_dev.json``: small talk and real questions that look like it, a DEVELOPMENT set.

Written by the smalltalk4 helper, who has read the retrieval code: tune on it freely;
it measures nothing held out (``eval/heldout/`` does). Two halves:

- small talk (``expected: []``) of many kinds: greetings, goodbyes, tiredness, food,
  weather, school and work, family, pets, health, jokes, the companion itself, praise
  of the game (这游戏音乐真好听), being on or off line, emoji, voice-transcript style,
  long chatty messages, Cantonese and Taiwanese wording, code-switching; some of it
  next to a memory that shares its words (下雨, 火锅, 钓鱼, 猫) as real saves have;
- real questions that look like chatter: short ones, ones with 吗/呢, "did I…",
  questions about the past with no time word, 还记得, 哪个, 谁, and questions about the
  game's own food, weather, pets, sleep, mood, health and friends (the topics chatter
  is about too). Each has one expected memory among fresh fillers of its game.

    python3 eval/dev/build_smalltalk_dev.py   # writes smalltalk_dev.json beside it
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

SV, DST, ONI = "stardew-valley", "dont-starve-together", "oxygen-not-included"

FILLERS: dict[tuple[str, str], list[tuple[str, int]]] = {
    (SV, "zh"): [
        ("春季第3天，玩家清理了农场西边的一大片杂草", 3),
        ("春季第7天，玩家第一次进了矿洞，打到了第5层", 7),
        ("春季第11天，玩家在蛋节上没抢到彩蛋", 13),
        ("春季第16天，玩家买了第一个背包升级", 16),
        ("春季第22天，玩家在社区中心交了春季作物收集包", 22),
        ("夏季第4天，玩家把旧仓库拆了重新盖了一个", 32),
        ("夏季第12天，玩家在矿洞第40层被蝙蝠围攻", 40),
        ("夏季第20天，玩家做了第一个洒水器", 48),
    ],
    (SV, "en"): [
        ("Spring 4: the player cleared the stumps near the farmhouse", 4),
        ("Spring 10: the player reached floor 20 of the mines", 10),
        ("Spring 19: the player bought a second watering can upgrade", 19),
        ("Summer 2: the player planted blueberries along the fence", 30),
        ("Summer 15: the player finished the pantry bundle for spring crops", 43),
    ],
    (DST, "zh"): [
        ("第2天，玩家在出生点旁边搭了一个火堆", 2),
        ("第5天，玩家砍了一大片树攒木头", 5),
        ("第9天，玩家在草原上挖了几丛草带回基地", 9),
        ("第13天，玩家做了一个科学机器", 13),
        ("第17天，玩家用火腿棒打死了一只发条骑士", 17),
        ("第22天，玩家在基地周围围了一圈石墙", 22),
        ("第26天，玩家做了第一个冰箱", 26),
        ("第30天，玩家把帐篷挪到了基地中间", 30),
    ],
    (DST, "en"): [
        ("Day 3: the player picked up flint along the beach", 3),
        ("Day 8: the player built an alchemy engine", 8),
        ("Day 14: the player set up a drying rack near camp", 14),
        ("Day 19: the player crafted a log suit", 19),
        ("Day 24: the player moved the base closer to the swamp", 24),
    ],
    (ONI, "zh"): [
        ("第3周期，玩家在打印舱旁边挖出了第一间卧室", 3),
        ("第8周期，玩家建了两台人力发电机", 8),
        ("第14周期，玩家把藻类制氧机换到了基地中央", 14),
        ("第19周期，玩家开始研究更高级的电力科技", 19),
        ("第27周期，玩家修了一条通往地表的梯子", 27),
        ("第33周期，玩家在基地左边接了一台电解器", 33),
        ("第40周期，玩家把储物箱都换成了智能储物箱", 40),
        ("第46周期，玩家建了一个天然气发电机", 46),
    ],
    (ONI, "en"): [
        ("Cycle 5: the player dug out the first bathroom area", 5),
        ("Cycle 11: the player built a research station and a manual generator", 11),
        ("Cycle 18: the player laid gas pipes to the oxygen diffusers", 18),
        ("Cycle 26: the player expanded the farm with mealwood plots", 26),
        ("Cycle 35: the player built a water sieve by the polluted pool", 35),
    ],
}

# (game, language of the memories, question, memories that share its words or topic
#  (key, text, day, kind)): small talk, expected nothing. Style tags say what kind.
SMALL_TALK: list[tuple[str, str, str, str, list[tuple[str, str, int, str]]]] = [
    # greetings, goodbyes
    (SV, "zh", "greeting", "哈喽小汤圆，我来啦", []),
    (DST, "zh", "greeting", "嗨，又见面了", []),
    (ONI, "zh", "greeting", "下午好呀", []),
    (SV, "en", "greeting", "hey buddy, I'm back", []),
    (DST, "en", "greeting", "yo what's up", []),
    (ONI, "zh", "goodbye", "我要下线了，拜拜", []),
    (SV, "zh", "goodbye", "不玩了不玩了，明天见", []),
    (DST, "en", "goodbye", "gotta go, talk later", []),
    # tired, sleep, health
    (ONI, "zh", "tired", "今天加班到九点，累瘫了", []),
    (SV, "zh", "tired", "困死了，眼睛都睁不开了", []),
    (DST, "en", "tired", "so sleepy rn", []),
    (ONI, "zh", "health", "我感冒了，鼻子好堵", []),
    (SV, "en", "health", "my back hurts from sitting all day", []),
    # food
    (DST, "zh", "food", "今晚吃了麻辣烫，好辣", []),
    (
        SV,
        "zh",
        "food",
        "我饿了，想吃炸鸡",
        [("t1", "春季第20天，玩家的鸡舍里孵出了第一只小鸡", 20, "event")],
    ),
    (ONI, "zh", "food", "外卖还没到，饿扁了", []),
    (SV, "en", "food", "just had pizza for lunch, so good", []),
    (DST, "zh", "food", "晚上和朋友去吃火锅了", []),
    # weather
    (SV, "zh", "weather", "外面下大雪了，好美", []),
    (DST, "zh", "weather", "今天热得要命，空调都不管用", []),
    (ONI, "en", "weather", "it's so cold outside today", []),
    (
        SV,
        "zh",
        "weather",
        "下雨天就想窝在家里",
        [("t1", "春季第6天，下雨天玩家去河边钓到了一条鲶鱼", 6, "event")],
    ),
    # school, work
    (ONI, "zh", "school", "明天要考数学，好慌", []),
    (DST, "zh", "work", "老板今天又骂我了", []),
    (SV, "en", "school", "finally done with my homework", []),
    (ONI, "en", "work", "had a really long meeting today", []),
    # family, friends, pets
    (SV, "zh", "family", "我妹妹又来抢我电脑了", []),
    (DST, "zh", "friends", "我朋友说这周末来我家玩", []),
    (ONI, "zh", "pets", "我家猫刚把杯子推到地上了", []),
    (
        SV,
        "zh",
        "pets",
        "我家的猫一直趴在键盘上",
        [("t1", "春季第14天，玩家收养了一只橘猫，取名叫橘子", 14, "event")],
    ),
    (DST, "en", "pets", "my dog keeps barking at the mailman", []),
    # the companion itself, jokes, thanks, praise
    (SV, "zh", "companion", "你平时喜欢干什么呀", []),
    (DST, "zh", "companion", "你觉得我是个好玩家吗", []),
    (ONI, "zh", "companion", "你会不会唱歌", []),
    (SV, "en", "companion", "do you ever get bored?", []),
    (DST, "zh", "joke", "讲个冷笑话听听", []),
    (ONI, "en", "joke", "say something funny", []),
    (SV, "zh", "thanks", "谢谢你，有你真好", []),
    (DST, "en", "thanks", "you're awesome, thanks", []),
    # praise of the game, being in the game
    (SV, "zh", "game-praise", "这游戏的音乐真好听", []),
    (DST, "zh", "game-praise", "这个画风好有感觉", []),
    (ONI, "en", "game-praise", "this game is so relaxing", []),
    (SV, "zh", "game-meta", "今天已经玩了三个小时了", []),
    (ONI, "zh", "game-meta", "我再玩一会儿就去睡觉", []),
    (DST, "en", "game-meta", "I've been playing all afternoon lol", []),
    # reactions
    (SV, "zh", "reaction", "哈哈哈哈哈", []),
    (DST, "zh", "reaction", "好吧好吧", []),
    (ONI, "zh", "reaction", "啊啊啊啊烦死了", []),
    (SV, "en", "reaction", "lmao", []),
    # emoji
    (DST, "zh", "emoji", "😭😭今天好倒霉", []),
    (ONI, "zh", "emoji", "开心😊😊", []),
    (SV, "en", "emoji", "good morning ☀️☀️", []),
    # voice transcript
    (ONI, "zh", "voice", "嗯 那个 今天 其实 也没干啥 就是 有点累", []),
    (SV, "zh", "voice", "哎呀 我跟你说 我今天 在路上 看到一只狗 好可爱", []),
    (DST, "zh", "voice", "就是说 今天天气还挺好的 出去走了走", []),
    # long chatty
    (
        SV,
        "zh",
        "long",
        "今天真的好累啊，早上七点就起来了，地铁上挤得要死，到了公司又开了一上午的会，"
        "中午随便吃了点，下午还被领导叫去改方案，到家都八点多了，现在终于能躺下歇会儿了",
        [],
    ),
    (
        DST,
        "en",
        "long",
        "ok so today was wild, my roommate locked herself out, we had to call the landlord, "
        "then the pizza came cold and the delivery guy was super rude about it, what a day honestly",
        [],
    ),
    # dialect, code-switch
    (ONI, "zh", "dialect", "今日好忙啊，做到好攰", []),
    (SV, "zh", "dialect", "我今天好累喔，不想讲话", []),
    (DST, "zh", "code-switch", "今天好 tired 啊，没 motivation", []),
    (ONI, "zh", "code-switch", "我刚 shower 完，好舒服", []),
    # small talk that shares its words with a memory of the save
    (
        DST,
        "zh",
        "shared-word",
        "周末跟我爸去河边钓鱼了",
        [("t1", "第12天，玩家在池塘边钓了三条鱼", 12, "event")],
    ),
    (
        ONI,
        "zh",
        "shared-word",
        "今天去健身房跑了五公里",
        [("t1", "第22周期，玩家让复制人在跑步机上锻炼", 22, "event")],
    ),
    (
        SV,
        "zh",
        "shared-word",
        "我妈今天做了糖醋排骨，好好吃",
        [("t1", "夏季第9天，玩家用厨房做了第一道菜：炒蘑菇", 37, "event")],
    ),
]

# (game, language of the memories, style, question, target text, target day, target kind)
QUESTIONS: list[tuple[str, str, str, str, str, int, str]] = [
    # short ones
    (SV, "zh", "short", "卖了没", "夏季第14天，玩家把一箱蓝莓交给皮埃尔换钱", 42, "event"),
    (DST, "zh", "short", "那只狗呢", "第20天，玩家养的小狗被猎犬咬死了", 20, "event"),
    (ONI, "zh", "short", "生了吗", "第30周期，玩家的哈奇下了第一个蛋", 30, "event"),
    (
        SV,
        "en",
        "short",
        "and the horse?",
        "Summer 8: the player bought a stable and named the horse Biscuit",
        36,
        "event",
    ),
    (
        DST,
        "en",
        "short",
        "did it work?",
        "Day 16: the player's first attempt at a lightning rod kept the base from burning",
        16,
        "event",
    ),
    # 吗 / 呢
    (
        SV,
        "zh",
        "ma-ne",
        "我之前是不是送过谁礼物呀",
        "春季第15天，玩家给海莉送了一束黄水仙",
        15,
        "event",
    ),
    (
        DST,
        "zh",
        "ma-ne",
        "我家附近那个大家伙还在吗",
        "第18天，玩家发现基地附近的树林里有一棵树精",
        18,
        "event",
    ),
    (
        ONI,
        "zh",
        "ma-ne",
        "我们那个会发光的小东西还活着吗",
        "第24周期，玩家抓了一只闪光虫养在基地里",
        24,
        "event",
    ),
    (
        SV,
        "zh",
        "ma-ne",
        "那个老爷爷现在怎么样了呢",
        "夏季第1天，玩家帮乔治捡回了他掉的眼镜",
        29,
        "event",
    ),
    (
        ONI,
        "zh",
        "ma-ne",
        "上面那层现在还缺氧吗",
        "第37周期，玩家在基地上层补了两台氧气扩散器",
        37,
        "event",
    ),
    # did I …
    (
        SV,
        "en",
        "did-i",
        "did I ever finish what the wizard asked?",
        "Summer 11: the player brought the void essence the wizard wanted",
        39,
        "event",
    ),
    (
        DST,
        "en",
        "did-i",
        "did I lose anything when I died?",
        "Day 21: the player died to a hound attack and dropped the spear and armor",
        21,
        "event",
    ),
    (
        ONI,
        "en",
        "did-i",
        "did I ever get the toilets sorted out?",
        "Cycle 15: the player replaced the outhouses with lavatories",
        15,
        "event",
    ),
    (
        SV,
        "zh",
        "did-i",
        "我是不是答应过谁什么事",
        "夏季第5天，玩家答应莱纳斯给他带点吃的",
        33,
        "promise",
    ),
    (
        DST,
        "zh",
        "did-i",
        "我有没有做过那种能自己发光的头盔",
        "第23天，玩家做了一顶矿工帽",
        23,
        "event",
    ),
    (ONI, "zh", "did-i", "我有没有让谁专门去种菜", "第21周期，玩家让米奇专职打理农场", 21, "event"),
    # the past with no time word
    (
        SV,
        "zh",
        "past",
        "之前那次差点死在下面是怎么回事",
        "夏季第18天，玩家在矿洞第60层血量见底，吃了个沙拉才活下来",
        46,
        "event",
    ),
    (
        DST,
        "zh",
        "past",
        "那回基地着火是谁点的",
        "第28天，玩家的火堆在夏天把旁边的草烧着了，基地烧掉一半",
        28,
        "event",
    ),
    (
        ONI,
        "zh",
        "past",
        "那会儿到底是怎么没电的",
        "第42周期，电线超载烧断了，基地停电半个周期",
        42,
        "event",
    ),
    (
        SV,
        "en",
        "past",
        "what happened with the crows that time?",
        "Spring 24: crows ate half the parsnips because there was no scarecrow",
        24,
        "event",
    ),
    (
        ONI,
        "en",
        "past",
        "what was the thing that made everyone sick?",
        "Cycle 29: polluted water from the sink spread food poisoning to three duplicants",
        29,
        "event",
    ),
    # 还记得 / remember
    (
        SV,
        "zh",
        "remember",
        "你还记得我第一次去的那个节日吗",
        "春季第13天，玩家参加了蛋节，在广场上找彩蛋",
        13,
        "event",
    ),
    (
        DST,
        "zh",
        "remember",
        "还记得我跟那个大蜘蛛打架那次吗",
        "第19天，玩家打死了一只蜘蛛女王",
        19,
        "event",
    ),
    (
        ONI,
        "en",
        "remember",
        "remember when the base flooded?",
        "Cycle 23: a broken pipe flooded the lower rooms with water",
        23,
        "event",
    ),
    # 哪个 / 谁 / which / who
    (
        SV,
        "zh",
        "which-who",
        "谁给我寄过菜谱来着",
        "夏季第3天，玩家从电视的烹饪节目里学会了做沙拉",
        31,
        "event",
    ),
    (DST, "zh", "which-who", "我一开始选的是哪个角色", "第1天，玩家选了威尔逊开局", 1, "event"),
    (
        ONI,
        "zh",
        "which-who",
        "哪个小人最会挖东西",
        "第9周期，玩家发现复制人阿黛尔挖掘技能最高",
        9,
        "event",
    ),
    (
        SV,
        "en",
        "which-who",
        "who did I end up marrying?",
        "Summer 17: the player married Abigail",
        45,
        "event",
    ),
    (
        ONI,
        "en",
        "which-who",
        "which one of them was always complaining?",
        "Cycle 16: the duplicant Stinky kept complaining about the food",
        16,
        "event",
    ),
    # topics chatter is about too: food, weather, pets, sleep, mood, health, friends, music
    (
        SV,
        "zh",
        "chatter-topic",
        "我最拿手的那道菜是啥",
        "夏季第10天，玩家学会了做辣椒炒肉，做了十份",
        38,
        "event",
    ),
    (
        DST,
        "zh",
        "chatter-topic",
        "我吃什么吃坏肚子了",
        "第11天，玩家吃了生的怪物肉，掉了理智和血",
        11,
        "event",
    ),
    (
        ONI,
        "zh",
        "chatter-topic",
        "小人们都爱吃啥",
        "第20周期，复制人最喜欢吃烤的毛刺花",
        20,
        "event",
    ),
    (
        SV,
        "zh",
        "chatter-topic",
        "下雪那几天我都在忙什么",
        "冬季第3天，玩家冬天每天去矿洞挖矿攒铱矿",
        87,
        "event",
    ),
    (
        DST,
        "zh",
        "chatter-topic",
        "太热了我是怎么扛过去的",
        "第58天，玩家做了一个冰火堆和雪球发射器过夏天",
        58,
        "event",
    ),
    (
        ONI,
        "zh",
        "chatter-topic",
        "屋里冷得要命那次怎么办的",
        "第34周期，玩家在卧室装了一台空间加热器",
        34,
        "event",
    ),
    (
        SV,
        "zh",
        "chatter-topic",
        "我那只小狗叫什么名字",
        "春季第2天，玩家从玛妮那里领养了一只狗，取名豆豆",
        2,
        "event",
    ),
    (
        DST,
        "en",
        "chatter-topic",
        "what did I call my pet?",
        "Day 25: the player hatched a smallbird and named it Pip",
        25,
        "event",
    ),
    (
        ONI,
        "zh",
        "chatter-topic",
        "小人睡不好觉是因为什么",
        "第13周期，卧室旁边的发电机太吵，复制人睡不着",
        13,
        "event",
    ),
    (
        DST,
        "zh",
        "chatter-topic",
        "我心情差到快疯的那次是怎么回事",
        "第27天，玩家理智掉到很低，看到了暗影怪物",
        27,
        "event",
    ),
    (
        ONI,
        "zh",
        "chatter-topic",
        "那个小人最近心情咋样",
        "第44周期，复制人琳达压力太大开始乱哭",
        44,
        "event",
    ),
    (
        SV,
        "zh",
        "chatter-topic",
        "我跟谁关系最好",
        "夏季第16天，玩家和潘妮的好感度到了八颗心",
        44,
        "event",
    ),
    (
        DST,
        "en",
        "chatter-topic",
        "was anyone sick or hurt last I checked?",
        "Day 29: Wendy was low on health after a fight with a tallbird",
        29,
        "event",
    ),
    (
        SV,
        "en",
        "chatter-topic",
        "where did I hear that song I liked?",
        "Spring 26: the player found the jukebox in the saloon and liked the mines track",
        26,
        "event",
    ),
    (
        ONI,
        "zh",
        "chatter-topic",
        "我之前说想给他们弄点娱乐是要弄啥",
        "第38周期，玩家计划给复制人建一个水冷机休闲室",
        38,
        "goal",
    ),
    (
        SV,
        "en",
        "chatter-topic",
        "how's my fishing going?",
        "Summer 6: the player caught a largemouth bass at the mountain lake",
        34,
        "event",
    ),
    (
        DST,
        "zh",
        "chatter-topic",
        "我天天晚上怎么过夜的",
        "第10天，玩家每天晚上都守在火堆旁边过夜",
        10,
        "event",
    ),
    (
        ONI,
        "en",
        "chatter-topic",
        "are they eating okay?",
        "Cycle 31: the colony's food ran low and the duplicants went hungry",
        31,
        "event",
    ),
]

# A second batch, written after the first was measured: small talk that asks (advice,
# rhetoric, the companion), news with a time word, feelings about the game; questions in
# voice style, fragments, "tell me", long chatty, emoji, code-switch, Cantonese.
SMALL_TALK += [
    (DST, "zh", "advice", "晚饭吃什么好呢", []),
    (ONI, "zh", "advice", "周末去哪玩比较好", []),
    (SV, "zh", "advice", "明天要不要请假啊", []),
    (DST, "en", "advice", "should I go to bed now or play one more day?", []),
    (ONI, "en", "advice", "what should I eat for dinner", []),
    (SV, "zh", "rhetorical", "为什么周一总是这么难熬", []),
    (DST, "zh", "rhetorical", "怎么又下雨了，烦死", []),
    (ONI, "en", "rhetorical", "why is monday always like this", []),
    (SV, "zh", "news", "昨天跟朋友去唱K了，嗓子都哑了", []),
    (ONI, "zh", "news", "上周我去看了演唱会，超好看", []),
    (DST, "zh", "news", "前几天感冒了，现在好多了", []),
    (SV, "en", "news", "yesterday I finally got my driving license!", []),
    (DST, "zh", "game-feel", "这游戏好难啊，我太菜了", []),
    (ONI, "zh", "game-feel", "玩这个游戏好费脑子", []),
    (SV, "en", "game-feel", "I love this game so much", []),
    (
        SV,
        "zh",
        "game-feel",
        "种田好解压啊",
        [("t1", "春季第8天，玩家在田里种了一大片防风草", 8, "event")],
    ),
    (ONI, "zh", "companion", "小汤圆你今天开心吗", []),
    (DST, "zh", "companion", "你是机器人吗", []),
    (SV, "en", "companion", "are you real?", []),
    (ONI, "en", "companion", "what's your favorite color", []),
    (
        ONI,
        "zh",
        "long",
        "今天下班路上看到一只流浪猫，特别瘦，我给它买了根火腿肠，它吃完还跟了我一路，"
        "好想把它带回家，可是我家不让养宠物，你说我该怎么办",
        [],
    ),
    (
        SV,
        "en",
        "long",
        "so my sister is getting married next month and I have to give a speech at the "
        "wedding and I'm super nervous about it, I'm terrible at public speaking, any tips?",
        [],
    ),
]
QUESTIONS += [
    (
        SV,
        "zh",
        "voice",
        "那个 我那个 鸡 下蛋 没",
        "春季第25天，玩家的鸡第一次下了蛋，卖了五十块",
        25,
        "event",
    ),
    (
        DST,
        "zh",
        "voice",
        "就是 我那个 帐篷 放哪了来着",
        "第12天，玩家把帐篷放在了猪村旁边",
        12,
        "event",
    ),
    (
        ONI,
        "zh",
        "tell-me",
        "说说我那个种菜的人",
        "第21周期，玩家让复制人米奇专职打理农场",
        21,
        "event",
    ),
    (
        SV,
        "en",
        "tell-me",
        "tell me about my cat",
        "Spring 14: the player adopted a cat and named her Mochi",
        14,
        "event",
    ),
    (
        DST,
        "zh",
        "long",
        "今天上班被老板骂了一顿，好烦，回家路上还下雨了，鞋子都湿透了，算了不说这个了，"
        "我那只牛最后怎么样了",
        "第33天，玩家驯服的皮弗娄牛在冬天被冻死了",
        33,
        "event",
    ),
    (
        ONI,
        "en",
        "long",
        "ugh, long day at school, the bus was late and I forgot my lunch, whatever, "
        "did my guys ever fix the oxygen problem?",
        "Cycle 36: the player added two more electrolyzers and the oxygen shortage ended",
        36,
        "event",
    ),
    (SV, "zh", "emoji", "我的🐔还好吗😂", "夏季第2天，玩家的鸡舍里有一只鸡生病了", 30, "event"),
    (
        ONI,
        "zh",
        "emoji",
        "😭😭我的小人是不是又饿死了一个",
        "第39周期，复制人奥托因为没有食物饿死了",
        39,
        "event",
    ),
    (
        DST,
        "en",
        "code-switch",
        "我那个 beefalo 还活着吗",
        "Day 27: the player's beefalo was killed by hounds",
        27,
        "event",
    ),
    (
        SV,
        "zh",
        "dialect",
        "我嗰只狗仔叫咩名",
        "春季第2天，玩家从玛妮那里领养了一只狗，取名旺财",
        2,
        "event",
    ),
    (
        DST,
        "zh",
        "past",
        "我上次被冻死之后是怎么复活的",
        "第25天，玩家冬天被冻死，用试金石复活了",
        25,
        "event",
    ),
    (
        ONI,
        "zh",
        "mood",
        "为什么小人们最近都不开心",
        "第41周期，复制人们的士气掉到很低，因为没有娱乐设施",
        41,
        "event",
    ),
]

# A third batch, written after the second was measured: self-judgements (我是不是太菜了),
# greetings as questions, requests, "guess what", A-not-A questions to the companion.
SMALL_TALK += [
    (SV, "zh", "self-judgement", "我是不是太菜了", []),
    (DST, "zh", "self-judgement", "我今天是不是很厉害", []),
    (ONI, "zh", "advice", "我是不是该睡觉了", []),
    (SV, "en", "greeting", "what's going on", []),
    (DST, "en", "greeting", "how's everything", []),
    (ONI, "en", "request", "can we just chat for a bit", []),
    (SV, "en", "news", "guess what happened today", []),
    (DST, "zh", "companion", "你饿不饿", []),
    (ONI, "zh", "companion", "你猜我今天吃了什么", []),
    (SV, "zh", "companion", "今天好热啊你那边热吗", []),
    (DST, "zh", "news", "你知道吗，我今天升职了", []),
    (ONI, "zh", "chat", "咱俩聊会儿呗", []),
    (SV, "zh", "emoji", "啊啊啊考完试了🎉", []),
    (DST, "zh", "voice", "额 那个 我刚吃完饭 嗯", []),
    (ONI, "zh", "long", "今天真的好开心，终于放假了，可以玩一整天游戏了！", []),
    (SV, "zh", "code-switch", "今天 work 好多", []),
    (DST, "en", "reaction", "nothing much, just chilling", []),
    (ONI, "en", "weather", "it's snowing here!!", []),
]
QUESTIONS += [
    (
        ONI,
        "zh",
        "a-not-a",
        "小人们还饿不饿",
        "第43周期，玩家给食堂加了两台电烤炉，复制人不再挨饿",
        43,
        "event",
    ),
    (
        SV,
        "zh",
        "past",
        "冬天那会儿我都干嘛了",
        "冬季第5天，玩家整个冬天都在修温室和钓冰鱼",
        89,
        "event",
    ),
]

# A fourth batch, written by the smalltalk5 helper after the third was measured:
# rhetorical complaints, exclamations, sighs and wishes about the player's own life (a
# question's words, asking nothing), some beside a memory that shares a word (下雪, 停电,
# rain, meeting); and real questions about the game phrased as complaints or wishes
# (为什么我的鸡总是不下蛋, 什么时候才能修好温室啊).
SMALL_TALK += [
    (SV, "zh", "rhetorical", "我咋这么倒霉啊，出门就踩到水坑", []),
    (DST, "zh", "rhetorical", "为什么每天都有开不完的会", []),
    (ONI, "zh", "rhetorical", "怎么又要上班了，周末也太短了吧", []),
    (SV, "zh", "rhetorical", "凭什么就我一个人加班啊", []),
    (DST, "zh", "rhetorical", "为啥我一到考试就生病", []),
    (ONI, "zh", "rhetorical", "今天地铁怎么这么挤", []),
    (SV, "zh", "rhetorical", "我的快递怎么还没到啊", []),
    (DST, "zh", "rhetorical", "这天气怎么这么闷啊", []),
    (ONI, "zh", "rhetorical", "唉，为什么人一定要上班呢", []),
    (SV, "zh", "rhetorical", "怎么一天天过得这么快", []),
    (
        DST,
        "zh",
        "rhetorical",
        "怎么又下雪了，冻死我了",
        [("t1", "第23天，下雪了，玩家做了一件保暖背心", 23, "event")],
    ),
    (
        SV,
        "zh",
        "rhetorical",
        "有没有搞错，小区又停电了",
        [("t1", "夏季第21天，暴风雨劈坏了避雷针旁边的电池组", 49, "event")],
    ),
    (DST, "zh", "exclamation", "这谁顶得住啊，热死了", []),
    (ONI, "zh", "exclamation", "谁懂啊，早八真的起不来", []),
    (SV, "zh", "exclamation", "这什么鬼天气，一会儿晴一会儿雨", []),
    (DST, "zh", "exclamation", "楼上装修还让不让人睡了", []),
    (ONI, "zh", "sigh", "唉……人生好难", []),
    (SV, "zh", "sigh", "哎，又是emo的一天", []),
    (DST, "en", "rhetorical", "why is everything so expensive lately", []),
    (ONI, "en", "rhetorical", "how is it only tuesday", []),
    (SV, "en", "rhetorical", "ugh why am I so tired all the time", []),
    (DST, "en", "rhetorical", "how do people even wake up at 6am", []),
    (
        DST,
        "en",
        "rhetorical",
        "why does it always rain when I want to go out",
        [("t1", "Day 17: it rained all day and the player stayed by the fire", 17, "event")],
    ),
    (
        ONI,
        "en",
        "rhetorical",
        "why do meetings always run late",
        [("t1", "Cycle 12: the player held a meeting of duplicants at the message table", 12, "event")],
    ),
    (SV, "en", "exclamation", "what the heck, my wifi died again", []),
    (DST, "en", "exclamation", "I got a new keyboard today, how cool is that", []),
    (ONI, "en", "rhetorical", "is it just me or is this week dragging", []),
    (SV, "en", "sigh", "sigh... long week", []),
    (ONI, "zh", "wish", "啥时候才能发工资啊", []),
    (DST, "en", "wish", "when will this week ever end", []),
    (SV, "zh", "self-judgement", "我怎么这么菜，又输了", []),
    (DST, "zh", "plea", "老天爷能不能别下雨了", []),
    (ONI, "en", "rhetorical", "how am I supposed to finish all this homework", []),
    (SV, "zh", "why-life", "为啥考试前一天特别想打扫房间", []),
    (DST, "en", "why-life", "why do weekends go by faster than weekdays", []),
    (ONI, "zh", "why-life", "为什么下雨天人会犯困", []),
]
QUESTIONS += [
    (
        SV,
        "zh",
        "complaint-game",
        "为什么我的鸡总是不下蛋",
        "夏季第3天，玩家忘了喂鸡，鸡舍里的鸡两天没下蛋",
        31,
        "event",
    ),
    (
        ONI,
        "zh",
        "complaint-game",
        "小人怎么老是这么不开心",
        "第35周期，卧室太挤，复制人们压力越来越大",
        35,
        "event",
    ),
    (
        SV,
        "zh",
        "complaint-game",
        "为啥我的庄稼老是枯死",
        "夏季第9天，玩家忘了浇水，一片甜瓜全枯死了",
        37,
        "event",
    ),
    (
        DST,
        "zh",
        "complaint-game",
        "我的基地怎么又被猎犬拆了",
        "第26天，猎犬袭击了基地，咬坏了两个箱子",
        26,
        "event",
    ),
    (
        DST,
        "zh",
        "complaint-game",
        "我怎么老是被蜘蛛打死",
        "第19天，玩家被蜘蛛巢里爬出来的蜘蛛围攻死了",
        19,
        "event",
    ),
    (
        ONI,
        "zh",
        "complaint-game",
        "为什么我的小人总是饿肚子",
        "第31周期，粮食不够吃，复制人们都在挨饿",
        31,
        "event",
    ),
    (
        SV,
        "en",
        "complaint-game",
        "why do my crops keep dying",
        "Summer 9: the player's crops died because the sprinklers were not connected",
        37,
        "event",
    ),
    (
        ONI,
        "en",
        "complaint-game",
        "why is the oxygen always so low upstairs",
        "Cycle 30: the upper rooms ran short of oxygen after the diffuser broke",
        30,
        "event",
    ),
    (
        DST,
        "en",
        "complaint-game",
        "how do the hounds keep getting into my base",
        "Day 26: hounds broke through the wall on the swamp side of the base",
        26,
        "event",
    ),
    (
        ONI,
        "en",
        "complaint-game",
        "why does my base keep flooding",
        "Cycle 23: a broken pipe flooded the lower rooms with water",
        23,
        "event",
    ),
    (SV, "zh", "wish-game", "什么时候才能修好温室啊", "打算秋天前修好社区中心的温室", 20, "goal"),
    (
        SV,
        "zh",
        "why-game",
        "为什么下雨天鱼更好钓",
        "春季第6天，下雨天玩家去河边钓到了一条鲶鱼，比晴天多钓了好几条",
        6,
        "event",
    ),
    (
        SV,
        "en",
        "wish-game",
        "when will the greenhouse finally be fixed",
        "Spring 28: the player planned to restore the greenhouse before fall",
        28,
        "goal",
    ),
]

SMALL_TALK_DAY = {SV: 60, DST: 32, ONI: 48}


def build() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    tag = {SV: "sv", DST: "dst", ONI: "oni"}
    for n, (game, lang, style, question, traps) in enumerate(SMALL_TALK, start=1):
        day = SMALL_TALK_DAY[game]
        memories = [
            {"key": key, "text": text, "day": d, "kind": kind} for key, text, d, kind in traps
        ]
        memories += [
            {"key": f"m{k}", "text": text, "day": d, "kind": "event"}
            for k, (text, d) in enumerate(FILLERS[(game, lang)], start=1)
            if d <= day
        ]
        cases.append(
            {
                "id": f"st-{tag[game]}{n}",
                "gameId": game,
                "currentDay": day,
                "question": question,
                "expected": [],
                "style": "smalltalk",
                "kind": style,
                "lang": "en" if question.isascii() else "zh",
                "saveId": "s1",
                "memories": memories,
                "otherSaveMemories": [{"saveId": "s2", "text": memories[-1]["text"]}],
            }
        )
    for n, (game, lang, style, question, target, tday, kind) in enumerate(QUESTIONS, start=1):
        day = max(tday + 2, SMALL_TALK_DAY[game])
        fillers = [
            {"key": f"m{k}", "text": text, "day": d, "kind": "event"}
            for k, (text, d) in enumerate(FILLERS[(game, lang)], start=2)
            if d <= day
        ]
        # the target last: "recent and important" does not fall on it by id
        memories = [*fillers, {"key": "m1", "text": target, "day": tday, "kind": kind}]
        cases.append(
            {
                "id": f"cq-{tag[game]}{n}",
                "gameId": game,
                "currentDay": day,
                "question": question,
                "expected": ["m1"],
                "style": style,
                "lang": "en" if question.isascii() else "zh",
                "saveId": "s1",
                "memories": memories,
                "otherSaveMemories": [{"saveId": "s2", "text": target}],
            }
        )
    return cases


if __name__ == "__main__":
    out = Path(__file__).with_name("smalltalk_dev.json")
    out.write_text(json.dumps(build(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
