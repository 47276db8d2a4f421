"""The ``memory_trash`` table: what a forget deleted, restorable for a while.

A forget puts the rows it deletes (events, profile fields, play statistics, the
player's names) here in the same transaction, so a trashed item is never
injected, exported or shown; its tombstones stay. Restoring puts the events
back (under their old ids when free), lifts their tombstones, and refills
what was not set again since.
"""

from __future__ import annotations

from typing import Any, cast

import apsw
import msgspec

from xtyserver.memory.aliases import PlayerAlias
from xtyserver.memory.manage import ForgetSpec, RestoreResult, TrashEntry, restorable_here
from xtyserver.memory.sqlite import aliases, events, play, saves, shared_profile
from xtyserver.memory.types import PROFILE_FIELDS, MemoryEvent

_EVENTS = msgspec.json.Decoder(list[MemoryEvent])
_SPEC = msgspec.json.Decoder(ForgetSpec)
_ALIASES = msgspec.json.Decoder(list[PlayerAlias])


def put(
    conn: apsw.Connection,
    spec: ForgetSpec,
    doomed: list[MemoryEvent],
    profile: dict[str, Any],
    now: float,
    stats: dict[str, Any],
    names: list[PlayerAlias],
) -> int | None:
    """Keep what a forget of ``spec`` deletes (events, profile fields, play rows, the
    player's names); the new trash id (None when nothing goes)."""
    stats = stats if any(stats.values()) else {}
    if not doomed and not profile and not stats and not names:
        return None
    conn.execute(
        "INSERT INTO memory_trash(trashed_at, spec, events, profile, stats, aliases) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (
            now,
            msgspec.json.encode(spec).decode(),
            msgspec.json.encode(doomed).decode(),
            msgspec.json.encode(profile).decode(),
            msgspec.json.encode(stats).decode(),
            msgspec.json.encode(names).decode(),
        ),
    )
    return conn.last_insert_rowid()


def _entry(row: tuple[Any, ...], labels: dict[Any, str], window: float) -> TrashEntry:
    trash_id, at, spec, found, profile, names = row
    return TrashEntry(
        id=trash_id,
        spec=_SPEC.decode(spec),
        trashed_at=at,
        expires_at=at + window,
        saves=saves.group(_EVENTS.decode(found), labels, _ALIASES.decode(names)),
        profile_fields=tuple(msgspec.json.decode(profile)),
    )


def entries(conn: apsw.Connection, now: float, window: float) -> list[TrashEntry]:
    """Every restorable entry (kept at exactly ``window`` seconds, gone after), newest first."""
    labels = saves.names(conn)
    rows = conn.execute(
        "SELECT id, trashed_at, spec, events, profile, aliases FROM memory_trash "
        "WHERE trashed_at >= ? ORDER BY trashed_at DESC, id DESC",
        (now - window,),
    )
    return [_entry(row, labels, window) for row in rows]


def newest(
    conn: apsw.Connection, now: float, window: float, game_id: str | None
) -> TrashEntry | None:
    """The newest restorable entry (of a chat in ``game_id``: its game's or the profile's)."""
    found = entries(conn, now, window)
    return next((e for e in found if game_id is None or restorable_here(e.spec, game_id)), None)


def restore(
    conn: apsw.Connection, trash_id: int, now: float, window: float
) -> RestoreResult | None:
    """Put entry ``trash_id`` back and drop it from the trash; None when not restorable."""
    rows = conn.execute(
        "SELECT id, trashed_at, spec, events, profile, stats, aliases FROM memory_trash "
        "WHERE id = ? AND trashed_at >= ?",
        (trash_id, now - window),
    ).fetchall()
    if not rows:
        return None
    _, _, raw_spec, raw_events, raw_profile, raw_stats, raw_names = cast(
        tuple[int, float, str, str, str, str, str], rows[0]
    )
    stats_saves = play.put_back_rows(conn, msgspec.json.decode(raw_stats))
    aliases.put_back(conn, _ALIASES.decode(raw_names))
    spec = _SPEC.decode(raw_spec)
    count = 0
    for event in _EVENTS.decode(raw_events):
        count += _put_back(conn, event)
        saves.unbury(conn, event.scope, event.subject)
    current = shared_profile.load(conn)
    refilled: list[str] = []
    for name, value in msgspec.json.decode(raw_profile).items():
        if name in PROFILE_FIELDS and not getattr(current, name):
            shared_profile.set_field(conn, name, value, now)
            refilled.append(name)
    conn.execute("DELETE FROM memory_trash WHERE id = ?", (trash_id,))
    return RestoreResult(
        trash_id=trash_id,
        spec=spec,
        items=count,
        profile_fields=tuple(refilled),
        stats_saves=stats_saves,
    )


def _put_back(conn: apsw.Connection, event: MemoryEvent) -> int:
    """Insert ``event`` again (its old id when free); 0 when the same fact was formed since."""
    taken = conn.execute("SELECT 1 FROM game_memory WHERE id = ?", (event.id,)).fetchall()
    columns = events.COLUMNS if not taken else events.COLUMNS[1:]
    values = events.bindings(event, columns)
    conn.execute(
        f"INSERT INTO game_memory({', '.join(columns)}) VALUES ({', '.join('?' * len(columns))}) "
        "ON CONFLICT(game_id, save_id, kind, subject) DO NOTHING",
        values,
    )
    return conn.changes()


def purge(conn: apsw.Connection, now: float, window: float) -> int:
    """Delete the entries past their window; how many."""
    conn.execute("DELETE FROM memory_trash WHERE trashed_at < ?", (now - window,))
    return conn.changes()


def count(conn: apsw.Connection) -> int:
    """Rows in the trash, expired or not (for tests and the log)."""
    (row,) = conn.execute("SELECT count(*) FROM memory_trash").fetchall()
    return cast(int, row[0])
