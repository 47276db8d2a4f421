"""Tasks that run while there is work: a connection's writer and store lane.

A shell. An idle connection keeps no task waiting on an empty queue: its
writer and its store lane are started by the first item put in their queue
and end once nothing more has come for :data:`LINGER` seconds; the next item
starts them again. The queues stay bounded; only the task comes and goes.
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
