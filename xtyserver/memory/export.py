"""The memory export document (``docs/memory-export.md``).

Decoding validates every limit of every field (a bad document raises
:class:`~xtyserver.errors.StoreError` code ``invalid_import``, the store is left
unchanged) and puts the texts in normal form; the store checks them again
before writing.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from xtyserver.errors import StoreError
from xtyserver.memory.aliases import PlayerAlias
from xtyserver.memory.types import (
    GameIdText,
    MemoryEvent,
    MemoryKind,
    SaveIdText,
    SharedProfile,
    Subject,
)
from xtyserver.memory.validation import normalized_event, normalized_profile

FORMAT_NAME: Literal["xtyserver.memory-export"] = "xtyserver.memory-export"
FORMAT_VERSION: Literal[3] = 3
"""Version 2 adds ``saveNames`` and ``tombstones``, version 3 the player's own ``names``;
older documents still import."""
MAX_DOCUMENT_BYTES = 64 * 1024 * 1024

IsoDate = Annotated[str, msgspec.Meta(pattern=r"^\d{4}-\d{2}-\d{2}$")]
Tz = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
NonNegInt = Annotated[int, msgspec.Meta(ge=0)]


class PlaySessionRecord(msgspec.Struct, frozen=True, rename="camel"):
    """One ``play_session`` row. Times are epoch seconds; ``endedAt`` null = open."""

    id: int
    game_id: GameIdText
    save_id: SaveIdText
    tz: Tz
    started_at: float
    last_heartbeat_at: float
    ended_at: float | None
    active_ms: NonNegInt


class PlayDayRecord(msgspec.Struct, frozen=True, rename="camel"):
    """One ``play_day`` row: a local date on which a save was played."""

    game_id: GameIdText
    save_id: SaveIdText
    date: IsoDate


class SaveNameRecord(msgspec.Struct, frozen=True, rename="camel"):
    """One save's readable name (``identity.saveName``), since version 2."""

    game_id: GameIdText
    save_id: SaveIdText
    name: Annotated[str, msgspec.Meta(min_length=1, max_length=64)]
    updated_at: float


class TombstoneRecord(msgspec.Struct, frozen=True, rename="camel"):
    """A forgotten memory's save, kind and subject (never its summary), since version 2."""

    game_id: GameIdText
    save_id: SaveIdText
    kind: MemoryKind
    subject: Subject
    forgotten_at: float


class ExportDocument(msgspec.Struct, frozen=True, rename="camel", forbid_unknown_fields=True):
    """The whole store as one document (format ``xtyserver.memory-export`` v3; v1 and v2 decode)."""

    format: Literal["xtyserver.memory-export"]
    version: Literal[1, 2, 3]
    exported_at: float
    profile: SharedProfile
    events: list[MemoryEvent]
    sessions: list[PlaySessionRecord]
    days: list[PlayDayRecord]
    save_names: list[SaveNameRecord] = msgspec.field(default_factory=list)
    tombstones: list[TombstoneRecord] = msgspec.field(default_factory=list)
    names: list[PlayerAlias] = msgspec.field(default_factory=list)


def save_document(doc: ExportDocument, game_id: str, save_id: str) -> ExportDocument:
    """``doc`` cut down to one save: its events, sessions, days, name, tombstones and the
    player's names.

    The shared profile stays (it belongs to every save, and an import merges it
    field by field as for a whole export); every other save's rows go.
    """
    key = (game_id, save_id)
    rows = ("events", "sessions", "days", "save_names", "tombstones", "names")
    return msgspec.structs.replace(
        doc,
        **{f: [r for r in getattr(doc, f) if (r.game_id, r.save_id) == key] for f in rows},
    )


def encode_document(doc: ExportDocument) -> bytes:
    """The document as UTF-8 JSON (non-ASCII kept as is)."""
    return msgspec.json.encode(doc)


def decode_document(data: bytes | str) -> ExportDocument:
    """Decode and validate an export document.

    Raises:
        StoreError: code ``invalid_import`` when the document is malformed,
            of another format/version, or breaks a field limit.
    """
    if len(data) > MAX_DOCUMENT_BYTES:
        raise StoreError("the export document is too large", code="invalid_import")
    try:
        doc = msgspec.json.decode(data, type=ExportDocument)
        # What normalisation empties or lengthens past a limit, the import refuses.
        return msgspec.structs.replace(
            doc,
            profile=normalized_profile(doc.profile),
            events=[normalized_event(e) for e in doc.events],
        )
    except msgspec.ValidationError as exc:
        raise StoreError(f"not a valid memory export: {exc}", code="invalid_import") from exc
    except msgspec.DecodeError as exc:
        raise StoreError("the memory export is not valid JSON", code="invalid_import") from exc
