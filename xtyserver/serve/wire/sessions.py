"""The adapter port's sessions: who gets a seat, the pre-auth pool, paired keys, live settings.

A shell. :class:`Sessions` runs one :class:`~xtyserver.serve.connection.Connection`
per peer, a WebSocket's or an HTTP transport session's, and holds what they
share: the seats and the guess delay (:mod:`xtyserver.serve.gate`), the paired
keys' open connections, and the settings new sessions are told
(:meth:`Sessions.reconfigure`, without a restart).
"""

from __future__ import annotations

import secrets
import weakref
from collections.abc import Awaitable, Callable

import anyio
import msgspec

from xtyserver import log
from xtyserver.protocol.action_frames import ActionSpec
from xtyserver.protocol.frames import Identity
from xtyserver.protocol.limits import SMALL_FRAME_MAX_BYTES
from xtyserver.protocol.upgrade import hello_token
from xtyserver.serve.connection import Connection, Peer, Services
from xtyserver.serve.gate import FailedTokens, GateLimits, Seats
from xtyserver.serve.localzone import zone_resolver
from xtyserver.serve.on_demand import Gauge
from xtyserver.serve.pairing import PairingDesk
from xtyserver.session.actions import ActionMode
from xtyserver.session.effects import AskPairing
from xtyserver.session.events import PairingAnswered
from xtyserver.session.machine import (
    CLOSE_SERVER_FULL,
    CLOSE_UNAUTHORIZED,
    GameAgentSession,
    State,
)
from xtyserver.session.settings import SessionSettings
from xtyserver.token import TokenSource
from xtyserver.token import matches as token_matches


class Sessions:
    """Every session of the adapter port, and what they share.

    Args:
        gate: The seat counts and the guess delay.
        session_settings: What every new session is told (:meth:`reconfigure` changes it).
        services: What each connection's runtime is given.
        tokens: The adapter token (a rotated one takes effect at once).
        pairing: The pairing desk and the paired mods' keys.
        action_mode: The player's per-game switch of game actions (v1.md "Actions").
    """

    def __init__(
        self,
        gate: GateLimits,
        session_settings: SessionSettings,
        services: Services,
        *,
        tokens: TokenSource,
        pairing: PairingDesk,
        action_mode: Callable[[str], ActionMode] | None = None,
    ) -> None:
        self.session_settings = session_settings
        self.services = services
        self.tokens = tokens
        self.pairing = pairing
        self.action_mode = action_mode  # the page's per-game switch of game actions
        self.max_connections = gate.max_connections
        self.seats: Seats[Peer] = Seats(gate)
        self.failed = FailedTokens(gate)
        self.connections = Gauge()  # sessions running
        # Each running session's scope: cancelled only by a stop past its bound.
        self.scopes: set[anyio.CancelScope] = set()
        self._log = log.get("xtyserver.server")
        self._zone_of = zone_resolver()
        self._sessions: weakref.WeakSet[GameAgentSession] = weakref.WeakSet()
        self._by_key: dict[str, set[Peer]] = {}  # a paired key's open connections

    def connected(self) -> list[Identity]:
        """The game and save each session that said hello speaks for now (the page's line)."""
        live = (State.READY, State.TURN)
        return [
            s.identity for s in list(self._sessions) if s.state in live and s.identity is not None
        ]

    def reconfigure(self, **changes: object) -> None:
        """New sessions get ``changes`` of the session settings; open ones are told of the model,
        the speak-up and the voice settings."""
        self.session_settings = msgspec.structs.replace(self.session_settings, **changes)
        now = self.session_settings
        for session in list(self._sessions):
            session.model_changed(
                configured=now.model_configured, vision=now.vision, daily_budget=now.daily_budget
            )
            session.speakup_changed(now.speakup)
            session.voice_changed(now.voice)

    def declared_actions(self) -> dict[str, list[ActionSpec]]:
        """The actions the open connections' mods declared, by game (the page's list)."""
        found: dict[str, list[ActionSpec]] = {}
        for session in list(self._sessions):
            declared = session.declared_actions()
            if declared is not None:
                found.setdefault(declared[0], declared[1])
        return found

    def proves_token(self, message: bytes | str, peer: Peer) -> bool:
        """Whether ``message`` is a hello with the right token or a paired mod's key.

        Judged on the event loop: a hello is small, and anything larger is not one.
        """
        if len(message) > SMALL_FRAME_MAX_BYTES:
            return False
        token = hello_token(message)
        if token_matches(token, self.tokens.current()):
            return True
        # A paired key counts the peer as its connection: a revoke closes it (4001).
        return token is not None and self.key_check(peer)(token)

    def is_paired_key(self, key: str) -> bool:
        return self.pairing.keys.check(key) is not None

    def key_check(self, ws: Peer) -> Callable[[str], bool]:
        """Whether a key is a paired mod's; a match counts ``ws`` as that key's connection."""

        def check(key: str) -> bool:
            record = self.pairing.keys.check(key)
            if record is None:
                return False
            self.pairing.keys.used(record)
            self._by_key.setdefault(record.id, set()).add(ws)
            return True

        return check

    def keys_in_use(self) -> set[str]:
        """The ids of the paired keys that have an open connection (the page's 「现在连着」)."""
        return {key_id for key_id, peers in self._by_key.items() if peers}

    async def revoke_key(self, key_id: str) -> bool:
        """Forget a paired key and close its open connections (4001); False when unknown."""
        if self.pairing.keys.revoke(key_id) is None:
            return False
        peers = self._by_key.pop(key_id, set())
        with anyio.move_on_after(1):
            for peer in peers:
                await peer.close(CLOSE_UNAUTHORIZED, "key revoked")
        for peer in peers:
            if peer.close_code is None:
                peer.transport.abort()
        return True

    async def run(
        self,
        ws: Peer,
        *,
        seated: bool,
        by_header: bool,
        transport: str = "ws",
        may_pair: bool = True,
    ) -> None:
        """One session over a WebSocket or an HTTP transport session, until it closes.

        Without a seat yet, it waits in the pre-auth pool until its hello proves the token.
        """
        run = self.services
        session = GameAgentSession(
            session_id=secrets.token_hex(8),
            settings=self.session_settings,
            token=self.tokens.current(),
            authenticated=seated,
            zone_of=self._zone_of,
            now=run.clock.now(),
            paired=self.key_check(ws),
            action_mode=self.action_mode,
        )
        self._sessions.add(session)
        auth = "header" if by_header else "hello"
        recorder = (
            None if run.recorder is None else run.recorder.open(session.session_id, auth=auth)
        )
        connection = Connection(
            ws,
            session,
            run,
            recorder=recorder,
            claim_seat=lambda: self._seat(ws),
            on_unauthorized=lambda: self.failed.punish(_remote(ws)),
            pairing=(lambda ask, post: self._pair(ws, ask, post)) if may_pair else None,
        )
        if not seated:
            await self._wait_preauth(ws)

        self.connections.add(1)
        self._log.info("connection.open", session=session.session_id, transport=transport)
        try:
            with anyio.CancelScope() as scope:  # cancelled only by a shutdown past its bound
                self.scopes.add(scope)
                await connection.run()
        finally:
            self.scopes.discard(scope)
            self.connections.add(-1)
            self.seats.leave(ws)
            for peers in self._by_key.values():
                peers.discard(ws)
            if seated or connection.seated:
                self.seats.release()
            self._log.info(
                "connection.close",
                session=session.session_id,
                code=ws.close_code,
                reason=getattr(ws, "close_reason", None) or "",
            )

    async def _wait_preauth(self, ws: Peer) -> None:
        """Put a tokenless connection in the pool, dropping the oldest when it is full."""
        oldest = self.seats.wait(ws)
        if oldest is not None:
            self._log.info("connection.preauth_dropped", waiting=self.seats.waiting)
            with anyio.move_on_after(1):
                await oldest.close(CLOSE_SERVER_FULL, "too many connections without a token")
            oldest.transport.abort()

    async def _pair(
        self, ws: Peer, ask: AskPairing, post: Callable[[PairingAnswered], Awaitable[None]]
    ) -> None:
        """Serve a pair request; once it waits for the player it leaves the pre-auth pool, so
        tokenless connections that never ask cannot push it out."""

        async def answer(event: PairingAnswered) -> None:
            if event.outcome == "pending":
                self.seats.leave(ws)
            await post(event)

        await self.pairing.serve(ask, answer)

    def _seat(self, ws: Peer) -> bool:
        """A pre-auth connection's hello proved the token: seat it if one is free."""
        self.seats.leave(ws)
        return self.seats.take()


def _remote(ws: Peer) -> str:
    address = getattr(ws, "remote_address", None)
    return str(address[0]) if isinstance(address, tuple) and address else "?"
