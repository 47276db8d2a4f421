"""Play accounting: pure rules and their use by the store (real SQLite)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtyserver.clock import ManualClock
from xtyserver.errors import UsageError
from xtyserver.memory.accounting import heartbeat_increment_ms, local_date
from xtyserver.memory.store import MemoryStore
from xtyserver.memory.types import Scope

FARM_A = Scope("stardew", "farm-a")
FARM_B = Scope("stardew", "farm-b")
SH = "Asia/Shanghai"


def _ts(iso: str, tz: str = SH) -> float:
    from zoneinfo import ZoneInfo

    return dt.datetime.fromisoformat(iso).replace(tzinfo=ZoneInfo(tz)).timestamp()


@pytest.fixture
def store(tmp_path: Path) -> Iterator[MemoryStore]:
    s = MemoryStore(tmp_path / "m.sqlite", clock=ManualClock())
    yield s
    s.close()


def test_heartbeat_gap_of_120s_adds_120s_and_121s_adds_only_120s() -> None:
    assert heartbeat_increment_ms(0.0, 120.0) == 120_000
    assert heartbeat_increment_ms(0.0, 121.0) == 120_000
    assert heartbeat_increment_ms(0.0, 119.5) == 119_500
    assert heartbeat_increment_ms(0.0, 3600.0, gap_cap_s=300) == 300_000


def test_heartbeat_going_back_in_time_adds_nothing() -> None:
    assert heartbeat_increment_ms(100.0, 50.0) == 0


@given(prev=st.floats(0, 1e10), delta=st.floats(-1e6, 1e6))
def test_heartbeat_increment_is_between_zero_and_the_cap(prev: float, delta: float) -> None:
    assert 0 <= heartbeat_increment_ms(prev, prev + delta) <= 120_000


def test_local_date_follows_the_adapters_timezone_at_midnight() -> None:
    midnight = _ts("2026-03-02T00:00:00")
    assert local_date(midnight - 1, SH) == "2026-03-01"
    assert local_date(midnight, SH) == "2026-03-02"
    assert local_date(midnight, "America/New_York") == "2026-03-01"
    assert local_date(midnight, "UTC") == "2026-03-01"


@pytest.mark.parametrize("bad", ["", "Mars/Olympus", "../../etc/passwd", "x" * 100])
def test_unknown_timezone_is_a_usage_error_not_a_utc_fallback(bad: str) -> None:
    with pytest.raises(UsageError):
        local_date(0.0, bad)


def test_session_active_time_caps_a_suspend_gap(store: MemoryStore) -> None:
    t0 = _ts("2026-03-01T20:00:00")
    sid = store.open_play_session(FARM_A, t0, SH)
    store.record_heartbeat(sid, t0 + 60, SH)
    store.record_heartbeat(sid, t0 + 60 + 3600, SH)  # PC suspended for an hour
    store.close_play_session(sid, t0 + 60 + 3600 + 30)
    save = store.stats().saves[0]
    assert save.active_ms == (60 + 120 + 30) * 1000
    assert (save.sessions, save.days, save.last_played) == (1, 1, t0 + 3690)
    with pytest.raises(UsageError):
        store.record_heartbeat(sid, t0 + 4000, SH)


def test_a_session_crossing_midnight_counts_both_days(store: MemoryStore) -> None:
    t0 = _ts("2026-03-01T23:59:00")
    sid = store.open_play_session(FARM_A, t0, SH)
    store.record_heartbeat(sid, t0 + 90, SH)
    store.close_play_session(sid, t0 + 100)
    stats = store.stats()
    assert stats.saves[0].days == 2
    assert stats.games[0].days == 2


def test_two_saves_played_the_same_day_count_one_game_day(store: MemoryStore) -> None:
    day1 = _ts("2026-03-01T10:00:00")
    for scope, offset in ((FARM_A, 0), (FARM_A, 3600), (FARM_B, 7200)):
        sid = store.open_play_session(scope, day1 + offset, SH)
        store.close_play_session(sid, day1 + offset + 60)
    sid = store.open_play_session(FARM_A, day1 + 86400, SH)
    store.close_play_session(sid, day1 + 86400 + 60)
    stats = store.stats()
    saves = {s.save_id: s for s in stats.saves}
    assert (saves["farm-a"].days, saves["farm-a"].sessions) == (2, 3)
    assert (saves["farm-b"].days, saves["farm-b"].sessions) == (1, 1)
    assert [(g.game_id, g.days, g.sessions) for g in stats.games] == [("stardew", 2, 4)]


def test_the_same_instant_in_two_timezones_can_be_two_dates(store: MemoryStore) -> None:
    t = _ts("2026-03-02T07:00:00")  # 07:00 in Shanghai is still 1 March in New York
    store.close_play_session(store.open_play_session(FARM_A, t, SH), t + 1)
    store.close_play_session(store.open_play_session(FARM_B, t, "America/New_York"), t + 1)
    doc = store.export()
    assert sorted(d.date for d in doc.days) == ["2026-03-01", "2026-03-02"]
    assert store.stats().games[0].days == 2


def test_open_session_with_bad_timezone_writes_nothing(store: MemoryStore) -> None:
    with pytest.raises(UsageError):
        store.open_play_session(FARM_A, 0.0, "Nowhere/City")
    assert store.stats().saves == []


def test_recover_open_sessions_closes_a_crashed_session_at_its_last_heartbeat(
    tmp_path: Path,
) -> None:
    t0 = _ts("2026-03-01T10:00:00")
    path = tmp_path / "m.sqlite"
    crashed = MemoryStore(path, clock=ManualClock())
    sid = crashed.open_play_session(FARM_A, t0, SH)
    crashed.record_heartbeat(sid, t0 + 100, SH)
    crashed.close()  # the server died without closing the session
    with MemoryStore(path, clock=ManualClock()) as s:
        assert s.recover_open_sessions() == 1
        assert s.recover_open_sessions() == 0
        session = s.export().sessions[0]
        assert (session.ended_at, session.active_ms) == (t0 + 100, 100_000)
        assert s.stats().saves[0].last_played == t0 + 100
