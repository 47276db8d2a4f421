"""The ``memory_vector`` table: one float32 vector per event.

A vector is read only for the model that formed it; a row goes with its event
(``ON DELETE CASCADE``) and with a change of its text (a trigger).
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable

import apsw

from xtyserver.memory.sqlite.events import _SELECT, from_row, scope_params
from xtyserver.memory.types import MemoryEvent, Scope
from xtyserver.memory.vectors import embedding_text, from_blob, to_blob


def load_vectors(conn: apsw.Connection, scope: Scope, model: str) -> dict[int, array[float]]:
    """The vectors ``model`` formed for events of ``scope``, by event id."""
    rows = conn.execute(
        "SELECT v.event_id, v.vector FROM memory_vector v JOIN game_memory m ON m.id = v.event_id "
        "WHERE m.game_id = ? AND m.save_id = ? AND v.model = ?",
        (*scope_params(scope), model),
    )
    return {int(event_id): from_blob(bytes(blob)) for event_id, blob in rows}


def without_vectors(
    conn: apsw.Connection, scope: Scope, model: str, limit: int
) -> list[MemoryEvent]:
    """Up to ``limit`` events of ``scope`` with no vector from ``model``, most important first."""
    rows = conn.execute(
        f"{_SELECT} WHERE game_id = ? AND save_id = ? AND NOT EXISTS "
        "(SELECT 1 FROM memory_vector v WHERE v.event_id = game_memory.id AND v.model = ?) "
        "ORDER BY pinned DESC, importance DESC, id LIMIT ?",
        (*scope_params(scope), model, int(limit)),
    )
    return [from_row(r) for r in rows]


def saves_without_vectors(conn: apsw.Connection, model: str) -> list[tuple[Scope, int]]:
    """Every save with events lacking a vector from ``model``, and how many, largest first
    (the vector backlog after a start, an import or a restore)."""
    rows = conn.execute(
        "SELECT game_id, save_id, count(*) AS n FROM game_memory WHERE NOT EXISTS "
        "(SELECT 1 FROM memory_vector v WHERE v.event_id = game_memory.id AND v.model = ?) "
        "GROUP BY game_id, save_id ORDER BY n DESC, game_id, save_id",
        (model,),
    )
    return [(Scope(str(game), str(save)), int(n)) for game, save, n in rows]


def set_vectors(
    conn: apsw.Connection,
    scope: Scope,
    model: str,
    vectors: Iterable[tuple[int, str, array[float]]],
) -> list[int]:
    """Store vectors ``(event id, the text embedded, vector)`` of events still in ``scope``
    with that text (not forgotten or rewritten meanwhile); the ids stored."""
    stored: list[int] = []
    for event_id, text, vector in vectors:
        row = conn.execute(
            f"{_SELECT} WHERE id = ? AND game_id = ? AND save_id = ?",
            (int(event_id), *scope_params(scope)),
        ).fetchone()
        if row is None or embedding_text(from_row(row)) != text:
            continue
        conn.execute(
            "INSERT INTO memory_vector(event_id, model, vector) VALUES (?, ?, ?) "
            "ON CONFLICT(event_id) DO UPDATE SET model = excluded.model, vector = excluded.vector",
            (int(event_id), model, to_blob(vector)),
        )
        stored.append(int(event_id))
    return stored
