"""Build ``multihop_dev.json``: multi-hop references, a DEVELOPMENT set.

The player names someone or somewhere by what ANOTHER memory says of them
(「答应那个戴帽子的人的事」: 「刘易斯总是戴着一顶帽子」 says who, 「答应刘易斯帮他找回紫色短裤」
is asked for). Each case has the target, the ``bridge`` (the memory that resolves
the reference: neither a hit nor an "other"), one or two decoys of the same kind as
the target (other promises, other pets) and fillers of ``build_harder_dev.DECOYS``.
The target shares no word with the question but the kind of thing asked (答应 in
every promise); two ``control`` cases name the entity outright: the hop must not
cost them. Written by the multihop helper, who wrote the hop
(``xtyserver/memory/hop.py``): tune on it freely; it measures nothing held out.

    python3 eval/dev/build_multihop_dev.py   # writes multihop_dev.json beside it
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_harder_dev import DECOYS

CASES: list[dict[str, Any]] = [
    {
        "id": "mh-sv1",
        "gameId": "stardew-valley",
        "currentDay": 45,
        "memories": [
            ("m1", "夏季第3天，玩家说刘易斯总是戴着一顶绿色的帽子", 31, "event"),
            ("m2", "夏季第10天，玩家答应刘易斯帮他找回紫色短裤", 38, "promise"),
            ("m3", "春季第15天，玩家答应罗宾给她送五十块木头", 15, "promise"),
            ("m4", "夏季第6天，玩家答应艾米丽帮她找一块布料", 34, "promise"),
        ],
        "question": "答应那个戴帽子的人的事办了没",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "zh",
    },
    {
        "id": "mh-sv2",
        "gameId": "stardew-valley",
        "currentDay": 60,
        "memories": [
            ("m1", "春季第8天，玩家给农场的狗取名叫旺财", 8, "event"),
            ("m2", "夏季第20天，旺财在农场东边刨出了一个古物", 48, "event"),
            ("m3", "夏季第22天，玩家的猫在门口晒太阳睡了一下午", 50, "event"),
        ],
        "question": "我家那条狗前阵子翻到什么好东西了",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "zh",
    },
    {
        "id": "mh-sv3",
        "gameId": "stardew-valley",
        "currentDay": 50,
        "memories": [
            (
                "m1",
                "Spring 12: the player said the old man in the tent up the mountain is Linus",
                12,
                "event",
            ),
            ("m2", "Summer 4: the player promised Linus a blackberry cobbler", 32, "promise"),
            (
                "m3",
                "Summer 9: the player promised Pierre twenty parsnips for his shop",
                37,
                "promise",
            ),
        ],
        "question": "did I ever do that favour for the guy in the tent?",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "en",
    },
    {
        "id": "mh-dst1",
        "gameId": "dont-starve-together",
        "currentDay": 25,
        "memories": [
            ("m1", "第3天，玩家把营地边那只猪人叫做老王", 3, "event"),
            ("m2", "第16天，老王帮玩家打跑了一群蜘蛛", 16, "event"),
            ("m3", "第19天，一群猪人在月圆夜变成了疯猪", 19, "event"),
        ],
        "question": "营地边那只猪最近有没有帮上忙",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "zh",
    },
    {
        "id": "mh-dst2",
        "gameId": "dont-starve-together",
        "currentDay": 30,
        "memories": [
            ("m1", "Day 9: the player named the beefalo they tamed Moo", 9, "event"),
            ("m2", "Day 24: Moo was killed by a hound pack at night", 24, "event"),
            ("m3", "Day 20: the player built a beefalo pen out of hay walls", 20, "event"),
        ],
        "question": "what became of the beefalo I tamed?",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "en",
    },
    {
        "id": "mh-dst3",
        "gameId": "dont-starve-together",
        "currentDay": 28,
        "memories": [
            ("m1", "第8天，玩家把海边那片全是高脚鸟的沙滩叫做鸟窝滩", 8, "event"),
            ("m2", "第22天，玩家在鸟窝滩挖到了一个宝箱", 22, "event"),
            ("m3", "第24天，玩家在森林里挖到了一个坟墓", 24, "event"),
        ],
        "question": "海边那片沙滩后来有什么收获",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "zh",
    },
    {
        "id": "mh-oni1",
        "gameId": "oxygen-not-included",
        "currentDay": 50,
        "memories": [
            ("m1", "第15周期，玩家说最爱挖矿的那个复制人是奥托", 15, "event"),
            ("m2", "第42周期，奥托在蒸汽间里被烫伤了", 42, "event"),
            ("m3", "第44周期，米普因为没睡好一直在抱怨", 44, "event"),
        ],
        "question": "最会挖矿的那个小人现在怎么样了",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "zh",
    },
    {
        "id": "mh-oni2",
        "gameId": "oxygen-not-included",
        "currentDay": 60,
        "memories": [
            (
                "m1",
                "Cycle 20: the player said the dupe who runs the research station is Bubbles",
                20,
                "event",
            ),
            ("m2", "Cycle 51: Bubbles was stressed out and wrecked a cot", 51, "event"),
            ("m3", "Cycle 47: Catalina finished the first jet suit", 47, "event"),
        ],
        "question": "is the dupe who runs the research station alright?",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "en",
    },
    {
        "id": "mh-oni3",
        "gameId": "oxygen-not-included",
        "currentDay": 40,
        "memories": [
            ("m1", "第9周期，玩家把基地左边那个大洞叫做老坑", 9, "event"),
            ("m2", "第33周期，老坑里涌出了很多天然气", 33, "event"),
            ("m3", "第35周期，基地右边的水管漏水了", 35, "event"),
        ],
        "question": "基地左边那个大洞后来冒了啥出来",
        "expected": ["m2"],
        "bridge": "m1",
        "style": "multi_hop",
        "lang": "zh",
    },
    # -- controls: the question names the entity itself ------------------------------------
    {
        "id": "mh-ctl1",
        "gameId": "stardew-valley",
        "currentDay": 45,
        "memories": [
            ("m1", "夏季第3天，玩家说刘易斯总是戴着一顶绿色的帽子", 31, "event"),
            ("m2", "夏季第10天，玩家答应刘易斯帮他找回紫色短裤", 38, "promise"),
            ("m3", "春季第15天，玩家答应罗宾给她送五十块木头", 15, "promise"),
        ],
        "question": "我答应刘易斯的那件事是什么来着",
        "expected": ["m2"],
        "style": "control",
        "lang": "zh",
    },
    {
        "id": "mh-ctl2",
        "gameId": "oxygen-not-included",
        "currentDay": 50,
        "memories": [
            ("m1", "第15周期，玩家说最爱挖矿的那个复制人是奥托", 15, "event"),
            ("m2", "第42周期，奥托在蒸汽间里被烫伤了", 42, "event"),
        ],
        "question": "奥托被烫伤是在哪里",
        "expected": ["m2"],
        "style": "control",
        "lang": "zh",
    },
]


def _memory(m: tuple[str, str, int, str]) -> dict[str, Any]:
    key, text, day, kind = m
    return {"key": key, "text": text, "day": day, "kind": kind}


def build() -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for case in CASES:
        memories = [_memory(m) for m in case["memories"]]
        pool = [d for d in DECOYS[case["gameId"]] if d[1] <= case["currentDay"]]
        for n, (text, day) in enumerate(pool[:4], start=len(memories) + 1):
            memories.append({"key": f"m{n}", "text": text, "day": day, "kind": "event"})
        target = next(m for m in memories if m["key"] == case["expected"][0])
        # Last: "recent and important" breaks ties by id, so it must not fall on the target.
        memories = [m for m in memories if m is not target] + [target]
        out = {k: v for k, v in case.items() if k != "memories"}
        out |= {
            "saveId": "s1",
            "memories": memories,
            "otherSaveMemories": [{"saveId": "s2", "text": target["text"]}],
        }
        cases.append(out)
    return cases


if __name__ == "__main__":
    out = Path(__file__).with_name("multihop_dev.json")
    out.write_text(json.dumps(build(), ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {out}")
