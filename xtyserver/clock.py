"""Injected time: what time it is, and waiting until a moment has come.

Core code never reads the clock; shells pass ``clock.now()`` in and run the
session's deadlines (hello, heartbeats) with ``clock.sleep()``. Tests use
:class:`ManualClock` and move time by hand instead of sleeping: a deadline
fires when the test advances the clock past it, not when the machine gets
round to it. (Transport deadlines, such as a slow reader or the model's
timeouts, are about the network and stay on the event loop's own clock.)
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from typing import Protocol

import anyio
import anyio.lowlevel


class Clock(Protocol):
    """A source of time: wall-clock seconds since the Unix epoch."""

    def now(self) -> float:
        """Return the current wall-clock time in seconds since the epoch (UTC)."""
        ...

    async def sleep(self, seconds: float) -> None:
        """Return once ``seconds`` of this clock's time have passed."""
        ...

    def deadline(self, seconds: float) -> float:
        """The moment ``seconds`` from now, as :meth:`move_on_at` takes it."""
        ...

    def move_on_at(self, deadline: float) -> AbstractContextManager[anyio.CancelScope]:
        """A cancel scope cancelled once ``deadline`` (from :meth:`deadline`) has come.

        A task waits for something else and a deadline at once, with no task of
        its own for the deadline.
        """
        ...


class SystemClock:
    """The real wall clock; deadlines on the event loop's monotonic clock."""

    def now(self) -> float:
        return time.time()

    async def sleep(self, seconds: float) -> None:
        await anyio.sleep(seconds)

    def deadline(self, seconds: float) -> float:
        return anyio.current_time() + seconds

    def move_on_at(self, deadline: float) -> AbstractContextManager[anyio.CancelScope]:
        return anyio.move_on_at(deadline)


class ManualClock:
    """A clock that only moves when told to (tests, simulations).

    ``sleep`` waits until :meth:`advance` or :meth:`set` has moved the clock
    to (or past) the sleeper's deadline.
    """

    def __init__(self, start: float = 1_790_000_000.0) -> None:
        self._now = start
        # Each waiting sleep or deadline scope: when it is due, and what wakes it.
        self._sleepers: list[tuple[float, Callable[[], None]]] = []
        self._armed = anyio.Event()

    def now(self) -> float:
        return self._now

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await anyio.lowlevel.checkpoint()
            return
        woken = anyio.Event()
        with self._waiting(self._now + seconds, woken.set):
            await woken.wait()

    def deadline(self, seconds: float) -> float:
        return self._now + seconds

    @contextlib.contextmanager
    def move_on_at(self, deadline: float) -> Iterator[anyio.CancelScope]:
        with anyio.CancelScope() as scope:
            if deadline <= self._now:
                scope.cancel()
                yield scope
                return
            with self._waiting(deadline, scope.cancel):
                yield scope

    @contextlib.contextmanager
    def _waiting(self, deadline: float, wake: Callable[[], None]) -> Iterator[None]:
        entry = (deadline, wake)
        self._sleepers.append(entry)
        self._armed.set()
        self._armed = anyio.Event()
        try:
            yield
        finally:
            if entry in self._sleepers:
                self._sleepers.remove(entry)

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds`` (never backward) and wake due sleepers."""
        if seconds < 0:
            raise ValueError("a clock does not run backward")
        self._now += seconds
        self._wake()

    def set(self, when: float) -> None:
        """Jump to ``when`` (seconds since the epoch) and wake due sleepers."""
        self._now = when
        self._wake()

    @property
    def sleepers(self) -> int:
        """How many sleeps and deadlines are waiting."""
        return len(self._sleepers)

    async def wait_sleepers(self, count: int) -> None:
        """Return once at least ``count`` sleeps are waiting (deadlines armed)."""
        while len(self._sleepers) < count:
            await self._armed.wait()

    async def wait_deadline(self, when: float) -> None:
        """Return once a sleep due at ``when`` or later is waiting (a deadline re-armed)."""
        while not any(deadline >= when for deadline, _ in self._sleepers):
            await self._armed.wait()

    def _wake(self) -> None:
        for entry in list(self._sleepers):
            if entry[0] <= self._now:
                self._sleepers.remove(entry)
                entry[1]()
