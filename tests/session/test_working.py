"""Working memory (pure): the window, when folds are asked, their answers, resuming."""

from __future__ import annotations

import json

from tests.session.defaults import working_settings
from xtyserver.memory.types import SharedProfile
from xtyserver.session.fold import FOLD_MARKER, build_fold_messages, parse_fold
from xtyserver.session.layers import (
    LayerBudget,
    identity_parts,
    profile_text,
    style_text,
)
from xtyserver.session.working import (
    MIN_WINDOW,
    SUMMARY_HEAD,
    SessionSummary,
    WorkingMemory,
)


def r(n: int) -> tuple[str, str]:
    return (f"问题{n}", f"回答{n}")


def fill(wm: WorkingMemory, rounds: range) -> list[object]:
    return [wm.add(r(n)) for n in rounds]


def test_the_window_holds_10_rounds_and_the_11th_starts_waiting_for_a_fold() -> None:
    wm = WorkingMemory(working_settings())
    assert fill(wm, range(1, 11)) == [None] * 10
    assert list(wm.window) == [r(n) for n in range(1, 11)] and wm.pending == []
    assert wm.add(r(11)) is None
    assert wm.pending == [r(1)] and wm.rounds()[0] == r(1) and len(wm) == 11


def test_a_fold_is_asked_at_exactly_5_waiting_rounds_and_one_at_a_time() -> None:
    wm = WorkingMemory(working_settings())
    fill(wm, range(1, 15))  # 4 waiting
    fold = wm.add(r(15))  # the 5th
    assert fold is not None and fold.rounds == tuple(r(n) for n in range(1, 6))
    assert fold.previous == SessionSummary()
    assert wm.add(r(16)) is None  # one fold in flight
    summary = SessionSummary(requests=("农场叫枫叶谷",))
    assert wm.folded(fold.generation, summary)
    assert wm.pending == [r(6)] and wm.summary == summary  # the one that left meanwhile waits


def test_a_failed_fold_keeps_the_rounds_and_is_asked_again_5_rounds_later() -> None:
    wm = WorkingMemory(working_settings())
    fill(wm, range(1, 15))
    fold = wm.add(r(15))
    assert fold is not None
    assert not wm.folded(fold.generation, None)
    assert len(wm.pending) == 5
    # A provider that cannot summarise costs a fold call every 5 rounds, not every round.
    assert fill(wm, range(16, 20)) == [None] * 4
    again = wm.add(r(20))
    assert again is not None and len(again.rounds) == 10
    wm.clear()
    assert not wm.folded(again.generation, SessionSummary(mood="开心"))
    assert wm.summary == SessionSummary() and len(wm) == 0


def test_folds_that_keep_failing_drop_the_oldest_rounds_past_twice_fold_every() -> None:
    wm = WorkingMemory(working_settings(window=1, fold_every=1))
    for n in range(1, 10):
        fold = wm.add(r(n))
        if fold is not None:
            wm.folded(fold.generation, None)
    assert len(wm.pending) == 2 and wm.dropped == 6


def _sent_chars(wm: WorkingMemory) -> int:
    return sum(len(p) + len(a) for p, a in wm.rounds())


def test_with_no_moment_to_fold_round_60_sends_at_most_twice_round_15() -> None:
    # 60 rounds typed back to back on a one-at-a-time model: the fold asked at round
    # 15 never answers, so nothing leaves the rounds sent but what the bound drops.
    wm = WorkingMemory(working_settings())
    folds = [wm.add((f"问题{n}" * 6, f"回答{n}" * 12)) for n in range(1, 61)]
    asked = [n for n, f in enumerate(folds, 1) if f is not None]
    assert asked == [15]  # one fold at a time, still in flight
    wm2 = WorkingMemory(working_settings())
    for n in range(1, 16):
        wm2.add((f"问题{n}" * 6, f"回答{n}" * 12))
    assert len(wm2) == 15 and len(wm) == 10 + 10  # the window and twice fold_every waiting
    assert _sent_chars(wm) <= 2 * _sent_chars(wm2)
    assert wm.rounds()[-1][0].startswith("问题60") and wm.dropped == 40
    # The fold in flight still answers for what it was given; the rest wait on.
    fold = folds[14]
    assert fold is not None and wm.folded(fold.generation, SessionSummary(text="前面聊了种地"))
    assert len(wm.pending) == 10 and wm.summary.text == "前面聊了种地"
    assert wm.add(("再来", "好")) is not None  # the next fold is asked at once


def test_past_the_token_threshold_the_window_shrinks_and_folds_at_once() -> None:
    long = "矿" * 200  # about 200 tokens a side
    wm = WorkingMemory(working_settings(fold_tokens=1600))
    for _ in range(4):
        assert wm.add((long, long)) is None  # 4 rounds: about 1,600 tokens, not past it
    fold = wm.add((long, long))
    assert fold is not None and len(wm.window) >= MIN_WINDOW
    assert len(fold.rounds) == len(wm.pending) >= 1


def test_the_summary_is_capped_and_renders_its_structure() -> None:
    summary = SessionSummary(
        requests=tuple(f"请求{n}" * 10 for n in range(10)),
        decisions=("先修温室",),
        mood="开心",
    )
    capped = summary.capped(200, 12)
    text = capped.render()
    assert text.startswith(SUMMARY_HEAD) and len(text) <= 200
    assert "先修温室" in text and "开心" in text
    assert all(len(item) <= 12 for item in capped.requests)
    exact = SessionSummary(decisions=("一二三",))
    assert exact.capped(len(exact.render()), 80) == exact  # at the limit: unchanged
    assert exact.capped(len(exact.render()) - 1, 80).render() == ""


def test_the_fold_call_sees_only_the_previous_summary_and_the_rounds() -> None:
    messages = build_fold_messages(SessionSummary(requests=("农场叫枫叶谷",)), (r(1), r(2)))
    assert messages[0]["content"].startswith(FOLD_MARKER) and len(messages) == 2
    assert "农场叫枫叶谷" in messages[1]["content"] and "问题2" in messages[1]["content"]
    answer = {"requests": ["农场叫枫叶谷", " "], "mood": "开心", "extra": 1}
    parsed = parse_fold("好的：\n" + json.dumps(answer, ensure_ascii=False))
    assert parsed == SessionSummary(requests=("农场叫枫叶谷",), mood="开心")
    # Issue 18: prose is the summary's free text; what tries to be JSON and fails is nothing.
    assert parse_fold("我不知道") == SessionSummary(text="我不知道")
    assert parse_fold('{"requests": "not a list"}') is None


def test_snapshot_and_restore_keep_window_pending_and_summary() -> None:
    wm = WorkingMemory(working_settings())
    fill(wm, range(1, 13))
    wm.summary = SessionSummary(decisions=("先修温室",))
    snap = wm.snapshot(day=7)
    other = WorkingMemory(working_settings())
    other.restore(snap)
    assert other.rounds() == wm.rounds() and other.summary == wm.summary and snap.day == 7


def test_each_stable_layer_keeps_to_its_budget_at_the_edge() -> None:
    budget = LayerBudget(identity_chars=10, style_chars=40, profile_chars=20)
    profile = SharedProfile(
        nickname="豆豆",
        language="中文",
        reply_style="简短",
        hobbies=["钓鱼"],
        companion_name="汤圆",
    )
    assert identity_parts("一" * 10, None, budget) == ("一" * 10, "")
    assert identity_parts("一" * 11, None, budget) == ("一" * 10, "")
    persona, setting = identity_parts("人设", profile, LayerBudget())
    assert persona == "人设" and "汤圆" in setting
    style = style_text(profile, budget)
    assert "中文" in style and "简短" in style and len(style) <= 40
    assert style_text(SharedProfile(), budget) == ""
    text = profile_text(profile, budget)
    assert "豆豆" in text and len(text) <= 20
    assert "钓鱼" not in text  # whole lines only: the next one would pass 20
    wide = LayerBudget(profile_chars=len(profile_text(profile, LayerBudget())))
    assert "钓鱼" in profile_text(profile, wide)  # exactly at the budget: kept
    assert "汤圆" not in text and "中文" not in text  # identity and style have their own layers
