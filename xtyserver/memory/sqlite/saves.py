"""The ``save_name`` and ``memory_tombstone`` tables, and forgetting by target.

A forgotten event leaves a tombstone (its scope, kind and subject; never its
summary) so that background extraction does not form the same memory again
from the next turn's words (v1.md "Memory management").
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import apsw
import msgspec

from xtyserver.memory.aliases import PlayerAlias, alias_key
from xtyserver.memory.export import SaveNameRecord, TombstoneRecord
from xtyserver.memory.manage import ForgetPreview, ForgetResult, ForgetSpec, Overview, SaveView
from xtyserver.memory.sqlite import aliases, events, play, shared_profile, usage
from xtyserver.memory.types import MemoryEvent, Scope, SharedProfile

_NAME_UPSERT = (
    "INSERT INTO save_name(game_id, save_id, name, updated_at) VALUES (?, ?, ?, ?) "
    "ON CONFLICT(game_id, save_id) DO UPDATE SET name=excluded.name, "
    "updated_at=excluded.updated_at"
)
_BURY = (
    "INSERT INTO memory_tombstone(game_id, save_id, kind, subject, forgotten_at) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(game_id, save_id, subject) DO UPDATE SET "
    "kind=excluded.kind, forgotten_at=excluded.forgotten_at"
)


def set_name(conn: apsw.Connection, scope: Scope, name: str, now: float) -> None:
    """Remember ``name`` as the readable name of ``scope`` (the newest one wins)."""
    conn.execute(_NAME_UPSERT, (scope.game_id, scope.save_id, name, now))


def names(conn: apsw.Connection) -> dict[Scope, str]:
    """Every save's readable name."""
    rows = conn.execute("SELECT game_id, save_id, name FROM save_name")
    return {Scope(g, s): n for g, s, n in rows}


# Tombstones compare subjects as names compare: normalised, trimmed, case-folded.
tomb_key = alias_key


def _bury(conn: apsw.Connection, doomed: Iterable[MemoryEvent], now: float) -> None:
    rows = [(e.game_id, e.save_id, e.kind, tomb_key(e.subject), now) for e in doomed]
    conn.executemany(_BURY, rows)


def is_buried(conn: apsw.Connection, scope: Scope, subject: str) -> bool:
    """Whether a memory about ``subject`` was forgotten in ``scope``."""
    rows = conn.execute(
        "SELECT 1 FROM memory_tombstone WHERE game_id = ? AND save_id = ? AND subject = ?",
        (scope.game_id, scope.save_id, tomb_key(subject)),
    ).fetchall()
    return bool(rows)


def unbury(conn: apsw.Connection, scope: Scope, subject: str) -> None:
    """The player told it again on purpose: the tombstone of ``subject`` goes."""
    conn.execute(
        "DELETE FROM memory_tombstone WHERE game_id = ? AND save_id = ? AND subject = ?",
        (scope.game_id, scope.save_id, tomb_key(subject)),
    )


def name_records(conn: apsw.Connection) -> list[SaveNameRecord]:
    """Every save name with its time, for an export."""
    rows = conn.execute("SELECT game_id, save_id, name, updated_at FROM save_name ORDER BY 1, 2")
    return [SaveNameRecord(g, s, n, t) for g, s, n, t in rows]


def tombstone_records(conn: apsw.Connection) -> list[TombstoneRecord]:
    """Every tombstone with its time, for an export."""
    rows = conn.execute(
        "SELECT game_id, save_id, kind, subject, forgotten_at FROM memory_tombstone "
        "ORDER BY 1, 2, 4"
    )
    return [TombstoneRecord(g, s, k, subj, t) for g, s, k, subj, t in rows]


def merge(
    conn: apsw.Connection, names: Iterable[SaveNameRecord], buried: Iterable[TombstoneRecord]
) -> None:
    """Import save names (the newer one wins) and tombstones (the later forget wins)."""
    conn.executemany(
        f"{_NAME_UPSERT} WHERE excluded.updated_at > save_name.updated_at",
        [(r.game_id, r.save_id, r.name, r.updated_at) for r in names],
    )
    conn.executemany(
        f"{_BURY} WHERE excluded.forgotten_at > memory_tombstone.forgotten_at",
        [(r.game_id, r.save_id, r.kind, tomb_key(r.subject), r.forgotten_at) for r in buried],
    )


def doomed_events(conn: apsw.Connection, spec: ForgetSpec) -> list[MemoryEvent]:
    """The events ``spec`` would delete, by id."""
    if spec.kind == "item" and spec.scope is not None:
        return [e for e in events.load(conn, spec.scope) if e.id == spec.item_id]
    if spec.kind == "save" and spec.scope is not None:
        return events.load(conn, spec.scope)
    if spec.kind == "game":
        return [e for e in events.load_all(conn) if e.game_id == spec.game_id]
    if spec.kind == "all":
        return events.load_all(conn)
    return []


def doomed_aliases(conn: apsw.Connection, spec: ForgetSpec) -> list[PlayerAlias]:
    """The player's names ``spec`` would delete: those of the saves it forgets."""
    if spec.kind == "save" and spec.scope is not None:
        return aliases.load(conn, spec.scope)
    if spec.kind == "game":
        return [a for a in aliases.load_all(conn) if a.game_id == spec.game_id]
    if spec.kind == "all":
        return aliases.load_all(conn)
    return []


def stats_scopes(conn: apsw.Connection, spec: ForgetSpec) -> list[Scope]:
    """The saves whose statistics ``spec`` would delete (none unless asked)."""
    if not spec.include_stats or spec.kind in ("item", "profile"):
        return []
    every = sorted(play.scopes(conn))
    if spec.kind == "save":
        return [s for s in every if s == spec.scope]
    if spec.kind == "game":
        return [s for s in every if s.game_id == spec.game_id]
    return every


def group(
    found: Iterable[MemoryEvent],
    labels: dict[Scope, str],
    names: Iterable[PlayerAlias] = (),
) -> tuple[SaveView, ...]:
    """Events (and the player's names) grouped by save (sorted by save), each save with
    its readable name."""
    by_save: dict[Scope, list[MemoryEvent]] = {}
    for event in found:
        by_save.setdefault(event.scope, []).append(event)
    named: dict[Scope, list[PlayerAlias]] = {}
    for each in names:
        named.setdefault(Scope(each.game_id, each.save_id), []).append(each)
    return tuple(
        SaveView(
            scope=scope,
            name=labels.get(scope),
            events=tuple(by_save.get(scope, ())),
            aliases=tuple(named.get(scope, ())),
        )
        for scope in sorted(set(by_save) | set(named))
    )


def _ids_by_save(rows: Iterable[MemoryEvent | PlayerAlias]) -> dict[Scope, list[int]]:
    out: dict[Scope, list[int]] = {}
    for row in rows:
        out.setdefault(Scope(row.game_id, row.save_id), []).append(row.id)
    return out


def forget(
    conn: apsw.Connection,
    spec: ForgetSpec,
    now: float,
    keep: Callable[
        [
            list[MemoryEvent],
            SharedProfile | None,
            dict[str, list[list[Any]]],
            list[PlayerAlias],
        ],
        int | None,
    ]
    | None = None,
) -> ForgetResult:
    """Carry out ``spec`` in the caller's transaction; tombstones for every deleted event.

    ``keep`` (the trash) is handed what goes, the events, the profile as it
    was (None when the profile stays), the play rows of the statistics that
    go and the player's names of the saves that go, before anything is
    deleted; it answers the trash id.
    """
    doomed = doomed_events(conn, spec)
    names = doomed_aliases(conn, spec)
    stats = stats_scopes(conn, spec)
    trash_id = None
    if keep is not None:
        was = shared_profile.load(conn) if spec.kind in ("profile", "all") else None
        rows: dict[str, list[list[Any]]] = {"sessions": [], "days": []}
        for scope in stats:
            for name, found in play.scope_rows(conn, scope).items():
                rows[name] += found
        trash_id = keep(doomed, was, rows, names)
    _bury(conn, doomed, now)
    count = sum(events.delete_ids(conn, scope, ids) for scope, ids in _ids_by_save(doomed).items())
    for scope, ids in _ids_by_save(names).items():
        aliases.delete_ids(conn, scope, ids)
    profile_cleared = spec.kind in ("profile", "all")
    if profile_cleared:
        shared_profile.clear(conn)
    for scope in stats:
        play.delete_scope(conn, scope, now)
    return ForgetResult(
        items=count, profile_cleared=profile_cleared, stats_saves=len(stats), trash_id=trash_id
    )


def preview(conn: apsw.Connection, spec: ForgetSpec) -> ForgetPreview:
    """What :func:`forget` of ``spec`` would delete (read only)."""
    doomed = doomed_events(conn, spec)
    fields: tuple[str, ...] = ()
    if spec.kind in ("profile", "all"):
        fields = tuple(shared_profile.cleared_fields(shared_profile.load(conn)))
    labels = names(conn)
    stats = tuple(stats_scopes(conn, spec))
    return ForgetPreview(
        spec=spec,
        saves=group(doomed, labels, doomed_aliases(conn, spec)),
        profile_fields=fields,
        stats_saves=stats,
        found=bool(doomed) or spec.kind != "item",
        names={s: labels[s] for s in stats if s in labels},
    )


def overview(
    conn: apsw.Connection, *, game_id: str | None, scope: Scope | None, since: float | None
) -> Overview:
    """The profile, the saves asked for with their items, and every statistic (read only)."""
    labels = names(conn)
    if scope is not None:
        found = events.load(conn, scope)
        named = aliases.load(conn, scope)
        keys = {scope}
    else:
        found = [e for e in events.load_all(conn) if game_id is None or e.game_id == game_id]
        named = [a for a in aliases.load_all(conn) if game_id is None or a.game_id == game_id]
        every = events.scopes(conn) | play.scopes(conn) | set(labels)
        keys = {s for s in every if game_id is None or s.game_id == game_id}
        keys |= {Scope(a.game_id, a.save_id) for a in named}
    grouped = {view.scope: view for view in group(found, labels, named)}
    views = tuple(
        grouped.get(k) or SaveView(scope=k, name=labels.get(k), events=()) for k in sorted(keys)
    )
    stats = msgspec.structs.replace(play.stats(conn), tokens=usage.rows(conn))
    return Overview(
        profile=shared_profile.load(conn),
        saves=views,
        stats=stats,
        names=labels,
        daily=tuple(play.daily(conn, since)) if since is not None else (),
    )
