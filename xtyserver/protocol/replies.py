"""Server frames built from records (v1.md "stats.get", "memory.get", "Error codes").

Pure. The store's records are converted here, once, so the shell only moves
what the core built.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

import msgspec

from xtyserver.memory.types import MemoryEvent, PlayStats, SharedProfile
from xtyserver.protocol.frames import (
    Error,
    GameStats,
    MemoryItem,
    MemoryResult,
    SaveStats,
    StatsResult,
)


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


def stats_result(stats: PlayStats, frame_id: str | None) -> StatsResult:
    """The ``stats.result`` frame for a store's statistics (v1.md "stats.get")."""
    saves = [
        msgspec.convert(
            {**msgspec.to_builtins(s), "lastPlayed": iso_time(s.last_played)}, SaveStats
        )
        for s in stats.saves
    ]
    games = [
        msgspec.convert(
            {**msgspec.to_builtins(g), "lastPlayed": iso_time(g.last_played)}, GameStats
        )
        for g in stats.games
    ]
    return StatsResult(saves=saves, games=games, id=frame_id)


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
    )


def memory_result(
    profile: SharedProfile, events: Sequence[MemoryEvent], frame_id: str | None
) -> MemoryResult:
    """The ``memory.result`` frame: the shared profile and this save's events."""
    return MemoryResult(
        profile=msgspec.to_builtins(profile),
        events=[memory_item(e) for e in events],
        id=frame_id,
    )
