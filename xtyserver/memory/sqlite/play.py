"""The ``play_session`` and ``play_day`` tables: play time, play days and their statistics.

What a heartbeat adds and which date it counts for is ``memory/accounting.py``'s.
The column lists are those of the export records, so the tables and the export
document cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

import apsw

from xtyserver.errors import UsageError
from xtyserver.memory import accounting
from xtyserver.memory.export import PlayDayRecord, PlaySessionRecord
from xtyserver.memory.types import DailyPlay, GamePlayStats, PlayStats, SavePlayStats, Scope

SESSION_COLUMNS: tuple[str, ...] = PlaySessionRecord.__struct_fields__
DAY_COLUMNS: tuple[str, ...] = PlayDayRecord.__struct_fields__
_SESSION_INSERT_COLUMNS = SESSION_COLUMNS[1:]  # id is the row id SQLite assigns
_SESSIONS = (
    f"INTO play_session({', '.join(_SESSION_INSERT_COLUMNS)}) "
    f"VALUES ({', '.join('?' for _ in _SESSION_INSERT_COLUMNS)})"
)
_DAYS = f"INTO play_day({', '.join(DAY_COLUMNS)}) VALUES ({', '.join('?' for _ in DAY_COLUMNS)})"


def record_day(conn: apsw.Connection, game_id: str, save_id: str, date: str) -> None:
    """Count ``date`` as a play day of the save (once)."""
    conn.execute(
        "INSERT OR IGNORE INTO play_day(game_id, save_id, date) VALUES (?, ?, ?)",
        (game_id, save_id, date),
    )


def _unique_start(conn: apsw.Connection, scope: Scope, at: float, session_id: int = 0) -> float:
    """``at``, nudged by 1 µs while another session of the save started then (started_at
    is unique per save)."""
    while conn.execute(
        "SELECT 1 FROM play_session WHERE game_id = ? AND save_id = ? AND started_at = ? "
        "AND id != ?",
        (scope.game_id, scope.save_id, at, session_id),
    ).fetchall():
        at += 1e-6
    return at


def open_session(conn: apsw.Connection, scope: Scope, now: float, tz: str) -> int:
    """Start a session of ``scope`` at ``now`` and count today. Returns its id.

    Raises:
        UsageError: ``tz`` is not a known IANA timezone.
    """
    date = accounting.local_date(now, tz)
    started = _unique_start(conn, scope, now)
    conn.execute(
        "INSERT INTO play_session(game_id, save_id, tz, started_at, last_heartbeat_at, "
        "active_ms) VALUES (?, ?, ?, ?, ?, 0)",
        (scope.game_id, scope.save_id, tz, started, started),
    )
    session_id = conn.last_insert_rowid()
    record_day(conn, scope.game_id, scope.save_id, date)
    return int(session_id)


def advance(
    conn: apsw.Connection,
    session_id: int,
    now: float,
    tz: str | None,
    *,
    end: bool,
    gap_cap_s: float,
) -> None:
    """A heartbeat at ``now``: add the (capped) time since the last one, count the day
    in ``tz`` (None: the one the session opened with).

    Raises:
        UsageError: Unknown or closed session, or unknown ``tz``.
    """
    rows = conn.execute(
        "SELECT game_id, save_id, tz, last_heartbeat_at, ended_at FROM play_session WHERE id = ?",
        (session_id,),
    ).fetchall()
    if not rows:
        raise UsageError(f"no play session {session_id}")
    game_id, save_id, stored_tz, last, ended = rows[0]
    if ended is not None:
        raise UsageError(f"play session {session_id} is closed")
    last = cast(float, last)
    inc = accounting.heartbeat_increment_ms(last, now, gap_cap_s=gap_cap_s)
    conn.execute(
        "UPDATE play_session SET active_ms = active_ms + ?, "
        "last_heartbeat_at = max(last_heartbeat_at, ?), ended_at = ? WHERE id = ?",
        (inc, now, max(last, now) if end else None, session_id),
    )
    date = accounting.local_date(now, tz or cast(str, stored_tz))
    record_day(conn, cast(str, game_id), cast(str, save_id), date)


def recover(conn: apsw.Connection) -> int:
    """Close sessions left open by a crash at their last heartbeat. Returns the count."""
    conn.execute("UPDATE play_session SET ended_at = last_heartbeat_at WHERE ended_at IS NULL")
    return int(conn.changes())


def stats(conn: apsw.Connection) -> PlayStats:
    """Per-save and per-game statistics (a game's days = the union of its saves' dates)."""
    saves: dict[tuple[str, str], list[Any]] = {}
    for g, s, n, ms, last in conn.execute(
        "SELECT game_id, save_id, count(*), sum(active_ms), "
        "max(coalesce(ended_at, last_heartbeat_at)) FROM play_session GROUP BY game_id, save_id"
    ):
        saves[(g, s)] = [0, int(n), int(ms or 0), last]
    for g, s, d in conn.execute(
        "SELECT game_id, save_id, count(*) FROM play_day GROUP BY game_id, save_id"
    ):
        saves.setdefault((g, s), [0, 0, 0, None])[0] = int(d)
    game_days = dict(conn.execute("SELECT game_id, count(DISTINCT date) FROM play_day GROUP BY 1"))
    names = {(g, s): n for g, s, n in conn.execute("SELECT game_id, save_id, name FROM save_name")}
    save_rows = [
        SavePlayStats(g, s, v[0], v[1], v[2], v[3], save_name=names.get((g, s)))
        for (g, s), v in sorted(saves.items())
    ]
    games: list[GamePlayStats] = []
    for game_id in sorted({g for g, _ in saves}):
        rows = [r for r in save_rows if r.game_id == game_id]
        lasts = [r.last_played for r in rows if r.last_played is not None]
        games.append(
            GamePlayStats(
                game_id=game_id,
                days=int(game_days.get(game_id, 0)),
                sessions=sum(r.sessions for r in rows),
                active_ms=sum(r.active_ms for r in rows),
                last_played=max(lasts) if lasts else None,
            )
        )
    return PlayStats(games=games, saves=save_rows)


def daily(conn: apsw.Connection, since: float) -> list[DailyPlay]:
    """Active time per game and local date since ``since`` (a session's on the local date it
    started), and 0 for a play day on which no session started."""
    first = accounting.local_date(since, "UTC")
    totals: dict[tuple[str, str], int] = {}
    for game_id, tz, started, ms in conn.execute(
        "SELECT game_id, tz, started_at, active_ms FROM play_session WHERE started_at >= ?",
        (since,),
    ):
        key = (cast(str, game_id), accounting.local_date(cast(float, started), cast(str, tz)))
        totals[key] = totals.get(key, 0) + int(ms or 0)
    for game_id, date in conn.execute(
        "SELECT DISTINCT game_id, date FROM play_day WHERE date >= ?", (first,)
    ):
        totals.setdefault((cast(str, game_id), cast(str, date)), 0)
    return [DailyPlay(g, d, ms) for (g, d), ms in sorted(totals.items()) if d >= first]


def all_sessions(conn: apsw.Connection) -> list[PlaySessionRecord]:
    """Every session row, by id."""
    rows = conn.execute(f"SELECT {', '.join(SESSION_COLUMNS)} FROM play_session ORDER BY id")
    return [PlaySessionRecord(*r) for r in rows]


def all_days(conn: apsw.Connection) -> list[PlayDayRecord]:
    """Every play-day row, by save and date."""
    rows = conn.execute(f"SELECT {', '.join(DAY_COLUMNS)} FROM play_day ORDER BY 1, 2, 3")
    return [PlayDayRecord(*r) for r in rows]


def merge(
    conn: apsw.Connection, sessions: Iterable[PlaySessionRecord], days: Iterable[PlayDayRecord]
) -> None:
    """Add sessions (keyed by save and start time; ids ignored) and days not yet stored."""
    conn.executemany(
        f"INSERT OR IGNORE {_SESSIONS}",
        [tuple(getattr(s, c) for c in _SESSION_INSERT_COLUMNS) for s in sessions],
    )
    conn.executemany(
        f"INSERT OR IGNORE {_DAYS}", [tuple(getattr(d, c) for c in DAY_COLUMNS) for d in days]
    )


def scopes(conn: apsw.Connection) -> set[Scope]:
    """Every save that has play statistics."""
    rows = conn.execute(
        "SELECT game_id, save_id FROM play_session UNION SELECT game_id, save_id FROM play_day"
    )
    return {Scope(g, s) for g, s in rows}


def scope_rows(conn: apsw.Connection, scope: Scope) -> dict[str, list[list[Any]]]:
    """The play sessions and play days of one save, as the trash keeps them."""
    key = (scope.game_id, scope.save_id)
    sessions = conn.execute(
        # An open session is kept as ended at its last heartbeat: its row lives on,
        # started again (delete_scope), so a restore adds the time before the forget.
        "SELECT game_id, save_id, tz, started_at, last_heartbeat_at, "
        "coalesce(ended_at, last_heartbeat_at), active_ms "
        "FROM play_session WHERE game_id = ? AND save_id = ?",
        key,
    ).fetchall()
    days = conn.execute(
        "SELECT game_id, save_id, date FROM play_day WHERE game_id = ? AND save_id = ?", key
    ).fetchall()
    return {"sessions": [list(r) for r in sessions], "days": [list(r) for r in days]}


def put_back_rows(conn: apsw.Connection, rows: dict[str, list[list[Any]]]) -> int:
    """Insert play rows kept by the trash again (rows formed since win); the saves put back."""
    saves: set[tuple[Any, Any]] = set()
    for table, sql in (("sessions", _SESSIONS), ("days", _DAYS)):
        for row in rows.get(table, []):
            conn.execute(f"INSERT {sql} ON CONFLICT DO NOTHING", tuple(row))
            saves.add((row[0], row[1]))
    return len(saves)


def delete_scope(conn: apsw.Connection, scope: Scope, now: float) -> None:
    """Delete the play sessions and play days of one save (the player asked explicitly).

    A session still open (someone is playing the save now) keeps its row and id,
    started again at ``now`` with nothing counted: the connection playing it goes
    on counting from the forget, and today is a play day again.
    """
    key = (scope.game_id, scope.save_id)
    conn.execute(
        "DELETE FROM play_session WHERE game_id = ? AND save_id = ? AND ended_at IS NOT NULL",
        key,
    )
    conn.execute("DELETE FROM play_day WHERE game_id = ? AND save_id = ?", key)
    open_rows = conn.execute(
        "SELECT id, tz FROM play_session WHERE game_id = ? AND save_id = ?", key
    ).fetchall()
    for session_id, tz in open_rows:
        started = _unique_start(conn, scope, now, cast(int, session_id))
        conn.execute(
            "UPDATE play_session SET started_at = ?, last_heartbeat_at = ?, active_ms = 0 "
            "WHERE id = ?",
            (started, started, session_id),
        )
        record_day(conn, scope.game_id, scope.save_id, accounting.local_date(now, cast(str, tz)))


def ended_sessions(conn: apsw.Connection, scope: Scope, limit: int) -> list[tuple[float, float]]:
    """The ``limit`` latest ended play sessions of ``scope`` as (started, ended), oldest first."""
    rows = conn.execute(
        "SELECT started_at, ended_at FROM play_session WHERE game_id = ? AND save_id = ? "
        "AND ended_at IS NOT NULL ORDER BY ended_at DESC LIMIT ?",
        (scope.game_id, scope.save_id, int(limit)),
    )
    return [(float(a), float(b)) for a, b in reversed(list(rows))]
