"""The memory-management frames of a mod's menu (v1.md "memory.get" ... "memory.forgotten").

View, correct a shared field, pin or unpin an item, and forget in two steps:
``memory.forget`` without ``confirmToken`` answers ``memory.preview`` with a
token; the same frame again with that token deletes. A companion's preview is
shown to the player through the mod (``memory.confirm.request``), which may
answer with the player's yes or no (``memory.confirm``).
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta, field

from xtyserver.protocol.frame_base import ClientBase, FrameId, Obj, SaveId, ServerBase
from xtyserver.protocol.limits import PROFILE_ITEM_MAX, PROFILE_ITEMS_MAX, PROFILE_TEXT_MAX

MemoryScope = Literal["save", "game", "profile"]
EventId = Annotated[int, Meta(ge=1, le=2**63 - 1)]
ConfirmToken = Annotated[str, Meta(min_length=1, max_length=64)]
ProfileField = Literal[
    "nickname",
    "language",
    "replyStyle",
    "personality",
    "hobbies",
    "games",
    "companionName",
    "companionPersona",
    "notes",
    "autoShared",
]
ProfileText = Annotated[str, Meta(max_length=PROFILE_TEXT_MAX)]
ProfileItems = Annotated[
    list[Annotated[str, Meta(max_length=PROFILE_ITEM_MAX)]], Meta(max_length=PROFILE_ITEMS_MAX)
]
ForgetTarget = Annotated[
    Literal["item", "save", "game", "profile", "all", "event"],
    Meta(description='"event" is the removed v1.0 name of "item": refused, naming target.'),
]

# -- client frames ------------------------------------------------------------


class MemoryGet(ClientBase, tag="memory.get"):
    """View memory (v1.md "memory.get"): a save of this game, the whole game, or the profile."""

    id: FrameId | None = None
    scope: MemoryScope = "save"
    save_id: SaveId | None = None


class MemoryForget(ClientBase, tag="memory.forget"):
    """Forget in two steps: preview with a token, then confirm with it (v1.md "memory.forget")."""

    target: ForgetTarget
    id: FrameId | None = None
    event_id: EventId | None = None
    save_id: SaveId | None = None
    include_stats: bool = False
    confirm_token: ConfirmToken | None = None
    confirm: (
        Annotated[bool, Meta(description="Removed: refused; use confirmToken (v1.md).")] | None
    ) = None


class MemoryConfirm(ClientBase, tag="memory.confirm"):
    """The player's answer to a ``memory.confirm.request`` dialog (v1.md "memory.confirm")."""

    confirm_id: ConfirmToken
    answer: Literal["yes", "no"]
    id: FrameId | None = None


class MemoryPin(ClientBase, tag="memory.pin"):
    """Pin ("记住这个": never merged by compaction) or unpin one item (v1.md "memory.pin")."""

    event_id: EventId
    pinned: bool
    save_id: SaveId | None = None
    id: FrameId | None = None


class ProfileUpdate(ClientBase, tag="profile.update"):
    """Correct one shared-profile field (v1.md "profile.update")."""

    field: ProfileField
    value: ProfileText | ProfileItems | bool | None
    id: FrameId | None = None


# -- server frames ------------------------------------------------------------


class MemoryItem(Obj):
    id: int
    kind: str
    subject: str
    summary: str
    importance: int
    status: str
    pinned: bool
    updated_at: str
    day: int | None = None
    # Its search keys (docs/memory.md "Search keys"), shown on the memory page as tags;
    # absent when it has none.
    search_keys: list[str] = field(default_factory=list)


class SaveRef(Obj):
    """A save by its ids and readable name (``saveName`` absent when the game never sent one)."""

    game_id: str
    save_id: str
    save_name: str | None = None


class SaveItems(Obj):
    """One save with its readable name and items; ``current`` is the connection's save."""

    game_id: str
    save_id: str
    current: bool
    events: list[MemoryItem]
    save_name: str | None = None


class MemoryResult(ServerBase, tag="memory.result"):
    """Answer to ``memory.get``, ``memory.pin``, ``profile.update`` (v1.md "memory.result")."""

    scope: MemoryScope
    profile: dict[str, str | list[str] | bool | None]
    events: list[MemoryItem]
    saves: list[SaveItems]
    id: str | None = None


class MemoryPreview(ServerBase, tag="memory.preview"):
    """What a ``memory.forget`` would delete, and the token that confirms it (v1.md)."""

    target: str
    confirm_token: str
    expires_in_ms: int
    include_stats: bool
    item_count: int
    saves: list[SaveItems]
    profile_fields: list[str]
    stats_saves: list[SaveRef]
    id: str | None = None


class MemoryConfirmRequest(ServerBase, tag="memory.confirm.request"):
    """The companion previewed a forget: ask the player (v1.md "memory.confirm.request")."""

    confirm_id: str
    target: str
    expires_in_ms: int
    include_stats: bool
    item_count: int
    saves: list[SaveItems]
    profile_fields: list[str]
    stats_saves: list[SaveRef]
    chat_id: str | None = None
    question: str | None = None


class MemoryNotice(ServerBase, tag="memory.notice"):
    """Something of the player's memory was deleted or restored: show it (v1.md "memory.notice")."""

    action: Literal["forgotten", "restored"]
    target: str
    items: int
    text: str
    profile_cleared: bool = False
    profile_fields: list[str] = field(default_factory=list)
    stats_saves: int = 0
    trash_id: int | None = None
    restorable_until: str | None = None
    chat_id: str | None = None
    id: str | None = None


class MemoryForgotten(ServerBase, tag="memory.forgotten"):
    """A confirmed ``memory.forget`` was carried out (v1.md "memory.forgotten")."""

    target: str
    items: int
    profile_cleared: bool
    stats_saves: int
    trash_id: int | None = None
    id: str | None = None
