"""The ``game_memory`` table: every read and write of stored events.

The column list is :class:`~xtyserver.memory.types.MemoryEvent`'s field list,
so the table, the record and the export document cannot drift apart.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, cast

import apsw
import msgspec

from xtyserver.memory.types import MemoryEvent, NewEvent, Scope, new_row
from xtyserver.protocol.normalize import normalize

# The one column list of game_memory: MemoryEvent's fields, in table order.
COLUMNS: tuple[str, ...] = MemoryEvent.__struct_fields__
_SELECT = f"SELECT {', '.join(COLUMNS)} FROM game_memory"
_INSERT_COLUMNS = COLUMNS[1:]  # id is the row id SQLite assigns
_FACT_KEY = ("game_id", "save_id", "kind", "subject")  # the table's UNIQUE constraint


def _insert_sql(updates: Sequence[str], where: str = "", *, returning: bool = False) -> str:
    """An INSERT of one full row that updates ``updates`` when the fact already exists.

    A fact is identified by (game, save, kind, subject); an entry of ``updates``
    is a column name (take the new value) or a ``column=expression`` of its own.
    """
    sets = ", ".join(u if "=" in u else f"{u}=excluded.{u}" for u in updates)
    return (
        f"INSERT INTO game_memory({', '.join(_INSERT_COLUMNS)}) "
        f"VALUES ({', '.join('?' for _ in _INSERT_COLUMNS)}) "
        f"ON CONFLICT({', '.join(_FACT_KEY)}) DO UPDATE SET {sets} {where}"
        + (f" RETURNING {', '.join(COLUMNS)}" if returning else "")
    )


# Remembering a fact again rewrites it, but never unpins it or moves its creation time;
# it keeps its search keys unless new ones come with it.
_UPSERT = _insert_sql(
    (
        "summary",
        "importance",
        "status",
        "pinned=max(pinned, excluded.pinned)",
        "day",
        "updated_at",
        "search_keys=coalesce(excluded.search_keys, search_keys)",
    ),
    returning=True,
)
# An imported copy replaces a stored one only if it was updated later.
_MERGE_NEWER = _insert_sql(
    [c for c in _INSERT_COLUMNS if c not in _FACT_KEY],
    "WHERE excluded.updated_at > game_memory.updated_at",
)
# A compaction digest keeps its creation and last-use times.
_DIGEST = _insert_sql(("summary", "day", "updated_at"))


def from_row(row: Sequence[Any]) -> MemoryEvent:
    """The :class:`MemoryEvent` of one row selected with :data:`COLUMNS`."""
    values = dict(zip(COLUMNS, row, strict=True))
    values["pinned"] = bool(values["pinned"])
    keys = values["search_keys"]
    values["search_keys"] = None if keys is None else tuple(json.loads(keys))
    return MemoryEvent(**values)


def _binding(event: MemoryEvent, column: str) -> Any:
    if column == "pinned":
        return int(event.pinned)
    if column == "search_keys":
        keys = event.search_keys
        return None if keys is None else json.dumps(list(keys), ensure_ascii=False)
    return getattr(event, column)


def bindings(event: MemoryEvent, columns: Sequence[str]) -> tuple[Any, ...]:
    """The SQL bindings of ``columns`` for ``event``."""
    return tuple(_binding(event, column) for column in columns)


def load(conn: apsw.Connection, scope: Scope) -> list[MemoryEvent]:
    """Every event of one save (the scope filter is in the SQL), oldest first."""
    rows = conn.execute(
        f"{_SELECT} WHERE game_id = ? AND save_id = ? ORDER BY id", (scope.game_id, scope.save_id)
    )
    return [from_row(r) for r in rows]


def count(conn: apsw.Connection, scope: Scope) -> int:
    """How many events one save holds."""
    rows = conn.execute(
        "SELECT count(*) FROM game_memory WHERE game_id = ? AND save_id = ?",
        (scope.game_id, scope.save_id),
    ).fetchall()
    return cast(int, rows[0][0])


def load_all(conn: apsw.Connection) -> list[MemoryEvent]:
    """Every event of every save, by id."""
    return [from_row(r) for r in conn.execute(f"{_SELECT} ORDER BY id")]


def _stored_subject(conn: apsw.Connection, scope: Scope, event: NewEvent) -> str:
    """The subject under which the same fact is stored, if it is (else the event's).

    Subjects are stored as typed but compared in their normal form (v1.md
    "Normalisation"): "社区中心计划！" is the fact stored as "社区中心计划!".
    """
    key = normalize(event.subject)
    rows = conn.execute(
        "SELECT subject FROM game_memory WHERE game_id = ? AND save_id = ? AND kind = ?",
        (scope.game_id, scope.save_id, event.kind),
    )
    for (subject,) in rows:
        if subject == event.subject or normalize(subject) == key:
            return cast(str, subject)
    return event.subject


def upsert(conn: apsw.Connection, scope: Scope, event: NewEvent, now: float) -> MemoryEvent:
    """Remember ``event``; the same scope, kind and (judged) subject updates that row in place."""
    subject = _stored_subject(conn, scope, event)
    if subject != event.subject:
        event = msgspec.structs.replace(event, subject=subject)
    rows = conn.execute(_UPSERT, bindings(new_row(scope, event, now), _INSERT_COLUMNS)).fetchall()
    return from_row(rows[0])


def merge_newer(conn: apsw.Connection, events: Iterable[MemoryEvent]) -> None:
    """Insert ``events`` (ids ignored); a stored fact is replaced only by a later copy."""
    conn.executemany(_MERGE_NEWER, [bindings(e, _INSERT_COLUMNS) for e in events])


def write_digest(conn: apsw.Connection, digest: MemoryEvent) -> None:
    """Insert a compaction digest, or update the save's digest of that kind."""
    conn.execute(_DIGEST, bindings(digest, _INSERT_COLUMNS))


def delete_ids(conn: apsw.Connection, scope: Scope, ids: Iterable[int]) -> int:
    """Delete the events ``ids`` of ``scope`` (other scopes' ids are left). Returns the count."""
    count = 0
    for i in ids:
        conn.execute(
            "DELETE FROM game_memory WHERE id = ? AND game_id = ? AND save_id = ?",
            (int(i), scope.game_id, scope.save_id),
        )
        # changes(), not total_changes(): the latter also counts the rows a foreign key
        # cascade deletes (an event's memory vector), so an event with a vector counted twice.
        count += int(conn.changes())
    return count


def set_pinned(conn: apsw.Connection, scope: Scope, event_id: int, pinned: bool) -> bool:
    """Pin or unpin one event of ``scope``. True if it exists."""
    conn.execute(
        "UPDATE game_memory SET pinned = ? WHERE id = ? AND game_id = ? AND save_id = ?",
        (int(pinned), event_id, scope.game_id, scope.save_id),
    )
    return bool(conn.changes())


def set_search_keys(
    conn: apsw.Connection, scope: Scope, keys: Iterable[tuple[int, tuple[str, ...]]]
) -> list[MemoryEvent]:
    """Store search keys of events of ``scope`` (ids of other scopes are left). The rows changed."""
    out: list[MemoryEvent] = []
    for event_id, found in keys:
        rows = conn.execute(
            f"UPDATE game_memory SET search_keys = ? WHERE id = ? AND game_id = ? AND save_id = ? "
            f"RETURNING {', '.join(COLUMNS)}",
            (json.dumps(list(found), ensure_ascii=False), int(event_id), *scope_params(scope)),
        ).fetchall()
        out += [from_row(r) for r in rows]
    return out


def without_search_keys(conn: apsw.Connection, scope: Scope, limit: int) -> list[MemoryEvent]:
    """Up to ``limit`` events of ``scope`` never given search keys, most important first."""
    rows = conn.execute(
        f"{_SELECT} WHERE game_id = ? AND save_id = ? AND search_keys IS NULL "
        "ORDER BY pinned DESC, importance DESC, id LIMIT ?",
        (*scope_params(scope), int(limit)),
    )
    return [from_row(r) for r in rows]


def scope_params(scope: Scope) -> tuple[str, str]:
    return scope.game_id, scope.save_id


def touch(conn: apsw.Connection, scope: Scope, ids: Iterable[int], now: float) -> None:
    """Mark events of ``scope`` as used at ``now``; time never moves back."""
    conn.executemany(
        "UPDATE game_memory SET last_used_at = max(last_used_at, ?) "
        "WHERE id = ? AND game_id = ? AND save_id = ?",
        [(now, int(i), scope.game_id, scope.save_id) for i in ids],
    )


def scopes(conn: apsw.Connection) -> set[Scope]:
    """Every save that has at least one event."""
    return {
        Scope(g, s) for g, s in conn.execute("SELECT DISTINCT game_id, save_id FROM game_memory")
    }
