"""Export, import and backup of a whole store (``docs/memory-export.md``).

An import is checked completely before anything is written (every limit,
every text normalised and scanned for forbidden content, every timezone and
number) and then written in one transaction, so a bad document changes nothing.
The document's format itself lives in ``memory/export.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import apsw
import msgspec

from xtyserver.errors import StoreError, UsageError
from xtyserver.memory import accounting
from xtyserver.memory.aliases import MAX_ALIASES, PlayerAlias
from xtyserver.memory.export import (
    FORMAT_NAME,
    FORMAT_VERSION,
    ExportDocument,
    PlayDayRecord,
    PlaySessionRecord,
    SaveNameRecord,
    TombstoneRecord,
)
from xtyserver.memory.sqlite import aliases, events, play, saves, shared_profile
from xtyserver.memory.sqlite.database import Database, create_private_file
from xtyserver.memory.types import Scope, validated
from xtyserver.memory.validation import (
    check_event_texts,
    check_profile_texts,
    checked_alias,
    checked_scope,
    normalized_event,
    normalized_profile,
    refuse_forbidden,
)
from xtyserver.protocol.normalize import normalize, visible

_SQLITE_INT_MAX = 2**63 - 1
_BACKUP_PAGES_PER_STEP = 256


def export_document(conn: apsw.Connection, now: float) -> ExportDocument:
    """Everything in the store as one document (call inside one read snapshot)."""
    return ExportDocument(
        format=FORMAT_NAME,
        version=FORMAT_VERSION,
        exported_at=now,
        profile=shared_profile.load(conn),
        events=events.load_all(conn),
        sessions=play.all_sessions(conn),
        days=play.all_days(conn),
        save_names=saves.name_records(conn),
        tombstones=saves.tombstone_records(conn),
        names=aliases.load_all(conn),
    )


def _named(record: SaveNameRecord) -> SaveNameRecord:
    return msgspec.structs.replace(record, name=visible(record.name).strip())


def _buried(record: TombstoneRecord) -> TombstoneRecord:
    return msgspec.structs.replace(record, subject=normalize(record.subject).strip())


def checked_document(doc: ExportDocument) -> ExportDocument:
    """``doc`` with its texts normalised, after every check an import needs.

    Raises:
        StoreError: code ``invalid_import`` when a value breaks a limit, the
            format is not ours, a timezone is unknown or a number too large.
        StoreContentError: A text carries forbidden content.
    """
    try:
        doc = validated(
            msgspec.structs.replace(
                doc,
                profile=normalized_profile(doc.profile),
                events=[normalized_event(e) for e in doc.events],
                save_names=[_named(r) for r in doc.save_names],
                tombstones=[_buried(r) for r in doc.tombstones],
            )
        )
    except (msgspec.ValidationError, TypeError) as exc:
        raise StoreError(f"not a valid memory export: {exc}", code="invalid_import") from exc
    if doc.format != FORMAT_NAME or doc.version not in (1, 2, 3):
        raise StoreError("unsupported memory export format", code="invalid_import")
    check_profile_texts(doc.profile)
    for ev in doc.events:
        checked_scope(ev.scope)
        check_event_texts(ev)
    for record in doc.save_names:
        refuse_forbidden("saveNames.name", record.name)
    for grave in doc.tombstones:
        refuse_forbidden("tombstones.subject", grave.subject)
    names: list[PlayerAlias] = []
    for each in doc.names:
        try:
            alias, means = checked_alias(each.alias, each.means)
        except StoreError as exc:
            if exc.code != "invalid_memory":
                raise  # forbidden content: refused as for every other text
            raise StoreError(f"not a valid memory export: {exc}", code="invalid_import") from exc
        names.append(msgspec.structs.replace(each, alias=alias, means=means))
    doc = msgspec.structs.replace(doc, names=names)
    Record = PlaySessionRecord | PlayDayRecord | SaveNameRecord | TombstoneRecord | PlayerAlias
    records: list[Record] = [*doc.sessions, *doc.days, *doc.save_names, *doc.tombstones, *doc.names]
    for scope in {Scope(r.game_id, r.save_id) for r in records}:
        checked_scope(scope)
    for s in doc.sessions:
        try:
            accounting.timezone(s.tz)
        except UsageError as exc:
            raise StoreError("unknown timezone in sessions", code="invalid_import") from exc
    too_big = [s.active_ms for s in doc.sessions if s.active_ms > _SQLITE_INT_MAX]
    too_big += [e.day for e in doc.events if e.day is not None and e.day > _SQLITE_INT_MAX]
    if too_big:
        raise StoreError("a number in the export is too large", code="invalid_import")
    return doc


def import_checked(conn: apsw.Connection, doc: ExportDocument, now: float) -> None:
    """Merge a :func:`checked_document` into the store (inside one write transaction).

    Profile fields overwrite the store's; an event with the same scope, kind
    and subject keeps whichever copy was updated later; sessions (keyed by save
    and start time) and days already present are skipped, so importing twice
    changes nothing the second time. Save names keep the newer one; tombstones
    (version 2) are merged, so a forgotten memory stays forgotten; the player's
    names (version 3) keep the one said later, at most 32 per save.
    """
    shared_profile.set_all(conn, doc.profile, now)
    events.merge_newer(conn, doc.events)
    play.merge(conn, doc.sessions, doc.days)
    saves.merge(conn, doc.save_names, doc.tombstones)
    aliases.merge(conn, doc.names, MAX_ALIASES)


def backup(db: Database, path: str | os.PathLike[str]) -> None:
    """Copy the store to ``path`` (created owner-only) with SQLite's online backup.

    Runs holding the write lock, so no write of this process restarts the copy.

    Raises:
        StoreError: The copy failed or the file cannot be written.
    """
    dest_path = Path(path)

    def copy(conn: apsw.Connection) -> None:
        if not dest_path.exists():
            create_private_file(dest_path)
        dest = apsw.Connection(str(dest_path))
        try:
            with dest.backup("main", conn, "main") as b:
                while not b.done:
                    b.step(_BACKUP_PAGES_PER_STEP)
        finally:
            dest.close()

    try:
        db.maintain(copy)
    except OSError as exc:
        raise StoreError("cannot write the backup file") from exc
