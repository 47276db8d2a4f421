"""``game.event``: what just happened in the game (v1.md "game.event").

A mod reports an event of a documented kind with a few facts; the server may
let the companion speak up about it (docs/speakup.md). The facts follow the
modelContext's rules: strings of at most 200 chars, normalised, judged for
forbidden content (strictly, as game names and numbers), and a small
serialized size. Nothing of an event is stored.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal, get_args

from msgspec import Meta

from xtyserver.protocol.frame_base import ClientBase, ContextStr, Count, FrameId, Gauge, Obj, SaveId

EVENT_FACTS_MAX_BYTES = 1024
"""Largest serialized ``facts`` of a ``game.event`` (compact JSON, UTF-8)."""

EventKind = Literal[
    # Every game.
    "health_low",
    "stamina_low",
    "night_falling",
    "danger_near",
    "festival_tomorrow",
    "birthday_tomorrow",
    "quest_done",
    "milestone_done",
    "player_died",
    "season_changed",
    # Per game: Stardew's day end, DST's sanity and bosses, ONI's colony.
    "day_ended",
    "sanity_low",
    "boss_near",
    "oxygen_low",
    "food_low",
    "new_duplicant",
]
EVENT_KINDS: tuple[str, ...] = get_args(EventKind)


class EventFacts(Obj):
    """A few facts of one event; every field optional.

    ``subject``: who or what (a villager, a boss, a festival, a duplicant);
    ``place``: where; ``value`` and ``maxValue``: a gauge now and full
    (stamina 12 of 270); ``count``: how many (days, duplicants).
    """

    subject: ContextStr | None = None
    place: ContextStr | None = None
    value: Gauge | None = None
    max_value: Gauge | None = None
    count: Count | None = None


class GameEvent(ClientBase, tag="game.event"):
    """Something just happened in the game (v1.md "game.event"). No answer on success.

    ``capturedAt``: when the game saw it (real time); older than
    ``contextStaleAfterMs`` it is refused as ``stale_event``, as is one whose
    ``saveId`` is not the session's save.
    """

    kind: EventKind
    id: FrameId | None = None
    facts: EventFacts | None = None
    captured_at: Annotated[datetime, Meta(tz=True)] | None = None
    save_id: SaveId | None = None
