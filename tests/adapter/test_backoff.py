"""Reconnect delays at their edges."""

from __future__ import annotations

import pytest

from xtyserver.adapter.backoff import Backoff, should_reconnect


def test_delays_double_up_to_the_cap() -> None:
    b = Backoff(base=1.0, factor=2.0, cap=30.0, jitter=0.0)
    assert [b.delay(n) for n in (1, 2, 5, 6, 7)] == [1.0, 2.0, 16.0, 30.0, 30.0]
    assert b.delay(10_000) == 30.0  # no overflow for a long outage


def test_jitter_only_shortens() -> None:
    b = Backoff(base=10.0, cap=10.0, jitter=0.2)
    assert b.delay(1, rand=lambda: 0.0) == 10.0
    assert b.delay(1, rand=lambda: 0.999999) == pytest.approx(8.0, abs=1e-5)


def test_attempts_edge() -> None:
    assert not Backoff(attempts=3).gives_up(3)
    assert Backoff(attempts=3).gives_up(4)
    assert not Backoff().gives_up(10**9)
    with pytest.raises(ValueError):
        Backoff().delay(0)


@pytest.mark.parametrize(
    ("code", "retry"),
    [
        (None, True),
        (1001, True),
        (1006, True),
        (4002, True),
        (4003, True),
        (1000, False),
        (4001, False),
        (4008, False),
    ],
)
def test_which_closes_are_retried(code: int | None, retry: bool) -> None:
    assert should_reconnect(code) is retry
