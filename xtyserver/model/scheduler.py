"""One scheduler for every model call of the process: chat first.

A **lane** is one provider (one base URL): a local server answers one request
at a time, so a background call (extraction, a stage summary, a fold) that
holds it starves the player. Here:

* a chat call counts on its lane from the moment it asks until its stream is
  closed, and is never held back;
* a background call runs only when no chat is waiting or streaming on its lane,
  and at most one at a time per lane, and not within ``grace`` seconds (1.5 s)
  of a chat's end (none once the server stops: :meth:`Scheduler.stopping`): a
  player who answers at once would abort it at once, and a
  local server cannot drop a request whose prompt it is already reading, so the
  next chat would wait for that (and lose the server's prompt cache);
* a chat that arrives while a background call runs, and finds the lane at its
  ``max_concurrency`` (chats + the background call), aborts that call: its cancel
  scope closes the upstream stream, so a local server stops generating;
* an aborted background call waits until the lane is quiet again and runs again
  from the start; it returns (or fails) exactly once, so its job stores its
  result once, never twice, and is never lost while the process runs.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

import anyio
import structlog

from xtyserver.model.bounds import concurrency

_log = structlog.get_logger("xtyserver.model.scheduler")

T = TypeVar("T")

GRACE_S = 1.5
"""Seconds after a chat's end before a background call may start on its lane."""


class Lane:
    """The calls on one provider."""

    def __init__(self, key: str, limit: int) -> None:
        self.key = key
        self.limit = limit
        self.chats = 0
        self.background: anyio.CancelScope | None = None
        self.aborted = 0
        self.retried = 0
        self.last_chat_end = -1e9  # event-loop time of the last chat's end
        self._changed = anyio.Event()

    def notify(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def changed(self) -> None:
        await self._changed.wait()

    @property
    def quiet(self) -> bool:
        """No chat waiting or streaming and no background call running."""
        return self.chats == 0 and self.background is None


def lane_key(base_url: str) -> str:
    """Calls to the same base URL share a lane (they share the provider's capacity)."""
    return base_url.strip().rstrip("/").lower()


class Scheduler:
    """Every lane of the process; ``grace``: seconds after a chat before a background call."""

    def __init__(self, grace: float = GRACE_S) -> None:
        self.grace = grace
        self._lanes: dict[str, Lane] = {}

    def lane(self, base_url: str, max_concurrency: int | None = None) -> Lane:
        """The lane of ``base_url`` (made on first use; the lowest limit asked for wins)."""
        key = lane_key(base_url)
        limit = concurrency(max_concurrency, base_url)
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = Lane(key, limit)
        elif limit < lane.limit:
            lane.limit = limit
        return lane

    def lanes(self) -> list[Lane]:
        return list(self._lanes.values())

    def stopping(self) -> None:
        """No chat will come any more (the server stops): background calls need no grace."""
        self.grace = 0.0
        for lane in self._lanes.values():
            lane.notify()

    @contextlib.asynccontextmanager
    async def chat(self, lane: Lane) -> AsyncIterator[None]:
        """Hold a chat call on ``lane``; a background call in the way is aborted."""
        lane.chats += 1
        try:
            if lane.background is not None and lane.chats + 1 > lane.limit:
                lane.aborted += 1
                _log.info("model.background_aborted", lane=lane.key, chats=lane.chats)
                lane.background.cancel()
            yield
        finally:
            lane.chats -= 1
            lane.last_chat_end = anyio.current_time()
            lane.notify()

    async def background(self, lane: Lane, call: Callable[[], Awaitable[T]]) -> T:
        """Run ``call`` when ``lane`` is quiet; again from the start each time a chat aborts it."""
        while True:
            await self._wait_quiet(lane)
            scope = anyio.CancelScope()
            lane.background = scope
            try:
                with scope:
                    return await call()
            finally:
                lane.background = None
                lane.notify()
            # Only reached when a chat aborted the call (the scope caught its own cancel).
            lane.retried += 1
            _log.info("model.background_retry", lane=lane.key)

    async def wait_no_chat(self) -> None:
        """Until no chat is waiting or streaming on any lane (the vector backlog's turn;
        it holds no lane, so a chat never has to abort it)."""
        while True:
            busy = next((lane for lane in self._lanes.values() if lane.chats), None)
            if busy is None:
                return
            await busy.changed()

    async def _wait_quiet(self, lane: Lane) -> None:
        """Until ``lane`` is quiet and its last chat ended ``grace`` seconds ago."""
        while True:
            if not lane.quiet:
                await lane.changed()
                continue
            wait = self.grace - (anyio.current_time() - lane.last_chat_end)
            if wait <= 0:
                return
            with anyio.move_on_after(wait):
                await lane.changed()
