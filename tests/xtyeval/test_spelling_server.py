"""Over the real server: a pinyin, a same-sound and a typo question find their memory, never
the other save's near copy of it."""

from __future__ import annotations

import anyio
import msgspec
import pytest

from xtyeval.evalset import EvalSet
from xtyeval.runner import run_set
from xtyeval.scoring import score

SV = "stardew-valley"


def _event(key: str, summary: str, **more: object) -> dict[str, object]:
    return {"key": key, "kind": "event", "subject": summary[:12], "summary": summary, **more}


# The meant memories are old and unimportant, the decoys fresh and important: only a
# match puts the meant ones in the prompt ("recent and important" takes a decoy).
OLD = {"importance": 1, "ageHours": 2000.0}
NEW = {"importance": 5, "ageHours": 1.0}
SET = {
    "name": "spelling",
    "start": 1_790_000_000.0,
    "profile": {},
    "saves": [
        {
            "game": SV,
            "save": "farm",
            "name": "farm",
            "context": {"world": {"day": 40}},
            "events": [
                _event("ham", "玩家做了火腿三明治送给阿比盖尔", **OLD),
                _event("bees", "玩家在花丛旁边放了四个蜂房", **OLD),
                _event("center", "玩家在社区中心完成了茶水间的收集包", **OLD),
                _event("saloon", "The player sold blueberries at the Stardrop Saloon", **OLD),
                _event("d1", "玩家把卧室扩建成了两层", **NEW),
                _event("d2", "玩家去矿井下到了第40层", **NEW),
                _event("d3", "玩家钓到了一条大鲶鱼", **NEW),
            ],
            "questions": [
                {"key": "pinyin", "text": "huotui gei shui le", "expect": ["ham"]},
                {"key": "initials", "text": "sqzx 还差啥", "expect": ["center"]},
                {"key": "sound", "text": "那几个封房是啥时候摆的", "expect": ["bees"]},
                {"key": "typo", "text": "what did I sell at the Stardorp", "expect": ["saloon"]},
                {"key": "chat", "text": "今天天气真好呀", "expect": []},
            ],
        },
        {
            "game": SV,
            "save": "other",
            "name": "other farm",
            "context": {},
            "events": [
                _event("o-ham", "玩家做了火腿三明治送给海莉"),
                _event("o-bees", "玩家在河边放了两个蜂房"),
                _event("o-center", "玩家在社区中心完成了工艺室的收集包"),
                _event("o-saloon", "The player sold cranberries at the Stardrop Saloon"),
            ],
            "questions": [],
        },
    ],
}


def _run(spelling: bool) -> dict[str, tuple[list[str], list[str], int]]:
    evalset = msgspec.convert(SET, EvalSet)
    overrides = {"memory.spelling": spelling, "memory.local_embedding": False}
    loaded, turns = anyio.run(lambda: run_set(evalset, overrides=overrides))
    return {r.key: (r.recalled, r.leaked, r.others) for r in score(evalset, turns, loaded)}


@pytest.mark.parametrize("spelling", [True, False])
def test_pinyin_same_sound_and_typo_questions_find_their_memory_not_the_other_saves(
    spelling: bool,
) -> None:
    results = _run(spelling)
    for key, meant in (
        ("pinyin", "ham"),
        ("initials", "center"),
        ("sound", "bees"),
        ("typo", "saloon"),
    ):
        recalled, leaked, _ = results[key]
        assert (recalled == [meant]) is spelling, key
        assert leaked == [], key
    # small talk: the fresh important decoy, as without spelling, and nothing more
    assert results["chat"][2] == 1
