"""What a question asks of time and of plans, when it names neither (pure).

"下一步干嘛" / "what next?" shares no word with the goal that answers it, and
"上个季节" / "last season" none with what happened then: no lexical path, no
name in the glossary. :func:`read_cues` finds the two in the player's text
(its normal form, lowercased): a **next-step** question asks for the active
plans (goals, promises, decisions); a **time reference** gives a window of
in-game days (``world.day`` counts days played), from the current day and, for
seasons, the game's season length. Retrieval then prefers the memories that
fit (:func:`fits`), in the place "recent and important" would take: a cue
reorders, it never makes a turn inject more.
"""

from __future__ import annotations

import msgspec

from xtyserver.memory.types import MemoryEvent
from xtyserver.protocol.normalize import normalize

NEXT_STEP = (
    "下一步",
    "接下来",
    "然后干嘛",
    "该干嘛",
    "该干啥",
    "该干什么",
    "该做什么",
    "该做啥",
    "做什么好",
    "干什么好",
    "干啥好",
    "干点啥",
    "现在干嘛",
    "what next",
    "what's next",
    "what should i do",
    "what do i do now",
    "next step",
    "what now",
)
"""Phrases of a question about what to do next."""

PLANS = frozenset({"goal", "promise", "decision"})
"""The kinds of memory a next-step question asks for (active ones)."""

SEASON_DAYS = {"stardew-valley": 28, "dont-starve-together": 20}
"""Days of one season per game (DST's default autumn and spring; ONI has none)."""

# (phrases, window): the window as (first, last) days back from today, or a season word.
_TIMES: tuple[tuple[tuple[str, ...], str], ...] = (
    (("上个季节", "上一季", "上季", "上个季", "last season", "previous season"), "last_season"),
    (("这个季节", "这季", "本季", "这一季", "this season"), "this_season"),
    (("昨天", "yesterday"), "yesterday"),
    (("前几天", "前两天", "这几天", "最近几天", "a few days ago", "the other day"), "days"),
    (("上周", "上个星期", "上礼拜", "last week"), "week"),
)


class Cues(msgspec.Struct, frozen=True):
    """What a question asks: the active plans, and/or memories of a window of days."""

    next_step: bool = False
    days: tuple[int, int] | None = None  # first and last in-game day, inclusive

    def __bool__(self) -> bool:
        return self.next_step or self.days is not None


def read_cues(text: str, *, game_id: str, current_day: int | None) -> Cues:
    """The cues of ``text`` (a time reference needs ``current_day``)."""
    plain = normalize(text).lower()
    next_step = any(p in plain for p in NEXT_STEP)
    days = None
    if current_day is not None:
        for phrases, window in _TIMES:
            if any(p in plain for p in phrases):
                days = _window(window, current_day, SEASON_DAYS.get(game_id))
                break
    return Cues(next_step=next_step, days=days)


def _window(name: str, day: int, season: int | None) -> tuple[int, int] | None:
    if name in ("last_season", "this_season"):
        if season is None:
            return None
        start = ((max(day, 1) - 1) // season) * season + 1
        return (start - season, start - 1) if name == "last_season" else (start, day)
    back = {"yesterday": (1, 1), "days": (1, 7), "week": (7, 14)}[name]
    return (day - back[1], day - back[0])


def fits(cues: Cues, event: MemoryEvent) -> bool:
    """Whether ``event`` answers the cues (an active plan; a memory of the window)."""
    if cues.next_step and event.kind in PLANS and event.status == "active":
        return True
    if cues.days is not None and event.day is not None:
        return cues.days[0] <= event.day <= cues.days[1]
    return False
