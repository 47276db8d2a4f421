"""The pairing frames (v1.md "Pairing"): a mod without a key asks, the player allows.

``pair.pending`` answers at once, then ``pair.granted``, ``pair.denied`` or
``pair.expired`` on the same connection. Ids and names only: no free text to normalise.
"""

from __future__ import annotations

from typing import Annotated

from msgspec import Meta

from xtyserver.protocol.frame_base import AdapterInfo, ClientBase, FrameId, GameId, ServerBase

PairCode = Annotated[str, Meta(pattern=r"^[0-9]{4}$")]
InstallId = Annotated[
    str,
    Meta(
        pattern=r"^[0-9A-Fa-f][0-9A-Fa-f-]{14,62}[0-9A-Fa-f]$",
        description=(
            "Random id this install of the mod made once and keeps beside its key"
            " (32 hex digits or a UUID); never a path, user name or account id."
        ),
    ),
]


class AdapterPair(ClientBase, tag="adapter.pair"):
    """Ask the player for a key of this mod's own (v1.md "adapter.pair")."""

    id: FrameId
    adapter: AdapterInfo
    game_id: GameId
    # Optional (v1.md "Keys per install"): one key per install; without it, one per mod.
    install_id: InstallId | None = None


class PairPending(ServerBase, tag="pair.pending"):
    """The request is on the memory page: ``code`` is the one the page shows."""

    reply_to: str
    code: PairCode
    expires_in_seconds: int


class PairGranted(ServerBase, tag="pair.granted"):
    """The player allowed it: ``key`` is this mod's own; send ``adapter.hello`` with it."""

    reply_to: str
    key: str


class PairDenied(ServerBase, tag="pair.denied"):
    """The player said no; the connection closes (4001)."""

    reply_to: str


class PairExpired(ServerBase, tag="pair.expired"):
    """Nobody answered in time; the connection closes (4001)."""

    reply_to: str
