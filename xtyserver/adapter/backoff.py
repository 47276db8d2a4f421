"""Reconnect delays: exponential backoff with a cap and optional jitter (pure)."""

from __future__ import annotations

import random
from collections.abc import Callable

import msgspec

RECONNECT_CODES = frozenset({1001, 1006, 1011, 1012, 1013, 4002, 4003})
"""Close codes after which an adapter should reconnect (v1.md "Close codes")."""


class Backoff(msgspec.Struct, frozen=True, kw_only=True):
    """How long to wait before each reconnect attempt.

    Attributes:
        base: Seconds before the first attempt.
        factor: Each further attempt waits this many times longer.
        cap: The longest wait, in seconds.
        jitter: Fraction of the wait drawn at random (0 = none; 0.2 = up to 20 % shorter).
        attempts: Attempts in a row before giving up; ``None`` = never give up.
    """

    base: float = 1.0
    factor: float = 2.0
    cap: float = 30.0
    jitter: float = 0.2
    attempts: int | None = None

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        """Seconds to wait before attempt number ``attempt`` (1 = the first retry).

        ``rand`` gives numbers in [0, 1) (injected so tests are exact).
        """
        if attempt < 1:
            raise ValueError("attempts count from 1")
        # Bound the exponent: a float power of a huge attempt number would overflow.
        wait = min(self.cap, self.base * self.factor ** min(attempt - 1, 64))
        return wait * (1.0 - self.jitter * rand())

    def gives_up(self, attempt: int) -> bool:
        """Whether attempt number ``attempt`` is one too many."""
        return self.attempts is not None and attempt > self.attempts


def should_reconnect(code: int | None) -> bool:
    """Whether a close with this code (``None``: the TCP connection dropped) is worth a retry.

    4001 (token) and 4008 (flood) need a fix first; 1000 is a normal end.
    """
    return code is None or code in RECONNECT_CODES
