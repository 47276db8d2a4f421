"""The pairing desk (v1.md "Pairing"): pending requests, the player's answer, the keys.

A shell between the connections and the memory page. An ``AskPairing`` becomes
a pending request with a four-digit code, unique among those waiting, listed
on the page until allowed, denied, expired (:data:`PAIR_SECONDS`, never
extended) or withdrawn by the connection going away.

Nobody can block pairing by asking first: any name may wait more than once
(a process without the token may claim to be ``xty-dst``; the page names no
request until the player types the code the game shows, which picks the real one),
a waiting request leaves the pre-auth pool (tokenless connections that never
ask cannot push it out), and :data:`MAX_PENDING` requests may wait at once,
each holding its own connection. A connection asks once:
its request is never renewed; after ``pair.expired`` it is closed (4001).
"""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable
from typing import Literal

import anyio
import msgspec

from xtyserver import log
from xtyserver.clock import Clock
from xtyserver.serve.paired_keys import PairedKeys
from xtyserver.session.effects import AskPairing
from xtyserver.session.events import PairingAnswered

MAX_PENDING = 256
PAIR_SECONDS = 120
CODES = 10_000  # four digits


PairedBefore = Literal["no", "this_install", "other_install"]


class PendingPair(msgspec.Struct, rename="camel"):
    """One request as the page lists it (never its install id).

    ``paired_before``: whether allowing it replaces a key (``this_install``: the same install,
    or a mod without install ids, paired before) or adds one beside another install's
    (``other_install``), so the page can say which (v1.md "Keys per install").
    """

    id: str
    adapter: str
    game_id: str
    code: str
    asked_at: float
    expires_at: float
    paired_before: PairedBefore = "no"


class _Waiting:
    def __init__(self, request: PendingPair) -> None:
        self.request = request
        self.allowed: bool | None = None
        self.decided = anyio.Event()


class PairingDesk:
    """The server's pending pair requests and its paired keys.

    Args:
        clock: Request times and their expiry (a test's clock moves them).
    """

    def __init__(self, keys: PairedKeys, clock: Clock) -> None:
        self.keys = keys
        self._clock = clock
        self._waiting: dict[str, _Waiting] = {}
        self._log = log.get("xtyserver.pairing")

    def pending(self) -> list[PendingPair]:
        """The waiting requests, oldest first."""
        return [w.request for w in self._waiting.values()]

    def decide(self, request_id: str, allow: bool) -> bool:
        """The player's answer to one request; False when it is no longer waiting."""
        waiting = self._waiting.pop(request_id, None)
        if waiting is None:
            return False
        waiting.allowed = allow
        waiting.decided.set()
        return True

    async def serve(
        self, ask: AskPairing, post: Callable[[PairingAnswered], Awaitable[None]]
    ) -> None:
        """Answer one connection's request: pending at once, then the outcome."""
        if len(self._waiting) >= MAX_PENDING:
            self._log.info("pairing.busy", adapter=ask.adapter, waiting=len(self._waiting))
            await post(PairingAnswered("busy"))
            return
        now = self._clock.now()
        taken = {w.request.code for w in self._waiting.values()}
        code = f"{secrets.randbelow(CODES):04d}"
        while code in taken:  # two waiting requests never show the same code
            code = f"{secrets.randbelow(CODES):04d}"
        request = PendingPair(
            id=secrets.token_hex(8),
            adapter=ask.adapter,
            game_id=ask.game_id,
            code=code,
            asked_at=now,
            expires_at=now + PAIR_SECONDS,
            paired_before=self._paired_before(ask),
        )
        waiting = _Waiting(request)
        self._waiting[request.id] = waiting
        self._log.info("pairing.asked", adapter=ask.adapter, game=ask.game_id)
        try:
            await post(PairingAnswered("pending", code=request.code, expires_in=PAIR_SECONDS))
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._expire, waiting)
                await waiting.decided.wait()
                tg.cancel_scope.cancel()
        finally:
            self._waiting.pop(request.id, None)
        if waiting.allowed:
            _, key = self.keys.add(ask.adapter, ask.game_id, ask.install_id)
            await post(PairingAnswered("granted", key=key))
        elif waiting.allowed is False:
            self._log.info("pairing.denied", adapter=ask.adapter)
            await post(PairingAnswered("denied"))
        else:
            self._log.info("pairing.expired", adapter=ask.adapter)
            await post(PairingAnswered("expired"))

    def _paired_before(self, ask: AskPairing) -> PairedBefore:
        same_mod = [
            k for k in self.keys.listing() if (k.adapter, k.game_id) == (ask.adapter, ask.game_id)
        ]
        if any(k.install == ask.install_id for k in same_mod):
            return "this_install"
        return "other_install" if same_mod else "no"

    async def _expire(self, waiting: _Waiting) -> None:
        await self._clock.sleep(PAIR_SECONDS)
        waiting.decided.set()  # undecided: expired
