"""A tokenless connection asks to pair (v1.md "Pairing"): the session's side. Pure.

``adapter.pair`` becomes ``AskPairing``; the shell's ``PairingAnswered`` events
become the ``pair.*`` frames here. While the request waits the hello deadline
does not run; after ``pair.granted`` the ``adapter.hello`` with the key must come
within it.
"""

from __future__ import annotations

import msgspec

from xtyserver.protocol.frames import (
    AdapterPair,
    PairDenied,
    PairExpired,
    PairGranted,
    PairPending,
)
from xtyserver.session import replies
from xtyserver.session.effects import ArmTimer, AskPairing, CancelTimer, Effect, Send
from xtyserver.session.events import PairingAnswered


class Pairing(msgspec.Struct):
    """One connection's pairing: the id of the ``adapter.pair`` under way, the key granted."""

    asked: str | None = None
    key: str = ""

    def ask(self, frame: AdapterPair, *, authenticated: bool) -> list[Effect]:
        """The effects of an ``adapter.pair`` before any hello."""
        if authenticated or self.key:
            message = "this connection has a key already: send adapter.hello"
            return [Send(replies.error("hello_required", message, frame.id))]
        if self.asked is not None:
            message = "a pair request of this connection is waiting for the player"
            return [Send(replies.error("pair_busy", message, frame.id))]
        self.asked = frame.id
        return [
            CancelTimer("hello"),
            AskPairing(frame.id, frame.adapter.name, frame.game_id, frame.install_id),
        ]

    def answered(
        self, event: PairingAnswered, *, hello_timeout: float
    ) -> tuple[list[Effect], bool]:
        """The frames of one answer, and whether the connection must close (4001)."""
        reply_to = self.asked
        if reply_to is None:
            return [], False
        match event.outcome:
            case "pending":
                pending = PairPending(reply_to, event.code, event.expires_in)
                return [Send(pending)], False
            case "granted":
                self.asked, self.key = None, event.key
                return [
                    Send(PairGranted(reply_to, event.key)),
                    ArmTimer("hello", hello_timeout),
                ], False
            case "busy":
                self.asked = None
                message = "too many pair requests are waiting (or one of this mod's): try later"
                busy = Send(replies.error("pair_busy", message, reply_to))
                return [busy, ArmTimer("hello", hello_timeout)], False
            case "denied":
                return [Send(PairDenied(reply_to))], True
            case "expired":
                return [Send(PairExpired(reply_to))], True
        message = "pairing is not open to this connection"
        return [Send(replies.error("unauthorized", message, reply_to))], True
