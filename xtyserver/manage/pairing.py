"""The memory page's pairing section (v1.md "Pairing"): requests to allow, keys to revoke.

Steps over the server's :class:`~xtyserver.serve.pairing.PairingDesk`: ``GET
pairing`` lists the pending requests (adapter, game, code, when it expires)
and the paired mods (adapter, game, paired at, last used; never a key or its
hash); ``POST pair`` ``{"requestId", "allow"}`` is the player's click (a page
write: session and CSRF checked like every other); ``POST revoke``
``{"keyId"}`` forgets a key and closes its open connections (4001).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Annotated, Any

import msgspec

from xtyserver.manage.ops import Refused
from xtyserver.protocol.frames import Identity
from xtyserver.serve.pairing import PairingDesk

_Id = Annotated[str, msgspec.Meta(pattern=r"^[0-9a-f]{16}$")]


class DecideBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """``POST pair``: allow or deny one pending request."""

    request_id: _Id
    allow: bool


class RevokeBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """``POST revoke``: forget one paired mod's key."""

    key_id: _Id


class PagePairing:
    """The pairing section's steps for one running server (``revoke``: ``Sessions.revoke_key``).

    ``connected``: the games and saves the open sessions speak for (``Sessions.connected``):
    the page's line 「现在连着……」, polled with the pairing view.
    """

    def __init__(
        self,
        desk: PairingDesk,
        revoke: Callable[[str], Awaitable[bool]],
        connected: Callable[[], list[Identity]] = list,
    ) -> None:
        self.desk = desk
        self._revoke = revoke
        self._connected = connected

    def view(self) -> dict[str, Any]:
        keys = [
            {
                "id": k.id,
                "adapter": k.adapter,
                "gameId": k.game_id,
                "pairedAt": k.paired_at,
                "lastUsed": k.last_used,
            }
            for k in self.desk.keys.listing()
        ]
        connected = [
            {"gameId": i.game_id, "saveName": i.save_name or ""} for i in self._connected()
        ]
        return {
            "pending": msgspec.to_builtins(self.desk.pending()),
            "keys": keys,
            "connected": connected,
        }

    async def decide(self, body: DecideBody) -> dict[str, Any]:
        if not self.desk.decide(body.request_id, body.allow):
            raise Refused("this pair request is no longer waiting", 404, ["requestId"])
        return self.view()

    async def revoke(self, body: RevokeBody) -> dict[str, Any]:
        if not await self._revoke(body.key_id):
            raise Refused("no such paired mod", 404, ["keyId"])
        return self.view()
