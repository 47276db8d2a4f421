"""What a player can do to their memory, as plain data (v1.md "Memory management").

Pure, and the one management path: every way in (the companion's tools, a
mod's menu frames, the memory page, MCP and the command line) says what it
wants with these types and one vocabulary of targets, and the store carries
them out in one snapshot or one transaction. Statistics are never deleted
unless ``include_stats`` is set, and deleting memory never touches a game's
save files. :class:`Confirmations` holds the tokens of two-step forgets for
every surface (v1.md "Memory tools", "memory.forget").
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Literal

import msgspec

from xtyserver.memory.aliases import PlayerAlias
from xtyserver.memory.types import (
    DailyPlay,
    GameIdText,
    MemoryEvent,
    PlayStats,
    SaveIdText,
    Scope,
    SharedProfile,
)

ForgetKind = Literal["item", "save", "game", "profile", "all"]


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
    """One save as the player sees it: its readable name, its items and the player's own
    names for things on it."""

    scope: Scope
    name: str | None
    events: tuple[MemoryEvent, ...]
    aliases: tuple[PlayerAlias, ...] = ()

    @property
    def label(self) -> str:
        """The save's readable name, or its opaque id when the game never sent one."""
        return self.name or self.scope.save_id


class Overview(msgspec.Struct, frozen=True, kw_only=True):
    """The shared profile, some saves with their items, and the play statistics (one
    snapshot); ``daily``: active time per game and local date since when the caller asked."""

    profile: SharedProfile
    saves: tuple[SaveView, ...]
    stats: PlayStats
    names: dict[Scope, str] = msgspec.field(default_factory=dict)
    daily: tuple[DailyPlay, ...] = ()


class ForgetPreview(msgspec.Struct, frozen=True, kw_only=True):
    """What a forget would delete, shown before the player confirms it.

    Attributes:
        saves: Every affected save with the items that would go.
        profile_fields: Profile fields that hold a value and would be cleared.
        stats_saves: Saves whose play statistics would be deleted too.
        found: False when the target does not exist (an unknown item id).
        names: The readable names of the saves in ``stats_saves``.
    """

    spec: ForgetSpec
    saves: tuple[SaveView, ...]
    profile_fields: tuple[str, ...]
    stats_saves: tuple[Scope, ...]
    found: bool = True
    names: dict[Scope, str] = msgspec.field(default_factory=dict)

    @property
    def item_count(self) -> int:
        return sum(len(s.events) for s in self.saves)


class ForgetResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a forget deleted; ``trash_id`` is where it can be restored from until
    ``expires_at`` (None: not kept)."""

    items: int
    profile_cleared: bool
    stats_saves: int
    trash_id: int | None = None
    expires_at: float | None = None


# -- the trash: forgotten memory kept for a while ------------------------------------------

TRASH_HOURS = 24.0
"""Default hours a forgotten item, save, game or profile stays restorable (0: no trash)."""


class TrashEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One forget's content in the trash, as the player sees it (restored by ``id``, purged
    at ``expires_at``; ``spec.include_stats``: its play statistics are kept too)."""

    id: int
    spec: ForgetSpec
    trashed_at: float
    expires_at: float
    saves: tuple[SaveView, ...]
    profile_fields: tuple[str, ...]

    @property
    def item_count(self) -> int:
        return sum(len(s.events) for s in self.saves)


class RestoreResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a restore put back: the items, the profile fields (those not set since) and
    the play statistics of ``stats_saves`` saves."""

    trash_id: int
    spec: ForgetSpec
    items: int
    profile_fields: tuple[str, ...]
    stats_saves: int = 0


def restorable_here(spec: ForgetSpec, game_id: str) -> bool:
    """Whether a trash entry may be restored from a game's chat: its own game, or the profile."""
    return spec.game_id in (None, game_id)


# -- confirmation tokens of two-step forgets -----------------------------------------------

TOKEN_TTL = 120.0
MAX_PENDING = 32

Refusal = Literal[
    "unknown",
    "expired",
    "other_target",
    "too_soon",
    "unquoted",
    "not_agreed",
    "declined",
    "needs_person",
    "too_many",
    "not_asked",
]
"""Why a command was not admitted (:func:`xtyserver.session.consent.admit`): its token is
unknown, spent or another asker's; past its TTL; issued for another target; redeemed
too soon (a tool, in the turn that issued it; an unasked echo, before its read delay);
an unasked echo without the preview's quote; the player's words were no yes to the server's question
(the token stays valid); the person said no (the token is void); nobody was asked and
the target needs a person; the bounded rate of unasked deletions is spent; a restore
the player's words did not ask for."""


class Pending(msgspec.Struct, frozen=True):
    """A previewed target waiting for its person's answer: who asked it, when and in which
    tool turn."""

    preview: ForgetPreview
    issued: float
    turn: int | None
    asker: str


class Confirmations:
    """Forget tokens: single-use, bound to a target and to who asked, expiring.

    One store of tokens for every surface; whether an answer redeems one is
    :func:`xtyserver.session.consent.admit`'s to decide. A connection's frames
    and tools each keep one (the asker is implied); the page keeps one for its
    sessions and passes the page session as ``asker``; MCP keeps one for its
    client. A token shown to one asker is ``unknown`` to every other (and stays
    valid for its own).

    Pure: the caller passes the time of every call (the injected clock).

    Args:
        secret: Text mixed into the tokens (the session id, or a random value).
        ttl: Seconds a token stays valid (valid at exactly ``ttl``, refused after).
    """

    def __init__(self, secret: str, ttl: float = TOKEN_TTL) -> None:
        self._secret = secret
        self.ttl = ttl
        self._count = 0
        self._pending: dict[str, Pending] = {}

    def issue(
        self, preview: ForgetPreview, now: float, turn: int | None = None, *, asker: str = ""
    ) -> str:
        """A new token for ``preview``'s target, issued at ``now`` to ``asker``.

        ``turn`` is the tool turn that asked (tools only). Only the newest
        :data:`MAX_PENDING` tokens are kept; older ones lapse.
        """
        self._count += 1
        seed = f"{self._secret}:{self._count}:{msgspec.json.encode(preview.spec).decode()}"
        token = _letters(hashlib.sha256(seed.encode()).digest())
        self._pending[token] = Pending(preview, now, turn, asker)
        while len(self._pending) > MAX_PENDING:
            del self._pending[next(iter(self._pending))]
        return token

    def peek(self, token: str, now: float, *, asker: str = "") -> Pending | Refusal:
        """``token``'s pending preview (nothing spent), or ``unknown`` / ``expired``."""
        pending = self._pending.get(token)
        if pending is None or pending.asker != asker:
            return "unknown"
        if now - pending.issued > self.ttl:
            del self._pending[token]
            return "expired"
        return pending

    def spend(self, token: str) -> None:
        """The token was used (or voided): it is gone."""
        self._pending.pop(token, None)

    def clear(self) -> None:
        self._pending.clear()


# -- a forget as the page and MCP send it ----------------------------------------------------

EventIdNumber = Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]
TokenText = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class ForgetRequest(
    msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True, rename="camel"
):
    """A forget with explicit ids: the memory page's JSON body and MCP's arguments.

    The fields of the ``memory.forget`` frame, with the game named too (a page
    or an assistant has no current save). Without ``confirm_token`` it asks for
    a preview; with the token of that preview it confirms the same target.
    """

    target: ForgetKind
    game_id: GameIdText | None = None
    save_id: SaveIdText | None = None
    event_id: EventIdNumber | None = None
    include_stats: bool = False
    confirm_token: TokenText | None = None

    def spec(self) -> ForgetSpec | tuple[tuple[str, str], ...]:
        """The target, or every problem as ``(wire field, why)``."""
        kind = self.target
        problems: list[tuple[str, str]] = []
        needs = {
            "gameId": kind in ("item", "save", "game"),
            "saveId": kind in ("item", "save"),
            "eventId": kind == "item",
        }
        given = {"gameId": self.game_id, "saveId": self.save_id, "eventId": self.event_id}
        for name, needed in needs.items():
            if needed and given[name] is None:
                problems.append((name, f"target {kind} needs {name}"))
            elif not needed and given[name] is not None:
                problems.append((name, f"target {kind} takes no {name}"))
        if kind in ("item", "profile") and self.include_stats:
            problems.append(("includeStats", f"target {kind} has no statistics"))
        if problems:
            return tuple(problems)
        return ForgetSpec(
            kind=kind,
            game_id=self.game_id,
            save_id=self.save_id,
            item_id=self.event_id,
            include_stats=self.include_stats,
        )


# A token's letters: no digits and no vowels, so no token reads as a number, a
# MAC address, a key or a word that the forbidden-content rules or a player
# would take for something else (12 of 19 letters: 51 bits, single-use, 120 s).
TOKEN_LETTERS = "bcdfghjkmnpqrstvwxz"


def _letters(digest: bytes, length: int = 12) -> str:
    number = int.from_bytes(digest, "big")
    out = []
    for _ in range(length):
        number, index = divmod(number, len(TOKEN_LETTERS))
        out.append(TOKEN_LETTERS[index])
    return "".join(out)
