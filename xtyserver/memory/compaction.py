"""Compaction policy (pure): which events of an over-full save to fold into digests.

A save holds up to a soft cap of events. Past it, :func:`plan_compaction`
picks the events that may be merged and says how: each kind gets one digest
row (subject ``往事汇总·<kind>``, done, importance 1) listing the merged subjects,
the oldest names falling off the front when the summary is full. The store
applies a plan in one transaction (``MemoryStore.compact_scope``).

Policy (design "Compaction"):

* Only ended (``done``/``dropped``), unpinned events of low importance are
  merged, least important and least recently used first.
* Active goals, active events and pinned items are never merged or dropped,
  even when the cap then cannot be met.
* A digest is never merged into another digest.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from xtyserver.errors import UsageError
from xtyserver.memory.types import KINDS, SUMMARY_MAX, MemoryEvent, MemoryKind, NewEvent, new_row

DIGEST_PREFIX = "往事汇总"
DEFAULT_MAX_IMPORTANCE = 2
_SEPARATOR = "、"
_ELLIPSIS = "…"


class CompactionPlan(msgspec.Struct, frozen=True):
    """What to do to one save: delete ``merged_ids``, write ``digests`` (one per kind
    merged; one that exists keeps its id, creation and last-use times)."""

    merged_ids: tuple[int, ...] = ()
    digests: tuple[MemoryEvent, ...] = ()


def digest_subject(kind: MemoryKind) -> str:
    """The subject of a save's digest of ``kind``."""
    return f"{DIGEST_PREFIX}·{kind}"


def is_digest(event: MemoryEvent) -> bool:
    """Whether ``event`` is a compaction digest."""
    return event.subject.startswith(DIGEST_PREFIX)


def mergeable(event: MemoryEvent, max_importance: int = DEFAULT_MAX_IMPORTANCE) -> bool:
    """Whether the policy lets ``event`` be folded into a digest."""
    return (
        event.status in ("done", "dropped")
        and not event.pinned
        and event.importance <= max_importance
        and not is_digest(event)
    )


def _merge_order(event: MemoryEvent) -> tuple[int, float, int]:
    # Least important first, then least recently touched or changed, then oldest.
    return (event.importance, max(event.last_used_at, event.updated_at), event.id)


def plan_compaction(
    events: Sequence[MemoryEvent],
    cap: int,
    now: float,
    *,
    max_importance: int = DEFAULT_MAX_IMPORTANCE,
) -> CompactionPlan:
    """Plan the compaction of one save holding ``events`` (digests updated at ``now``).

    Past the cap, the ``excess + len(KINDS)`` first candidates are merged: room
    for one new digest per kind, so the save ends at or under the cap whenever
    enough candidates exist, and does not need compacting again at once.

    Raises:
        UsageError: ``events`` span more than one save, or ``cap`` is negative.
    """
    if cap < 0:
        raise UsageError("the soft cap must be >= 0")
    if len({e.scope for e in events}) > 1:
        raise UsageError("compaction plans one save at a time")
    excess = len(events) - cap
    if excess <= 0:
        return CompactionPlan()
    candidates = sorted((e for e in events if mergeable(e, max_importance)), key=_merge_order)
    chosen = candidates[: excess + len(KINDS)]
    digests = tuple(
        _digest(events, kind, [e for e in chosen if e.kind == kind], now)
        for kind in KINDS
        if any(e.kind == kind for e in chosen)
    )
    return CompactionPlan(merged_ids=tuple(e.id for e in chosen), digests=digests)


def _digest(
    events: Sequence[MemoryEvent], kind: MemoryKind, merged: list[MemoryEvent], now: float
) -> MemoryEvent:
    subject = digest_subject(kind)
    old = next((e for e in events if e.kind == kind and e.subject == subject), None)
    parts = [old.summary] if old else []
    parts.extend(e.subject for e in merged)
    summary = _SEPARATOR.join(parts)
    if len(summary) > SUMMARY_MAX:  # keep the newest names: the oldest fall off the front
        summary = _ELLIPSIS + summary[-(SUMMARY_MAX - 1) :]
    days = [e.day for e in merged if e.day is not None]
    if old is not None and old.day is not None:
        days.append(old.day)
    day = max(days) if days else None
    if old is not None:
        return msgspec.structs.replace(old, summary=summary, day=day, updated_at=now)
    digest = NewEvent(kind, subject, summary, importance=1, status="done", day=day)
    return new_row(merged[0].scope, digest, now)
