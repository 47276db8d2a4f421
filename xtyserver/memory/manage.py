"""What a player can do to their memory, as plain data (v1.md "Memory management").

Pure: the three ways in (the companion's tools, a mod's menu frames, the
command line) all say what they want with these types, and the store carries
them out (``MemoryStore.overview``, ``preview_forget``, ``forget``). Nothing
here does I/O.

A forget names its target and whether play statistics go too. Statistics are
never deleted unless ``include_stats`` is set (its own option, its own
confirmation), and deleting memory never touches a game's save files.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from xtyserver.memory.types import MemoryEvent, PlayStats, Scope, SharedProfile

ForgetKind = Literal["item", "save", "game", "profile", "all"]
FORGET_KINDS: tuple[ForgetKind, ...] = ("item", "save", "game", "profile", "all")


class ForgetSpec(msgspec.Struct, frozen=True, kw_only=True):
    """What to forget.

    Attributes:
        kind: ``item`` (one event of ``game_id/save_id``), ``save`` (every event of
            one save), ``game`` (every event of every save of ``game_id``),
            ``profile`` (the shared profile; the autoShared switch stays),
            ``all`` (the profile and every event).
        game_id: The game (item, save, game).
        save_id: The save (item, save).
        item_id: The event (item).
        include_stats: Also delete the play statistics of the save / game / all.
    """

    kind: ForgetKind
    game_id: str | None = None
    save_id: str | None = None
    item_id: int | None = None
    include_stats: bool = False

    @property
    def scope(self) -> Scope | None:
        if self.game_id is None or self.save_id is None:
            return None
        return Scope(self.game_id, self.save_id)

    def problem(self) -> str | None:
        """Why this spec is incomplete (a field it needs is missing), or None."""
        if self.kind == "item" and (self.scope is None or self.item_id is None):
            return "forgetting one item needs its game, save and item id"
        if self.kind == "save" and self.scope is None:
            return "forgetting a save needs its game and save"
        if self.kind == "game" and self.game_id is None:
            return "forgetting a game needs its game"
        if self.kind == "profile" and self.include_stats:
            return "the shared profile has no statistics"
        return None


class SaveView(msgspec.Struct, frozen=True, kw_only=True):
    """One save as the player sees it: its readable name and its items."""

    scope: Scope
    name: str | None
    events: tuple[MemoryEvent, ...]

    @property
    def label(self) -> str:
        """The save's readable name, or its opaque id when the game never sent one."""
        return self.name or self.scope.save_id


class Overview(msgspec.Struct, frozen=True, kw_only=True):
    """The shared profile, some saves with their items, and the play statistics."""

    profile: SharedProfile
    saves: tuple[SaveView, ...]
    stats: PlayStats
    names: dict[Scope, str] = msgspec.field(default_factory=dict)


class ForgetPreview(msgspec.Struct, frozen=True, kw_only=True):
    """What a forget would delete, shown before the player confirms it.

    Attributes:
        spec: The target.
        saves: Every affected save with the items that would go.
        profile_fields: Profile fields that hold a value and would be cleared.
        stats_saves: Saves whose play statistics would be deleted too.
        found: False when the target does not exist (an unknown item id).
    """

    spec: ForgetSpec
    saves: tuple[SaveView, ...]
    profile_fields: tuple[str, ...]
    stats_saves: tuple[Scope, ...]
    found: bool = True

    @property
    def item_count(self) -> int:
        return sum(len(s.events) for s in self.saves)


class ForgetResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a forget deleted."""

    items: int
    profile_cleared: bool
    stats_saves: int
