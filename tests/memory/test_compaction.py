"""Compaction: the pure plan (with properties) and the store applying it."""

from __future__ import annotations

import random
from pathlib import Path

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtyserver.clock import ManualClock
from xtyserver.errors import UsageError
from xtyserver.memory.compaction import (
    DIGEST_PREFIX,
    CompactionPlan,
    digest_subject,
    is_digest,
    mergeable,
    plan_compaction,
)
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import KINDS, STATUSES, SUMMARY_MAX, MemoryEvent, NewEvent, Scope

FARM_A = Scope("stardew", "farm-a")
FARM_B = Scope("stardew", "farm-b")
NOW = 1000.0


def ev(
    id: int,
    subject: str | None = None,
    *,
    kind: str = "event",
    status: str = "done",
    importance: int = 1,
    pinned: bool = False,
    day: int | None = None,
    used: float = 1.0,
    summary: str = "x",
) -> MemoryEvent:
    return MemoryEvent(
        id=id,
        game_id=FARM_A.game_id,
        save_id=FARM_A.save_id,
        kind=kind,  # type: ignore[arg-type]
        subject=subject or f"s{id}",
        summary=summary,
        importance=importance,
        status=status,  # type: ignore[arg-type]
        pinned=pinned,
        day=day,
        created_at=1.0,
        updated_at=1.0,
        last_used_at=used,
    )


# --- the pure plan ---------------------------------------------------------------------------


def test_within_the_cap_there_is_nothing_to_do() -> None:
    assert plan_compaction([ev(i) for i in range(5)], 5, NOW) == CompactionPlan()
    assert plan_compaction([], 0, NOW) == CompactionPlan()


def test_least_important_then_least_recently_used_go_first() -> None:
    events = [
        ev(1, importance=2, used=1.0),
        ev(2, importance=1, used=9.0),
        ev(3, importance=1, used=5.0),
        *(ev(10 + i, status="active") for i in range(10)),
    ]
    plan = plan_compaction(events, 13 - 1 - len(KINDS) + 1, NOW)  # excess 1: room for 1 + kinds
    assert plan.merged_ids == (3, 2, 1)
    (digest,) = plan.digests
    assert (digest.subject, digest.summary) == (digest_subject("event"), "s3、s2、s1")
    assert (digest.kind, digest.status, digest.importance, digest.pinned) == (
        "event",
        "done",
        1,
        False,
    )
    assert (digest.created_at, digest.updated_at, digest.last_used_at) == (NOW, NOW, NOW)


def test_active_pinned_important_and_digest_events_are_never_merged() -> None:
    keep = [
        ev(1, kind="goal", status="active"),
        ev(2, kind="event", status="active"),  # an active event is still going on
        ev(3, status="done", pinned=True),
        ev(4, status="dropped", importance=3),
        ev(5, digest_subject("event"), summary="旧的"),
    ]
    plan = plan_compaction(keep, 0, NOW)
    assert plan.merged_ids == ()
    assert plan.digests == ()
    assert plan_compaction(keep, 0, NOW, max_importance=3).merged_ids == (4,)


def test_an_existing_digest_is_extended_and_keeps_its_identity() -> None:
    old = ev(7, digest_subject("event"), summary="旧事", day=4, used=3.0)
    plan = plan_compaction([old, ev(1, day=2), ev(2, day=9)], 0, NOW)
    assert plan.merged_ids == (1, 2)
    (digest,) = plan.digests
    assert (digest.id, digest.summary, digest.day) == (7, "旧事、s1、s2", 9)
    assert (digest.last_used_at, digest.updated_at) == (3.0, NOW)


def test_one_digest_per_kind_merged() -> None:
    events = [ev(1, kind="decision"), ev(2, kind="promise"), ev(3, kind="decision")]
    plan = plan_compaction(events, 0, NOW)
    digests = {(d.kind, d.summary) for d in plan.digests}
    assert digests == {("decision", "s1、s3"), ("promise", "s2")}


def test_a_full_digest_keeps_the_newest_names() -> None:
    events = [ev(i, f"很长的名字{i:03d}") for i in range(40)]
    (digest,) = plan_compaction(events, 0, NOW).digests
    assert len(digest.summary) == SUMMARY_MAX
    assert digest.summary.startswith("…")
    assert digest.summary.endswith("很长的名字039")


def test_a_plan_covers_one_save_and_a_non_negative_cap() -> None:
    other = msgspec.structs.replace(ev(2), save_id=FARM_B.save_id)
    with pytest.raises(UsageError):
        plan_compaction([ev(1), other], 0, NOW)
    with pytest.raises(UsageError):
        plan_compaction([ev(1)], -1, NOW)


_specs = st.tuples(
    st.sampled_from(KINDS),
    st.sampled_from(STATUSES),
    st.integers(1, 5),
    st.booleans(),
    st.none() | st.integers(0, 100),
    st.floats(0, 100),
)
_events = st.lists(_specs, max_size=60).map(
    lambda specs: [
        ev(i + 1, kind=k, status=s, importance=imp, pinned=p, day=d, used=u)
        for i, (k, s, imp, p, d, u) in enumerate(specs)
    ]
)


@given(events=_events, cap=st.integers(0, 60), max_importance=st.integers(1, 5))
def test_a_plan_follows_the_policy(
    events: list[MemoryEvent], cap: int, max_importance: int
) -> None:
    plan = plan_compaction(events, cap, NOW, max_importance=max_importance)
    by_id = {e.id: e for e in events}
    merged = [by_id[i] for i in plan.merged_ids]
    assert len(set(plan.merged_ids)) == len(plan.merged_ids)
    # Only ended, unpinned, low-importance events; never a digest.
    assert all(mergeable(e, max_importance) for e in merged)
    assert all(e.status != "active" and not e.pinned for e in merged)
    # One digest per kind merged, in the save, naming what it merged.
    assert sorted(d.kind for d in plan.digests) == sorted({e.kind for e in merged})
    for d in plan.digests:
        assert d.scope == FARM_A and is_digest(d) and len(d.summary) <= SUMMARY_MAX
        names = [e.subject for e in merged if e.kind == d.kind]
        if len("、".join(names)) <= SUMMARY_MAX:
            assert d.summary == "、".join(names)
    after = len(events) - len(merged) + len(plan.digests)
    if len(events) <= cap:
        assert plan == CompactionPlan()
    elif len(merged) < sum(mergeable(e, max_importance) for e in events):
        assert after <= cap  # candidates were left over, so the cap was met
    else:
        assert after <= len(events)  # merging never grows the save


@given(events=_events, cap=st.integers(0, 60), seed=st.integers())
def test_a_plan_does_not_depend_on_the_order_of_the_events(
    events: list[MemoryEvent], cap: int, seed: int
) -> None:
    shuffled = list(events)
    random.Random(seed).shuffle(shuffled)
    assert plan_compaction(shuffled, cap, NOW) == plan_compaction(events, cap, NOW)


# --- the store applying a plan ----------------------------------------------------------------


def test_compaction_merges_ended_low_importance_and_never_drops_pinned_or_active_goals(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=clock, soft_cap=20) as s:
        for i in range(10):
            s.upsert_event(FARM_A, NewEvent("goal", f"目标{i}", "进行中", importance=1), 1.0)
        for i in range(5):
            s.upsert_event(
                FARM_A, NewEvent("event", f"置顶{i}", "要留着", importance=1, pinned=True), 1.0
            )
        for i in range(15):
            s.upsert_event(
                FARM_A, NewEvent("event", f"小事{i}", "结束了", importance=1, status="done"), 1.0
            )
        s.upsert_event(FARM_B, NewEvent("event", "别的存档", "x", importance=1, status="done"), 1.0)
        assert s.compact_scope(FARM_B, 2.0) == 0  # under the cap: nothing happens
        merged = s.compact_scope(FARM_A, 2.0)
        rows = s.load_scope(FARM_A)
        assert merged > 0
        assert len(rows) <= 20
        subjects = {r.subject for r in rows}
        assert {f"目标{i}" for i in range(10)} <= subjects
        assert {f"置顶{i}" for i in range(5)} <= subjects
        digest = [r for r in rows if r.subject.startswith(DIGEST_PREFIX)]
        assert len(digest) == 1 and "小事0" in digest[0].summary
        assert len(s.load_scope(FARM_B)) == 1


def test_compaction_cannot_go_under_the_cap_with_only_goals_and_pinned(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=clock, soft_cap=3) as s:
        for i in range(3):
            s.upsert_event(FARM_A, NewEvent("goal", f"目标{i}", "进行中", importance=1), 1.0)
            s.upsert_event(FARM_A, NewEvent("event", f"置顶{i}", "留", pinned=True), 1.0)
        assert s.compact_scope(FARM_A, 2.0) == 0
        assert len(s.load_scope(FARM_A)) == 6


def test_compaction_never_merges_active_or_pinned_events(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=clock, soft_cap=2) as s:
        kept = [
            NewEvent("event", "还在打", "和猪王的比赛还没结束", importance=1),  # active event
            NewEvent("promise", "钓鱼", "答应周末去钓鱼", importance=1),  # active promise
            NewEvent("event", "旧事", "结束了但置顶", importance=1, status="done", pinned=True),
        ]
        for new in kept:
            s.upsert_event(FARM_A, new, 1.0)
        ended = NewEvent("event", "小事", "结束了", importance=1, status="done")
        s.upsert_event(FARM_A, ended, 1.0)
        assert s.compact_scope(FARM_A, 2.0) == 1
        rows = {r.subject: r for r in s.load_scope(FARM_A)}
        assert {k.subject for k in kept} <= set(rows)
        assert rows[f"{DIGEST_PREFIX}·event"].summary == "小事"


def test_compacting_again_extends_the_digest(tmp_path: Path, clock: ManualClock) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=clock, soft_cap=1) as s:
        for i in range(3):
            s.upsert_event(FARM_A, NewEvent("event", f"a{i}", "x", 1, "done", day=i), 1.0)
        assert s.compact_scope(FARM_A, 2.0) == 3
        (first,) = s.load_scope(FARM_A)
        s.upsert_event(FARM_A, NewEvent("event", "b", "x", 1, "done", day=1), 3.0)
        assert s.compact_scope(FARM_A, 4.0) == 1
        (digest,) = s.load_scope(FARM_A)
        assert (digest.id, digest.summary, digest.day) == (first.id, "a0、a1、a2、b", 2)
        assert (digest.created_at, digest.updated_at) == (2.0, 4.0)
