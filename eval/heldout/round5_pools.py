"""Same-save decoy pools for heldout_round5.json (hand-written, blind).

Each item is (day, topic tags, text without its date). An item that shares a tag with a case is
never drawn for it, and only items with day <= the case's currentDay are used.
"""

from __future__ import annotations

Pool = list[tuple[int, tuple[str, ...], str]]

SV_ZH: Pool = [
    (2, ("community", "junimo"), "玩家在社区中心里看到一个绿色的小东西一闪就不见了"),
    (3, ("crops", "parsnip"), "玩家在农舍门口种下了十五颗防风草种子"),
    (5, ("mines", "sword"), "玩家在矿井入口从马龙手里拿到了一把生锈的剑"),
    (8, ("fishing", "beach"), "玩家在海边码头钓到了一条沙丁鱼"),
    (10, ("gift", "haley"), "玩家送了海莉一朵向日葵，她笑得很开心"),
    (14, ("tools", "clint"), "玩家把水壶交给克林特升级成了铜水壶"),
    (21, ("animals", "coop", "chicken"), "玩家盖好了鸡舍，买了两只白鸡"),
    (26, ("festival", "dance"), "玩家在花舞节上没找到舞伴，一个人看完了表演"),
    (33, ("crops", "blueberry"), "玩家种下了一大片蓝莓"),
    (40, ("museum", "gem"), "玩家往博物馆捐了一块绿宝石"),
    (52, ("mines", "combat"), "玩家在矿井六十层附近被一群骷髅围住，连吃三个煎蛋才撑下来"),
    (58, ("crops", "pumpkin"), "玩家种了一整片南瓜"),
    (64, ("animals", "barn", "cow"), "玩家建好了畜棚，买了一头奶牛"),
    (70, ("leah", "friends"), "玩家去莉亚的小屋看她刻木雕"),
    (75, ("fishing", "mountain"), "玩家在山上的湖里钓到了一条大嘴鲈鱼"),
    (88, ("forage", "winter"), "玩家在雪地里锄地挖出了一块冬根"),
    (95, ("museum", "sewer", "krobus"), "玩家用生锈的钥匙打开了下水道，见到了科罗布斯"),
    (100, ("wood", "trees"), "玩家砍了一整天树，攒了三百多块木头"),
]

SV_EN: Pool = [
    (
        2,
        ("community", "junimo"),
        "the player saw a small green creature hop away in the community center",
    ),
    (3, ("crops", "parsnip"), "the player planted fifteen parsnip seeds by the farmhouse"),
    (6, ("mines", "sword"), "the player got a rusty sword from Marlon at the mine entrance"),
    (9, ("fishing", "beach"), "the player caught a sardine off the beach dock"),
    (12, ("gift", "haley"), "the player gave Haley a sunflower"),
    (20, ("animals", "coop", "chicken"), "the player built a coop and bought two white chickens"),
    (30, ("crops", "melon"), "the player planted a field of melons"),
    (38, ("museum", "gem"), "the player donated an emerald to the museum"),
    (45, ("tools", "clint"), "the player upgraded the pickaxe to copper at Clint's"),
    (60, ("crops", "pumpkin"), "the player planted a big patch of pumpkins"),
    (66, ("animals", "barn", "cow"), "the player built a barn and bought a cow"),
    (
        78,
        ("fishing", "river", "rain"),
        "the player caught a walleye in the river on a rainy evening",
    ),
    (90, ("forage", "winter"), "the player dug up a winter root while hoeing the snow"),
    (99, ("wood", "trees"), "the player spent the whole day chopping trees and got 300 wood"),
]

DST_ZH: Pool = [
    (1, ("start", "gather"), "玩家出生在草原边上，先采了一些树枝和干草"),
    (2, ("science", "craft"), "玩家造了一台科学机器"),
    (4, ("pig", "camp"), "玩家在猪人村旁边扎了营"),
    (6, ("spider", "night"), "玩家晚上被一群蜘蛛追着跑，躲回了营火边"),
    (9, ("farm", "crops"), "玩家放下了三块基础农田"),
    (12, ("beefalo",), "玩家趁牛睡觉刮了几次牛毛"),
    (15, ("crockpot", "food"), "玩家用烹饪锅做了第一锅肉丸"),
    (18, ("hound", "combat"), "玩家第一次遇到猎犬袭击，靠猪人帮忙打退了它们"),
    (22, ("winter", "clothes"), "玩家做了一顶冬帽"),
    (27, ("rock", "gold"), "玩家在石头地带挖了很多金块"),
    (33, ("caves",), "玩家第一次下了洞穴，看到了发光的浆果"),
    (40, ("bees", "honey"), "玩家放了两个蜂箱"),
    (46, ("frog", "rain"), "玩家在下雨天被一群青蛙围住"),
    (50, ("icebox", "food"), "玩家造了一个冰箱放食物"),
    (58, ("summer", "fire"), "玩家在基地周围放了一圈雪球发射机"),
    (61, ("pig", "gold"), "玩家拿肉去跟猪王换了金块"),
]

DST_EN: Pool = [
    (1, ("start", "gather"), "the player spawned by a grassland and gathered twigs and cut grass"),
    (3, ("science", "craft"), "the player built a Science Machine"),
    (5, ("pig", "camp"), "the player set up camp next to a pig village"),
    (
        8,
        ("spider", "night"),
        "the player ran from a group of spiders back to the campfire at night",
    ),
    (11, ("farm", "crops"), "the player placed three basic farm plots"),
    (14, ("beefalo",), "the player shaved a sleeping beefalo"),
    (17, ("crockpot", "food"), "the player cooked the first batch of meatballs in the crock pot"),
    (24, ("winter", "clothes"), "the player crafted a winter hat"),
    (29, ("rock", "gold"), "the player mined gold nuggets among the boulders"),
    (34, ("caves",), "the player went down into the caves for the first time"),
    (41, ("bees", "honey"), "the player set up two bee boxes"),
    (50, ("icebox", "food"), "the player built an ice box for food"),
    (60, ("pig", "gold"), "the player traded meat with the Pig King for gold"),
]

ONI_ZH: Pool = [
    (1, ("printing", "dupes"), "玩家从打印舱里挑了三个复制人开局"),
    (3, ("toilet",), "玩家挖好了第一个户外厕所"),
    (5, ("oxygen", "algae"), "玩家造了一台藻类制氧机"),
    (8, ("food", "farm"), "玩家种下了几株米虱木"),
    (12, ("research",), "玩家建了研究站，开始研究基础科技"),
    (16, ("bed", "sleep"), "玩家给每个复制人放了一张床"),
    (20, ("stress", "morale"), "玩家放了一张按摩床给复制人减压"),
    (22, ("power",), "玩家造了一台人力发电机和一块小电池"),
    (30, ("water", "pump"), "玩家装了液体泵，把水抽进储液罐"),
    (40, ("hatch", "ranch"), "玩家抓了几只哈奇兽关在一个小房间里"),
    (45, ("food", "cooking"), "玩家造了一台电烤炉"),
    (55, ("power", "coal"), "玩家造了两台煤炭发电机"),
    (70, ("water", "polluted"), "玩家建了一台净水器处理污染水"),
    (90, ("cold", "explore"), "玩家在基地外面挖出了一大片冰原"),
    (130, ("space", "research"), "玩家造了一台望远镜观察太空"),
]

ONI_EN: Pool = [
    (1, ("printing", "dupes"), "the player picked three duplicants from the Printing Pod"),
    (3, ("toilet",), "the player dug the first outhouse"),
    (6, ("oxygen", "algae"), "the player built an Oxygen Diffuser"),
    (9, ("food", "farm"), "the player planted some Mealwood"),
    (13, ("research",), "the player built a Research Station"),
    (17, ("bed", "sleep"), "the player placed a cot for every duplicant"),
    (23, ("power",), "the player built a Manual Generator and a small battery"),
    (32, ("water", "pump"), "the player set up a liquid pump into a reservoir"),
    (42, ("hatch", "ranch"), "the player trapped some hatches in a small room"),
    (58, ("power", "coal"), "the player built two Coal Generators"),
    (75, ("water", "polluted"), "the player built a Water Sieve for polluted water"),
    (120, ("space", "research"), "the player built a Telescope"),
]

POOLS: dict[tuple[str, str], Pool] = {
    ("sv", "zh"): SV_ZH,
    ("sv", "en"): SV_EN,
    ("dst", "zh"): DST_ZH,
    ("dst", "en"): DST_EN,
    ("oni", "zh"): ONI_ZH,
    ("oni", "en"): ONI_EN,
}
