# -*- coding: utf-8 -*-
"""Builds heldout_players_words.json (held-out retrieval eval, written blind).

Each case = hand-written target memory/memories + question + leak bait from another
save, plus same-save decoys drawn deterministically from a per-game decoy pool.
Decoys that share a topic tag with the case are excluded, and decoys are only taken
from days <= currentDay so the timeline is consistent.
"""
import json
import random
import re

GAMES = {"sv": "stardew-valley", "dst": "dont-starve-together", "oni": "oxygen-not-included"}

# ---------------------------------------------------------------- decoy pools
# (tags, text, day)
POOL = {
    ("sv", "zh"): [
        (["farm"], "春季第3天玩家清理了农场东边的树桩和杂草", 3),
        (["fishing"], "春季第11天下雨，玩家在河边钓到了一条鲶鱼", 11),
        (["shop"], "夏季第2天玩家花2000金在杂货店把背包扩到了24格", 30),
        (["crops"], "春季第5天玩家种了15颗防风草", 5),
        (["weather"], "春季第17天下雨，玩家没浇水直接去了镇上", 17),
        (["npc", "gift"], "夏季第4天玩家给莉亚送了一份沙拉", 32),
        (["mines"], "春季第15天玩家在矿井里打到了第20层", 15),
        (["craft"], "春季第19天玩家做了第一个箱子，放在家门口", 19),
        (["npc", "quest"], "夏季第6天玩家接了公告板上的委托，帮刘易斯送了一趟快递", 34),
        (["animal"], "秋季第1天玩家的鸡下了第一颗大鸡蛋", 57),
        (["crops"], "秋季第2天玩家种了一大片南瓜", 58),
        (["cooking"], "冬季第4天玩家看电视上的烹饪节目学会了做披萨", 88),
        (["npc"], "冬季第9天玩家和谢恩在酒吧聊了一晚上", 93),
        (["farm", "craft"], "夏季第15天玩家在农场门口铺了一条石子路", 43),
        (["forage"], "春季第14天玩家在森林里采到了一堆韭葱和蒲公英", 14),
        (["beach", "forage"], "夏季第23天玩家在海滩捡到了一堆珊瑚和海胆", 51),
        (["mines"], "夏季第18天玩家在矿井第50层挖到了很多金矿石", 46),
        (["tools"], "春季第26天玩家把水壶升级成了铜水壶", 26),
        (["storm", "weather"], "夏季第13天下暴雨，玩家的一棵枫树被雷劈了", 41),
        (["npc", "gift"], "秋季第8天玩家给塞巴斯蒂安送了一颗冰冻泪珠", 64),
        (["museum"], "秋季第12天玩家向博物馆捐了第一块化石", 68),
        (["craft", "wine", "money"], "秋季第20天玩家造了三台小桶准备酿东西", 76),
        (["farm"], "冬季第1天玩家把田里枯掉的作物全铲了，准备过冬", 85),
        (["festival"], "夏季第11天夏威夷宴会上，玩家往汤锅里放了一个甜瓜", 39),
        (["npc"], "春季第8天玩家第一次去了酒吧，认识了格斯", 8),
        (["craft"], "夏季第27天玩家做了一台熔炉，开始烧铜锭", 55),
        (["npc", "quest"], "冬季第18天玩家帮威利找回了他丢的鱼竿", 102),
    ],
    ("sv", "en"): [
        (["farm"], "Day 3: the player cleared the stumps on the east side of the farm", 3),
        (["fishing"], "Day 11: the player caught a catfish in the river on a rainy day", 11),
        (["crops"], "Day 5: the player planted 15 parsnips", 5),
        (["mines"], "Day 15: the player reached level 20 in the mines", 15),
        (["craft"], "Day 19: the player crafted the first chest and put it by the front door", 19),
        (["npc", "gift"], "Day 32: the player gave Leah a salad", 32),
        (["tools"], "Day 26: the player upgraded the watering can to copper", 26),
        (["npc"], "Day 8: the player visited the saloon for the first time and met Gus", 8),
        (["forage"], "Day 14: the player foraged leeks and dandelions in the forest", 14),
        (["craft"], "Day 55: the player built a furnace and smelted copper bars", 55),
        (["festival"], "Day 39: at the Luau the player added a melon to the soup", 39),
        (["cooking"], "Day 88: the player learned a pizza recipe from the TV cooking show", 88),
        (["npc"], "Day 93: the player spent the evening talking with Shane at the saloon", 93),
        (["museum"], "Day 68: the player donated the first fossil to the museum", 68),
        (["farm"], "Day 43: the player laid a gravel path in front of the farmhouse", 43),
    ],
    ("dst", "zh"): [
        (["base"], "第1天玩家在草原和森林交界处捡了很多树枝和干草", 1),
        (["food"], "第4天玩家在草原上摘了一大堆浆果", 4),
        (["base", "science"], "第2天玩家造了一台科学机器", 2),
        (["spider"], "第6天玩家烧掉了基地附近的一个蜘蛛巢", 6),
        (["explore"], "第12天玩家在地图北边发现了一片桦树林", 12),
        (["beefalo"], "第16天玩家给一头皮弗娄牛剃了毛", 16),
        (["food", "fishing"], "第19天玩家在池塘钓到了三条淡水鱼", 19),
        (["winter"], "第21天玩家做了一顶冬帽", 21),
        (["walrus", "explore"], "第25天玩家在海边发现了一个海象营地", 25),
        (["klaus"], "第34天地图上出现了一个赃物袋，玩家还没去开", 34),
        (["base"], "第29天玩家在基地里铺了卵石路", 29),
        (["explore"], "第38天玩家抓了几只蝴蝶，种成了花", 38),
        (["beefalo"], "第41天一头发情的皮弗娄牛追了玩家一路", 41),
        (["rain"], "第43天玩家做了一把雨伞", 43),
        (["caves"], "第48天玩家在洞穴里种了几株蘑菇", 48),
        (["food"], "第53天玩家在晾肉架上晾了一排肉干", 53),
        (["summer", "fire"], "第57天玩家把基地周围的草丛全挖了，防止起火", 57),
        (["base"], "第63天玩家在所有箱子上都插了小木牌做标记", 63),
        (["rain"], "第66天下雨时一群青蛙冲进了基地", 66),
        (["pig"], "第10天玩家在猪村附近造了两座猪人房", 10),
        (["tool"], "第17天玩家做了一把黄金斧头", 17),
        (["night"], "第9天晚上玩家的火把烧完了，差点被黑暗里的东西抓走", 9),
        (["explore"], "第27天玩家在地图西边找到了一个虫洞", 27),
        (["bee", "food"], "第46天玩家在冰箱里放满了蜂蜜", 46),
    ],
    ("dst", "en"): [
        (["base"], "Day 1: the player gathered twigs and grass at the edge of the forest", 1),
        (["food"], "Day 4: the player picked a bunch of berries on the grasslands", 4),
        (["base", "science"], "Day 2: the player built a Science Machine", 2),
        (["explore"], "Day 12: the player found a birchnut forest in the north", 12),
        (["beefalo"], "Day 16: the player shaved a beefalo for wool", 16),
        (["food", "fishing"], "Day 19: the player caught three freshwater fish at the pond", 19),
        (["base"], "Day 29: the player laid a cobblestone road in the base", 29),
        (["tool"], "Day 17: the player crafted a Luxury Axe", 17),
        (["explore"], "Day 27: the player found a wormhole on the west side of the map", 27),
        (["food"], "Day 53: the player set up a row of drying racks for jerky", 53),
        (["rain"], "Day 43: the player made an umbrella", 43),
        (["base"], "Day 63: the player put mini signs on all the chests", 63),
        (["pig"], "Day 10: the player built two pig houses near the pig village", 10),
        (["caves"], "Day 48: the player planted some mushrooms in the caves", 48),
        (["night"], "Day 9: the player's torch burned out at night and they nearly got grabbed in the dark", 9),
    ],
    ("oni", "zh"): [
        (["dig"], "第1周期复制人开始挖印刷舱周围的砂岩", 1),
        (["research"], "第3周期玩家建了第一台研究站", 3),
        (["food", "farm"], "第5周期玩家种了四株米虱木", 5),
        (["storage"], "第7周期玩家在基地中间放了三个储藏箱", 7),
        (["power", "research"], "第11周期玩家把电线接到了研究站", 11),
        (["bed"], "第13周期玩家给每个复制人都造了一张硬床", 13),
        (["explore", "germs"], "第17周期复制人挖到了一片沼泽生态区", 17),
        (["critter"], "第20周期基地里飞进来几只光虫", 20),
        (["food"], "第27周期玩家建了电烤架，开始烤东西吃", 27),
        (["dig"], "第31周期复制人挖穿了一块花岗岩层", 31),
        (["water"], "第34周期玩家在基地左边修了一个蓄水池", 34),
        (["morale", "decor"], "第37周期玩家在走廊挂了几幅画，提高装饰度", 37),
        (["explore", "cold"], "第41周期复制人发现了一片冰冻生态区", 41),
        (["gas"], "第46周期玩家在上层装了两台气泵抽氯气", 46),
        (["transport"], "第49周期玩家修了一条消防杆通道", 49),
        (["dig"], "第53周期复制人在基地边缘碰到了挖不动的深渊晶石", 53),
        (["critter"], "第59周期玩家发现几只树鼠在到处种树", 59),
        (["food"], "第64周期玩家在基地中央修了一个大餐厅", 64),
        (["space"], "第72周期玩家在地表建了一台望远镜", 72),
        (["dig"], "第9周期复制人挖出了一片铜矿", 9),
        (["research", "farm"], "第15周期玩家研究完了基础农业", 15),
        (["storage"], "第39周期玩家把储藏箱设置成只放矿石", 39),
        (["farm", "light"], "第44周期玩家在农田上方装了几盏灯", 44),
    ],
    ("oni", "en"): [
        (["dig"], "Cycle 1: duplicants started digging the sandstone around the Printing Pod", 1),
        (["research"], "Cycle 3: the player built the first Research Station", 3),
        (["food", "farm"], "Cycle 5: the player planted four Mealwood plants", 5),
        (["storage"], "Cycle 7: the player placed three storage bins in the middle of the base", 7),
        (["explore", "germs"], "Cycle 17: duplicants dug into a swampy slime biome", 17),
        (["critter"], "Cycle 20: a few Shine Bugs flew into the base", 20),
        (["dig"], "Cycle 31: duplicants broke through a layer of granite", 31),
        (["water"], "Cycle 34: the player built a water reservoir on the left side of the base", 34),
        (["morale", "decor"], "Cycle 37: the player hung some paintings in the hallway for decor", 37),
        (["explore", "cold"], "Cycle 41: duplicants found a frozen biome", 41),
        (["gas"], "Cycle 46: the player installed two gas pumps to suck up chlorine", 46),
        (["transport"], "Cycle 49: the player put in a fire pole shaft", 49),
        (["dig"], "Cycle 53: duplicants hit undiggable abyssalite at the edge of the base", 53),
        (["critter"], "Cycle 59: the player spotted some Pips planting trees", 59),
        (["research", "farm"], "Cycle 15: the player finished researching Basic Farming", 15),
    ],
}

# ---------------------------------------------------------------- cases
# C(id, style, lang, tags, targets[(text, day, kind)], question, leaks, cur=None)
CASES = []


def C(cid, style, lang, tags, targets, question, leaks, cur=None):
    CASES.append(dict(cid=cid, style=style, lang=lang, tags=tags, targets=targets,
                      question=question, leaks=leaks, cur=cur))


E, G = "event", "goal"

# ======================= Stardew Valley =======================
C("sv-001", "description", "zh", ["animal"],
  [("春季第20天，玩家买了第一头奶牛，给它取名叫大黄", 20, E)],
  "那只哞哞叫的大家伙我给起的啥名儿来着", ["夏季第5天，玩家买了一头奶牛，取名叫小花"])
C("sv-002", "nickname", "zh", ["abigail"],
  [("秋季第3天玩家送了阿比盖尔一颗紫水晶，她特别开心", 59, E)],
  "紫毛妹上回收到我的东西高兴不", ["冬季第10天玩家送给阿比盖尔一块紫水晶"])
C("sv-003", "slang", "zh", ["cc", "greenhouse"],
  [("秋季第28天玩家完成了社区中心茶水间的全部收集包，温室被修好了", 84, E)],
  "大棚到底解锁没啊，我记不清了", ["夏季第15天，玩家修好了温室"])
C("sv-004", "typo", "zh", ["greenhouse", "ancient"],
  [("冬季第5天玩家在温室里种下了12株上古水果", 89, E),
   ("第二年春季第3天玩家又在温室补种了8株上古水果", 115, E)],
  "我那个上估水过一共弄了几棵啊", ["春季第20天玩家在温室种了上古水果种子"])
C("sv-005", "homophone", "zh", ["sprinkler", "crops"],
  [("夏季第1天玩家做出了第一个优质洒水器，放在了蓝莓田中间", 29, E)],
  "兰梅地里那个自动浇花的玩意儿是啥档次的", ["夏季第3天玩家在蓝莓地里放了一个普通洒水器"])
C("sv-006", "pinyin", "zh", ["cc", "crops"],
  [("春季第25天玩家在社区中心交齐了春季作物收集包：防风草、青豆、花椰菜和土豆", 25, E)],
  "sqzx nage shucai bao wo jiaoqi le ma", ["夏季第2天玩家交齐了社区中心的春季作物收集包"])
C("sv-007", "time-reference", "zh", ["festival"],
  [("春季第13天彩蛋节上，玩家找到了9个彩蛋，但还是输给了阿比盖尔", 13, E)],
  "上个季节那个在镇上满地找东西的活动，我拿第一了吗", ["春季第13天彩蛋节，玩家找到了5个彩蛋"], cur=40)
C("sv-008", "next-step", "zh", ["goal", "animal"],
  [("夏季第8天玩家说接下来想先把鸡舍盖起来，然后养四只鸡", 36, G)],
  "我下一步该干嘛来着", ["玩家说接下来要先去矿井打到第40层"], cur=38)
C("sv-009", "paraphrase", "zh", ["mines"],
  [("春季第22天玩家下矿时晕倒了，被哈维医生救回诊所，损失了500金", 22, E)],
  "之前我在地底下挂掉那次亏了多少钱", ["夏季第3天玩家在矿井里晕倒，被送到了诊所"])
C("sv-010", "english", "en", ["festival", "haley"],
  [("春季第24天花舞节上，玩家邀请了海莉跳舞，她答应了", 24, E)],
  "who was my partner at that spring party thing?", ["春季第24天花舞节，玩家和塞巴斯蒂安跳了舞"])
C("sv-011", "slang", "zh", ["money", "wine"],
  [("夏季第20天玩家把一整批杨桃做成了果酒，卖了12000金", 48, E)],
  "我上次那波暴富是靠啥", ["秋季第10天玩家卖了一批南瓜汁，赚了5000金"])
C("sv-012", "nickname", "en", ["wizard"],
  [("Day 45: the player received Forest Magic from the Wizard and can now see the Junimos", 45, E)],
  "what did tower dude hook me up with?",
  ["Day 9: the player drank the Wizard's potion and learned to read the Junimo language"])
C("sv-013", "typo", "zh", ["house"],
  [("冬季第15天罗宾把玩家的房子扩建好了，有了厨房", 99, E)],
  "萝宾帮我家弄好是哪天来着", ["秋季第3天罗宾给玩家的房子加盖了厨房"])
C("sv-014", "description", "en", ["museum", "sewer"],
  [("Day 34: the player found the Rusty Key after donating 60 items to the museum and opened the sewers", 34, E)],
  "when did I get into that smelly underground tunnel place under town?",
  ["Day 50: the player got the Rusty Key and explored the sewers"])
C("sv-015", "time-reference", "en", ["festival", "fishing"],
  [("Day 99: on the Night Market submarine the player caught a Midnight Squid", 99, E)],
  "last winter, what'd I reel in on that underwater ride?",
  ["Day 100: the player took the submarine ride at the Night Market and caught a Blobfish"], cur=125)
C("sv-016", "next-step", "en", ["goal", "horse"],
  [("Day 70: the player decided their next goal is collecting 100 hardwood for a stable", 70, G)],
  "ok what was I supposed to be working on?",
  ["Day 30: the player's next goal is to unlock the Skull Cavern"], cur=72)
C("sv-017", "paraphrase", "zh", ["festival"],
  [("秋季第16天星露谷博览会上，玩家的展台拿了第一名，换了很多星星代币", 72, E)],
  "那次集市评比我排第几", ["秋季第16天博览会，玩家的展台得了第二名"])
C("sv-018", "mixed", "zh", ["tools"],
  [("冬季第3天玩家把镐交给铁匠克林特升级为金镐，要等两天", 87, E)],
  "我 pickaxe 丢给 Clint 那边弄，done 了没", ["秋季第20天玩家把镐交给克林特升级成了铁镐"])
C("sv-019", "pinyin", "zh", ["animal"],
  [("夏季第12天玩家从玛妮那里买了两只白鸡", 40, E)],
  "wo jia na liang zhi ji shi cong shui nar mai de", ["春季第28天玩家从玛妮那里买了一只褐色鸡"])
C("sv-020", "description", "zh", ["diamond"],
  [("冬季第8天玩家在矿井第60层第一次挖到了钻石，捐给了博物馆", 92, E)],
  "那个亮晶晶透明、能卖七百多的宝贝，我头回是在哪弄到的", ["夏季第2天玩家在矿井挖到了一颗钻石"])
C("sv-021", "slang", "zh", ["fishing"],
  [("春季第9天玩家在山湖钓到了第一条大嘴鲈鱼", 9, E)],
  "我头回甩杆上货是在哪片水", ["春季第5天玩家在海边钓到了第一条沙丁鱼"])
C("sv-022", "nickname", "zh", ["linus"],
  [("夏季第3天玩家撞见莱纳斯在翻垃圾桶，答应替他保密", 31, E)],
  "山上那个野人大叔那回被我碰着在干啥", ["秋季第1天玩家看到莱纳斯在镇上翻垃圾桶"])
C("sv-023", "homophone", "zh", ["haley"],
  [("春季第18天玩家送给海莉一束水仙花，她很喜欢", 18, E)],
  "海丽那边上回我塞了啥", ["夏季第7天玩家给海莉送了一朵向日葵"])
C("sv-024", "time-reference", "en", ["beach"],
  [("Day 48: the player repaired the broken bridge on the beach with 300 wood", 48, E)],
  "earlier this week, did I fix something over by the sand?",
  ["Day 30: the player repaired the beach bridge to reach the tide pools"], cur=51)
C("sv-025", "next-step", "zh", ["goal", "museum"],
  [("冬季第2天玩家说这个冬天想专心把博物馆的矿物都捐齐", 86, G)],
  "接下来咋整？", ["玩家说下一步要把温室解锁"], cur=88)
C("sv-026", "paraphrase", "en", ["pet"],
  [("Day 2: the player adopted a kitten and named it Sesame", 2, E)],
  "what did I call my little furball again?", ["Day 5: the player adopted a puppy and named it Bean"])
C("sv-027", "english", "en", ["marriage"],
  [("Day 150: the player married Sebastian in the town square", 150, E)],
  "when did I tie the knot with the emo programmer guy?", ["Day 120: the player married Sebastian"])
C("sv-028", "typo", "en", ["crops"],
  [("Day 40: the player planted a row of blueberries next to the farmhouse", 40, E)],
  "where'd my bluberrys go, near the hosue?", ["Day 35: the player planted blueberries by the river"])
C("sv-029", "description", "zh", ["scarecrow", "crops"],
  [("秋季第5天玩家做了第一个稻草人，立在南瓜地边上", 61, E)],
  "吓唬乌鸦的那个玩意儿我放哪块地了", ["夏季第1天玩家在玉米地里放了一个稻草人"])
C("sv-030", "mixed", "zh", ["krobus", "sewer"],
  [("冬季第20天玩家在下水道从科罗布斯那里买了一个虚空蛋", 104, E)],
  "sewer 里 shadow 小哥那儿我入手过啥 item", ["秋季第3天玩家从科罗布斯那里买了虚空精华"])
C("sv-031", "pinyin", "zh", ["skull", "mines"],
  [("秋季第12天玩家第一次进入骷髅洞穴，下到了第10层", 68, E)],
  "kldx 我最深到过几层", ["冬季第1天玩家在骷髅洞穴下到了第25层"])
C("sv-032", "time-reference", "zh", ["festival"],
  [("冬季第25天冬日星盛宴上，玩家抽到给潘姆送礼，送了一瓶啤酒", 109, E)],
  "去年年底那个神秘交换，我对口的是谁", ["冬季第25天冬日星盛宴，玩家给刘易斯送了礼物"], cur=145)
C("sv-033", "next-step", "zh", ["goal", "fishpond"],
  [("秋季第20天玩家说下一步要攒钱让罗宾造个鱼塘", 76, G)],
  "我现在该忙点啥", ["玩家说接下来要把所有工具升级成铱金"], cur=78)
C("sv-034", "paraphrase", "en", ["horse"],
  [("Day 75: the player named their horse Pancake", 75, E)],
  "what's my ride called again?", ["Day 60: the player named their horse Thunder"])
C("sv-035", "slang", "en", ["money", "crops"],
  [("Day 64: the player sold 40 pumpkins and made about 12,000g", 64, E)],
  "how much did I rake in from those big orange bois?", ["Day 70: the player sold a full harvest of pumpkins"])
C("sv-036", "homophone", "zh", ["shop", "crops"],
  [("夏季第9天玩家在皮埃尔杂货店买了50包甜瓜种子", 37, E)],
  "皮哀儿店里我一口气扫了多少货", ["春季第3天玩家在皮埃尔杂货店买了防风草种子"])
C("sv-037", "english", "en", ["storm", "weather"],
  [("夏季第13天的雷雨天，避雷针第一次收集到了电池组", 41, E)],
  "did that metal rod thing ever catch anything during a storm?", ["夏季第5天雷雨，玩家的避雷针充满了一个电池组"])
C("sv-038", "mixed", "zh", ["trees", "greenhouse"],
  [("冬季第10天玩家在温室里种了两棵桃树和一棵石榴树", 94, E)],
  "我 greenhouse 里那几棵 tree 都是啥品种", ["春季第8天玩家在温室里种了一棵苹果树"])
C("sv-039", "nickname", "zh", ["lewis"],
  [("夏季第8天玩家在玛妮卧室找到了刘易斯丢的那条短裤，偷偷还了回去", 36, E)],
  "紫裤衩老头那件事最后我咋处理的", ["夏季第11天夏威夷宴会上，玩家把刘易斯的短裤丢进了汤锅里"])
C("sv-040", "typo", "zh", ["cc"],
  [("秋季第2天玩家交齐了社区中心锅炉房的收集包，矿车修好了", 58, E)],
  "锅路房那个包我交起了没", ["夏季第20天玩家完成了锅炉房的收集包"])

# ======================= Don't Starve Together =======================
C("dst-001", "nickname", "zh", ["deerclops"],
  [("第32天独眼巨鹿来袭，砸坏了基地的两个冰箱", 32, E)],
  "那只大眼怪上次把我家哪里拆了", ["第30天独眼巨鹿来了，玩家用火腿棒把它打死了"])
C("dst-002", "slang", "zh", ["sanity", "night"],
  [("第14天晚上玩家在沼泽里理智掉到只剩20，看见了暗影生物", 14, E)],
  "上次我掉san快疯了是在哪", ["第8天玩家理智过低，被暗影生物追着打"])
C("dst-003", "description", "zh", ["crockpot", "food"],
  [("第5天玩家造出了第一口烹饪锅，先做了一锅肉丸", 5, E)],
  "那个丢四样食材进去能炖出菜的家伙什，我第几天搭起来的", ["第3天玩家在营地旁边建了烹饪锅"])
C("dst-004", "typo", "zh", ["bearger", "bee"],
  [("第18天熊獾冲进基地，把蜂箱全拍烂了", 18, E)],
  "熊灌那回把我啥东西搞坏了", ["第19天熊獾来了，玩家带着猪人把它围殴致死"])
C("dst-005", "homophone", "zh", ["pig"],
  [("第9天玩家给猪王送了10块肉，换回了一堆金块", 9, E)],
  "朱王那次给了我几坨黄的", ["第4天玩家拿怪物肉去猪王那换了金块"])
C("dst-006", "pinyin", "zh", ["mandrake"],
  [("第12天玩家在草原上挖到了一棵曼德拉草，种在了基地门口", 12, E)],
  "mdlc 我弄哪去了", ["第20天玩家晚上吃了曼德拉草，把猪人都弄睡了"])
C("dst-007", "time-reference", "zh", ["winter"],
  [("第28天玩家靠暖石和牛角帽撑过了最冷的几天", 28, E)],
  "上个冬天我靠啥扛过来的", ["第25天玩家戴着冬帽在篝火旁熬过了寒冬"], cur=50)
C("dst-008", "next-step", "zh", ["goal", "caves"],
  [("第40天玩家定了计划：下洞穴挖铥矿，做铥矿皇冠", 40, G)],
  "好了，现在该做啥来着？我之前说过的", ["玩家说下一步要去打龙蝇"], cur=42)
C("dst-009", "paraphrase", "zh", ["death", "hound"],
  [("第15天玩家被一群猎犬咬死，靠试金石复活了", 15, E)],
  "我上次挂了以后是怎么重新站起来的", ["第10天玩家饿死了，用告密的心复活"])
C("dst-010", "english", "en", ["moosegoose"],
  [("第45天麋鹿鹅在基地附近下了蛋，玩家没敢去碰", 45, E)],
  "did I mess with that giant duck nest in spring?", ["第40天玩家打死了麋鹿鹅，捡到了很多羽毛"])
C("dst-011", "slang", "zh", ["base", "pig"],
  [("第2天玩家在猪村旁边安了家，建了科学机器", 2, E)],
  "我开荒时候老窝扎哪了", ["第1天玩家在海边草地上建了营地"])
C("dst-012", "nickname", "zh", ["character"],
  [("第1天玩家选了薇格弗德开局", 1, E)],
  "这档我玩的是女武神不", ["第1天玩家选了薇格弗德开局"])
C("dst-013", "typo", "en", ["summer", "fire"],
  [("Day 60: the player built an Ice Flingomatic to stop summer wildfires near the base", 60, E)],
  "did i ever make a flingomattic", ["Day 58: the player set up two Ice Flingomatics around the crockpots"])
C("dst-014", "description", "en", ["deerclops", "rain"],
  [("Day 31: the player killed Deerclops and crafted an Eyebrella", 31, E)],
  "when did I get that umbrella with a big eyeball on it?",
  ["Day 33: the player crafted an Eyebrella after beating Deerclops"])
C("dst-015", "time-reference", "en", ["walrus"],
  [("Day 26: the player killed MacTusk at the igloo and got a Tam o' Shanter", 26, E)],
  "couple weeks back I looted some hat off a fat walrus, which one?",
  ["Day 24: the player killed MacTusk and took his Tam o' Shanter"], cur=40)
C("dst-016", "next-step", "en", ["goal", "beefalo"],
  [("Day 52: the player decided to tame a beefalo and put a saddle on it", 52, G)],
  "alright, what's next on my list?", ["Day 20: the player's plan is to kill the Dragonfly for scales"], cur=54)
C("dst-017", "paraphrase", "zh", ["beefalo"],
  [("第11天玩家把三头皮弗娄牛引到了基地旁边当护卫", 11, E)],
  "我家附近看门的那群大块头是啥时候弄过来的", ["第9天玩家把一群牛引到了营地边上"])
C("dst-018", "mixed", "zh", ["food", "crockpot"],
  [("第58天玩家用火龙果做了火龙果派", 58, E)],
  "我之前 cook 过 dragon pie 没", ["第30天玩家用烹饪锅做了火龙果派"])
C("dst-019", "pinyin", "zh", ["weapon"],
  [("第7天玩家用猪皮和肉做了一根火腿棒", 7, E)],
  "wo de huotuibang shi na tian zuo de", ["第12天玩家做了火腿棒去打蜘蛛"])
C("dst-020", "description", "zh", ["krampus", "klaus"],
  [("第35天玩家打死了坎普斯，拿到了一个坎普斯背包", 35, E)],
  "那个偷东西的黑毛山羊怪爆的大包包我捞着没", ["第20天坎普斯偷走了玩家的东西"])
C("dst-021", "slang", "zh", ["rain"],
  [("第36天下大雨，玩家整整两天没出门，一直躲在基地里", 36, E)],
  "那阵天漏了我是不是苟着宅了好久", ["第40天下雨，玩家待在基地里没出门"])
C("dst-022", "nickname", "zh", ["character"],
  [("第10天队友WX-78吃了三个齿轮，血量上限涨了", 10, E)],
  "那个铁罐头小伙伴嗑了几个零件", ["第15天WX-78吃了齿轮升级"])
C("dst-023", "homophone", "zh", ["glommer"],
  [("第17天满月，玩家在雕像边摘了花，把格罗姆带回了家", 17, E)],
  "哥萝姆是啥时候跟我走的", ["第25天满月时玩家拿到了格罗姆之花"])
C("dst-024", "time-reference", "zh", ["spider"],
  [("第3天玩家第一次被一窝蜘蛛围攻，只剩30血", 3, E)],
  "最开始那几天我是不是被八条腿的东西揍得半死", ["第4天玩家去打蜘蛛巢，差点死了"], cur=60)
C("dst-025", "next-step", "zh", ["goal", "summer"],
  [("第62天玩家说夏天结束前想把蚁狮打掉", 62, G)],
  "接下来我要忙啥", ["玩家说下一步想去打蜂后"], cur=63)
C("dst-026", "paraphrase", "en", ["farm", "caves"],
  [("Day 47: the player planted their first garden plots with carrots and corn", 47, E)],
  "when did I start growing my own veggies?",
  ["Day 30: the player built an improved farm and planted watermelons"])
C("dst-027", "english", "en", ["revive"],
  [("Day 21: the player placed a Meat Effigy in the base as a backup life", 21, E)],
  "do I have a spare respawn thingy set up at home?",
  ["Day 15: the player built a Meat Effigy near the Science Machine"])
C("dst-028", "typo", "zh", ["dragonfly"],
  [("第50天玩家去沙漠打龙蝇，死了两次都没打过", 50, E)],
  "龙鹰那次我干过了没", ["第44天玩家打败了龙蝇"])
C("dst-029", "description", "en", ["sanity", "night"],
  [("Day 13: the player crafted a Top Hat and wore it at night for sanity", 13, E)],
  "did I ever make that tall fancy magician headwear?", ["Day 8: the player made a Top Hat"])
C("dst-030", "mixed", "zh", ["hound"],
  [("第24天一大波猎犬袭击，基地的围墙被咬坏了一半", 24, E)],
  "上次那波 hound 把我的 wall 搞成啥样了", ["第18天猎犬来袭，玩家用狗牙陷阱挡住了"])
C("dst-031", "pinyin", "zh", ["caves"],
  [("第37天玩家在洞穴里找到了远古遗迹的入口", 37, E)],
  "yiji de rukou wo zhaodao le mei", ["第25天玩家下洞穴找到了遗迹"])
C("dst-032", "time-reference", "en", ["boat"],
  [("Day 44: the player built their first boat at the coast", 44, E)],
  "yesterday I made something big by the water, what was it?",
  ["Day 30: the player built a boat and sailed out"], cur=45)
C("dst-033", "next-step", "zh", ["goal", "science"],
  [("第15天玩家说要先攒够金块，造个炼金引擎", 15, G)],
  "先做啥好来着，我之前怎么计划的", ["玩家说下一步先造科学机器"], cur=16)
C("dst-034", "paraphrase", "en", ["chester", "hound"],
  [("Day 14: the player lost all their Chester items when Chester died to hounds", 14, E)],
  "remember when my walking storage box got eaten?",
  ["Day 22: Chester was killed by spiders and dropped everything"])
C("dst-035", "slang", "en", ["bee"],
  [("Day 55: the player killed the Bee Queen using a tentacle trap around her hive", 55, E)],
  "how did I cheese the big buzzy boss?", ["Day 60: the player beat the Bee Queen with lots of honey ham"])
C("dst-036", "homophone", "zh", ["hound", "pig"],
  [("第8天第一波猎犬来的时候，玩家把它们引到猪村让猪人帮忙打", 8, E)],
  "头一回烈犬上门我咋扛的", ["第6天第一波猎犬来袭，玩家躲到了蜂窝附近"])
C("dst-037", "english", "en", ["caves"],
  [("第39天玩家在远古遗迹里打死了远古守护者，拿到了守护者之角", 39, E)],
  "did I ever kill the big rhino thing down in the ruins?", ["第50天玩家击败了远古守护者"])
C("dst-038", "mixed", "zh", ["sanity", "night"],
  [("第20天玩家做了一顶花环戴着，慢慢回理智", 20, E)],
  "我之前靠啥 item 补 sanity", ["第12天玩家戴着花环回理智"])
C("dst-039", "nickname", "zh", ["character"],
  [("第30天队友麦斯威尔召唤了暗影仆从帮忙砍树", 30, E)],
  "老麦那回叫出来的小黑人替我干了啥活", ["第5天麦斯威尔用暗影仆从挖矿"])
C("dst-040", "typo", "zh", ["food", "crockpot"],
  [("第26天玩家一口气做了20个肉丸存进冰箱", 26, E),
   ("第33天玩家又做了10个肉丸", 33, E)],
  "我一共囤了多少肉玩", ["第10天玩家做了十个肉丸"])

# ======================= Oxygen Not Included =======================
C("oni-001", "nickname", "zh", ["critter"],
  [("第15周期复制人抓到了两只哈奇，关进了基地底部的养殖间", 15, E)],
  "那俩吃土拉煤的小胖墩我安置在哪了", ["第20周期玩家抓了三只哈奇"])
C("oni-002", "slang", "zh", ["oxygen"],
  [("第8周期基地氧气不足，玩家造了两台氧气扩散器", 8, E)],
  "前面那次快憋死的时候我是咋整的", ["第5周期基地快没氧气了，玩家建了第一台氧气扩散器"])
C("oni-003", "description", "zh", ["oxygen", "water"],
  [("第30周期玩家建了第一台电解器，用水产氧", 30, E)],
  "通电以后能把液体拆成能喘的气的玩意儿，头一个啥时候修的", ["第25周期玩家造了电解器"])
C("oni-004", "typo", "zh", ["stress", "morale"],
  [("第3周期复制人Meep压力太大，在基地里到处乱吐", 3, E)],
  "那个小仁压历爆表那回干了啥恶心事", ["第6周期复制人Ada压力过大，开始乱砸东西"])
C("oni-005", "homophone", "zh", ["critter"],
  [("第40周期一只哈奇下的蛋孵出了一只石哈奇", 40, E)],
  "哈琪家那小崽子是哪种", ["第35周期玩家的哈奇孵出了一只光滑哈奇"])
C("oni-006", "pinyin", "zh", ["water", "geyser"],
  [("第12周期玩家在基地右边挖到了一口冷水间歇泉", 12, E)],
  "lsjxq 在哪个方向", ["第30周期玩家找到了冷水间歇泉"])
C("oni-007", "time-reference", "zh", ["morale"],
  [("第45周期玩家在食堂里放了一台饮水机，复制人士气提升了", 45, E)],
  "最近我是不是给大伙儿弄了啥让人开心的东西", ["第60周期玩家在食堂放了饮水机提升士气"], cur=50)
C("oni-008", "next-step", "zh", ["goal", "power", "gas"],
  [("第25周期玩家说接下来要先把天然气间歇泉接上发电机", 25, G)],
  "我之前说要去搞的那个是啥来着", ["玩家说下一步要开始研究太空探索"], cur=27)
C("oni-009", "paraphrase", "zh", ["germs"],
  [("第10周期复制人Ada在黏液区得了黏液肺，咳个不停", 10, E)],
  "哪个小人上回喉咙不舒服一直喘", ["第15周期复制人Nisbet染上了黏液肺"])
C("oni-010", "english", "en", ["germs", "toilet"],
  [("第14周期玩家在厕所门口放了洗手池，防止细菌扩散", 14, E)],
  "did I ever put up a hand washing station?", ["第9周期玩家在厕所旁边放了洗手池"])
C("oni-011", "slang", "zh", ["power"],
  [("第28周期电线超载烧坏了，半个基地断电", 28, E)],
  "上回跳闸是哪里出的毛病", ["第33周期电路超负荷，电线烧坏了"])
C("oni-012", "nickname", "zh", ["power"],
  [("第4周期玩家造了第一台人力发电机，Stinky负责去跑", 4, E)],
  "当初是谁被派去蹬仓鼠轮的", ["第3周期玩家建了人力发电机，让Meep去跑"])
C("oni-013", "typo", "en", ["co2", "gas"],
  [("Cycle 33: the player built a Carbon Skimmer to clean up the CO2 at the bottom of the base", 33, E)],
  "did i make a carbn skimer yet", ["Cycle 40: the player installed two Carbon Skimmers"])
C("oni-014", "description", "en", ["heat", "cold"],
  [("Cycle 52: the player built a Thermo Aquatuner to cool the farm area", 52, E)],
  "that machine that chills liquid in pipes, did I set one up?",
  ["Cycle 70: the player set up an Aquatuner cooling loop with a steam turbine"])
C("oni-015", "time-reference", "en", ["toilet"],
  [("Cycle 2: the player built the first outhouse right next to the Printing Pod", 2, E)],
  "back at the very start, where'd I put the toilet?",
  ["Cycle 3: the player built an outhouse near the sleeping area"], cur=80)
C("oni-016", "next-step", "en", ["goal", "heat"],
  [("Cycle 60: the player wants to set up a Steam Turbine to deal with heat next", 60, G)],
  "what was the plan again?", ["Cycle 45: the player's next goal is to build a rocket"], cur=62)
C("oni-017", "paraphrase", "zh", ["bed"],
  [("第16周期玩家把复制人的硬床全换成了舒适床", 16, E)],
  "小人们睡觉的家具升级过没", ["第22周期玩家给复制人换上了舒适床"])
C("oni-018", "mixed", "zh", ["water"],
  [("第19周期玩家造了净水器，把污染水过滤成干净水", 19, E)],
  "我那个 water sieve 修起来没，dirty water 能处理了吗", ["第25周期玩家修了两台净水器"])
C("oni-019", "pinyin", "zh", ["power"],
  [("第21周期玩家在发电区建了两台煤炭发电机", 21, E)],
  "meitan fadianji wo gai le ji tai", ["第17周期玩家建了一台煤炭发电机"])
C("oni-020", "description", "zh", ["farm", "food"],
  [("第38周期玩家在基地里种了一片毛刺花，用来收毛刺莓", 38, E)],
  "那种要晒灯、结紫果子的作物我弄了多少", ["第30周期玩家种了8株毛刺花"])
C("oni-021", "slang", "en", ["heat", "farm"],
  [("Cycle 55: the lower base reached 45°C and all the crops stopped growing", 55, E)],
  "when did downstairs turn into a sauna?", ["Cycle 70: the base overheated and the Mealwood stopped growing"])
C("oni-022", "nickname", "zh", ["critter", "water"],
  [("第26周期玩家在污染水池里养了六只帕库", 26, E)],
  "那几条傻鱼我丢哪了", ["第31周期玩家往水池里放了四只帕库"])
C("oni-023", "homophone", "zh", ["morale", "stress"],
  [("第32周期好几个复制人士气太低，玩家给他们加了按摩床", 32, E)],
  "大伙示气不行那回我补了啥设施", ["第40周期复制人士气低下，玩家建了娱乐室"])
C("oni-024", "time-reference", "zh", ["start"],
  [("第1周期玩家选了Meep、Ada和Jean作为初始复制人", 1, E)],
  "最早跟着我的三个小人是谁", ["第1周期玩家选的初始复制人是Bubbles、Hassan和Catalina"], cur=60)
C("oni-025", "next-step", "zh", ["goal", "space"],
  [("第70周期玩家打算下一个目标是造火箭去太空", 70, G)],
  "往后该搞啥了", ["玩家说下一步要处理热量问题"], cur=72)
C("oni-026", "paraphrase", "en", ["suffocate", "dig"],
  [("Cycle 42: duplicant Hassan got trapped in collapsed sand and almost suffocated", 42, E)],
  "who was buried and nearly ran out of air?", ["Cycle 30: duplicant Jean was trapped in rock and suffocated"])
C("oni-027", "english", "en", ["oil"],
  [("Cycle 65: the player built an Oil Refinery to turn crude oil into petroleum", 65, E)],
  "did I start processing the black gooey stuff?", ["Cycle 90: the player set up an Oil Refinery"])
C("oni-028", "typo", "zh", ["co2", "gas"],
  [("第24周期二氧化碳在基地底部积了一大片，复制人经过时喘不上气", 24, E)],
  "二养化炭沉底那堆后来咋搞的", ["第20周期基地底部积满了二氧化碳"])
C("oni-029", "description", "zh", ["food"],
  [("第36周期玩家给厨房造了一台冰箱，用来放米虱糕", 36, E)],
  "那个通电保鲜放吃的柜子我有没有做", ["第29周期玩家建了冰箱储存食物"])
C("oni-030", "mixed", "zh", ["germs", "water", "gas"],
  [("第44周期玩家在饮用水管里加了氯气房，把水里的食物中毒病菌消掉了", 44, E)],
  "pipe 中 germ 那事最后 fix 了没", ["第50周期玩家用高温杀掉了水里的细菌"])
C("oni-031", "pinyin", "zh", ["oxygen"],
  [("第2周期玩家建了第一台氧气扩散器，放在印刷舱旁边", 2, E)],
  "yangqi kuosanqi fang na le", ["第3周期玩家在卧室边放了一台氧气扩散器"])
C("oni-032", "time-reference", "en", ["research"],
  [("Cycle 61: duplicant Jean was trained into an Advanced Researcher", 61, E)],
  "yesterday, who did I spend skill points on?", ["Cycle 40: duplicant Meep became an Advanced Researcher"], cur=62)
C("oni-033", "next-step", "zh", ["goal", "food"],
  [("第12周期玩家说要先把厨房和餐厅建好，解决吃饭问题", 12, G)],
  "下面干点啥好", ["玩家说下一步先建研究站"], cur=14)
C("oni-034", "paraphrase", "en", ["death", "food"],
  [("Cycle 27: the player lost a duplicant named Catalina to starvation", 27, E)],
  "which dupe died from not eating?", ["Cycle 18: duplicant Stinky starved to death"])
C("oni-035", "slang", "en", ["gas", "germs"],
  [("Cycle 47: polluted oxygen from the slime biome leaked into the main base", 47, E)],
  "when did the stinky air mess happen?", ["Cycle 30: polluted oxygen flooded the bedrooms"])
C("oni-036", "homophone", "zh", ["power"],
  [("第23周期玩家在发电区装了4个智能电池", 23, E),
   ("第51周期玩家又加装了2个智能电池", 51, E)],
  "我一共弄了几块电驰", ["第18周期玩家装了两个大电池"])
C("oni-037", "english", "en", ["research"],
  [("第66周期玩家建了一台超级计算机，开始研究高级科技", 66, E)],
  "have I got the big research computer yet?", ["第40周期玩家建了超级计算机"])
C("oni-038", "mixed", "zh", ["heat", "cold"],
  [("第57周期玩家在冷冻区放了一台反熵热量中和器", 57, E)],
  "我那个 AETN 冰块机器 放哪儿了", ["第80周期玩家用反熵热量中和器冷却了基地"])
C("oni-039", "nickname", "zh", ["start", "dig"],
  [("第29周期印刷舱印出了一个新复制人Nisbet，他挖掘很厉害", 29, E)],
  "新来的那个小黄人是干啥的好手", ["第20周期印刷舱出了一个新复制人Nisbet"])
C("oni-040", "typo", "zh", ["oxygen"],
  [("第9周期玩家给氧气扩散器补了一箱藻类", 9, E)],
  "氧汽扩撒器的料上次啥时候添的", ["第12周期玩家给氧气扩散器加了藻类"])

# ======================= small talk (expected: []) =======================
SMALL = [
    ("sv", "zh", "哈哈好累", []),
    ("sv", "zh", "今天天气不错嘛", ["weather", "storm"]),
    ("sv", "en", "nice weather lol", ["weather", "storm"]),
    ("sv", "zh", "你好可爱呀", []),
    ("sv", "en", "brb getting snacks", []),
    ("dst", "zh", "666", []),
    ("dst", "zh", "晚安啦，明天再玩", ["night"]),
    ("dst", "en", "lol this is chaos", []),
    ("dst", "zh", "我先去喝口水", []),
    ("dst", "zh", "嗯嗯好的", []),
    ("oni", "zh", "好无聊啊", []),
    ("oni", "en", "thanks buddy", []),
    ("oni", "zh", "你在干嘛呀", []),
    ("oni", "en", "ok cool", []),
    ("oni", "zh", "哇哦厉害", []),
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
        n_dec = 5 + (i % 4)  # 5..8 decoys -> 6..10 memories
        decs = pick_decoys(game, mlang, c["tags"], cur, n_dec, c["cid"])
        assert len(decs) >= 5, (c["cid"], len(decs))
        mems = [dict(text=t[0], day=t[1], kind=t[2]) for t in c["targets"]]
        mems += [dict(text=d[1], day=d[2], kind="event") for d in decs]
        rng = random.Random("order-" + c["cid"])
        rng.shuffle(mems)
        tgt_texts = {t[0] for t in c["targets"]}
        for k, m in enumerate(mems, 1):
            m["key"] = "m%d" % k
        expected = [m["key"] for m in mems if m["text"] in tgt_texts]
        mems = [dict(key=m["key"], text=m["text"], day=m["day"], kind=m["kind"]) for m in mems]
        other = [dict(saveId="s%d" % (2 + j), text=t) for j, t in enumerate(c["leaks"])]
        out.append(dict(id=c["cid"], gameId=GAMES[game], saveId="s1", currentDay=cur,
                        memories=mems, otherSaveMemories=other, question=c["question"],
                        expected=expected, style=c["style"], lang=c["lang"]))
    counters = {}
    for i, (game, lang, q, tags) in enumerate(SMALL):
        counters[game] = counters.get(game, 0) + 1
        cid = "%s-st%02d" % (game, counters[game])
        mlang = "zh" if lang == "zh" else "en"
        pool_max = max(p[2] for p in POOL[(game, mlang)])
        cur = pool_max + 3
        decs = pick_decoys(game, mlang, tags, cur, 6 + (i % 3), cid)
        mems = [dict(key="m%d" % (k + 1), text=d[1], day=d[2], kind="event") for k, d in enumerate(decs)]
        rng = random.Random("other-" + cid)
        o = rng.choice([p for p in POOL[(game, mlang)] if p not in decs])
        out.append(dict(id=cid, gameId=GAMES[game], saveId="s1", currentDay=cur,
                        memories=mems, otherSaveMemories=[dict(saveId="s2", text=o[1])],
                        question=q, expected=[], style="smalltalk", lang=lang))
    return out


if __name__ == "__main__":
    data = build()
    with open("/work/evalwriter/heldout_players_words.json", "w", encoding="utf-8") as f:
        json.dump(data, f, ensure_ascii=False, indent=1)
    print(len(data), "cases written")
