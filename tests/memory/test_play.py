"""Play sessions, play days and statistics through the store (real SQLite)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import apsw
import pytest

from xtyserver.clock import ManualClock
from xtyserver.errors import UsageError
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.sqlite import play
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope

FARM_A = Scope("stardew", "farm-a")
FARM_B = Scope("stardew", "farm-b")
SH = "Asia/Shanghai"


def _ts(iso: str, tz: str = SH) -> float:
    from zoneinfo import ZoneInfo

    return dt.datetime.fromisoformat(iso).replace(tzinfo=ZoneInfo(tz)).timestamp()


def test_the_column_lists_are_the_tables(store: MemoryStore) -> None:
    conn = apsw.Connection(str(store.path))
    for table, columns in (("play_session", play.SESSION_COLUMNS), ("play_day", play.DAY_COLUMNS)):
        assert tuple(r[1] for r in conn.execute(f"PRAGMA table_info({table})")) == columns
    conn.close()


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


def test_a_same_instant_reopen_is_a_second_session(store: MemoryStore) -> None:
    t = _ts("2026-03-01T10:00:00")
    first = store.open_play_session(FARM_A, t, SH)
    second = store.open_play_session(FARM_A, t, SH)
    assert first != second
    assert store.stats().saves[0].sessions == 2


def test_forget_all_keeps_play_statistics(store: MemoryStore) -> None:
    t0 = _ts("2026-03-01T10:00:00")
    sid = store.open_play_session(FARM_A, t0, SH)
    store.record_heartbeat(sid, t0 + 60, SH)
    store.close_play_session(sid, t0 + 90)
    store.upsert_event(FARM_A, NewEvent("goal", "温室", "修好温室"), t0)
    store.set_profile_field("nickname", "小明")
    stats = store.stats()
    store.forget(ForgetSpec(kind="all"))
    assert store.load_scope(FARM_A) == []
    assert store.get_profile().nickname == ""
    assert store.stats() == stats
    assert store.stats().saves[0].active_ms == 90_000
    assert store.list_scopes() == [FARM_A]  # a save with statistics only is still listed


def test_ended_sessions_are_the_latest_closed_ones_of_the_save_oldest_first(
    store: MemoryStore,
) -> None:
    t0 = _ts("2026-03-01T20:00:00")
    for n in range(4):  # four evenings on farm A, one on farm B
        sid = store.open_play_session(FARM_A, t0 + n * 86400, SH)
        store.close_play_session(sid, t0 + n * 86400 + 3600)
    other = store.open_play_session(FARM_B, t0 + 5 * 86400, SH)
    store.close_play_session(other, t0 + 5 * 86400 + 60)
    store.open_play_session(FARM_A, t0 + 6 * 86400, SH)  # playing now: not ended
    assert store.ended_sessions(FARM_A, 2) == [
        (t0 + 2 * 86400, t0 + 2 * 86400 + 3600),
        (t0 + 3 * 86400, t0 + 3 * 86400 + 3600),
    ]
    assert store.ended_sessions(Scope("stardew", "farm-c")) == []
