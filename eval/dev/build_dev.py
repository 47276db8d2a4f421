# -*- coding: utf-8 -*-
"""Builds players_words_dev.json, a DEVELOPMENT (tuning) set for memory retrieval,
written blind (no project code, glossary or other eval file was read).

Each case = hand-written target memory + player question + one leak-bait memory from
another save ("s2"), plus same-save decoys drawn deterministically from hand-written
per-game / per-language pools. Decoys sharing a topic tag with the case are excluded
and only decoys with day <= currentDay are used.

Leak bait "=" means: word-for-word the same text as the (first) target.
"""
import json
import os
import random
import re

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "players_words_dev.json")
GAMES = {"sv": "stardew-valley", "dst": "dont-starve-together", "oni": "oxygen-not-included"}

# ------------------------------------------------------------------ decoy pools
# (tags, text, day). Stardew day = absolute day (spring 1-28, summer 29-56, fall 57-84,
# winter 85-112). DST day with default seasons (autumn 1-20, winter 21-35, spring 36-55,
# summer 56-70). ONI day = cycle.
POOL = {
    ("sv", "zh"): [
        (["farm"], "春季第2天，玩家把农场门口的石头和树枝都清理干净了", 2),
        (["forage"], "春季第5天，玩家在路边采到不少韭葱和蒲公英", 5),
        (["fishing"], "春季第6天，玩家在山里的湖边钓到一条大嘴鲈鱼", 6),
        (["mines", "ore"], "春季第9天，玩家下到矿井第20层，挖了一堆铜矿", 9),
        (["gift", "emily"], "春季第15天，玩家送了艾米丽一块布料，她特别高兴", 15),
        (["festival", "flower"], "春季第24天，玩家去了花舞节，但没人愿意跟他跳舞", 24),
        (["tools"], "夏季第2天，玩家把铜锄头交给克林特升级", 30),
        (["animal", "coop"], "夏季第5天，罗宾在农场盖好了鸡舍", 33),
        (["crops", "blueberry"], "夏季第10天，玩家收了第一批蓝莓，一株结了好几颗", 38),
        (["weather", "trees"], "夏季第12天打雷下雨，农场的一棵树被闪电劈了", 40),
        (["beach"], "夏季第15天，玩家在海边捡到一个彩虹贝壳", 43),
        (["fishing", "willy"], "夏季第20天，玩家从威利店里买了玻璃纤维钓竿", 48),
        (["skills"], "夏季第25天，玩家的耕种技能升到了5级", 53),
        (["museum"], "秋季第1天，玩家把一卷矮人卷轴捐给了博物馆", 57),
        (["mines", "ore"], "秋季第8天，玩家在矿井第85层挖到了金矿", 64),
        (["gift", "sebastian"], "秋季第12天，玩家送给塞巴斯蒂安一颗冰封泪滴", 68),
        (["festival", "fair"], "秋季第16天，玩家在星露谷展览会上拿农产品参展得了第一名", 72),
        (["crops", "pumpkin"], "秋季第20天，农场里长出了一个巨型南瓜", 76),
        (["artisan", "keg"], "秋季第25天，玩家在棚屋里摆了十个小桶做果酒", 81),
        (["gift", "penny"], "冬季第3天，玩家送了潘妮一束罂粟花", 87),
        (["festival", "ice"], "冬季第8天，玩家去了冰雪节，冰上钓鱼比赛只钓到两条", 92),
        (["house"], "冬季第10天，玩家付钱让罗宾把房子扩建出了厨房", 94),
        (["money"], "冬季第20天，玩家的存款第一次超过了十万金", 104),
        (["friend", "gus"], "冬季第22天，玩家在星之果实酒吧请大家喝了一轮", 106),
        (["trees"], "春季第12天，玩家在农场北边种了一排枫树", 12),
    ],
    ("sv", "en"): [
        (["farm"], "Day 4: the player tilled a 6x6 plot next to the farmhouse", 4),
        (["fishing"], "Day 8: the player caught a sunfish in the river near Pierre's", 8),
        (["mines", "ore"], "Day 18: the player reached level 40 of the mines and found iron ore", 18),
        (["gift", "leah"], "Day 21: the player gave Leah a salad and she loved it", 21),
        (["weather", "mines"], "Day 26: it rained all day, so the player spent it in the mines", 26),
        (["animal", "barn"], "Day 31: Robin finished building the barn", 31),
        (["beach", "bridge"], "Day 36: the player repaired the bridge on the east side of the beach", 36),
        (["forage"], "Day 45: the player picked spice berries and sweet peas along the path", 45),
        (["crops", "melon"], "Day 50: the player harvested a gold-star melon", 50),
        (["museum"], "Day 59: the player donated a rusty spoon to the museum", 59),
        (["tools"], "Day 66: Clint finished upgrading the watering can to steel", 66),
        (["festival"], "Day 83: the player found the golden pumpkin in the Spirit's Eve maze", 83),
        (["money", "crops"], "Day 86: the player shipped 50 cranberries and made a lot of money", 86),
        (["skills", "mines"], "Day 96: the player's mining skill reached level 10", 96),
        (["house"], "Day 102: the player put a fireplace and a rug in the living room", 102),
    ],
    ("dst", "zh"): [
        (["base", "start"], "第2天，玩家在草原边上搭了营火，定了基地的位置", 2),
        (["science", "start"], "第3天，玩家造好了科学机器", 3),
        (["berry", "food"], "第5天，玩家移植了十几棵浆果丛到基地旁边", 5),
        (["chester"], "第7天，玩家捡到了眼骨，切斯特开始跟着走", 7),
        (["pig", "tree"], "第8天，玩家在猪村附近砍树，被树精追了半天", 8),
        (["hound"], "第9天晚上第一波猎犬来了，玩家躲在猪人旁边打", 9),
        (["wormhole"], "第11天，玩家跳进虫洞，一下传到了地图另一头", 11),
        (["spider"], "第12天，玩家烧掉了基地北边的一个蜘蛛巢", 12),
        (["beefalo"], "第14天，玩家趁牛睡觉刮了一堆牛毛", 14),
        (["bee"], "第16天，玩家在基地放了两个蜂箱", 16),
        (["winter", "clothes"], "第19天，玩家做了一顶冬帽准备过冬", 19),
        (["tentacle"], "第22天，玩家在沼泽被触手抽了两下，差点死了", 22),
        (["caves"], "第25天，玩家第一次下洞穴，在里面采了蘑菇", 25),
        (["winter", "fire"], "第28天晚上太冷，玩家靠着火坑才没冻死", 28),
        (["walrus", "winter"], "第31天，玩家在冰原遇到海象一家，被冰猎犬追着跑", 31),
        (["fish", "food"], "第35天，玩家在池塘钓了几条鱼烤着吃", 35),
        (["rain", "sanity"], "第40天一直下雨，玩家的理智掉得厉害", 40),
        (["frog", "rain"], "第44天下了青蛙雨，玩家被一群青蛙围着打", 44),
        (["moose"], "第46天，麋鹿鹅在基地附近筑了巢下了蛋", 46),
        (["farm"], "第50天，玩家用便便给农场施了肥", 50),
        (["summer", "fire"], "第58天太热了，基地旁边的草堆自燃了", 58),
        (["antlion", "summer"], "第60天，蚁狮在基地旁边弄出好几个坑", 60),
    ],
    ("dst", "en"): [
        (["base", "start"], "Day 3: the player set up camp next to a pond in the savanna", 3),
        (["science"], "Day 6: the player built an Alchemy Engine", 6),
        (["rabbit"], "Day 8: the player set traps and caught four rabbits", 8),
        (["spider"], "Day 10: the player killed a tier-2 spider den for silk", 10),
        (["food", "crockpot"], "Day 13: the player cooked meatballs in the Crock Pot for the first time", 13),
        (["pig"], "Day 15: the player fed meat to two pigmen so they would help chop trees", 15),
        (["hound"], "Day 18: a hound wave hit while the player was out chopping trees", 18),
        (["winter", "beard"], "Day 24: the player's beard grew long enough to keep warm", 24),
        (["caves"], "Day 27: the player picked light bulbs from flowers in the caves", 27),
        (["tallbird"], "Day 33: the player stole a Tallbird egg and ran", 33),
        (["bee"], "Day 38: the player collected honey from three bee boxes", 38),
        (["rain"], "Day 42: the player crafted an umbrella because it kept raining", 42),
        (["farm"], "Day 48: the player planted seeds in a new farm plot", 48),
        (["summer", "fire"], "Day 57: the player built an Ice Flingomatic to stop fires", 57),
        (["boat", "sea"], "Day 62: the player built a boat and sailed out to sea", 62),
    ],
    ("oni", "zh"): [
        (["dig", "start"], "第1周期，复制人挖开了出生点周围的砂岩", 1),
        (["toilet", "start"], "第2周期，玩家造了两个户外厕所", 2),
        (["research", "start"], "第3周期，研究站建好了，开始研究基础科技", 3),
        (["bed", "start"], "第4周期，玩家给每个复制人都放了一张床", 4),
        (["food", "mealwood"], "第5周期，玩家种了六株米虱木", 5),
        (["power"], "第6周期，玩家造了人力发电机，让复制人跑轮子发电", 6),
        (["power", "battery"], "第8周期，玩家在发电机旁边放了三个电池", 8),
        (["plumbing", "water"], "第10周期，玩家铺好了第一条液体管道", 10),
        (["water"], "第12周期，玩家在基地下面找到一个水池", 12),
        (["stress"], "第15周期，有个复制人压力太大，开始到处呕吐", 15),
        (["germs", "toilet"], "第16周期，洗手池旁边的污染水里全是食物中毒病菌", 16),
        (["hatch", "critter"], "第18周期，玩家抓了三只哈奇关到一个房间里", 18),
        (["power", "coal"], "第20周期，玩家造了两台煤炭发电机", 20),
        (["morale"], "第22周期，玩家给复制人造了一个大食堂提高士气", 22),
        (["gas", "co2"], "第25周期，基地底部积了一层二氧化碳", 25),
        (["printer"], "第27周期，打印舱给了一个会做饭的新复制人", 27),
        (["food", "grill"], "第32周期，玩家造了电烤炉，开始烤米虱", 32),
        (["temperature"], "第35周期，基地温度慢慢升到了35度", 35),
        (["geyser", "gas"], "第40周期，玩家在地图左边发现一个天然气泉", 40),
        (["steel", "metal"], "第50周期，金属精炼器做出了第一批钢", 50),
        (["oil"], "第55周期，玩家开始用油井抽原油", 55),
    ],
    ("oni", "en"): [
        (["dig", "start"], "Cycle 2: the duplicants dug a long corridor to the right of the Printing Pod", 2),
        (["toilet", "start"], "Cycle 3: the player built an Outhouse and a Wash Basin", 3),
        (["research", "start"], "Cycle 4: the player built a Research Station", 4),
        (["bed", "start"], "Cycle 5: the player built cots in a small bedroom", 5),
        (["power"], "Cycle 7: the player built a Manual Generator and two batteries", 7),
        (["food"], "Cycle 9: the player planted Mealwood in farm tiles", 9),
        (["hatch", "critter"], "Cycle 14: the player found a Hatch burrowing in the sandstone", 14),
        (["germs", "toilet"], "Cycle 16: food poisoning germs showed up in the bathroom", 16),
        (["water"], "Cycle 19: the player pumped a pocket of polluted water into a reservoir", 19),
        (["stress"], "Cycle 21: a duplicant broke down crying from stress", 21),
        (["power", "coal"], "Cycle 24: the player switched to Coal Generators", 24),
        (["morale"], "Cycle 26: the player built a Mess Table room to keep morale up", 26),
        (["temperature", "food"], "Cycle 30: the farm area got too hot for the Mealwood", 30),
        (["geyser"], "Cycle 38: the player found a Cool Steam Vent", 38),
        (["steel", "metal"], "Cycle 48: the player made the first steel in a Metal Refinery", 48),
    ],
}

# ------------------------------------------------------------------ cases
# C(id, style, lang, tags, targets[(text, day, kind)], question, leaks, cur=None)
CASES = []


def C(cid, style, lang, tags, targets, question, leaks, cur=None):
    CASES.append(dict(cid=cid, style=style, lang=lang, tags=tags, targets=targets,
                      question=question, leaks=leaks, cur=cur))


E, G = "event", "goal"

# ======================= Stardew Valley =======================
C("sv-001", "slang", "zh", ["artisan", "keg", "money"],
  [("秋季第10天，玩家在棚屋里用小桶酿出了第一批远古水果酒", 66, E)],
  "我的摇钱树酒厂开张那天是啥时候来着",
  ["秋季第12天，玩家在地窖里用小桶酿出了第一批远古水果酒"])
C("sv-002", "slang", "zh", ["mines", "skull"],
  [("冬季第5天，玩家在骷髅洞穴下到了第50层", 89, E)],
  "沙漠那个大坑我最深肝到第几了",
  ["="])
C("sv-003", "slang", "zh", ["fishing", "legend"],
  [("春季第20天下雨，玩家在山顶湖里钓到了传说之鱼", 20, E)],
  "那条鱼王我是哪天搞到手的",
  ["夏季第3天，玩家在海边钓到了一条河豚"], cur=40)
C("sv-004", "slang", "en", ["money", "crops", "desert"],
  [("Day 48: the player planted the whole field with starfruit bought at Sandy's shop", 48, E)],
  "when did i go all in on the big money crop from the desert",
  ["Day 50: the player planted the whole field with starfruit bought at Sandy's shop"])
C("sv-005", "nickname", "zh", ["abigail", "gift", "pumpkin"],
  [("秋季第5天，玩家送了阿比盖尔一个南瓜，她开心得跳起来", 61, E)],
  "阿B那回收了我的礼物乐成那样，送的是啥来着",
  ["秋季第5天，玩家送了海莉一朵向日葵"])
C("sv-006", "nickname", "zh", ["qi", "island", "walnut"],
  [("第二年夏季第3天，玩家集齐了100颗金核桃，进入了齐先生的核桃房", 143, E)],
  "老齐那屋我是哪天进去的",
  ["="])
C("sv-007", "nickname", "zh", ["shane", "animal", "coop"],
  [("夏季第18天，谢恩的八心事件后，玩家的鸡舍里能孵出蓝色的鸡了", 46, E)],
  "酒鬼哥那次剧情之后我解锁了啥新动物",
  ["夏季第18天，谢恩的八心事件后，玩家在鸡舍里孵出了第一只蓝色的鸡"])
C("sv-008", "nickname", "en", ["clint", "geode"],
  [("Day 42: Clint cracked open an omni geode for the player and it had a prismatic shard", 42, E)],
  "when did hammer dude pull that rainbow thing out of a rock for me",
  ["Day 42: the player found a prismatic shard in a mystery box"])
C("sv-009", "typo", "zh", ["crops", "cauliflower"],
  [("春季第19天，农场里长出了一棵巨型花椰菜", 19, E)],
  "那个超大的花耶菜是哪天冒出来的",
  ["春季第21天，农场里长出了一棵巨型花椰菜"])
C("sv-010", "typo", "zh", ["bee", "artisan"],
  [("夏季第7天，玩家在花丛旁边放了四个蜂房", 35, E)],
  "我那几个封房是啥时候摆的",
  ["夏季第9天，玩家在花丛旁边放了两个蜂房"])
C("sv-011", "typo", "zh", ["slime"],
  [("冬季第16天，玩家在农场建了史莱姆屋，养了几只史莱姆", 100, E)],
  "史来姆的窝哪天盖的",
  ["冬季第2天，玩家在矿井里被一群史莱姆围攻"])
C("sv-012", "typo", "en", ["fishing", "crab"],
  [("Day 25: the player set up five crab pots along the beach pier", 25, E)],
  "wen did i lay down teh krab traps",
  ["="])
C("sv-013", "homophone", "zh", ["festival", "sebastian", "winter"],
  [("冬季第25天，玩家在冬日星盛宴上抽到要给塞巴斯蒂安送礼", 109, E)],
  "赛八思地安是不是我年底交换礼物轮到的那个",
  ["冬季第25天，玩家在冬日星盛宴上抽到要给山姆送礼"])
C("sv-014", "homophone", "zh", ["marriage", "penny"],
  [("第二年春季第10天，玩家向潘妮求婚，送了美人鱼吊坠", 122, E)],
  "美仁鱼调坠最后给了哪个妹子",
  ["第二年春季第10天，玩家向艾米丽求婚，送了美人鱼吊坠"])
C("sv-015", "homophone", "zh", ["festival", "luau"],
  [("夏季第11天，玩家在夏威夷宴会往汤里放了一个金星甜瓜，州长很满意", 39, E)],
  "夏为一晏会那锅汤我丢了啥进去",
  ["夏季第11天，玩家在夏威夷宴会往汤里放了一条鲤鱼，州长很生气"])
C("sv-016", "homophone", "zh", ["animal", "pig", "barn"],
  [("秋季第3天，玩家从玛妮那里买了一头猪", 59, E)],
  "马尼那买的那只朱是啥时候",
  ["="])
C("sv-017", "pinyin", "zh", ["cc", "bundle"],
  [("夏季第28天，玩家把工艺室的收集包全交完了，通往采石场的桥修好了", 56, E)],
  "gongyishi de dongxi quan jiao le shi na tian a",
  ["夏季第28天，玩家把茶水间的收集包全交完了"])
C("sv-018", "pinyin", "zh", ["stardrop", "festival", "fair"],
  [("秋季第16天，玩家在展览会上用星星币换到了星之果实", 72, E)],
  "wo de xzgs shi na tian huan lai de",
  ["秋季第16天，玩家在展览会上用星星币换到了一个稻草人"])
C("sv-019", "pinyin", "zh", ["woods", "tools", "trees"],
  [("夏季第9天，玩家用钢斧头砍开了隐秘森林入口的大木头", 37, E)],
  "yinmi senlin rukou shi na tian kai de",
  ["="])
C("sv-020", "pinyin", "zh", ["festival", "beach", "jellies"],
  [("夏季第28天晚上，玩家在海滩看了月光水母起舞", 56, E)],
  "ygsm qiwu na tian wo qu kan le ma",
  ["夏季第28天晚上，玩家在家里睡觉，没去海滩"])
C("sv-021", "description", "zh", ["animal", "goat", "barn"],
  [("夏季第2天，玩家的大畜棚里来了一只山羊", 30, E)],
  "会咩咩叫还长胡子那个家伙我什么时候养的",
  ["夏季第2天，玩家的大畜棚里来了一只绵羊"])
C("sv-022", "description", "zh", ["mines", "dwarf"],
  [("春季第22天，玩家在矿井里第一次遇到矮人，完全听不懂他在说什么", 22, E)],
  "矿里那个叽里咕噜的小矮个子我是啥时候碰见的",
  ["="], cur=45)
C("sv-023", "description", "zh", ["cc", "desert", "bus"],
  [("秋季第22天，玩家凑齐了金库收集包，修好了巴士，去了卡利科沙漠", 78, E)],
  "我哪天第一次坐车去那片黄沙地的",
  ["秋季第25天，玩家凑齐了金库收集包，修好了巴士"])
C("sv-024", "description", "en", ["animal", "dinosaur", "coop"],
  [("Day 70: the player's dinosaur egg hatched in the incubator", 70, E)],
  "when did that green prehistoric lizard thing pop out",
  ["Day 70: the player's duck egg hatched in the incubator"])
C("sv-025", "description", "en", ["crops", "fairy"],
  [("Day 74: a fairy came to the farm overnight and fully grew a patch of cranberries", 74, E)],
  "remember the little glowing sprite that magically finished my field one night? when was that",
  ["="])
C("sv-026", "time-reference", "zh", ["forage", "artisan"],
  [("春季第15天，玩家在路边采了好多鲑莓，做了果酱", 15, E)],
  "上个季节中旬我摘的那些野果后来拿去干嘛了",
  ["春季第16天，玩家在路边采了好多鲑莓，全卖掉了"], cur=40)
C("sv-027", "time-reference", "zh", ["mines", "skull"],
  [("冬季第2天，玩家在矿井第120层到底了，拿到了骷髅钥匙", 86, E)],
  "昨天我在地底最深处捡到啥了",
  ["冬季第2天，玩家在矿井第110层，差一点就到底了"], cur=87)
C("sv-028", "time-reference", "zh", ["crops", "shop", "start"],
  [("春季第2天，玩家在皮埃尔的店里买了15包土豆种子", 2, E)],
  "开荒头几天我在杂货铺屯了啥来种",
  ["春季第2天，玩家在皮埃尔的店里买了15包花椰菜种子"], cur=20)
C("sv-029", "time-reference", "en", ["fishing", "winter"],
  [("Day 94: the player caught a lingcod at the mountain lake", 94, E)],
  "what fish did i hook last winter",
  ["Day 94: the player caught a tiger trout at the mountain lake"], cur=125)
C("sv-030", "time-reference", "en", ["friend", "elliott"],
  [("Day 60: the player reached 4 hearts with Elliott", 60, E)],
  "earlier this week, who did i get closer to?",
  ["="], cur=63)
C("sv-031", "next-step", "zh", ["goal", "cc", "fishing"],
  [("玩家定下目标：冬天之前把鱼缸的收集包全部交齐", 60, G)],
  "接下来我该忙啥",
  ["玩家定下目标：冬天之前把锅炉房的收集包全部交齐"], cur=75)
C("sv-032", "next-step", "zh", ["goal", "marriage", "leah"],
  [("玩家打算攒够钱买美人鱼吊坠，向莉亚求婚", 70, G)],
  "我之后的计划是啥来着",
  ["玩家打算攒够钱买美人鱼吊坠，向哈维求婚"])
C("sv-033", "next-step", "zh", ["goal", "animal", "barn"],
  [("玩家想在秋天结束前把畜棚升级成豪华畜棚", 62, G)],
  "给我提个醒，我原本打算接下来搞啥",
  ["玩家想在秋天结束前把鸡舍升级成豪华鸡舍"], cur=70)
C("sv-034", "next-step", "en", ["goal", "mines"],
  [("The player wants to reach the bottom of the mines before winter", 60, G)],
  "ok what's next on my list",
  ["The player wants to buy a horse before winter"], cur=70)
C("sv-035", "next-step", "en", ["goal", "fishing"],
  [("The player plans to catch every fish for the collection tab", 75, G)],
  "what was i gonna work on after this?",
  ["="])
C("sv-036", "paraphrase", "zh", ["tools"],
  [("夏季第1天，克林特把玩家的水壶升级成了金水壶", 29, E)],
  "我浇花用的家伙什么时候变成黄金的",
  ["夏季第1天，克林特把玩家的斧头升级成了金斧头"])
C("sv-037", "paraphrase", "zh", ["trees"],
  [("春季第10天，玩家在房子旁边种了一棵樱桃树苗", 10, E)],
  "屋子边上那株会结果子的小树是哪天栽的",
  ["春季第10天，玩家在房子旁边种了一棵桃树苗"])
C("sv-038", "paraphrase", "en", ["weather", "totem"],
  [("Day 40: the player used a rain totem so the crops wouldn't need watering", 40, E)],
  "when did i make it pour on purpose to skip the chores",
  ["Day 41: it rained on its own and the player slept in"])
C("sv-039", "paraphrase", "en", ["shop", "cart"],
  [("Day 19: the player bought a red cabbage seed from the traveling cart", 19, E)],
  "what did i pick up from the wandering trader's wagon",
  ["="])
C("sv-040", "mixed", "zh", ["fishing", "willy"],
  [("秋季第6天，玩家在威利那里买了铱金钓竿", 62, E)],
  "我那根iridium rod是哪天入手的",
  ["秋季第6天，玩家在威利那里买了玻璃纤维钓竿"])
C("sv-041", "mixed", "zh", ["weapon", "desert"],
  [("冬季第1天，玩家把五彩碎片带到沙漠的三根石柱那里，换到了银河剑", 85, E)],
  "我的galaxy sword啥时候拿到的",
  ["="])
C("sv-042", "mixed", "zh", ["cc", "joja"],
  [("夏季第15天，玩家办了Joja超市的会员", 43, E)],
  "我办那个蓝色大卖场的membership是哪天",
  ["夏季第15天，玩家拒绝了Joja超市的会员"])
C("sv-043", "english", "en", ["gift", "clint"],
  [("春季第28天，玩家把一块金锭送给了克林特，他超级开心", 28, E)],
  "what did I give the blacksmith that made him so happy",
  ["春季第28天，玩家把一块铜锭送给了克林特，他没什么反应"])
C("sv-044", "english", "en", ["animal", "coop"],
  [("夏季第6天，玩家的鸡舍里第一次孵出了小鸡", 34, E)],
  "when did the first chick hatch in my coop",
  ["="])
C("sv-045", "english", "en", ["festival", "flower", "emily"],
  [("春季第24天，玩家在花舞节上和艾米丽一起跳了舞", 24, E)],
  "who was my dance partner at the spring festival",
  ["春季第24天，玩家在花舞节上和海莉一起跳了舞"], cur=40)

# ======================= Don't Starve Together =======================
C("dst-001", "slang", "zh", ["dragonfly", "boss"],
  [("第62天，玩家带着冰魔杖去熔岩沙漠打死了龙蝇", 62, E)],
  "那只大苍蝇我是哪天推掉的",
  ["第62天，玩家去熔岩沙漠打龙蝇，被烧死了"])
C("dst-002", "slang", "zh", ["sanity", "flower"],
  [("第17天，玩家摘了一大堆花，把理智回满了", 17, E)],
  "我啥时候去采花回san的",
  ["="])
C("dst-003", "slang", "zh", ["krampus", "rabbit"],
  [("第33天，玩家杀了太多兔子，坎普斯跑来把地上的东西捡走了", 33, E)],
  "我那次刷坏人值刷出了个小偷鬼，是哪天",
  ["第33天，玩家杀了太多兔子，坎普斯跑来把玩家打死了"])
C("dst-004", "slang", "en", ["caves", "ruins"],
  [("Day 45: the player went down to the Ruins and found Thulecite", 45, E)],
  "when did i first hit the ancient zone for the good rocks",
  ["Day 45: the player went down to the caves and found a sinkhole"])
C("dst-005", "nickname", "zh", ["beequeen", "boss", "bee"],
  [("第52天，玩家打掉了蜂后，拿到了蜂王冠", 52, E)],
  "蜂妈哪天倒的",
  ["第52天，玩家去捅了巨大蜂窝，被蜂后追着跑"])
C("dst-006", "nickname", "zh", ["willow", "sanity"],
  [("第23天晚上，薇洛理智太低，伯尼熊活了过来帮她打暗影生物", 23, E)],
  "火女那只玩具熊哪天变成巨熊的",
  ["="])
C("dst-007", "nickname", "zh", ["klaus", "boss", "winter"],
  [("第28天，玩家用鹿角开了赃物袋，克劳斯跳出来被玩家打死了", 28, E)],
  "圣诞老头那袋子我哪天拆的",
  ["第30天，玩家用鹿角开了赃物袋，克劳斯跳出来把玩家打死了"])
C("dst-008", "nickname", "en", ["deerclops", "boss", "crockpot"],
  [("Day 30: Deerclops smashed the player's Crock Pot", 30, E)],
  "did old one-eye break anything at my base",
  ["Day 31: Deerclops smashed the player's Ice Box"])
C("dst-009", "typo", "zh", ["walrus"],
  [("第34天，玩家打死了海象，捡到海象牙做了步行手杖", 34, E)],
  "我的步形手仗哪来的",
  ["第34天，玩家被海象的飞镖打死了"])
C("dst-010", "typo", "zh", ["icebox", "gears", "food"],
  [("第12天，玩家用齿轮造了冰箱", 12, E)],
  "兵箱是啥时候做好的",
  ["="])
C("dst-011", "typo", "zh", ["winter", "thermal"],
  [("第21天，玩家做了个暖石，揣在身上过冬", 21, E)],
  "那块暖时我哪天做的",
  ["第21天，玩家做了个暖石，结果弄丢了"])
C("dst-012", "typo", "en", ["beefalo", "saddle"],
  [("Day 40: the player domesticated a beefalo and put a saddle on it", 40, E)],
  "when did i start riding the bufalo",
  ["Day 41: the player domesticated a beefalo and put a saddle on it"])
C("dst-013", "homophone", "zh", ["toadstool", "caves", "boss"],
  [("第50天，玩家在洞里打了毒菌蟾蜍，被毒雾熏得半死", 50, E)],
  "那只毒君馋猪是哪天打的",
  ["="])
C("dst-014", "homophone", "zh", ["bunny", "caves"],
  [("第38天，玩家在洞穴里盖了四个兔屋", 38, E)],
  "我哪天弄的那几个土屋",
  ["第38天，玩家在地面上盖了四个猪屋"])
C("dst-015", "homophone", "zh", ["maxwell"],
  [("第3天，麦斯威尔召唤了暗影仆人帮玩家砍树", 3, E)],
  "卖丝围尔的影子小弟哪天开始干活的",
  ["第3天，麦斯威尔召唤了暗影仆人帮玩家挖矿"], cur=30)
C("dst-016", "homophone", "zh", ["boat", "lunar", "sea"],
  [("第75天，玩家造了一艘船，第一次开到了月岛", 75, E)],
  "我头回划到越岛是哪天",
  ["="])
C("dst-017", "pinyin", "zh", ["science", "magic"],
  [("第15天，玩家造了一个灵子分解器", 15, E)],
  "lzfjq shi na tian zao de",
  ["第15天，玩家造了一个暗影操纵器"])
C("dst-018", "pinyin", "zh", ["food", "crockpot", "dragonfruit"],
  [("第66天，玩家用火龙果在烹饪锅里做了火龙果派", 66, E)],
  "huolongguo pai wo zuo guo meiyou",
  ["第66天，玩家把火龙果直接烤着吃了"])
C("dst-019", "pinyin", "zh", ["death", "touchstone"],
  [("第9天，玩家死了，在试金石那里复活", 9, E)],
  "shijinshi fuhuo na ci shi jitian",
  ["第9天，玩家死了，吃了告密的心才复活"], cur=30)
C("dst-020", "pinyin", "zh", ["ruins", "boss"],
  [("第85天，玩家在远古遗迹打死了远古守护者", 85, E)],
  "ygshz na ci shi na tian",
  ["第85天，玩家在远古遗迹被远古守护者撞死了"])
C("dst-021", "description", "zh", ["beefalo", "base", "start"],
  [("第5天，玩家把基地建在了牛群旁边", 5, E)],
  "我哪天把家搭在那群毛茸茸会哞哞叫的大家伙边上",
  ["="], cur=30)
C("dst-022", "description", "zh", ["catcoon"],
  [("第26天，玩家打死了一只浣猫，拿到了浣猫尾巴", 26, E)],
  "那只住在空心树桩里、长得像浣熊的猫我哪天干掉的",
  ["第26天，玩家打死了一只浣猫，啥也没掉"])
C("dst-023", "description", "zh", ["clockwork", "gears"],
  [("第31天，玩家打掉了几个发条骑士，拿到了齿轮", 31, E)],
  "会跳的铁皮马是我哪天拆的",
  ["第31天，玩家打掉了几个发条主教，拿到了齿轮"])
C("dst-024", "description", "en", ["spider", "boss"],
  [("Day 47: the player killed a Spider Queen that spawned from a tier-3 den", 47, E)],
  "when did i take down that giant eight-legged momma",
  ["="])
C("dst-025", "description", "en", ["berry", "gobbler"],
  [("Day 19: gobblers ate half the berries around the base", 19, E)],
  "what were those turkey-looking birds stealing from my bushes?",
  ["Day 19: gobblers ate half the berries around the pig village"])
C("dst-026", "time-reference", "zh", ["winter", "stockpile"],
  [("第18天，玩家收集了一箱子草和树枝准备过冬", 18, E)],
  "上个季节最后那几天我囤了些啥",
  ["第18天，玩家收集了一箱子石头和木头"], cur=30)
C("dst-027", "time-reference", "zh", ["bird"],
  [("第59天，玩家在基地造了鸟笼，关了一只红雀", 59, E)],
  "昨天我关进笼子里的是啥鸟",
  ["="], cur=60)
C("dst-028", "time-reference", "zh", ["base", "science", "start"],
  [("第2天，玩家做了斧头和火把，砍了一整天树", 2, E)],
  "开局头两天我干了些啥",
  ["第2天，玩家做了斧头和火把，被蜘蛛咬死了"], cur=40)
C("dst-029", "time-reference", "en", ["penguin", "winter"],
  [("Day 29: Pengulls showed up on the coast and the player stole their eggs", 29, E)],
  "last winter what did i grab from those beach birds",
  ["Day 29: Pengulls showed up on the coast and chased the player off"], cur=75)
C("dst-030", "time-reference", "en", ["lightning", "rain"],
  [("Day 37: the player built a lightning rod next to the base", 37, E)],
  "what did i put up right at the start of the rainy season",
  ["Day 37: the player built a lightning rod next to the farm"], cur=50)
C("dst-031", "next-step", "zh", ["goal", "ruins", "caves"],
  [("玩家计划下一个冬天前下到远古遗迹，拿铥矿做铥矿皇冠", 60, G)],
  "我接下来该干啥",
  ["="])
C("dst-032", "next-step", "zh", ["goal", "summer", "fire"],
  [("玩家打算夏天来之前造两个雪球发射器防火", 45, G)],
  "还有啥要准备的，提醒我下",
  ["玩家打算夏天来之前造一个吸热火坑"], cur=50)
C("dst-033", "next-step", "zh", ["goal", "hound", "base"],
  [("玩家想攒够狗牙，在基地外面摆一圈犬牙陷阱", 30, G)],
  "下一步我原本打算弄啥",
  ["玩家想在基地外面摆一圈石墙挡猎犬"])
C("dst-034", "next-step", "en", ["goal", "boss", "dragonfly"],
  [("The player wants to kill Dragonfly to get scales for a Scaled Furnace", 55, G)],
  "remind me what my plan was",
  ["The player wants to kill Bee Queen to get a crown"])
C("dst-035", "next-step", "en", ["goal", "beefalo"],
  [("The player plans to tame a beefalo and train it for war", 20, G)],
  "what's my next move?",
  ["="])
C("dst-036", "paraphrase", "zh", ["fire", "base"],
  [("第40天，基地着火了，烧掉了三个箱子和一片树", 40, E)],
  "家里遭过一次火灾，损失了多少东西",
  ["第40天，基地着火了，烧掉了烹饪锅"])
C("dst-037", "paraphrase", "zh", ["death", "winter"],
  [("第27天，玩家在冬天冻死了，变成了鬼魂", 27, E)],
  "我是不是有一回因为太冷挂掉了",
  ["="], cur=45)
C("dst-038", "paraphrase", "en", ["food", "icebox"],
  [("Day 22: most of the player's meat went rotten because there was no Ice Box", 22, E)],
  "when did my food all spoil for lack of a fridge",
  ["Day 22: some of the player's meat went rotten before it dried on the drying rack"])
C("dst-039", "paraphrase", "en", ["bee"],
  [("Day 39: the player got stung by killer bees while collecting honey", 39, E)],
  "when was i attacked by the angry red insects at the hive",
  ["Day 39: the player got honey from the bee boxes without getting stung"])
C("dst-040", "mixed", "zh", ["antlion", "boss", "summer"],
  [("第63天，玩家在沙漠打败了蚁狮", 63, E)],
  "我哪天把antlion打掉的",
  ["第63天，玩家在沙漠被蚁狮的沙刺打死了"])
C("dst-041", "mixed", "zh", ["caves", "light"],
  [("第29天，玩家在洞穴里迷路了，靠荧光果才找到出口", 29, E)],
  "我在cave里找不到路那次靠的啥",
  ["="])
C("dst-042", "mixed", "zh", ["boss", "sea", "boat"],
  [("第90天，玩家在海上打败了帝王蟹", 90, E)],
  "crab king我啥时候打的",
  ["第90天，玩家在海上被帝王蟹打沉了船"])
C("dst-043", "english", "en", ["pig", "spider"],
  [("第13天，玩家给猪人喂肉，带了三只猪人去打蜘蛛巢", 13, E)],
  "when did I bring pigs along to clear the spider nests",
  ["第13天，玩家给猪人喂肉，带了三只猪人去砍树"])
C("dst-044", "english", "en", ["tentacle", "swamp"],
  [("第41天，玩家在沼泽打死了触手，捡到了触手尖刺", 41, E)],
  "when did I get that spiky weapon from the swamp monster",
  ["第41天，玩家在沼泽被触手打死了"])
C("dst-045", "english", "en", ["bearger", "winter", "clothes"],
  [("第24天，玩家用熊皮做了一件熊皮背心", 24, E)],
  "when did I make the warm vest from that bear-badger's fur",
  ["="])

# ======================= Oxygen Not Included =======================
C("oni-001", "slang", "zh", ["stress", "massage"],
  [("第40周期，玩家造了按摩床，复制人的压力降下来了", 40, E)],
  "我家小人emo那阵是靠啥缓过来的",
  ["第40周期，玩家造了按摩床，但没人去用"])
C("oni-002", "slang", "zh", ["oxygen"],
  [("第45周期，玩家用电解器代替了氧气扩散器", 45, E)],
  "我哪天从烧藻改成电水出氧的",
  ["="])
C("oni-003", "slang", "zh", ["toilet", "plumbing"],
  [("第9周期，玩家把户外厕所换成了抽水马桶，接上了水管", 9, E)],
  "茅坑升级成冲水的那天是哪天",
  ["第9周期，玩家又多造了两个户外厕所"], cur=40)
C("oni-004", "slang", "en", ["power", "oil"],
  [("Cycle 110: the player started burning petroleum in Petroleum Generators", 110, E)],
  "when did i switch to the black gold juice for power",
  ["Cycle 112: the player started burning natural gas in Natural Gas Generators"])
C("oni-005", "nickname", "zh", ["hatch", "critter", "ranch"],
  [("第30周期，玩家建了哈奇牧场，用它们拉出来的煤发电", 30, E)],
  "小哈那个圈是哪天搭好的",
  ["第30周期，玩家建了哈奇牧场，结果哈奇全饿死了"])
C("oni-006", "nickname", "zh", ["printer", "dupe"],
  [("第12周期，玩家从打印舱选了一个叫米普的新复制人", 12, E)],
  "小米是啥时候来我家的",
  ["="])
C("oni-007", "nickname", "zh", ["research"],
  [("第50周期，玩家造了超级计算机，开始研究高级科技", 50, E)],
  "大电脑哪天建好的",
  ["第52周期，玩家造了超级计算机，开始研究高级科技"])
C("oni-008", "nickname", "en", ["critter", "puft", "ranch"],
  [("Cycle 65: the player set up a Puft ranch to get slime from their polluted oxygen", 65, E)],
  "when did i start farming the floaty fart balloons",
  ["Cycle 65: the player set up a Hatch ranch to get coal"])
C("oni-009", "typo", "zh", ["temperature"],
  [("第60周期，玩家用隔热砖把冷库围了起来", 60, E)],
  "我那圈格热专是哪天铺的",
  ["="])
C("oni-010", "typo", "zh", ["gas", "co2"],
  [("第35周期，玩家造了碳素脱离器处理二氧化碳", 35, E)],
  "碳速脱篱器是哪天弄好的",
  ["第36周期，玩家造了两个碳素脱离器，但水不够用"])
C("oni-011", "typo", "zh", ["food"],
  [("第25周期，玩家建了冰箱，把米虱都放了进去", 25, E)],
  "冰相是哪天弄的",
  ["第25周期，玩家建了冰箱，但忘了通电"])
C("oni-012", "typo", "en", ["geyser", "water"],
  [("Cycle 75: the player tapped a salt water geyser and started desalinating", 75, E)],
  "when did i hook up the sallt watter spout",
  ["="])
C("oni-013", "homophone", "zh", ["critter", "vole", "dig"],
  [("第80周期，一群田鼠在基地底下打洞", 80, E)],
  "那堆填鼠是哪天把我家挖穿的",
  ["第81周期，一群田鼠在地表的表土里打洞"])
C("oni-014", "homophone", "zh", ["power", "surface"],
  [("第150周期，玩家在地表铺了十块太阳能板", 150, E)],
  "泰洋能版是啥时候装上去的",
  ["第150周期，玩家在地表铺了十块太阳能板，被流星砸坏了"])
C("oni-015", "homophone", "zh", ["food", "musher"],
  [("第7周期，玩家造了微生物混合器", 7, E)],
  "维声误混核器哪天搞的",
  ["="], cur=40)
C("oni-016", "homophone", "zh", ["space", "rocket"],
  [("第200周期，玩家的第一枚火箭发射成功了", 200, E)],
  "我那个或箭是哪天飞上天的",
  ["第200周期，玩家的第一枚火箭发射失败了"])
C("oni-017", "pinyin", "zh", ["water", "plumbing"],
  [("第28周期，玩家在水池里放了液泵，把水抽到水箱里", 28, E)],
  "ye beng na tian fang de",
  ["第28周期，玩家在水池里放了液泵，但没接电"])
C("oni-018", "pinyin", "zh", ["oil"],
  [("第100周期，玩家建了原油精炼器，把原油炼成石油", 100, E)],
  "yuanyou jinglian shi na tian kaishi de",
  ["="])
C("oni-019", "pinyin", "zh", ["space", "telescope"],
  [("第90周期，玩家造了望远镜开始扫描太空", 90, E)],
  "wangyuanjing sm shihou zao de",
  ["第91周期，玩家造了望远镜，但被挡住了看不到太空"])
C("oni-020", "pinyin", "zh", ["critter", "drecko", "ranch"],
  [("第55周期，玩家开始养毛鳞壁虎，剪它们的毛做芦苇纤维", 55, E)],
  "mlbh jian mao na tian kaishi",
  ["第55周期，玩家开始养哈奇，收它们的煤"])
C("oni-021", "description", "zh", ["geyser", "magma"],
  [("第130周期，玩家发现了一座小火山，会喷出岩浆", 130, E)],
  "我哪天找着那个会冒红色熔岩的山口",
  ["="])
C("oni-022", "description", "zh", ["transport"],
  [("第160周期，玩家造了运输管道，复制人能快速穿过基地", 160, E)],
  "那种把小人嗖一下送到对面的透明管子我哪天装好的",
  ["第160周期，玩家造了运输管道，但没接电用不了"])
C("oni-023", "description", "zh", ["toilet", "hygiene"],
  [("第33周期，玩家在厕所旁边装了淋浴间", 33, E)],
  "让他们洗澡的那个东西啥时候有的",
  ["第33周期，玩家在厕所旁边装了洗手池"])
C("oni-024", "description", "en", ["power", "battery"],
  [("Cycle 85: the player replaced the old batteries with Smart Batteries", 85, E)],
  "when did i get the fancy power storage that doesn't leak as much",
  ["="])
C("oni-025", "description", "en", ["critter", "light", "bed"],
  [("Cycle 27: a Shine Bug drifted into the bedroom and lit it up", 27, E)],
  "when did that little glowing flying critter wander into where they sleep",
  ["Cycle 27: a Shine Bug drifted into the bathroom and lit it up"])
C("oni-026", "time-reference", "zh", ["storage", "start", "printer"],
  [("第3周期，玩家在打印舱上方建了一排储物箱", 3, E)],
  "刚开局那几天我在出生点上头放了啥",
  ["第3周期，玩家在打印舱下方建了一排储物箱"], cur=40)
C("oni-027", "time-reference", "zh", ["temperature", "food"],
  [("第89周期，基地中间的温度太高，米虱木全热死了", 89, E)],
  "昨天是啥东西死光了",
  ["="], cur=90)
C("oni-028", "time-reference", "zh", ["temperature", "ice"],
  [("第68周期，玩家挖到了一大块冰，把它搬到了降温区", 68, E)],
  "前几天我挖出来的那个冻住的东西后来放哪了",
  ["第68周期，玩家挖到了一大块冰，直接扔进了垃圾区"], cur=72)
C("oni-029", "time-reference", "en", ["stress"],
  [("Cycle 44: a duplicant had a destructive stress tantrum and broke the electrolyzer", 44, E)],
  "what got smashed the other day",
  ["Cycle 44: a duplicant had a destructive stress tantrum and broke the research station"], cur=47)
C("oni-030", "time-reference", "en", ["food", "start"],
  [("Cycle 11: the first Bristle Blossom berries were harvested", 11, E)],
  "back in the early game, which plant did we pick from earliest",
  ["="], cur=60)
C("oni-031", "next-step", "zh", ["goal", "steel", "metal"],
  [("玩家想在第100周期之前造好金属精炼器炼钢", 40, G)],
  "接下来要搞的是啥",
  ["玩家想在第100周期之前造好超级计算机"])
C("oni-032", "next-step", "zh", ["goal", "oil"],
  [("玩家准备去地图下层挖石油，做塑料", 50, G)],
  "下一步该往哪个方向发展",
  ["玩家准备去地图上层挖铁矿"])
C("oni-033", "next-step", "zh", ["goal", "temperature", "power"],
  [("玩家打算用蒸汽涡轮机加液冷机给基地降温", 60, G)],
  "我之前说过接着要干啥来着",
  ["="])
C("oni-034", "next-step", "en", ["goal", "space", "rocket"],
  [("The player wants to launch a rocket to explore the nearest asteroid", 120, G)],
  "what's next for the colony?",
  ["The player wants to launch a rocket to collect research data from space"])
C("oni-035", "next-step", "en", ["goal", "food"],
  [("The player wants to switch everyone's meals from Mush Bars to Liceloaf", 20, G)],
  "what did i say i'd do after this?",
  ["The player wants to switch everyone's meals from Liceloaf to Frost Burgers"])
C("oni-036", "paraphrase", "zh", ["germs", "toilet"],
  [("第16周期，有复制人上完厕所没洗手，食物中毒病菌传开了", 16, E)],
  "那次因为便后不清洁，搞得大家都生病是怎么回事",
  ["="], cur=40)
C("oni-037", "paraphrase", "zh", ["death", "oxygen"],
  [("第19周期，一个复制人在下面挖矿时没氧气，憋死了", 19, E)],
  "有人因为喘不上气走掉了吗",
  ["第19周期，一个复制人在下面挖矿时没氧气，差点憋死"], cur=40)
C("oni-038", "paraphrase", "en", ["water", "bed"],
  [("Cycle 33: the duplicants dug into a pocket of polluted water and it flooded the bedrooms", 33, E)],
  "when did the sleeping quarters end up under dirty liquid",
  ["Cycle 33: the duplicants dug into a pocket of polluted water and it flooded the farm"])
C("oni-039", "paraphrase", "en", ["morale"],
  [("Cycle 52: the player upgraded the dining room into a Great Hall", 52, E)],
  "when did our eating area get turned into the fancy banquet space",
  ["="])
C("oni-040", "mixed", "zh", ["power", "oxygen", "hydrogen"],
  [("第48周期，玩家把电解器产的氢气接到氢气发电机上", 48, E)],
  "我那个H2 generator啥时候接上的",
  ["第48周期，玩家把电解器产的氢气直接排掉了"])
C("oni-041", "mixed", "zh", ["power", "automation"],
  [("第58周期，玩家用自动化线路把电池和发电机连起来了，电满了就停机", 58, E)],
  "smart battery连generator那套线是哪天接的",
  ["="])
C("oni-042", "mixed", "zh", ["critter", "hatch", "ranch"],
  [("第70周期，哈奇下的蛋在孵化器里孵出了小哈奇", 70, E)],
  "那个incubator哪天第一次出崽",
  ["第70周期，帕库下的蛋在孵化器里孵出了小帕库"])
C("oni-043", "english", "en", ["industry"],
  [("第38周期，玩家造了窑，把黏土烧成了陶瓷", 38, E)],
  "when did we start baking clay into ceramics?",
  ["第38周期，玩家造了窑，但黏土不够用"])
C("oni-044", "english", "en", ["food", "temperature"],
  [("第85周期，玩家把食物仓库降到了零度以下，食物不容易坏了", 85, E)],
  "when did we get the food storage below freezing?",
  ["第85周期，玩家的食物仓库太热，食物全坏了"])
C("oni-045", "english", "en", ["death", "magma"],
  [("第64周期，一个复制人在岩浆边干活被烫死了", 64, E)],
  "did anyone die from the heat near the lava?",
  ["="])

# ======================= small talk (expected: []) =======================
SMALL = [
    ("sv", "zh", "今天心情不错，陪我聊两句", []),
    ("sv", "zh", "哈哈你说话好逗", []),
    ("sv", "zh", "我先去吃个饭，回头再玩", []),
    ("sv", "en", "you're a good little buddy, you know that?", []),
    ("sv", "en", "brb gonna grab some water", []),
    ("dst", "zh", "晚安啦小汤圆", []),
    ("dst", "zh", "你会不会觉得我很菜", []),
    ("dst", "zh", "嘿嘿，猜猜我在想啥", []),
    ("dst", "en", "thanks for hanging out with me today", []),
    ("dst", "en", "haha nice one", []),
    ("oni", "zh", "谢谢你一直陪着我", []),
    ("oni", "zh", "好困啊，再玩十分钟就睡", []),
    ("oni", "zh", "你叫什么名字来着", []),
    ("oni", "en", "how's your day going?", []),
    ("oni", "en", "sorry, my cat just walked across the keyboard", []),
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
        pool_max = max(p[2] for p in POOL[(game, mlang)])
        tmax = max(t[1] for t in c["targets"])
        cur = c["cur"] if c["cur"] is not None else max(tmax, pool_max) + 3
        assert cur >= tmax, c["cid"]
        n_dec = 5 + (i % 4)  # 5..8 decoys -> 6..9 memories
        decs = pick_decoys(game, mlang, c["tags"], cur, n_dec, "dev-" + c["cid"])
        assert len(decs) >= 5, (c["cid"], len(decs))
        mems = [dict(text=t[0], day=t[1], kind=t[2]) for t in c["targets"]]
        mems += [dict(text=d[1], day=d[2], kind="event") for d in decs]
        rng = random.Random("dev-order-" + c["cid"])
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
                        expected=expected, style=c["style"], lang=c["lang"]))
    counters = {}
    for i, (game, lang, q, tags) in enumerate(SMALL):
        counters[game] = counters.get(game, 0) + 1
        cid = "%s-st%02d" % (game, counters[game])
        mlang = lang
        pool_max = max(p[2] for p in POOL[(game, mlang)])
        cur = pool_max + 3
        decs = pick_decoys(game, mlang, tags, cur, 6 + (i % 3), "dev-" + cid)
        mems = [dict(key="m%d" % (k + 1), text=d[1], day=d[2], kind="event") for k, d in enumerate(decs)]
        rng = random.Random("dev-other-" + cid)
        o = rng.choice([p for p in POOL[(game, mlang)] if p not in decs])
        out.append(dict(id=cid, gameId=GAMES[game], saveId="s1", currentDay=cur,
                        memories=mems, otherSaveMemories=[dict(saveId="s2", text=o[1])],
                        question=q, expected=[], style="smalltalk", lang=lang))
    return out


if __name__ == "__main__":
    data = build()
    with open(OUT, "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
    print(len(data), "cases written to", OUT)
