"""The ``player_alias`` table: the player's own names for things, per save.

One row per save and name (compared normalised and case-folded); saying a name
again replaces what it means. A save keeps at most ``cap`` names: past it the
one said longest ago goes, in the same transaction.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import apsw

from xtyserver.memory.aliases import PlayerAlias, alias_key
from xtyserver.memory.types import Scope

_COLUMNS = "id, game_id, save_id, alias, means, said_at"
_INSERT = (
    "INSERT INTO player_alias(game_id, save_id, alias, alias_key, means, said_at) "
    "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT"
)
_UPSERT = (
    f"{_INSERT}(game_id, save_id, alias_key) DO UPDATE SET "
    "alias=excluded.alias, means=excluded.means, said_at=excluded.said_at"
)


def _rows(cursor: Iterable[tuple[object, ...]]) -> list[PlayerAlias]:
    return [PlayerAlias(*row) for row in cursor]  # type: ignore[arg-type]


def learn(
    conn: apsw.Connection, scope: Scope, alias: str, means: str, now: float, cap: int
) -> PlayerAlias:
    """Keep ``alias`` as the player's name of ``means`` in ``scope``; the oldest past ``cap`` go."""
    key = (scope.game_id, scope.save_id)
    conn.execute(_UPSERT, (*key, alias, alias_key(alias), means, now))
    _trim(conn, key, cap)
    (row,) = _rows(
        conn.execute(
            f"SELECT {_COLUMNS} FROM player_alias WHERE game_id = ? AND save_id = ? "
            "AND alias_key = ?",
            (*key, alias_key(alias)),
        )
    )
    return row


def load(conn: apsw.Connection, scope: Scope) -> list[PlayerAlias]:
    """The names of one save, oldest said first."""
    return _rows(
        conn.execute(
            f"SELECT {_COLUMNS} FROM player_alias WHERE game_id = ? AND save_id = ? "
            "ORDER BY said_at, id",
            (scope.game_id, scope.save_id),
        )
    )


def load_all(conn: apsw.Connection) -> list[PlayerAlias]:
    """Every save's names, by save and then oldest said first."""
    return _rows(
        conn.execute(f"SELECT {_COLUMNS} FROM player_alias ORDER BY game_id, save_id, said_at, id")
    )


def delete_ids(conn: apsw.Connection, scope: Scope, ids: Sequence[int]) -> int:
    """Delete names of ``scope`` by id (ids of other saves are left); how many went."""
    gone = 0
    for alias_id in ids:
        conn.execute(
            "DELETE FROM player_alias WHERE id = ? AND game_id = ? AND save_id = ?",
            (alias_id, scope.game_id, scope.save_id),
        )
        gone += conn.changes()
    return gone


def _values(each: PlayerAlias) -> tuple[object, ...]:
    return (each.game_id, each.save_id, each.alias, alias_key(each.alias), each.means, each.said_at)


def merge(conn: apsw.Connection, found: Iterable[PlayerAlias], cap: int) -> None:
    """Import names (the one said later wins), then keep the ``cap`` newest per save."""
    scopes: set[tuple[str, str]] = set()
    for each in found:
        conn.execute(f"{_UPSERT} WHERE excluded.said_at > player_alias.said_at", _values(each))
        scopes.add((each.game_id, each.save_id))
    for key in scopes:
        _trim(conn, key, cap)


def _trim(conn: apsw.Connection, key: tuple[str, str], cap: int) -> None:
    conn.execute(
        "DELETE FROM player_alias WHERE game_id = ? AND save_id = ? AND id NOT IN ("
        "SELECT id FROM player_alias WHERE game_id = ? AND save_id = ? "
        "ORDER BY said_at DESC, id DESC LIMIT ?)",
        (*key, *key, max(cap, 1)),
    )


def put_back(conn: apsw.Connection, found: Iterable[PlayerAlias]) -> int:
    """Insert names the trash kept (a name said again since wins); how many came back."""
    count = 0
    for each in found:
        conn.execute(f"{_INSERT} DO NOTHING", _values(each))
        count += conn.changes()
    return count
