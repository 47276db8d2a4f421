"""Server frames built from records (v1.md "stats.get", "memory.get", "memory.forget", "error").

Pure. The store's records are converted here, once, so the shell only moves
what the core built. The memory page, MCP and ``xtyserver memory view --json``
show the same shapes (:func:`memory_view`, :func:`memory_preview`,
:func:`memory_forgotten`): one vocabulary, times in RFC 3339.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from datetime import UTC, date, datetime, timedelta
from typing import TypeVar

import msgspec

from xtyserver.memory.manage import (
    ForgetPreview,
    ForgetResult,
    Overview,
    RestoreResult,
    SaveView,
    TrashEntry,
)
from xtyserver.memory.types import DailyPlay, MemoryEvent, PlayStats, Scope, profile_field
from xtyserver.protocol.frames import Error, GameStats, SaveStats, StatsResult, TokenStats
from xtyserver.protocol.memory_frames import (
    MemoryConfirmRequest,
    MemoryForgotten,
    MemoryItem,
    MemoryPreview,
    MemoryResult,
    MemoryScope,
    SaveItems,
    SaveRef,
)

_T = TypeVar("_T")


def iso_time(ts: float | None) -> str | None:
    """Epoch seconds as ``2026-09-21T10:00:00Z`` (whole seconds), or None."""
    if ts is None or not math.isfinite(ts):
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def error(
    code: str, message: str, frame_id: str | None, fields: Iterable[str] | None = None
) -> Error:
    """An ``error`` frame (v1.md "Error codes"); ``fields`` only when there are any."""
    listed = list(fields) if fields is not None else []
    return Error(code=code, message=message, id=frame_id, fields=listed or None)


def _converted(record: msgspec.Struct, kind: type[_T], **fields: object) -> _T:
    """``record``'s fields, with ``fields`` (wire names) over them, as a ``kind``."""
    return msgspec.convert({**msgspec.to_builtins(record), **fields}, kind)


def stats_result(stats: PlayStats, frame_id: str | None) -> StatsResult:
    """The ``stats.result`` frame for a store's statistics (v1.md "stats.get")."""
    return StatsResult(
        saves=[_converted(s, SaveStats, lastPlayed=iso_time(s.last_played)) for s in stats.saves],
        games=[_converted(g, GameStats, lastPlayed=iso_time(g.last_played)) for g in stats.games],
        id=frame_id,
        tokens=[_converted(t, TokenStats, totalTokens=t.total_tokens) for t in stats.tokens],
    )


def memory_item(event: MemoryEvent) -> MemoryItem:
    """One stored event as the protocol shows it (no scope, no internal times)."""
    return MemoryItem(
        id=event.id,
        kind=event.kind,
        subject=event.subject,
        summary=event.summary,
        importance=event.importance,
        status=event.status,
        pinned=event.pinned,
        updated_at=iso_time(event.updated_at) or "",
        day=event.day,
        search_keys=list(event.search_keys or ()),
    )


def save_items(view: SaveView, current: Scope | None) -> SaveItems:
    """One save as the protocol shows it: ids, readable name, items."""
    return SaveItems(
        game_id=view.scope.game_id,
        save_id=view.scope.save_id,
        save_name=view.name,
        current=view.scope == current,
        events=[memory_item(e) for e in view.events],
    )


def memory_result(
    overview: Overview, scope: MemoryScope, current: Scope, frame_id: str | None
) -> MemoryResult:
    """The ``memory.result`` frame (v1.md "memory.result")."""
    saves = [] if scope == "profile" else [save_items(v, current) for v in overview.saves]
    events = saves[0].events if scope == "save" and len(saves) == 1 else []
    return MemoryResult(
        scope=scope,
        profile=msgspec.to_builtins(overview.profile),
        events=events,
        saves=saves,
        id=frame_id,
    )


def wire_name(name: str) -> str:
    """A profile field's wire name (``reply_style`` -> ``replyStyle``); unknown names pass."""
    field = profile_field(name)
    return field.wire if field is not None else name


def memory_preview(
    preview: ForgetPreview,
    target: str,
    token: str,
    ttl: float,
    current: Scope | None,
    frame_id: str | None,
) -> MemoryPreview:
    """The ``memory.preview`` frame: what would go, and the token that confirms it."""
    return MemoryPreview(
        target=target,
        confirm_token=token,
        expires_in_ms=round(ttl * 1000),
        include_stats=preview.spec.include_stats,
        item_count=preview.item_count,
        saves=[save_items(v, current) for v in preview.saves],
        profile_fields=[wire_name(f) for f in preview.profile_fields],
        stats_saves=[
            SaveRef(game_id=s.game_id, save_id=s.save_id, save_name=preview.names.get(s))
            for s in preview.stats_saves
        ],
        id=frame_id,
    )


def memory_confirm_request(
    preview: ForgetPreview, token: str, ttl: float, current: Scope, chat_id: str | None
) -> MemoryConfirmRequest:
    """The ``memory.confirm.request`` frame: the companion's preview, for the mod's dialog."""
    shown = memory_preview(preview, preview.spec.kind, token, ttl, current, None)
    return MemoryConfirmRequest(
        confirm_id=token,
        target=shown.target,
        expires_in_ms=shown.expires_in_ms,
        include_stats=shown.include_stats,
        item_count=shown.item_count,
        saves=shown.saves,
        profile_fields=shown.profile_fields,
        stats_saves=shown.stats_saves,
        chat_id=chat_id,
    )


def memory_forgotten(result: ForgetResult, target: str, frame_id: str | None) -> MemoryForgotten:
    """The ``memory.forgotten`` frame: what a confirmed forget deleted."""
    return MemoryForgotten(
        target=target,
        items=result.items,
        profile_cleared=result.profile_cleared,
        stats_saves=result.stats_saves,
        trash_id=result.trash_id,
        id=frame_id,
    )


STATS_DAYS = 30


class NameItem(msgspec.Struct, frozen=True, rename="camel"):
    """One of the player's own names for a thing on one save (``name`` means ``means``)."""

    game_id: str
    save_id: str
    id: int
    name: str
    means: str
    said_at: str | None


class MemoryView(msgspec.Struct, frozen=True, rename="camel"):
    """One view of memory, as the page, MCP and ``memory view --json`` show it.

    The in-game view's parts (profile, saves, ``stats.result``), plus active time
    per game and local date over the ``days`` days up to ``until`` (``YYYY-MM-DD``)
    for the page's chart, and the player's own names for things (``names``).
    """

    profile: dict[str, str | list[str] | bool | None]
    saves: list[SaveItems]
    stats: StatsResult
    daily: list[DailyPlay]
    days: int
    until: str
    names: list[NameItem] = msgspec.field(default_factory=list)


def memory_view(overview: Overview, *, today: str, days: int = STATS_DAYS) -> MemoryView:
    """The :class:`MemoryView` of one overview (its ``daily`` since a little over ``days`` ago).

    The chart ends ``today`` (the machine's local date), or on a later date that was
    played in another zone.
    """
    until = max([today, *(d.date for d in overview.daily)])
    first = (date.fromisoformat(until) - timedelta(days=days - 1)).isoformat()
    return MemoryView(
        profile=msgspec.to_builtins(overview.profile),
        saves=[save_items(v, None) for v in overview.saves],
        stats=stats_result(overview.stats, None),
        daily=[d for d in overview.daily if d.date >= first],
        days=days,
        until=until,
        names=[
            NameItem(a.game_id, a.save_id, a.id, a.alias, a.means, iso_time(a.said_at))
            for v in overview.saves
            for a in v.aliases
        ],
    )


class TrashItem(msgspec.Struct, frozen=True, rename="camel"):
    """One trash entry as the page shows it: what went, when, until when it can come back."""

    trash_id: int
    target: str
    trashed_at: str
    expires_at: str
    left_ms: int
    item_count: int
    saves: list[SaveItems]
    profile_fields: list[str]


class TrashView(msgspec.Struct, frozen=True, rename="camel"):
    """The trash: its window (``hours``; 0: off, a forget is final), its entries newest first."""

    hours: float
    entries: list[TrashItem]


class Restored(msgspec.Struct, frozen=True, rename="camel"):
    """What a restore put back."""

    trash_id: int
    target: str
    items: int
    profile_fields: list[str]


def trash_view(entries: Iterable[TrashEntry], window: float, now: float) -> TrashView:
    """The page's trash (``window`` in seconds); ``leftMs``: how long each stays restorable."""
    return TrashView(
        hours=window / 3600,
        entries=[
            TrashItem(
                trash_id=e.id,
                target=e.spec.kind,
                trashed_at=iso_time(e.trashed_at) or "",
                expires_at=iso_time(e.expires_at) or "",
                left_ms=max(0, round((e.expires_at - now) * 1000)),
                item_count=e.item_count,
                saves=[save_items(v, None) for v in e.saves],
                profile_fields=[wire_name(f) for f in e.profile_fields],
            )
            for e in entries
        ],
    )


def restored(result: RestoreResult) -> Restored:
    return Restored(
        trash_id=result.trash_id,
        target=result.spec.kind,
        items=result.items,
        profile_fields=[wire_name(f) for f in result.profile_fields],
    )
