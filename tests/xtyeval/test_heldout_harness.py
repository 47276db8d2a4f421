"""The held-out harness (scripts/heldout_eval.py) on a set of its own: the new case fields
(``session``/``minutesBeforeEnd``, ``negated``, ``bridge``) and ``--cold``, which brings
the set in through the real ``xtyserver memory import`` and asks at once."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import anyio
import pytest

from xtyeval.runner import run_set
from xtyeval.scoring import score

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("heldout_eval", ROOT / "scripts/heldout_eval.py")
assert _spec is not None and _spec.loader is not None
heldout = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(heldout)

CASES: list[dict[str, Any]] = [
    {
        "id": "s1",
        "gameId": "stardew-valley",
        "saveId": "a",
        "currentDay": 20,
        "memories": [
            # the most important memory is two sessions ago: only the session cue helps
            {
                "key": "m1",
                "text": "春季第13天，玩家在鸡蛋节上抢到了好多彩蛋",
                "day": 13,
                "kind": "event",
                "session": 1,
                "minutesBeforeEnd": 40,
            },
            {
                "key": "m2",
                "text": "春季第17天，玩家说下次要先把鱼塘挖好",
                "day": 17,
                "kind": "goal",
                "session": 2,
                "minutesBeforeEnd": 50,
            },
            {
                "key": "m3",
                "text": "春季第18天，玩家决定把剩下的钱全拿去买洒水器",
                "day": 18,
                "kind": "decision",
                "session": 2,
                "minutesBeforeEnd": 3,
            },
        ],
        "otherSaveMemories": [
            {"saveId": "b", "text": "春季第18天，玩家决定把剩下的钱全拿去买洒水器"}
        ],
        "question": "我下线前最后说的那个打算是啥",
        "expected": ["m3"],
        "negated": "m2",
        "bridge": "m1",
        "style": "session_time",
        "lang": "zh",
    },
]


def test_session_fields_become_ended_play_sessions_and_ages() -> None:
    plays, ages = heldout.sessions(CASES[0]["memories"])
    assert len(plays) == 2 and all(started > ended for started, ended in plays)
    assert plays[1][1] == heldout.LAST_ENDED_H  # the last one ended the evening before
    assert ages[2] == pytest.approx(heldout.LAST_ENDED_H + 3 / 60)  # 3 minutes before it
    assert ages[0] == pytest.approx(plays[0][1] + 40 / 60)
    assert heldout.sessions([{"text": "x"}]) == ([], {})


def test_cold_import_keeps_the_sessions_and_the_question_finds_the_last_minutes() -> None:
    evalset, labels = heldout.to_evalset(CASES)
    # words alone: the in-process embedder is not what this test is about
    overrides = {"memory.local_embedding": False, "memory.provider_embedding": False}
    loaded, turns = anyio.run(lambda: run_set(evalset, overrides=overrides, cold=True))
    results = score(evalset, turns, loaded)
    rows = heldout.table(results, labels)
    assert rows["all"]["recall"] == 1.0 and rows["all"]["leaks"] == 0
    assert rows["all"]["negatedWon"] == 0
    asked = next(r for r in results if r.key == "s1:q")
    # the bridge is neither a hit nor an "other"
    assert rows["all"]["othersMean"] == sum(
        1 for k in asked.injected if k not in ("s1:m3", "s1:m1")
    )


def test_a_sets_parts_are_groups_of_their_own_and_a_set_without_parts_has_none() -> None:
    """Round four's set names each case's part (the issue's three targets): each part is a
    group, beside style, language and game; the earlier sets, with no part, get no such row."""

    def result(key: str, recalled: bool) -> Any:
        return heldout.QuestionResult(
            key=key,
            save=key,
            expected=["m"],
            recalled=["m"] if recalled else [],
            injected=["m"] if recalled else [],
            leaked=[],
            wrong=[],
            tokens={},
            first_ms=0.0,
            done_ms=0.0,
        )

    def label(part: str) -> dict[str, str]:
        return {"style": "describe", "lang": "zh", "game": "g", "part": part}

    results = [result("a:q", True), result("b:q", False), result("c:q", True)]
    parted = heldout.table(
        results, {"a:q": label("paraphrase"), "b:q": label("paraphrase"), "c:q": label("x")}
    )
    assert parted["part:paraphrase"]["recall"] == 0.5
    assert parted["part:x"]["recall"] == 1.0
    assert parted["all"]["recall"] == 0.667
    plain = heldout.table(results, {k: label("") for k in ("a:q", "b:q", "c:q")})
    assert not [name for name in plain if name.startswith("part:")]
