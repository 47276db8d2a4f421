# -*- coding: utf-8 -*-
"""Builds heldout_paraphrase.json: a HELD-OUT paraphrase retrieval eval, written blind.

Every question is a clean, grammatical paraphrase of what its target memory says (synonyms,
other common names, describing instead of naming, asking about the consequence or the cause,
or restating a plan), sharing no content word with the target. Each case also has same-save
decoys drawn deterministically from hand-written pools (written fresh for this file, not
shared with the dev set or heldout_players_words.json) and one leak-bait memory from another
save ("s2"). Leak bait "=" means word-for-word the same text as the target.

Extra field "aspect": synonym | other-name | describe | consequence | cause | plan.
"""
import json
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "heldout_paraphrase.json")
GAMES = {"sv": "stardew-valley", "dst": "dont-starve-together", "oni": "oxygen-not-included"}

# (tags, text, day)
POOL = {
    ("sv", "zh"): [
        (["farm", "trees"], "春季第4天，玩家砍倒了农场西边的几棵橡树", 4),
        (["fishing"], "春季第7天，玩家在海边码头钓到一条沙丁鱼", 7),
        (["mines"], "春季第12天，玩家在矿井第10层找到了第一块石英", 12),
        (["festival", "egg"], "春季第13天，玩家在复活节找彩蛋比赛里输给了阿比盖尔", 13),
        (["gift", "alex"], "春季第17天，玩家送了亚历克斯一份全套早餐", 17),
        (["crops", "potato"], "春季第20天，玩家收了一批土豆", 20),
        (["shop", "backpack"], "夏季第4天，玩家在皮埃尔的店里买了大背包", 32),
        (["animal", "chicken"], "夏季第9天，玩家的一只鸡开始下蛋了", 37),
        (["crops", "hops"], "夏季第14天，玩家种了一排啤酒花", 42),
        (["gift", "maru"], "夏季第19天，玩家送了玛鲁一个电池组", 47),
        (["beach", "tide"], "夏季第24天，玩家在潮汐池捡到了海胆", 52),
        (["museum"], "秋季第4天，玩家把一个恐龙蛋捐给了博物馆", 60),
        (["crops", "corn"], "秋季第9天，玩家的玉米还在继续结果", 65),
        (["friend", "sam"], "秋季第13天，玩家和山姆在酒吧的游戏机上玩了一会儿", 69),
        (["mines", "bats"], "秋季第19天，玩家在矿井第60层被一群蝙蝠追着打", 75),
        (["festival", "spirit"], "秋季第27天，玩家在万灵节的迷宫里迷了路", 83),
        (["weather", "snow"], "冬季第6天下了大雪，玩家整天待在屋里整理箱子", 90),
        (["money", "night-market"], "冬季第15天，玩家在夜市上买了一幅画", 99),
        (["forage", "winter"], "冬季第19天，玩家在地里挖到了雪山药", 103),
    ],
    ("sv", "en"): [
        (["farm"], "Day 3: the player cleared the rocks around the farmhouse", 3),
        (["fishing"], "Day 9: the player caught a bream in the river at night", 9),
        (["gift", "sebastian"], "Day 16: the player gave Sebastian a piece of obsidian", 16),
        (["mines"], "Day 23: the player killed a rock crab on mines level 15", 23),
        (["animal", "coop"], "Day 35: the player bought two chickens from Marnie", 35),
        (["crops", "tomato"], "Day 44: the player harvested a basket of tomatoes", 44),
        (["tools"], "Day 58: the player upgraded the axe to copper", 58),
        (["festival", "fair"], "Day 72: the player played the slingshot game at the Stardew Valley Fair", 72),
        (["museum"], "Day 77: the player donated a dwarf gadget to the museum", 77),
        (["weather", "snow"], "Day 88: snow covered the farm and nothing could grow outside", 88),
        (["friend", "gus", "saloon"], "Day 98: the player bought a pizza at the Stardrop Saloon", 98),
        (["calendar"], "Day 105: the player checked the calendar for upcoming birthdays", 105),
    ],
    ("dst", "zh"): [
        (["base", "start"], "第1天，玩家在出生点附近捡了些燧石和树枝", 1),
        (["crockpot", "food"], "第4天，玩家造了一个烹饪锅", 4),
        (["grass", "base"], "第6天，玩家挖了二十丛草种到基地边上", 6),
        (["trap", "rabbit"], "第9天，玩家在兔子洞旁边放了陷阱", 9),
        (["hound"], "第10天，猎犬来袭，玩家把它们引到牛群里", 10),
        (["spider"], "第13天，玩家做了一把长矛去打蜘蛛", 13),
        (["pig", "gold"], "第15天，玩家给猪王扔了几块肉，换到了金块", 15),
        (["tree", "wood"], "第18天，玩家砍了一片常青树，攒了两箱木头", 18),
        (["wormhole"], "第20天，玩家记下了虫洞的两个出口", 20),
        (["winter", "snow"], "第23天，玩家的基地被大雪盖住了", 23),
        (["caves", "bats"], "第26天，玩家在洞穴里被蝙蝠围攻", 26),
        (["mole"], "第32天，鼹鼠把基地里的燧石偷走了", 32),
        (["bee"], "第42天，玩家用捕虫网抓了几只蜜蜂", 42),
        (["farm"], "第47天，玩家在农场里种了西瓜", 47),
        (["moose"], "第51天，玩家被一群小麋鹿鹅追着跑", 51),
        (["summer", "heat"], "第57天，玩家在遮阳篷下面睡了个午觉", 57),
        (["summer", "heat", "ice"], "第63天，玩家吃了冰块降温", 63),
    ],
    ("dst", "en"): [
        (["base", "start", "pig"], "Day 2: the player picked a spot near the Pig Village for the base", 2),
        (["science", "crockpot"], "Day 5: the player built a Science Machine and researched a Crock Pot", 5),
        (["berry", "farm"], "Day 7: the player fertilized the berry bushes with manure", 7),
        (["spider"], "Day 11: spiders attacked the player at dusk", 11),
        (["hound"], "Day 16: hounds came while the player was asleep", 16),
        (["winter", "fire"], "Day 22: the player built a winter base with four fire pits", 22),
        (["walrus", "winter"], "Day 29: the player found a walrus camp on the ice", 29),
        (["caves"], "Day 34: the player explored the mushroom forest in the caves", 34),
        (["rain", "wet"], "Day 39: the player's clothes got soaked in the rain", 39),
        (["frog"], "Day 43: the player killed frogs near a pond for frog legs", 43),
        (["farm"], "Day 49: the player harvested pumpkins from the farm", 49),
        (["summer", "heat"], "Day 59: the player built a Siesta Lean-to to nap in the shade", 59),
    ],
    ("oni", "zh"): [
        (["dig", "start"], "第2周期，复制人挖通了通往左边的通道", 2),
        (["food", "start"], "第3周期，复制人开始吃营养棒", 3),
        (["bed"], "第5周期，玩家把床都挪到了同一个房间", 5),
        (["power"], "第9周期，玩家铺了电线连到研究站", 9),
        (["research"], "第11周期，玩家开始研究电力调节", 11),
        (["water"], "第14周期，玩家找到了一片污染水湖", 14),
        (["germs"], "第17周期，有个复制人得了食物中毒", 17),
        (["stress", "food"], "第20周期，一个复制人压力大到暴饮暴食", 20),
        (["critter", "pacu", "water"], "第24周期，玩家在水池里发现了几条帕库鱼", 24),
        (["gas"], "第28周期，基地上层积了很多氢气", 28),
        (["temperature"], "第31周期，玩家发现基地下方有一片很热的区域", 31),
        (["decor"], "第34周期，复制人画了一幅画挂在走廊", 34),
        (["geyser", "water"], "第37周期，玩家找到一个污水喷孔", 37),
        (["oxygen"], "第41周期，基地的氧气浓度有点低", 41),
        (["critter", "hatch"], "第44周期，一只哈奇把地上的沙子吃掉了", 44),
        (["metal"], "第53周期，玩家挖到了一大片铁矿", 53),
        (["space", "surface"], "第70周期，复制人第一次挖到了地表", 70),
        (["oil"], "第80周期，玩家挖到了地图底部的石油层", 80),
    ],
    ("oni", "en"): [
        (["start"], "Cycle 1: the player picked three duplicants with digging and building skills", 1),
        (["food", "start"], "Cycle 6: the duplicants ate the last of the starting Nutrient Bars", 6),
        (["power"], "Cycle 8: the player ran wires from the generator to the research station", 8),
        (["bed"], "Cycle 10: the player moved the cots into a proper barracks", 10),
        (["water"], "Cycle 13: the player found a big lake of clean water", 13),
        (["critter", "pacu", "water"], "Cycle 17: the player noticed Pacu swimming in the lake", 17),
        (["germs"], "Cycle 20: a duplicant got food poisoning", 20),
        (["stress", "food"], "Cycle 23: a duplicant started binge eating from stress", 23),
        (["gas"], "Cycle 29: chlorine gas leaked into the base from a pocket", 29),
        (["decor"], "Cycle 33: the player built a few sculptures to raise decor", 33),
        (["temperature"], "Cycle 40: the player found a very hot biome at the bottom", 40),
        (["metal"], "Cycle 46: the player found a vein of gold amalgam", 46),
    ],
}

CASES = []


def C(cid, aspect, lang, tags, targets, question, leaks, cur=None):
    CASES.append(dict(cid=cid, aspect=aspect, lang=lang, tags=tags, targets=targets,
                      question=question, leaks=leaks, cur=cur))


E, G = "event", "goal"

# ======================= Stardew Valley =======================
C("sv-p01", "other-name", "zh", ["quest", "fishing"],
  [("春季第14天，刘易斯在镇上的告示板发了一个送鱼的委托，玩家完成了", 14, E)],
  "镇长在布告栏上贴的那个要水产的活，我办完了吗",
  ["春季第14天，刘易斯在镇上的告示板发了一个送鱼的委托，玩家没来得及做"], cur=30)
C("sv-p02", "describe", "zh", ["animal", "silo", "building"],
  [("夏季第3天，罗宾帮玩家在农场盖好了筒仓", 31, E)],
  "木匠给我造的那座储存干草的高塔是哪天完工的",
  ["="])
C("sv-p03", "cause", "zh", ["crops", "scarecrow"],
  [("秋季第2天，玩家在农场周围放了八个稻草人，乌鸦再也没来吃庄稼", 58, E)],
  "田里的作物后来为什么不再被鸟啄了",
  ["秋季第2天，玩家忘了放稻草人，乌鸦吃掉了一片庄稼"])
C("sv-p04", "consequence", "zh", ["mines", "death"],
  [("冬季第11天，玩家在矿洞里被骷髅打死了，丢了好几样东西", 95, E)],
  "我有一次在地底下挂了，后来少了些什么物品",
  ["冬季第11天，玩家在矿洞里打死了一群骷髅，捡了好几样东西"])
C("sv-p05", "synonym", "zh", ["saloon", "gus", "food"],
  [("秋季第15天，玩家在酒吧跟格斯买了一份生鱼片", 71, E)],
  "我哪天在那家小馆子从老板手里买过刺身",
  ["="])
C("sv-p06", "synonym", "zh", ["artisan", "money"],
  [("冬季第4天，玩家把所有的蓝莓酒都卖掉了，赚了两万多", 88, E)],
  "我哪天把那批果子酿的饮品全出手了",
  ["冬季第4天，玩家把所有的蓝莓酒都存进了地窖"])
C("sv-p07", "describe", "zh", ["beach", "bridge"],
  [("春季第11天，玩家在海滩上修好了那座破桥", 11, E)],
  "沙滩东边那个断掉的木头通道我什么时候补上的",
  ["春季第12天，玩家在海滩上修好了那座破桥"], cur=40)
C("sv-p08", "cause", "zh", ["crops", "blueberry", "season"],
  [("秋季第1天，换季后夏天种的蓝莓全枯死了", 57, E)],
  "那片浆果怎么一下子都没救了",
  ["="])
C("sv-p09", "consequence", "zh", ["friend", "jodi", "trash"],
  [("春季第23天，玩家在镇上的垃圾桶里翻东西，被乔迪看见了，好感度下降", 23, E)],
  "我去掏公共废物箱结果被哪位邻居撞见，关系变差了",
  ["春季第23天，玩家在镇上的垃圾桶里翻到了一个汽水罐"])
C("sv-p10", "describe", "zh", ["forage", "winter"],
  [("冬季第13天，玩家用锄头在林子里挖到了几个冬根", 97, E)],
  "冷天拿翻土工具从树丛间刨出来的那种块茎叫什么",
  ["="])
C("sv-p11", "cause", "zh", ["animal", "chicken", "coop"],
  [("冬季第14天，玩家忘了喂动物，几只鸡的心情变差了", 98, E)],
  "那些下蛋的家禽为什么都闷闷不乐",
  ["冬季第14天，玩家忘了喂动物，几头牛的心情变差了"])
C("sv-p12", "synonym", "zh", ["house"],
  [("秋季第21天，玩家把房子扩建出了一个育婴室", 77, E)],
  "住宅加盖后多了间给宝宝的屋子是哪天",
  ["秋季第21天，玩家把房子扩建出了一个地窖"])
C("sv-p13", "other-name", "zh", ["fishing", "willy", "start"],
  [("春季第2天，威利送了玩家一根竹制鱼竿", 2, E)],
  "海边那位老渔夫最早给我的那根钓具",
  ["="], cur=20)
C("sv-p14", "consequence", "zh", ["spa", "energy"],
  [("夏季第20天，玩家在温泉里泡了一下午，体力全回满了", 48, E)],
  "我那次去澡堂待了半天之后精力怎么样了",
  ["夏季第20天，玩家在温泉里泡了一下午，结果庄稼忘了浇"])
C("sv-p15", "describe", "zh", ["festival", "night-market"],
  [("冬季第17天，玩家在夜市上看了美人鱼表演", 101, E)],
  "我在冬天晚上的海边集会上观看过鱼尾女子的演出吗",
  ["冬季第17天，玩家在夜市上坐了潜水艇"])
C("sv-p16", "cause", "zh", ["food", "buff"],
  [("秋季第7天，玩家喝了咖啡，走路变快了", 63, E)],
  "那天我为什么跑得特别快",
  ["="])
C("sv-p17", "plan", "zh", ["goal", "sprinkler", "crops"],
  [("玩家计划在第二年春天之前把农场全铺上优质洒水器", 80, G)],
  "我原本打算在下一年开春前让地里全都自动浇灌，对吧",
  ["玩家计划在第二年夏天之前把农场全铺上铱制洒水器"])
C("sv-p18", "plan", "zh", ["goal", "museum"],
  [("玩家想在冬天把博物馆的捐赠凑满", 85, G)],
  "我冷季的目标是把展馆里那些空架子都填上吗",
  ["玩家想在冬天把社区中心的收集包凑满"])
C("sv-p19", "synonym", "zh", ["friend", "shane", "joja"],
  [("春季第25天，玩家和谢恩在牧场旁边聊了天，得知他在Joja上班", 25, E)],
  "我是哪天知道那位住玛妮家的小伙子在那家超市打工",
  ["="], cur=40)
C("sv-p20", "consequence", "zh", ["money", "night", "faint"],
  [("冬季第21天，玩家熬夜到凌晨两点，晕倒在路上，被人捡回家扣了钱", 105, E)],
  "那次半夜太晚没睡昏过去，我损失了多少金币",
  ["冬季第21天，玩家熬夜到凌晨一点，赶在晕倒前回家睡了"])
C("sv-p21", "other-name", "zh", ["pet", "dog", "start"],
  [("春季第1天，玩家养的小狗被取名叫豆豆", 1, E)],
  "我家那只看门的汪星人叫啥",
  ["春季第1天，玩家养的小猫被取名叫豆豆"], cur=30)
C("sv-p22", "describe", "zh", ["geode", "blacksmith"],
  [("冬季第7天，玩家在铁匠铺开了一个万象晶球", 91, E)],
  "我在打铁的店里敲开过一颗什么都可能出的石头吗",
  ["冬季第7天，玩家在铁匠铺升级了铜镐子"])
C("sv-p23", "synonym", "en", ["shop", "backpack"],
  [("Day 12: the player bought a larger backpack from Pierre for 2,000g", 12, E)],
  "when did I upgrade my bag at the general store?",
  ["="])
C("sv-p24", "other-name", "en", ["animal", "hay", "marnie"],
  [("Day 81: the player bought 100 pieces of hay from Marnie before winter", 81, E)],
  "when did I stock up on dried grass feed at the ranch",
  ["Day 81: the player cut 100 pieces of hay with a scythe before winter"])
C("sv-p25", "describe", "en", ["trees", "artisan"],
  [("Day 54: the player crafted a Tapper and put it on a maple tree", 54, E)],
  "when did I attach the spout that drips syrup",
  ["Day 54: the player crafted a Tapper and put it on an oak tree"])
C("sv-p26", "consequence", "en", ["animal", "chicken", "night"],
  [("Day 68: the player left the coop door open overnight and a wild animal got one of the chickens", 68, E)],
  "what happened to one of the hens after I forgot to shut the pen",
  ["="])
C("sv-p27", "cause", "en", ["friend", "penny"],
  [("Day 79: the player's friendship with Penny dropped after two weeks without talking to her", 79, E)],
  "why has the redheaded teacher grown colder toward me?",
  ["Day 79: the player's friendship with Penny went up after a week of gifts"])
C("sv-p28", "synonym", "en", ["festival", "ice", "fishing"],
  [("Day 92: the player won the ice fishing contest at the Festival of Ice", 92, E)],
  "did I take first prize at the frozen-lake angling event?",
  ["Day 92: the player lost the ice fishing contest at the Festival of Ice"])
C("sv-p29", "describe", "en", ["gems", "crafting"],
  [("Day 106: the player crafted a Crystalarium and loaded it with a diamond", 106, E)],
  "when did I start duplicating gems with that crystal-growing machine",
  ["="])
C("sv-p30", "cause", "en", ["crops", "corn", "season"],
  [("Day 61: the player's corn survived into fall because corn grows in summer and fall", 61, E)],
  "why didn't the tall yellow crop die off when the leaves started turning?",
  ["Day 61: the player's melons died when fall began"])
C("sv-p31", "plan", "en", ["goal", "horse"],
  [("The player plans to buy a stable from Robin next week", 70, G)],
  "was I saving up for something to ride?",
  ["The player plans to buy a stable from Robin next month"])
C("sv-p32", "plan", "en", ["goal", "marriage", "haley"],
  [("The player wants to marry Haley by the end of year two", 90, G)],
  "who am I hoping to wed, and by when?",
  ["The player wants to marry Alex by the end of year two"])
C("sv-p33", "consequence", "en", ["mines", "slime", "death"],
  [("Day 87: the player was knocked out by a slime in the mines and woke up at the clinic", 87, E)],
  "what happened after the green goo monster beat me underground?",
  ["Day 87: the player killed a slime in the mines and found a slime ball"])
C("sv-p34", "synonym", "en", ["gift", "emily"],
  [("Day 95: the player gave Emily a ruby and she adored it", 95, E)],
  "which present did the seamstress really like?",
  ["="])
C("sv-p35", "other-name", "en", ["quest", "robin"],
  [("Day 69: the player found Robin's lost axe and brought it back to her", 69, E)],
  "did I return the carpenter's missing hatchet?",
  ["Day 69: the player found Robin's lost axe but sold it"])
C("sv-p36", "describe", "en", ["marriage", "shop"],
  [("Day 76: the player got a Bouquet from Pierre's shop", 76, E)],
  "when did I buy the flowers you give to start dating someone?",
  ["Day 76: the player got a Mermaid's Pendant from the Old Mariner"])

# ======================= Don't Starve Together =======================
C("dst-p01", "describe", "zh", ["walrus", "winter"],
  [("第27天，玩家打死了麦克塔斯克，捡到了海象牙", 27, E)],
  "我哪天击败了冰原上那个带着猎犬的胖猎人",
  ["第27天，玩家被麦克塔斯克的飞镖打死了"])
C("dst-p02", "describe", "zh", ["food", "carrot", "start"],
  [("第3天，玩家在草地上挖了很多胡萝卜", 3, E)],
  "开局那会儿从地里拔出的橙色根茎菜有多少",
  ["="], cur=20)
C("dst-p03", "cause", "zh", ["winter", "cold", "clothes"],
  [("第29天，玩家体温过低，因为没戴帽子也没穿保暖的衣服", 29, E)],
  "那次为什么会冻到掉血",
  ["第29天，玩家戴了冬帽，穿了保暖的衣服，一点也不冷"])
C("dst-p04", "consequence", "zh", ["mandrake", "food", "health"],
  [("第33天，玩家把曼德拉草做成汤吃了，回了很多血", 33, E)],
  "那根会尖叫的根熬出来的汤，喝了以后身体恢复得怎么样",
  ["="])
C("dst-p05", "describe", "zh", ["moose", "boss"],
  [("第45天，玩家打死了麋鹿鹅，得到了很多羽毛", 45, E)],
  "那只长着鹿角的大鸟被我打倒以后掉了啥",
  ["第45天，玩家被麋鹿鹅的龙卷风吹飞了"])
C("dst-p06", "other-name", "zh", ["tree", "treeguard", "wood"],
  [("第55天，玩家打死了树精守卫，拿到了活木", 55, E)],
  "我砍倒的那个树人掉没掉有生命的木材",
  ["第56天，玩家打死了树精守卫，拿到了活木"])
C("dst-p07", "cause", "zh", ["summer", "heat"],
  [("第61天，玩家中暑了，因为没有遮阳的东西", 61, E)],
  "夏天那回身体过烫受伤，是少了什么防护",
  ["="])
C("dst-p08", "describe", "zh", ["beefalo", "horn"],
  [("第31天，玩家杀牛时掉了一个牛角", 31, E)],
  "我哪天拿到的那个能吹响召唤毛牛的号",
  ["第31天，玩家做了一个牛帽"])
C("dst-p09", "consequence", "zh", ["sanity", "food", "monster"],
  [("第12天，玩家吃了一个怪物肉，理智掉了不少", 12, E)],
  "我那回吞下那种紫色的怪异生肉以后精神状态怎么样了",
  ["第12天，玩家吃了一个怪物肉，血掉了不少"])
C("dst-p10", "consequence", "zh", ["bird", "clothes"],
  [("第50天，玩家做了一顶羽毛帽，把鸟都引过来了", 50, E)],
  "我戴上那个插满翎毛的头饰以后，是不是招惹得满天飞禽都围着我",
  ["="])
C("dst-p11", "consequence", "zh", ["chester", "hound"],
  [("第13天，玩家的切斯特被猎犬打死了，东西撒了一地", 13, E)],
  "我那个会跟着走的毛球箱子没了以后，里面的物品怎么样了",
  ["第13天，玩家的切斯特差点被猎犬打死"])
C("dst-p12", "cause", "zh", ["fire", "lightning", "base"],
  [("第37天，玩家的基地被雷劈中起火了，因为还没造避雷针", 37, E)],
  "那回家里为啥会烧起来",
  ["第37天，玩家的基地被雷劈中，幸好有避雷针"])
C("dst-p13", "synonym", "zh", ["food", "honey", "crockpot"],
  [("第41天，玩家用蜂蜜在烹饪锅里做了太妃糖", 41, E)],
  "我啥时候拿蜜糖烧出了那种耐嚼的甜点",
  ["="])
C("dst-p14", "describe", "zh", ["ruins", "caves", "science"],
  [("第53天，玩家在远古遗迹里修好了远古伪科学站", 53, E)],
  "底下那片古老废墟里坏掉的研究台我修了吗",
  ["第53天，玩家在远古遗迹里被发条战车撞死了"])
C("dst-p15", "consequence", "zh", ["summer", "swamp", "mosquito"],
  [("第67天，玩家被蚊子叮了好几口，血掉了一大截", 67, E)],
  "被那些吸血小虫围攻之后我伤得重吗",
  ["第67天，玩家打死了好几只蚊子，捡到了蚊子血囊"])
C("dst-p16", "cause", "zh", ["dark", "night", "death"],
  [("第26天，玩家晚上没有光，被查理袭击了", 26, E)],
  "那一夜我为什么会被看不见的东西挠",
  ["="])
C("dst-p17", "plan", "zh", ["goal", "base", "pig"],
  [("玩家打算在猪村旁边建一个新基地", 30, G)],
  "我是不是想把家挪到那群粉色邻居附近",
  ["玩家打算在海边建一个新基地"])
C("dst-p18", "plan", "zh", ["goal", "gold", "tools"],
  [("玩家计划收集足够的金块做一套金工具", 40, G)],
  "我是不是打算攒黄澄澄的东西换一批更耐用的斧子镐子",
  ["玩家计划收集足够的铥矿做一套铥矿装备"])
C("dst-p19", "synonym", "zh", ["lost", "tree"],
  [("第8天，玩家在树林里迷路了，天黑前才找到回家的路", 8, E)],
  "那天我在密林中转晕了，直到傍晚才摸回营地吗",
  ["第8天，玩家在树林里迷路了，天黑后被查理袭击了"], cur=30)
C("dst-p20", "consequence", "zh", ["rain", "wet", "sanity"],
  [("第39天，玩家湿透了，理智一直往下掉", 39, E)],
  "那次全身淋透以后脑子变得不太清醒",
  ["="])
C("dst-p21", "other-name", "zh", ["wickerbottom", "book", "grass"],
  [("第11天，维克波顿读了一本书，让周围的草都长出来了", 11, E)],
  "那个图书管理员老太太念完书以后，边上的植物怎么样了",
  ["第11天，维克波顿读了一本书，召唤了一群触手"])
C("dst-p22", "describe", "zh", ["hound", "base"],
  [("第54天，玩家在基地附近发现了一个猎犬丘", 54, E)],
  "家门口那堆满是骨头的狗窝我哪天注意到的",
  ["第54天，玩家在基地附近发现了一个蜘蛛巢"])
C("dst-p23", "synonym", "en", ["backpack", "crafting"],
  [("Day 12: the player crafted a Backpack from grass and twigs", 12, E)],
  "when did I make a bag to carry more stuff?",
  ["="])
C("dst-p24", "other-name", "en", ["webber", "spider", "pig"],
  [("Day 9: Webber made friends with a spider den and the spiders fought off the pigs", 9, E)],
  "did the monster kid's eight-legged buddies protect us from the swine?",
  ["Day 9: Webber made friends with a spider den and the pigs burned it down"])
C("dst-p25", "describe", "en", ["hound", "varg"],
  [("Day 40: a Varg and its hounds chased the player", 40, E)],
  "when did that big wolf leader with his pack run me down",
  ["Day 40: a Varg and its hounds were killed by the player"])
C("dst-p26", "consequence", "en", ["food", "mushroom"],
  [("Day 20: the player ate a raw Red Cap mushroom and lost health", 20, E)],
  "what happened when I swallowed that crimson toadstool uncooked?",
  ["="])
C("dst-p27", "cause", "en", ["lightning", "rain"],
  [("Day 52: the player got hit by lightning because there was no lightning rod", 52, E)],
  "why did a bolt from the sky zap me?",
  ["Day 52: the player built a lightning rod next to the farm"])
C("dst-p28", "cause", "en", ["crockpot", "food"],
  [("Day 36: the Crock Pot made Wet Goop because the recipe was wrong", 36, E)],
  "why did my cooking come out as sludge?",
  ["Day 36: the Crock Pot made Meatballs from monster meat and ice"])
C("dst-p29", "describe", "en", ["dragonfly", "fire"],
  [("Day 65: the player built a Scaled Furnace from Dragonfly scales", 65, E)],
  "when did I put up that reptile-skin heater that never goes out?",
  ["="])
C("dst-p30", "plan", "en", ["goal", "farm"],
  [("The player plans to build Improved Farms near the pond", 30, G)],
  "what gardening project did I want to set up?",
  ["The player plans to build Improved Farms near the pig village"])
C("dst-p31", "plan", "en", ["goal", "ruins", "caves"],
  [("The player wants to explore the Ruins before the next winter", 45, G)],
  "where was I hoping to venture ahead of the coming cold season?",
  ["The player wants to explore the Lunar Island before the next winter"])
C("dst-p32", "consequence", "en", ["tree", "treeguard"],
  [("Day 38: a Treeguard woke up when the player chopped too many evergreens", 38, E)],
  "what attacked me when I cut down half the pine forest?",
  ["="])
C("dst-p33", "other-name", "en", ["wortox", "health"],
  [("Day 18: Wortox ate souls to heal the team", 18, E)],
  "did the imp use spirits to patch everyone up?",
  ["Day 18: Wortox ate souls and lost sanity"])
C("dst-p34", "describe", "en", ["butterfly", "flower"],
  [("Day 42: the player caught a Butterfly and planted it as a flower", 42, E)],
  "when did I turn a fluttering bug into a bloom in the ground?",
  ["Day 42: the player caught a Butterfly and ate its wings"])
C("dst-p35", "cause", "en", ["bee", "boss"],
  [("Day 53: the Bee Queen woke up because the player hit her giant hive", 53, E)],
  "what made the royal insect come out angry?",
  ["="])
C("dst-p36", "synonym", "en", ["pig", "gold"],
  [("Day 66: the player swapped trinkets with the Pig King for gold nuggets", 66, E)],
  "when did I hand over toys to the swine ruler for shiny loot?",
  ["Day 66: the player swapped meat with the Pig King for gold nuggets"])

# ======================= Oxygen Not Included =======================
C("oni-p01", "synonym", "zh", ["morale", "food", "furniture"],
  [("第13周期，玩家给复制人造了一个饭桌", 13, E)],
  "我哪天给大家添置了用餐的台子",
  ["="])
C("oni-p02", "cause", "zh", ["stamina", "bed"],
  [("第21周期，一个复制人晕倒了，因为连续几天没睡觉", 21, E)],
  "那个小伙子为什么会突然昏过去",
  ["第21周期，一个复制人晕倒了，因为没吃饭"])
C("oni-p03", "consequence", "zh", ["gas", "chlorine"],
  [("第26周期，玩家挖穿了一片氯气，基地里到处都是绿色的毒气", 26, E)],
  "那回把一团含氯的气泡凿开以后，住的地方变成什么样了",
  ["第26周期，玩家挖穿了一片氯气，用气泵抽走了"])
C("oni-p04", "describe", "zh", ["oxygen", "algae"],
  [("第30周期，玩家造了一个藻类箱，用水和藻类做氧气", 30, E)],
  "那个泡着水、里面长青苔出空气的小玻璃缸我哪天装的",
  ["="])
C("oni-p05", "describe", "zh", ["gas", "plumbing", "co2"],
  [("第47周期，玩家在管道上装了气体过滤器，把二氧化碳分出来", 47, E)],
  "管路上那个把呼出的废气单独挑走的设备是哪天加的",
  ["第47周期，玩家在管道上装了气体过滤器，把氯气分出来"])
C("oni-p06", "consequence", "zh", ["food", "morale"],
  [("第59周期，复制人吃了好几天米虱，心情变差了", 59, E)],
  "天天让他们啃那种粗糙的虫子饭，大家情绪有啥变化",
  ["第59周期，复制人吃了好几天烤肉，心情很好"])
C("oni-p07", "cause", "zh", ["power"],
  [("第63周期，电路跳闸了，因为电线上接的机器太多", 63, E)],
  "那天为啥突然断电，线还烧坏了",
  ["="])
C("oni-p08", "synonym", "zh", ["schedule", "bed"],
  [("第67周期，玩家把复制人的睡觉时间改成了轮班", 67, E)],
  "我哪天把大家的作息调成分批休息的",
  ["第68周期，玩家把复制人的睡觉时间改成了轮班"])
C("oni-p09", "describe", "zh", ["space", "surface", "meteor"],
  [("第76周期，地表下起了流星雨，砸坏了两台机器", 76, E)],
  "天上掉下石块把设备弄坏那次是哪天",
  ["第76周期，地表下起了流星雨，没砸到东西"])
C("oni-p10", "other-name", "zh", ["germs", "medical"],
  [("第84周期，玩家建了一个医疗站，治好了生病的复制人", 84, E)],
  "我哪天搭起了给病号疗养的小诊所",
  ["="])
C("oni-p11", "consequence", "zh", ["temperature", "plumbing", "cooling"],
  [("第88周期，液冷机把水冷成了冰，堵住了管道", 88, E)],
  "那台降温设备把流体冻住之后出了什么问题",
  ["第88周期，液冷机把水冷到了五度，刚刚好"])
C("oni-p12", "cause", "zh", ["temperature", "steam", "injury"],
  [("第91周期，一个复制人烫伤了，因为他穿过了一片高温蒸汽", 91, E)],
  "那个人身上的伤是怎么来的",
  ["第91周期，一个复制人摔伤了，因为他从梯子上掉了下来"])
C("oni-p13", "describe", "zh", ["suit", "space"],
  [("第95周期，玩家做了四套气压服", 95, E)],
  "我哪天缝好了那几身能在真空里活动的防护装",
  ["="])
C("oni-p14", "describe", "zh", ["geyser", "metal", "magma"],
  [("第99周期，玩家在地图右边找到了一处铁火山", 99, E)],
  "我在东侧发现的那个会往外喷熔融金属的口子是哪天",
  ["第99周期，玩家在地图左边找到了一处金火山"])
C("oni-p15", "other-name", "zh", ["metal", "industry"],
  [("第104周期，玩家造了一台岩石粉碎机，把矿石磨成了金属", 104, E)],
  "将矿块碾碎出精炼材料的那台碎石设备哪天建的",
  ["第104周期，玩家拆掉了岩石粉碎机"])
C("oni-p16", "cause", "zh", ["farm", "light", "food"],
  [("第109周期，农场的毛刺花停止生长了，因为光照不够", 109, E)],
  "那片浆果作物为啥不再结果了",
  ["="])
C("oni-p17", "plan", "zh", ["goal", "water"],
  [("玩家计划把污染水全净化成干净的水", 60, G)],
  "我是不是准备把脏的液体全处理成能喝的",
  ["玩家计划把污染水全倒进地图底部"])
C("oni-p18", "plan", "zh", ["goal", "light", "decor"],
  [("玩家想给所有房间都装上灯", 45, G)],
  "我是不是说过要让每间屋子都亮起来",
  ["玩家想给所有房间都铺上地毯"])
C("oni-p19", "synonym", "zh", ["decor", "bed"],
  [("第16周期，玩家在卧室里放了一盆花", 16, E)],
  "我哪天在睡房里摆了株盆栽",
  ["第16周期，玩家在饭厅里放了一盆花"], cur=40)
C("oni-p20", "consequence", "zh", ["storage"],
  [("第23周期，储藏室满了，东西堆得满地都是", 23, E)],
  "仓库装不下之后，物品都放在哪了",
  ["="])
C("oni-p21", "other-name", "zh", ["printer", "food"],
  [("第39周期，打印舱提供了一盒食物", 39, E)],
  "那个印人的舱室有一次给了我什么补给包",
  ["第39周期，打印舱提供了一只哈奇"])
C("oni-p22", "describe", "zh", ["storage", "automation"],
  [("第45周期，玩家造了一台机械臂，把物品自动搬进储物箱", 45, E)],
  "那个会自己伸手帮忙运东西的装置哪天装的",
  ["第45周期，玩家造了一台机械臂，但够不着储物箱"])
C("oni-p23", "synonym", "en", ["toilet", "germs"],
  [("Cycle 12: the player built a Sink next to the toilets", 12, E)],
  "when did we add a place to wash hands by the bathroom?",
  ["="])
C("oni-p24", "other-name", "en", ["gas", "co2", "plumbing"],
  [("Cycle 58: the player built a Gas Pump to move carbon dioxide", 58, E)],
  "when did I install the blower that shifts the stuff people breathe out",
  ["Cycle 58: the player built a Gas Pump to move chlorine"])
C("oni-p25", "describe", "en", ["water", "temperature"],
  [("Cycle 61: the player set up a Liquid Tepidizer to warm the water", 61, E)],
  "when did I put in the heater that sits inside a pool?",
  ["="])
C("oni-p26", "consequence", "en", ["oxygen", "hydrogen", "gas"],
  [("Cycle 66: the player forgot to vent hydrogen and the electrolyzers stopped", 66, E)],
  "what happened when that light gas wasn't let out?",
  ["Cycle 66: the player vented hydrogen into space"])
C("oni-p27", "cause", "en", ["stress", "bed", "decor"],
  [("Cycle 70: a duplicant got stressed because of the ugly, cramped bedroom", 70, E)],
  "why was one of our crew so unhappy with where they sleep?",
  ["Cycle 71: a duplicant got stressed because of the ugly, cramped bedroom"])
C("oni-p28", "synonym", "en", ["morale", "recreation"],
  [("Cycle 74: the player put a Jukebot in the great hall", 74, E)],
  "when did we get a music machine for the mess?",
  ["Cycle 74: the player put an Arcade Cabinet in the great hall"])
C("oni-p29", "plan", "en", ["goal", "power", "geyser"],
  [("The player plans to tame the steam vent and run a steam turbine off it", 80, G)],
  "what was my idea for that hissing hot-water spout?",
  ["="])
C("oni-p30", "plan", "en", ["goal", "critter", "drecko"],
  [("The player wants to ranch Glossy Dreckos for plastic", 70, G)],
  "which critter was I planning to raise for polymers?",
  ["The player wants to ranch Hatches for coal"])
C("oni-p31", "describe", "en", ["critter", "space", "surface"],
  [("Cycle 80: the player found a Gassy Moo grazing on the surface", 80, E)],
  "when did we spot that cow-like creature wandering up top?",
  ["Cycle 80: the player found a Shove Vole digging under the surface"])
C("oni-p32", "consequence", "en", ["water", "germs"],
  [("Cycle 84: a duplicant dropped a bottle of polluted water and the floor got contaminated", 84, E)],
  "what went wrong when someone spilled the dirty liquid?",
  ["="])
C("oni-p33", "cause", "en", ["critter", "pacu", "temperature"],
  [("Cycle 90: the Pacu died because the water got too hot", 90, E)],
  "why did our fish all perish?",
  ["Cycle 90: the Pacu multiplied because the water was warm"])
C("oni-p34", "other-name", "en", ["gas", "door"],
  [("Cycle 95: the player built a Mechanized Airlock", 95, E)],
  "when did we get the automatic powered door that blocks gas?",
  ["Cycle 95: the player built a Manual Airlock"])
C("oni-p35", "synonym", "en", ["printer", "colony"],
  [("Cycle 100: the colony reached ten duplicants", 100, E)],
  "when did our crew hit double digits?",
  ["="])
C("oni-p36", "describe", "en", ["morale", "recreation", "water"],
  [("Cycle 105: the player built a Hot Tub for the duplicants to relax", 105, E)],
  "when did we add that warm soaking pool for downtime?",
  ["Cycle 105: the player built a Sauna for the duplicants to relax"])

# ======================= small talk (expected: []) =======================
SMALL = [
    ("sv", "zh", "你平时都喜欢干啥呀", []),
    ("sv", "zh", "外面下雨了，好适合窝着玩游戏", []),
    ("sv", "en", "what a lovely evening", []),
    ("sv", "en", "i'm back, did you miss me?", []),
    ("dst", "zh", "今天上班好累啊", []),
    ("dst", "zh", "你有没有什么想对我说的", []),
    ("dst", "en", "good morning!", []),
    ("dst", "en", "tell me a joke", []),
    ("oni", "zh", "周末终于到了", []),
    ("oni", "zh", "你觉得我今天表现怎么样", []),
    ("oni", "en", "thanks, that helped a lot", []),
    ("oni", "en", "let's take a short break", []),
]


def has_cjk(s):
    return re.search(r"[\u4e00-\u9fff]", s) is not None


def pick_decoys(game, mlang, tags, cur, n, seed):
    pool = [p for p in POOL[(game, mlang)] if p[2] <= cur and not (set(p[0]) & set(tags))]
    rng = random.Random(seed)
    rng.shuffle(pool)
    return pool[:n]


def build():
    out = []
    for i, c in enumerate(CASES):
        game = c["cid"].split("-")[0]
        mlang = "zh" if has_cjk(c["targets"][0][0]) else "en"
        assert mlang == c["lang"], c["cid"]
        pool_max = max(p[2] for p in POOL[(game, mlang)])
        tmax = max(t[1] for t in c["targets"])
        cur = c["cur"] if c["cur"] is not None else max(tmax, pool_max) + 3
        assert cur >= tmax, c["cid"]
        n_dec = 5 + (i % 4)  # 5..8 decoys -> 6..9 memories
        decs = pick_decoys(game, mlang, c["tags"], cur, n_dec, "para-" + c["cid"])
        assert len(decs) >= 5, (c["cid"], len(decs))
        mems = [dict(text=t[0], day=t[1], kind=t[2]) for t in c["targets"]]
        mems += [dict(text=d[1], day=d[2], kind="event") for d in decs]
        rng = random.Random("para-order-" + c["cid"])
        rng.shuffle(mems)
        tgt_texts = {t[0] for t in c["targets"]}
        for k, m in enumerate(mems, 1):
            m["key"] = "m%d" % k
        expected = [m["key"] for m in mems if m["text"] in tgt_texts]
        mems = [dict(key=m["key"], text=m["text"], day=m["day"], kind=m["kind"]) for m in mems]
        leaks = [c["targets"][0][0] if t == "=" else t for t in c["leaks"]]
        other = [dict(saveId="s%d" % (2 + j), text=t) for j, t in enumerate(leaks)]
        out.append(dict(id=c["cid"], gameId=GAMES[game], saveId="s1", currentDay=cur,
                        memories=mems, otherSaveMemories=other, question=c["question"],
                        expected=expected, style="paraphrase", lang=c["lang"], aspect=c["aspect"]))
    counters = {}
    for i, (game, lang, q, tags) in enumerate(SMALL):
        counters[game] = counters.get(game, 0) + 1
        cid = "%s-pst%02d" % (game, counters[game])
        pool_max = max(p[2] for p in POOL[(game, lang)])
        cur = pool_max + 3
        decs = pick_decoys(game, lang, tags, cur, 6 + (i % 3), "para-" + cid)
        mems = [dict(key="m%d" % (k + 1), text=d[1], day=d[2], kind="event") for k, d in enumerate(decs)]
        rng = random.Random("para-other-" + cid)
        o = rng.choice([p for p in POOL[(game, lang)] if p not in decs])
        out.append(dict(id=cid, gameId=GAMES[game], saveId="s1", currentDay=cur,
                        memories=mems, otherSaveMemories=[dict(saveId="s2", text=o[1])],
                        question=q, expected=[], style="smalltalk", lang=lang, aspect="smalltalk"))
    return out


if __name__ == "__main__":
    data = build()
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
    print(len(data), "cases written to", OUT)
