"""Injected time.

Core code never reads the clock; shells pass ``clock.now()`` in. Tests use
:class:`ManualClock` and move time by hand instead of sleeping.
"""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    """A source of time: wall-clock seconds since the Unix epoch."""

    def now(self) -> float:
        """Return the current wall-clock time in seconds since the epoch (UTC)."""
        ...


class SystemClock:
    """The real wall clock."""

    def now(self) -> float:
        return time.time()


class ManualClock:
    """A clock that only moves when told to (tests, simulations)."""

    def __init__(self, start: float = 1_790_000_000.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (never backward)."""
        if seconds < 0:
            raise ValueError("a clock does not run backward")
        self._now += seconds

    def set(self, when: float) -> None:
        """Jump to ``when`` (seconds since the epoch)."""
        self._now = when
