"""Tasks that run while there is work (a connection's writer and store lane), a lazy lock,
and a count to wait on.

A shell. An idle connection keeps no task waiting on an empty queue: the first
item starts the task, which ends after :data:`LINGER` idle seconds.
"""

from __future__ import annotations

import contextlib
from typing import TypeVar

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

LINGER = 2.0
"""Seconds a writer or store lane waits for more work before it ends (event-loop time)."""

_T = TypeVar("_T")


async def next_or_idle(stream: MemoryObjectReceiveStream[_T]) -> _T | None:
    """The next item of ``stream``; None once none has come for :data:`LINGER` seconds.

    None is returned with no checkpoint after the last look at the queue: the
    caller marks itself ended before an item put meanwhile could be missed.

    Raises:
        anyio.EndOfStream: The stream was closed and is empty.
    """
    with contextlib.suppress(anyio.WouldBlock):
        return stream.receive_nowait()
    with anyio.move_on_after(LINGER):
        return await stream.receive()
    with contextlib.suppress(anyio.WouldBlock):  # put as the wait ended
        return stream.receive_nowait()
    return None


class LazyLock:
    """A lock that costs nothing until two tasks want it at once (no queue made before).

    An anyio ``Lock`` makes its waiters' queue up front; there is one of these per
    idle connection and per loaded save.
    """

    __slots__ = ("_busy", "_free")

    def __init__(self) -> None:
        self._busy = False
        self._free: anyio.Event | None = None

    async def __aenter__(self) -> None:
        while self._busy:
            if self._free is None:
                self._free = anyio.Event()
            await self._free.wait()
        self._busy = True

    async def __aexit__(self, *exc: object) -> None:
        self._busy = False
        if self._free is not None:
            self._free.set()
            self._free = None


class Gauge:
    """A count with a condition to wait on (open connections, rows not written yet)."""

    def __init__(self) -> None:
        self.value = 0
        self._changed = anyio.Event()

    def add(self, n: int) -> None:
        self.value += n
        self._changed.set()
        self._changed = anyio.Event()

    async def wait_at_most(self, n: int) -> None:
        while self.value > n:
            await self._changed.wait()
