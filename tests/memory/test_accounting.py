"""Play accounting: the pure rules (their use by the store is in test_play.py)."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtyserver.errors import UsageError
from xtyserver.memory.accounting import heartbeat_increment_ms, local_date

SH = "Asia/Shanghai"


def _ts(iso: str, tz: str = SH) -> float:
    from zoneinfo import ZoneInfo

    return dt.datetime.fromisoformat(iso).replace(tzinfo=ZoneInfo(tz)).timestamp()


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
