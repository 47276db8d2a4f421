"""Value types of the long-term memory store.

Length and range limits live in ``msgspec.Meta`` constraints, so they are
enforced wherever a value is decoded or passed through :func:`validated`
(the store validates every value it is asked to write).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, TypeVar, get_args

import msgspec

from xtyserver.memory.tokens import TokenUsage

MemoryKind = Literal["goal", "decision", "promise", "relationship", "milestone", "event"]
MemoryStatus = Literal["active", "done", "dropped"]

KINDS: tuple[MemoryKind, ...] = get_args(MemoryKind)
STATUSES: tuple[MemoryStatus, ...] = get_args(MemoryStatus)

SUBJECT_MAX = 80
SUMMARY_MAX = 160
SEARCH_KEY_MAX = 40
SEARCH_KEYS_MAX = 8

# The same rules as protocol/v1 identity (v1.md "Identity").
GameIdText = Annotated[str, msgspec.Meta(pattern=r"^[a-z0-9][a-z0-9._-]{0,63}$")]
SaveIdText = Annotated[str, msgspec.Meta(pattern=r"^[A-Za-z0-9_-]{1,128}$")]
Subject = Annotated[str, msgspec.Meta(min_length=1, max_length=SUBJECT_MAX)]
Summary = Annotated[str, msgspec.Meta(min_length=1, max_length=SUMMARY_MAX)]
Importance = Annotated[int, msgspec.Meta(ge=1, le=5)]
GameDay = Annotated[int, msgspec.Meta(ge=0)]
SearchKey = Annotated[str, msgspec.Meta(min_length=1, max_length=SEARCH_KEY_MAX)]
SearchKeys = Annotated[tuple[SearchKey, ...], msgspec.Meta(max_length=SEARCH_KEYS_MAX)]


class Scope(msgspec.Struct, frozen=True, order=True, rename="camel"):
    """One save of one game: the unit that game memories never leave."""

    game_id: GameIdText
    save_id: SaveIdText


class NewEvent(msgspec.Struct, frozen=True, rename="camel"):
    """A fact about to be remembered (what a model or the player proposes).

    Attributes:
        day: The in-game day (``world.day``) the fact was formed on, or None.
        search_keys: Words to find it by (names in both languages, synonyms,
            the topic), written with it by the extraction call; None: none given
            (a stored memory keeps the keys it has).
    """

    kind: MemoryKind
    subject: Subject
    summary: Summary
    importance: Importance = 3
    status: MemoryStatus = "active"
    pinned: bool = False
    day: GameDay | None = None
    search_keys: SearchKeys | None = None


class MemoryEvent(msgspec.Struct, frozen=True, rename="camel"):
    """A stored game memory, scoped to ``game_id + save_id``.

    Times are epoch seconds. ``day`` is the in-game day stamp (see ``NewEvent``).
    ``search_keys``: its search keys (indexed with a lower weight than the
    summary, shown as tags); None: never asked for (the enrichment job will),
    ``()``: asked, none found.
    """

    id: int
    game_id: GameIdText
    save_id: SaveIdText
    kind: MemoryKind
    subject: Subject
    summary: Summary
    importance: Importance
    status: MemoryStatus
    pinned: bool
    day: GameDay | None
    created_at: float
    updated_at: float
    last_used_at: float
    search_keys: SearchKeys | None = None

    @property
    def scope(self) -> Scope:
        return Scope(self.game_id, self.save_id)


def new_row(scope: Scope, event: NewEvent, now: float) -> MemoryEvent:
    """The row ``event`` becomes when first remembered at ``now`` (its id not yet known)."""
    return MemoryEvent(
        id=0,
        game_id=scope.game_id,
        save_id=scope.save_id,
        kind=event.kind,
        subject=event.subject,
        summary=event.summary,
        importance=event.importance,
        status=event.status,
        pinned=event.pinned,
        day=event.day,
        created_at=now,
        updated_at=now,
        last_used_at=now,
        search_keys=event.search_keys,
    )


ShortText = Annotated[str, msgspec.Meta(max_length=32)]
ItemText = Annotated[str, msgspec.Meta(min_length=1, max_length=40)]
NoteText = Annotated[str, msgspec.Meta(min_length=1, max_length=80)]
ItemList = Annotated[list[ItemText], msgspec.Meta(max_length=8)]


class SharedProfile(msgspec.Struct, rename="camel"):
    """The one player record shared by every supported game.

    Updated field by field (``MemoryStore.set_profile_field``), never rewritten
    whole by a model. ``auto_shared`` is the "form shared memory automatically"
    switch: when False, background extraction proposes no profile change.
    """

    nickname: ShortText = ""
    language: Annotated[str, msgspec.Meta(max_length=16)] = ""
    reply_style: Annotated[str, msgspec.Meta(max_length=80)] = ""
    personality: ItemList = msgspec.field(default_factory=list)
    hobbies: ItemList = msgspec.field(default_factory=list)
    games: ItemList = msgspec.field(default_factory=list)
    companion_name: ShortText = ""
    companion_persona: Annotated[str, msgspec.Meta(max_length=200)] = ""
    notes: Annotated[list[NoteText], msgspec.Meta(max_length=10)] = msgspec.field(
        default_factory=list
    )
    auto_shared: bool = True


PROFILE_FIELDS: tuple[str, ...] = SharedProfile.__struct_fields__


class ProfileField(msgspec.Struct, frozen=True):
    """One shared-profile field: its store name, its wire name, whether it is a list.

    Attributes:
        name: The :class:`SharedProfile` attribute (``reply_style``).
        wire: The camelCase name of frames, tools, the page and MCP (``replyStyle``).
        is_list: A list of short texts (else a text, or the autoShared switch).
        editable: Corrected and forgotten like the others (every field but autoShared).
    """

    name: str
    wire: str
    is_list: bool
    editable: bool


PROFILE_TABLE: tuple[ProfileField, ...] = tuple(
    ProfileField(f.name, f.encode_name, f.default_factory is list, f.name != "auto_shared")
    for f in msgspec.structs.fields(SharedProfile)
)
"""The one table of profile fields; every surface looks names up here."""

EDITABLE_FIELDS: tuple[ProfileField, ...] = tuple(f for f in PROFILE_TABLE if f.editable)
_FIELD_BY_ANY_NAME = {**{f.name: f for f in PROFILE_TABLE}, **{f.wire: f for f in PROFILE_TABLE}}


def profile_field(name: str) -> ProfileField | None:
    """The field called ``name`` (wire ``replyStyle`` or store ``reply_style``), or None."""
    return _FIELD_BY_ANY_NAME.get(name)


class SavePlayStats(msgspec.Struct, frozen=True, rename="camel"):
    """Play statistics of one save. ``last_played`` is epoch seconds or None."""

    game_id: str
    save_id: str
    days: int
    sessions: int
    active_ms: int
    last_played: float | None
    save_name: str | None = None


class GamePlayStats(msgspec.Struct, frozen=True, rename="camel"):
    """Play statistics of one game; ``days`` is the union of dates across its saves."""

    game_id: str
    days: int
    sessions: int
    active_ms: int
    last_played: float | None


class PlayStats(msgspec.Struct, frozen=True, rename="camel"):
    """What ``xtyserver stats`` and the ``stats.get`` frame report (``tokens``: newest first)."""

    games: list[GamePlayStats]
    saves: list[SavePlayStats]
    tokens: list[TokenUsage] = msgspec.field(default_factory=list)


class DailyPlay(msgspec.Struct, frozen=True, rename="camel"):
    """Active time of one game on one local date (``YYYY-MM-DD``)."""

    game_id: str
    date: str
    active_ms: int


T = TypeVar("T", bound=msgspec.Struct)

_PATH_RE = re.compile(r"at `\$\.([A-Za-z_]+)")


def validated(value: T) -> T:
    """Return ``value`` after checking every ``Meta`` constraint of its type.

    Raises:
        msgspec.ValidationError: A field is out of its limits.
    """
    return msgspec.convert(msgspec.to_builtins(value), type(value))


def error_field(exc: msgspec.ValidationError) -> str | None:
    """The top-level field a msgspec validation error points at, if any."""
    m = _PATH_RE.search(str(exc))
    return m.group(1) if m else None
