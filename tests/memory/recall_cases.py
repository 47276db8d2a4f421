"""A small mixed Chinese/English recall set: (subject, summary, query) triples.

Each query must find its own document among all the others. Used by
``test_tokenize.py`` / ``test_retrieval.py`` and ``scripts/bench/retrieval.py``.
"""

from __future__ import annotations

CASES: list[tuple[str, str, str]] = [
    ("社区中心", "计划先完成社区中心的鱼缸收集包", "社区中心"),
    ("鱼缸收集包", "计划先完成社区中心的鱼缸收集包，还差一条鲶鱼", "鱼缸"),
    ("阿比盖尔", "答应在她生日那天送紫水晶", "阿比盖尔喜欢什么"),
    ("温室", "想在秋天结束前修好温室", "温室什么时候修"),
    ("矿洞", "上次在矿洞第40层被史莱姆打晕了", "史莱姆"),
    ("鸡舍", "决定先升级鸡舍再买奶牛", "奶牛"),
    ("钓鱼", "玩家最喜欢在海边钓鱼，讨厌钓到垃圾", "海边钓鱼"),
    ("婚礼", "和谢恩的婚礼定在春季第十天", "谢恩"),
    ("沙漠", "公交车修好后第一次去了沙漠商人那里", "去沙漠"),
    ("远古水果", "把远古水果种子全部种在温室里做酒", "远古水果酒"),
    ("冬季生存", "冬天前要准备好保暖石和冬帽", "保暖石"),
    ("猪人村", "和猪王交易换了很多金块", "猪王"),
    ("鹿角怪", "第一次打败了独眼鹿角怪，掉了眼球", "鹿角怪"),
    ("威尔逊基地", "基地建在草原旁边，靠近牛群", "基地在哪"),
    ("火药", "约定下次一起做火药炸巨鹿", "火药"),
    ("蜂箱", "在基地周围放了六个蜂箱收蜂蜜", "蜂蜜"),
    ("氧气危机", "殖民地第二十周期氧气不足，复制人开始窒息", "氧气不够"),
    ("电解水", "决定用电解水方案产氧，氢气接发电机", "氢气发电"),
    ("温度控制", "用冰凉风扇给农场降温，毛刺花快热死了", "毛刺花"),
    ("复制人米", "复制人米的压力太高，开始乱吐", "压力"),
    ("间歇泉", "发现了一个冷水间歇泉，准备接管道", "冷水间歇泉"),
    ("火箭", "目标是造出第一枚蒸汽火箭", "火箭"),
    ("Community Center", "Plan to finish the fish tank bundle first", "fish tank"),
    ("Abigail gift", "Promised to give Abigail an amethyst on her birthday", "amethyst"),
    ("Greenhouse", "Wants to repair the greenhouse before fall ends", "greenhouse repair"),
    ("Skull Cavern", "Reached floor 100 of the Skull Cavern with bombs", "skull cavern"),
    ("Fishing rod", "Upgraded to the iridium rod after saving gold", "iridium rod"),
    ("Pumpkin farm", "Planted pumpkins everywhere for the fall harvest", "pumpkins"),
    ("Deerclops", "Beat the Deerclops for the first time using a walking cane", "deerclops fight"),
    ("Winter prep", "Needs thermal stones and a winter hat before winter", "thermal stone"),
    ("Pig village", "Traded gold nuggets with the Pig King", "pig king trade"),
    ("Beefalo", "Tamed a beefalo and named it Moo", "beefalo"),
    ("Oxygen crisis", "Colony ran out of oxygen on cycle 20", "oxygen"),
    ("Electrolyzer", "Decided to use electrolyzers and burn hydrogen for power", "hydrogen power"),
    ("Slimelung", "A duplicant caught slimelung from polluted water", "polluted water"),
    ("Steam rocket", "Goal is to launch the first steam rocket", "rocket launch"),
    ("Stress", "Duplicants are stressed and vomiting everywhere", "stressed duplicants"),
    ("钓鱼比赛 fishing", "参加了夏季的 fishing 比赛拿了第二名", "fishing 比赛"),
    ("Krobus", "在下水道认识了科罗布斯 Krobus，他卖虚空蛋", "虚空蛋"),
    ("Lewis", "刘易斯镇长让玩家帮忙找紫色短裤", "紫色短裤"),
    ("Robin", "Robin will finish the barn upgrade in three days", "barn upgrade"),
    (
        "Trip to Ginger Island",
        "Took the boat to Ginger Island and found golden walnuts",
        "golden walnuts",
    ),
    ("海象", "被海象营地的海象追着打，狗也跟着咬", "海象营地"),
    ("种子", "Saved mixed seeds to plant in spring", "mixed seeds"),
]
