"""The memory page's pairing section (v1.md "Pairing"): requests to allow, keys to revoke.

Steps over the server's :class:`~xtyserver.serve.pairing.PairingDesk`: ``GET
pairing`` lists the pending requests (adapter, game, code, when it expires)
and the paired mods (adapter, game, paired at, last used; never a key or its
hash, nor an install id: several installs of one mod are numbered 1, 2, … in the
order they paired, and a key with an open connection says so); ``POST pair``
``{"requestId", "allow"}`` is the player's click (a page write: session and CSRF
checked like every other); ``POST revoke``
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
    the page's line 「现在连着……」, polled with the pairing view. ``in_use``: the ids of the
    keys with an open connection (``Sessions.keys_in_use``), which tells the player which row
    is the game in front of them.
    """

    def __init__(
        self,
        desk: PairingDesk,
        revoke: Callable[[str], Awaitable[bool]],
        connected: Callable[[], list[Identity]] = list,
        in_use: Callable[[], set[str]] = set,
    ) -> None:
        self.desk = desk
        self._revoke = revoke
        self._connected = connected
        self._in_use = in_use

    def view(self) -> dict[str, Any]:
        listing = sorted(self.desk.keys.listing(), key=lambda k: k.paired_at)
        installs: dict[tuple[str, str], int] = {}
        for k in listing:
            installs[(k.adapter, k.game_id)] = installs.get((k.adapter, k.game_id), 0) + 1
        numbered: dict[tuple[str, str], int] = {}
        in_use = self._in_use()
        keys = []
        for k in listing:
            mod = (k.adapter, k.game_id)
            numbered[mod] = numbered.get(mod, 0) + 1
            keys.append(
                {
                    "id": k.id,
                    "adapter": k.adapter,
                    "gameId": k.game_id,
                    # which install of this mod (1, 2, … by pairing time); null for an only one
                    "install": numbered[mod] if installs[mod] > 1 else None,
                    "pairedAt": k.paired_at,
                    "lastUsed": k.last_used,
                    "inUse": k.id in in_use,
                }
            )
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
