"""Who may hold a connection open: authenticated seats, the pre-auth pool, failed tokens.

A shell helper of the listener (v1.md "Upgrade"). A local process without the
token must not keep the mod out: a connection without a valid bearer waits in a
small pre-auth pool (oldest dropped first) and takes a seat only when its hello
proves the token. Wrong tokens are answered after a delay growing per remote.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

import anyio
import msgspec

from xtyserver import log
from xtyserver.config import ServerSettings

_SERVER = ServerSettings()
"""The ``[server]`` defaults: the gate's are theirs (built by ``runtime_settings.gate_limits``)."""


class GateLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Numbers of the gate: ``max_connections``, ``preauth_pool`` and ``fail_delay_max``
    are the ``[server]`` settings of those names (and their defaults).

    Attributes:
        fail_delay_first: Seconds before answering the first wrong token of a remote.
        fail_forget_after: Seconds without a failure after which a remote starts over.
    """

    max_connections: int = _SERVER.max_connections
    preauth_pool: int = _SERVER.preauth_pool
    fail_delay_first: float = 0.05
    fail_delay_max: float = _SERVER.fail_delay_max
    fail_forget_after: float = 60.0


Waiting = TypeVar("Waiting", bound=Hashable)


class Seats(Generic[Waiting]):
    """Authenticated seats and the pre-auth pool (oldest first); one event loop."""

    def __init__(self, limits: GateLimits) -> None:
        self._limits = limits
        self.taken = 0
        self._waiting: OrderedDict[Waiting, None] = OrderedDict()

    def take(self) -> bool:
        """Take a seat for a connection that proved the token; False when none is free."""
        if self.taken >= self._limits.max_connections:
            return False
        self.taken += 1
        return True

    def release(self) -> None:
        self.taken -= 1

    def wait(self, key: Waiting) -> Waiting | None:
        """Put a tokenless connection in the pool; return the one to drop, if any."""
        self._waiting[key] = None
        if len(self._waiting) > self._limits.preauth_pool:
            oldest, _ = self._waiting.popitem(last=False)
            return oldest
        return None

    def leave(self, key: Waiting) -> None:
        """The connection left the pool (seated, closed or dropped)."""
        self._waiting.pop(key, None)

    @property
    def waiting(self) -> int:
        return len(self._waiting)


_log = log.get("xtyserver.gate")


class FailedTokens:
    """A growing delay per remote address before a wrong token is answered.

    The first failure waits ``fail_delay_first``; each further one within
    ``fail_forget_after`` doubles it, up to ``fail_delay_max``. One remote's
    delays run one after another, so many connections guess no faster than one.
    On the event loop's monotonic time: a paused test clock must not hold an answer.
    """

    def __init__(self, limits: GateLimits) -> None:
        self._limits = limits
        self._remotes: dict[str, tuple[int, float]] = {}
        self._queues: dict[str, tuple[anyio.Lock, int]] = {}

    def delay(self, remote: str, now: float) -> float:
        """Record one failure of ``remote`` at monotonic ``now``; return the wait."""
        count, last = self._remotes.get(remote, (0, now))
        if now - last > self._limits.fail_forget_after:
            count = 0
        count += 1
        self._remotes[remote] = (count, now)
        if len(self._remotes) > 1024:  # loopback only: a handful of remotes at most
            self._remotes = dict(list(self._remotes.items())[-512:])
        first, cap = self._limits.fail_delay_first, self._limits.fail_delay_max
        return float(min(cap, first * 2 ** min(count - 1, 30)))

    async def punish(self, remote: str) -> None:
        """Wait out the delay of one more failure of ``remote``, after its earlier ones."""
        lock, waiting = self._queues.get(remote, (anyio.Lock(), 0))
        self._queues[remote] = (lock, waiting + 1)
        try:
            async with lock:
                wait = self.delay(remote, anyio.current_time())
                # What was decided, for the log and the tests (they assert it, not the clock).
                _log.info("gate.token_delayed", delay_s=wait, queued=waiting)
                await anyio.sleep(wait)
        finally:
            lock, waiting = self._queues[remote]
            if waiting == 1:
                del self._queues[remote]
            else:
                self._queues[remote] = (lock, waiting - 1)
