"""What a question asks of time and of plans, when it names neither (pure).

"下一步干嘛" / "what next?" shares no word with the goal that answers it, and
"上个季节" / "last season" none with what happened then. :func:`read_cues` finds
a **next-step** question (the active plans), a **time reference** (a window
of in-game days) or a **session reference** (上次玩的时候, "last time we played":
the save's last ended play session; 下线前, "before I logged off": its last
:data:`LAST_MINUTES` minutes); retrieval prefers the memories that fit (:func:`fits`) in the
place of "recent and important": a cue reorders, it never injects more.
"""

from __future__ import annotations

from collections.abc import Sequence

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

SEASONS: dict[str, tuple[tuple[str, int], ...]] = {
    "stardew-valley": (("spring", 28), ("summer", 28), ("fall", 28), ("winter", 28)),
    "dont-starve-together": (("fall", 20), ("winter", 15), ("spring", 20), ("summer", 15)),
}
"""Each game's seasons in order, with their days (DST's defaults; ONI has none)."""

EARLY_DAYS = {"oxygen-not-included": 15, "dont-starve-together": 5}
"""How many first days "the early game" means (7 elsewhere)."""

# (phrases, window): the window as (first, last) days back from today, or a season word.
_TIMES: tuple[tuple[tuple[str, ...], str], ...] = (
    (
        (
            "开局",
            "开荒",
            "刚开始玩",
            "一开始",
            "最开始",
            "最早那",
            "头几天",
            "头两天",
            "头一天",
            "第一天",
            "early game",
            "first few days",
            "first days",
            "very start",
            "when i started",
            "when we started",
            "day one",
            "at the beginning",
        ),
        "early",
    ),
    (("上个季节", "上一季", "上季", "上个季", "last season", "previous season"), "last_season"),
    (("这个季节", "这季", "本季", "这一季", "this season"), "this_season"),
    (("昨天", "yesterday"), "yesterday"),
    (
        (
            "前几天",
            "前两天",
            "这几天",
            "最近几天",
            "这周",
            "这个星期",
            "a few days ago",
            "the other day",
            "this week",
        ),
        "days",
    ),
    (("上周", "上个星期", "上礼拜", "last week"), "week"),
)
_SEASON_WORDS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("春天", "春季", "开春", "雨季", "spring", "rainy season"), "spring"),
    (("夏天", "夏季", "summer"), "summer"),
    (("秋天", "秋季", "fall", "autumn"), "fall"),
    (("冬天", "冬季", "winter"), "winter"),
)
_BEFORE = ("上个", "上一个", "去年", "last ", "previous ")
# The part of a season a question names: its first, middle or last third.
_PARTS: tuple[tuple[tuple[str, ...], int], ...] = (
    (
        (
            "季初",
            "春初",
            "夏初",
            "秋初",
            "冬初",
            "刚开始",
            "刚到",
            "开头",
            "start of",
            "beginning of",
            "early in",
        ),
        0,
    ),
    (("中旬", "中间", "middle of", "mid-", "midway"), 1),
    (
        (
            "季末",
            "春末",
            "夏末",
            "秋末",
            "冬末",
            "最后那几天",
            "最后几天",
            "快结束",
            "end of",
            "late in",
        ),
        2,
    ),
)


LAST_SESSION = (
    "上次玩",
    "上回玩",
    "上一次玩",
    "上次打",
    "上回打",
    "上次一起玩",
    "上次上线",
    "上一局",
    "上一盘",
    "上一把",
    "上次游戏",
    "上次那局",
    "上次",
    "上回",
    "last time we played",
    "last time i played",
    "last session",
    "previous session",
    "last time",
    "last game",
    "the other night",
)
"""Phrases of a question about the last play session (longest first is not needed:
any of them means the same window)."""

SESSION_END = (
    "下线前",
    "下线之前",
    "下线的时候",
    "退出前",
    "退出之前",
    "退游戏前",
    "关游戏前",
    "关游戏之前",
    "关掉游戏前",
    "存档退出前",
    "走之前",
    "before i logged off",
    "before logging off",
    "before i logged out",
    "before i quit",
    "before quitting",
    "before i left",
    "before i stopped",
    "before i went to bed",
    "end of last session",
    "end of the last session",
)
"""Phrases of a question about the minutes before the player last left the game."""

LAST_MINUTES = 10.0
"""The minutes before a session's end that 下线前 means."""


class Cues(msgspec.Struct, frozen=True):
    """What a question asks: the active plans, and/or memories of a window of days or
    of time (formed within ``times``, epoch seconds)."""

    next_step: bool = False
    days: tuple[int, int] | None = None  # first and last in-game day, inclusive
    times: tuple[float, float] | None = None

    def __bool__(self) -> bool:
        return self.next_step or self.days is not None or self.times is not None


def read_cues(
    text: str,
    *,
    game_id: str,
    current_day: int | None,
    sessions: Sequence[tuple[float, float]] = (),
) -> Cues:
    """The cues of ``text`` (a time reference needs ``current_day``, a session
    reference the save's ended ``sessions``, oldest first)."""
    plain = normalize(text).lower()
    next_step = any(p in plain for p in NEXT_STEP)
    times = _session(plain, sessions)
    days = None
    if current_day is not None:
        days = _named_season(plain, current_day, game_id)
        for phrases, window in _TIMES if days is None else ():
            if any(p in plain for p in phrases):
                days = _window(window, current_day, game_id)
                break
        if days is not None and days[1] - days[0] >= 9:
            days = _part(plain, days)
    if times is not None:
        days = None  # the session names the time; its days may straddle a season
    return Cues(next_step=next_step, days=days, times=times)


def _session(plain: str, sessions: Sequence[tuple[float, float]]) -> tuple[float, float] | None:
    """The window of time a session reference names, when the save has an ended session."""
    if not sessions:
        return None
    started, ended = sessions[-1]
    if any(p in plain for p in SESSION_END):
        return (ended - LAST_MINUTES * 60.0, ended)
    if any(p in plain for p in LAST_SESSION):
        return (started, ended)
    return None


def _seasons(game_id: str, day: int) -> list[tuple[str, int, int]]:
    """``(season, first day, last day)`` of every season up to the one ``day`` is in."""
    calendar = SEASONS.get(game_id)
    out: list[tuple[str, int, int]] = []
    first = 1
    while calendar and first <= max(day, 1):
        for name, length in calendar:
            out.append((name, first, first + length - 1))
            first += length
            if first > max(day, 1):
                break
    return out


def _named_season(plain: str, day: int, game_id: str) -> tuple[int, int] | None:
    """The days of the season a question names (冬天, "last winter"), the latest one;
    with 上个/去年/last, the latest one before the current season."""
    for phrases, season in _SEASON_WORDS:
        at = next((plain.find(p) for p in phrases if p in plain), -1)
        if at < 0:
            continue
        seasons = _seasons(game_id, day)
        if not seasons:
            return None
        before = any(plain[max(0, at - len(b)) : at] == b for b in _BEFORE)
        past = seasons[:-1] if before else seasons
        found = [(first, last) for name, first, last in past if name == season]
        return (found[-1][0], min(found[-1][1], day)) if found else None
    return None


def _window(name: str, day: int, game_id: str) -> tuple[int, int] | None:
    if name == "early":
        return (1, EARLY_DAYS.get(game_id, 7))
    if name in ("last_season", "this_season"):
        seasons = _seasons(game_id, day)
        if not seasons:
            return None
        if name == "this_season":
            return (seasons[-1][1], day)
        if len(seasons) < 2:  # the first season: the one before the game began
            length = seasons[-1][2] - seasons[-1][1] + 1
            return (1 - length, 0)
        return (seasons[-2][1], seasons[-2][2])
    back = {"yesterday": (1, 1), "days": (1, 7), "week": (7, 14)}[name]
    return (day - back[1], day - back[0])


def _part(plain: str, days: tuple[int, int]) -> tuple[int, int]:
    """The third of a window of days a question names (上个季节中旬, "end of winter")."""
    for phrases, third in _PARTS:
        if any(p in plain for p in phrases):
            size = (days[1] - days[0] + 1) / 3
            first = days[0] + round(third * size)
            return (first, days[0] + round((third + 1) * size) - 1)
    return days


def fits(cues: Cues, event: MemoryEvent) -> bool:
    """Whether ``event`` answers the cues (an active plan; a memory of the window)."""
    if cues.next_step and event.kind in PLANS and event.status == "active":
        return True
    if cues.times is not None:
        return cues.times[0] <= event.created_at <= cues.times[1]
    if cues.days is not None and event.day is not None:
        return cues.days[0] <= event.day <= cues.days[1]
    return False
