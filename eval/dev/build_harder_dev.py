"""Build ``harder_words_dev.json``: the player's harder words, a DEVELOPMENT set.

Written by the memory helper, who has read the retrieval code: tune on it freely;
it measures nothing held out (``eval/heldout/`` does). Styles: negation, session
time (with ``session`` and ``minutesBeforeEnd``), long chatty messages, multi-hop
(with ``bridge``), voice-transcript style, emoji, and small talk (``expected: []``).

    python3 eval/dev/build_harder_dev.py   # writes harder_words_dev.json beside it
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DECOYS: dict[str, list[tuple[str, int]]] = {
    "stardew-valley": [
        ("春季第5天，玩家在矿洞第10层找到了第一块铜矿", 5),
        ("春季第9天，玩家把第一批防风草卖给了皮埃尔", 9),
        ("春季第12天，玩家在海边捡到了一个彩虹贝壳", 12),
        ("春季第18天，玩家修好了农场北边的旧栅栏", 18),
        ("夏季第3天，玩家在镇上的酒吧玩了一局街机", 31),
        ("夏季第8天，玩家升级了水壶", 36),
    ],
    "dont-starve-together": [
        ("第4天，玩家在草原上采了很多浆果", 4),
        ("第7天，玩家做了第一把长矛", 7),
        ("第11天，玩家在沼泽边被触手打了一下", 11),
        ("第15天，玩家在基地旁边放了一个烹饪锅", 15),
        ("第18天，玩家用陷阱抓到了两只兔子", 18),
    ],
    "oxygen-not-included": [
        ("第6周期，玩家挖出了第一条通往砂岩区的通道", 6),
        ("第12周期，玩家建了第一个厕所", 12),
        ("第20周期，一个复制人因为压力太大开始乱吐", 20),
        ("第25周期，玩家在基地下方发现了一个冷水泉", 25),
        ("第31周期，玩家给研究站排了新的科技", 31),
    ],
}

CASES: list[dict[str, Any]] = [
    # -- negation / contrast ------------------------------------------------------------
    {
        "id": "hd-neg1",
        "gameId": "stardew-valley",
        "currentDay": 95,
        "memories": [
            ("m1", "冬季第2天，玩家计划冬天在温室里种满杨桃", 86, "goal"),
            ("m2", "冬季第6天，玩家计划明年春天把鸡舍扩建成豪华鸡舍", 90, "goal"),
        ],
        "question": "不是冬天温室那个计划，是另一个，我说要弄啥来着",
        "expected": ["m2"],
        "negated": "m1",
        "style": "negation",
        "lang": "zh",
    },
    {
        "id": "hd-neg2",
        "gameId": "dont-starve-together",
        "currentDay": 40,
        "memories": [
            ("m1", "第22天，巨鹿把玩家的两个冰箱踩坏了", 22, "event"),
            ("m2", "第37天，熊獾把玩家的蜂箱全拆了", 37, "event"),
        ],
        "question": "不是冬天那个独眼怪，后来那只大熊拆了我啥来着",
        "expected": ["m2"],
        "negated": "m1",
        "style": "negation",
        "lang": "zh",
    },
    {
        "id": "hd-neg3",
        "gameId": "oxygen-not-included",
        "currentDay": 60,
        "memories": [
            ("m1", "第30周期，玩家把第一个基地建在起始点左边的砂岩区", 30, "event"),
            ("m2", "第52周期，玩家在右边的冰原区建了第二个小基地", 52, "event"),
        ],
        "question": "not the first base, the other one, where did I put it again?",
        "expected": ["m2"],
        "negated": "m1",
        "style": "negation",
        "lang": "en",
    },
    {
        "id": "hd-neg4",
        "gameId": "stardew-valley",
        "currentDay": 40,
        "memories": [
            ("m1", "夏季第2天，玩家送了阿比盖尔一块紫水晶", 30, "event"),
            ("m2", "夏季第9天，玩家送了潘妮一束罂粟花", 37, "event"),
        ],
        "question": "我记得送过两次礼物，不是给阿比盖尔的那次，另一次送了什么",
        "expected": ["m2"],
        "negated": "m1",
        "style": "negation",
        "lang": "zh",
    },
    # -- session time ---------------------------------------------------------------------
    {
        "id": "hd-ses1",
        "gameId": "stardew-valley",
        "currentDay": 20,
        "memories": [
            ("m1", "春季第13天，玩家在鸡蛋节上没抢到几个蛋", 13, "event", 1, 40),
            ("m2", "春季第17天，玩家说下次要先把鱼塘挖好", 17, "goal", 2, 50),
            ("m3", "春季第18天，玩家决定把剩下的钱全拿去买洒水器", 18, "decision", 2, 3),
        ],
        "question": "我下线前最后说的那个打算是啥",
        "expected": ["m3"],
        "style": "session_time",
        "lang": "zh",
    },
    {
        "id": "hd-ses2",
        "gameId": "dont-starve-together",
        "currentDay": 30,
        "memories": [
            ("m1", "第20天，玩家在洞穴里迷路了好久", 20, "event", 1, 30),
            ("m2", "第27天，玩家答应下次一起去打蜂后", 27, "event", 2, 20),
            ("m3", "第8天，玩家说一起去打蜂后太危险了", 8, "event", 1, 90),
        ],
        "question": "上次玩的时候我们约好要干嘛",
        "expected": ["m2"],
        "style": "session_time",
        "lang": "zh",
    },
    {
        "id": "hd-ses3",
        "gameId": "oxygen-not-included",
        "currentDay": 70,
        "memories": [
            ("m1", "第60周期，玩家把氧气扩散器换成了电解器", 60, "event", 2, 25),
            ("m2", "第66周期，玩家说明天要把污水处理做好", 66, "goal", 3, 2),
            ("m3", "第64周期，玩家给复制人加了一张按摩床", 64, "event", 3, 40),
        ],
        "question": "what was I about to do right before I logged off last night?",
        "expected": ["m2"],
        "style": "session_time",
        "lang": "en",
    },
    {
        "id": "hd-ses4",
        "gameId": "stardew-valley",
        "currentDay": 50,
        "memories": [
            ("m1", "夏季第14天，玩家钓到了一条河豚", 42, "event", 1, 30),
            ("m2", "夏季第20天，玩家在夏威夷宴会上往汤里放了金色南瓜", 48, "event", 2, 35),
            ("m3", "夏季第21天，玩家把谷仓升级好了", 49, "event", 2, 2),
        ],
        "question": "last time we played what happened at the party thing",
        "expected": ["m2"],
        "style": "session_time",
        "lang": "en",
    },
    # -- long chatty -------------------------------------------------------------------
    {
        "id": "hd-long1",
        "gameId": "stardew-valley",
        "currentDay": 60,
        "memories": [
            ("m1", "秋季第1天，玩家把收集包里的锅炉房修好了，矿车能用了", 57, "event"),
            ("m2", "夏季第25天，玩家在海边建了一个鱼塘", 53, "event"),
        ],
        "question": (
            "今天上班真的累死了，老板又临时加了两个需求，午饭都没吃上，回家路上还堵车"
            "堵了一个小时，我在车上一直在想晚上要不要玩会儿游戏放松一下，结果到家发现"
            "楼上又在装修，电钻声吵得我头疼。算了不说这些了，对了，镇上那个小车现在能坐了吗，"
            "我记得好像修过什么东西"
        ),
        "expected": ["m1"],
        "style": "long_chatty",
        "lang": "zh",
    },
    {
        "id": "hd-long2",
        "gameId": "dont-starve-together",
        "currentDay": 50,
        "memories": [
            ("m1", "第41天，玩家在猪王那里用肉换了一堆金块", 41, "event"),
            ("m2", "第44天，玩家做了一顶眼球伞", 44, "event"),
        ],
        "question": (
            "my flatmate finally moved out this weekend and honestly the apartment feels "
            "so quiet now, I spent all of Sunday cleaning the kitchen and found like three "
            "mugs of mold, gross. anyway I was thinking about the game on the bus, where did "
            "all that gold I had come from?"
        ),
        "expected": ["m1"],
        "style": "long_chatty",
        "lang": "en",
    },
    {
        "id": "hd-long3",
        "gameId": "oxygen-not-included",
        "currentDay": 80,
        "memories": [
            ("m1", "第71周期，玩家用液冷机把电厂降温了", 71, "event"),
            ("m2", "第75周期，玩家养了一缸帕库鱼", 75, "event"),
        ],
        "question": (
            "最近天气热得离谱，空调开了一晚上电费肯定爆了，我妈还老说我不关窗。"
            "周末想带我爸去钓鱼，他说水库那边鱼多。唉扯远了，游戏里那个发电的地方"
            "后来是怎么给它降温的来着"
        ),
        "expected": ["m1"],
        "style": "long_chatty",
        "lang": "zh",
    },
    {
        "id": "hd-long4", "gameId": "stardew-valley", "currentDay": 75,
        "memories": [
            ("m1", "秋季第12天，玩家在矿洞第60层被一群蝙蝠围攻，差点晕倒", 68, "event"),
            ("m2", "秋季第14天，玩家把温室里的古代水果全收了", 70, "event"),
        ],
        "question": (
            "哎我跟你说，昨天我表妹来我家住，吵着要玩我的switch，我只好陪她玩了一下午的"
            "马里奥赛车，她还老是赢我，气死了。晚上又被我妈拉去逛超市，买了一堆零食。"
            "我上回在地底下被那些会飞的黑东西咬得快不行了是第几层来着？"
        ),
        "expected": ["m1"], "style": "long_chatty", "lang": "zh",
    },
    {
        "id": "hd-long5", "gameId": "oxygen-not-included", "currentDay": 90,
        "memories": [
            ("m1", "第82周期，玩家的火箭第一次飞到了太空", 82, "event"),
            ("m2", "第86周期，玩家建了第二个厨房", 86, "event"),
        ],
        "question": (
            "ok so today was honestly the longest day ever, had two exams back to back and "
            "then my bike got a flat on the way home so I had to walk like forty minutes in "
            "the rain. finally home now with tea. did that thing I launched ever make it up "
            "there?"
        ),
        "expected": ["m1"], "style": "long_chatty", "lang": "en",
    },
    {
        "id": "hd-long6", "gameId": "dont-starve-together", "currentDay": 60,
        "memories": [
            ("m1", "第52天，玩家在基地周围种了一圈桦树防火", 52, "event"),
            ("m2", "第55天，玩家给牛牛驯化好了，能骑了", 55, "event"),
        ],
        "question": (
            "今天公司团建去爬山，腿都快断了，领导还非要拍合照，拍了二十多张，回来的大巴上"
            "大家都在睡觉，我旁边的同事打呼噜特别响，我一路都没睡着，话说回来，"
            "那头大毛牛现在能让我坐上去了没"
        ),
        "expected": ["m2"], "style": "long_chatty", "lang": "zh",
    },
    # -- emoji -------------------------------------------------------------------------
    {
        "id": "hd-emoji1", "gameId": "stardew-valley", "currentDay": 45,
        "memories": [
            ("m1", "夏季第10天，玩家的母鸡第一次下了蛋", 38, "event"),
            ("m2", "夏季第12天，玩家在海边钓到了一条金枪鱼", 40, "event"),
        ],
        "question": "我家🐔第一次生🥚是哪天来着😂",
        "expected": ["m1"], "style": "emoji", "lang": "zh",
    },
    {
        "id": "hd-emoji2", "gameId": "dont-starve-together", "currentDay": 33,
        "memories": [
            ("m1", "第26天，玩家在沼泽被一群蜘蛛追着咬", 26, "event"),
            ("m2", "第29天，玩家的基地着火烧掉了两个箱子", 29, "event"),
        ],
        "question": "那次🔥把我啥烧没了😭",
        "expected": ["m2"], "style": "emoji", "lang": "zh",
    },
    {
        "id": "hd-emoji3", "gameId": "oxygen-not-included", "currentDay": 95,
        "memories": [
            ("m1", "第88周期，玩家造好了第一枚火箭", 88, "event"),
            ("m2", "第91周期，玩家在基地里养了一群哈奇兽", 91, "event"),
        ],
        "question": "when did my 🚀 get built 🤔",
        "expected": ["m1"], "style": "emoji", "lang": "en",
    },
    # -- multi-hop ---------------------------------------------------------------------
    {
        "id": "hd-hop1",
        "gameId": "stardew-valley",
        "currentDay": 70,
        "memories": [
            ("m1", "春季第20天，玩家给第一只鸡取名叫小黄", 20, "event"),
            ("m2", "秋季第10天，小黄在鸡舍里下了一个金蛋", 66, "event"),
        ],
        "question": "我养的第一只鸡最近干了啥好事",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "zh",
    },
    {
        "id": "hd-hop2",
        "gameId": "dont-starve-together",
        "currentDay": 35,
        "memories": [
            ("m1", "第12天，玩家说那个戴高帽子的绅士叫麦斯威尔", 12, "event"),
            ("m2", "第30天，玩家答应要帮麦斯威尔找齐四本书", 30, "event"),
        ],
        "question": "答应那个戴帽子的人的事做完了没",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "zh",
    },
    {
        "id": "hd-hop3",
        "gameId": "oxygen-not-included",
        "currentDay": 45,
        "memories": [
            ("m1", "第10周期，玩家说复制人里只有阿里会做饭", 10, "event"),
            ("m2", "第40周期，阿里因为吃了坏掉的食物生病了", 40, "event"),
        ],
        "question": "how's our only cook doing",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "en",
    },
    # -- voice transcript --------------------------------------------------------------
    {
        "id": "hd-voice1",
        "gameId": "stardew-valley",
        "currentDay": 30,
        "memories": [
            ("m1", "春季第25天，玩家在沙漠里遇到了一个卖东西的商人", 25, "event"),
            ("m2", "春季第28天，玩家在花舞节上邀请了海莉跳舞", 28, "event"),
        ],
        "question": "呃那个就是那个 花舞节那天我我跟谁跳的舞来着嗯",
        "expected": ["m2"],
        "style": "voice_transcript",
        "lang": "zh",
    },
    {
        "id": "hd-voice2",
        "gameId": "dont-starve-together",
        "currentDay": 25,
        "memories": [
            ("m1", "第19天，玩家在基地里建了一个科学机器", 19, "event"),
            ("m2", "第23天，玩家被一群杀人蜂追着跑了半天", 23, "event"),
        ],
        "question": "um so uh the bees the the killer bees what happened with them",
        "expected": ["m2"],
        "style": "voice_transcript",
        "lang": "en",
    },
    {
        "id": "hd-voice3",
        "gameId": "oxygen-not-included",
        "currentDay": 40,
        "memories": [
            ("m1", "第33周期，玩家的二氧化碳沉到了基地底部", 33, "event"),
            ("m2", "第38周期，玩家建了一个藻类箱生产氧气", 38, "event"),
        ],
        "question": "嗯那个氧气是是从哪来的我们那个造氧的那个东西",
        "expected": ["m2"],
        "style": "voice_transcript",
        "lang": "zh",
    },
]

SMALLTALK: list[tuple[str, str, str, int]] = [
    ("hd-st1", "stardew-valley", "今天好累啊，先聊会儿天吧", 40),
    ("hd-st2", "dont-starve-together", "你吃晚饭了吗？我今天吃的火锅", 30),
    ("hd-st3", "oxygen-not-included", "哈哈哈你刚才那句话好好笑", 50),
    ("hd-st4", "stardew-valley", "good morning! how are you today?", 40),
    ("hd-st5", "dont-starve-together", "外面在下大雨，还打雷了", 30),
    ("hd-st6", "oxygen-not-included", "I just got back from the gym, so tired lol", 50),
    ("hd-st7", "stardew-valley", "周末终于可以睡懒觉了", 40),
    ("hd-st8", "dont-starve-together", "tell me a joke", 30),
    ("hd-st9", "oxygen-not-included", "我同事今天请我喝奶茶了", 50),
    ("hd-st10", "stardew-valley", "晚安啦，明天见", 40),
    ("hd-st11", "dont-starve-together", "你觉得我今天穿什么颜色好看", 30),
    ("hd-st12", "oxygen-not-included", "ugh my cat knocked my coffee over again", 50),
]


def _memory(row: tuple[Any, ...]) -> dict[str, Any]:
    key, text, day, kind, *session = row
    out: dict[str, Any] = {"key": key, "text": text, "day": day, "kind": kind}
    if session:
        out["session"], out["minutesBeforeEnd"] = session
    return out


def build() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for case in CASES:
        memories = [_memory(m) for m in case["memories"]]
        sessions = [m.get("session") for m in memories]
        pool = [d for d in DECOYS[case["gameId"]] if d[1] <= case["currentDay"]]
        for n, (text, day) in enumerate(pool[:4], start=len(memories) + 1):
            decoy: dict[str, Any] = {"key": f"m{n}", "text": text, "day": day, "kind": "event"}
            if any(sessions):
                decoy["session"], decoy["minutesBeforeEnd"] = 1, 60 + n
            memories.append(decoy)
        target = next(m for m in memories if m["key"] == case["expected"][0])
        out = {k: v for k, v in case.items() if k != "memories"}
        out |= {
            "saveId": "s1",
            "memories": memories,
            "otherSaveMemories": [{"saveId": "s2", "text": target["text"]}],
        }
        cases.append(out)
    for cid, game, question, day in SMALLTALK:
        pool = [d for d in DECOYS[game] if d[1] <= day]
        memories = [
            {"key": f"m{n}", "text": text, "day": d, "kind": "event"}
            for n, (text, d) in enumerate(pool, start=1)
        ]
        cases.append(
            {
                "id": cid,
                "gameId": game,
                "saveId": "s1",
                "currentDay": day,
                "memories": memories,
                "otherSaveMemories": [],
                "question": question,
                "expected": [],
                "style": "smalltalk",
                "lang": "en" if question.isascii() else "zh",
            }
        )
    return cases


if __name__ == "__main__":
    out = Path(__file__).with_name("harder_words_dev.json")
    out.write_text(json.dumps(build(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
