"""Relative dates in a memory, resolved against the day it was formed (pure).

「明天去找阿比盖尔」 stored as said is wrong the day after; stored as
「明天（2026-12-08，游戏第13天）去找阿比盖尔」 it stays true. :func:`resolve` adds,
after each relative date of a text, the real date it means (from the local date
the memory was formed on) and, for a count of days (明天, 后天) where the mod gave
the in-game day, the in-game day; a weekday, a week or a month is the player's
real one (the game's calendar has its own weeks); a season ("next spring",
明年春天) is anchored to the in-game day it was said on, as a real date means
nothing in the game's calendar.

Chinese: 今天, 明天, 后天, 大后天, 下(个)周X / 下星期X / 下礼拜X, 这周X / 本周X /
周X / 星期X (the next such day), 下(个)月, 下个春天 / 明年春天 / 下一季 …;
English: today, tomorrow, the day after tomorrow, next/this Monday…, next week,
next month, next spring/summer/fall/autumn/winter. A date already resolved (a
bracket right after it) is left alone, so resolving twice changes nothing.
"""

from __future__ import annotations

import datetime as dt
import re

_WEEKDAY_ZH = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_WEEKDAY_EN = {
    name: n
    for n, name in enumerate(
        ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
    )
}
_DAYS_ZH = {"今天": 0, "明天": 1, "后天": 2, "大后天": 3, "明日": 1, "今日": 0}
_DAYS_EN = {"today": 0, "tomorrow": 1, "the day after tomorrow": 2}

_PATTERN = re.compile(
    r"(?P<zh_days>大后天|后天|明天|今天|明日|今日)"
    r"|(?P<zh_week>(?P<zh_next>下个?|这个?|本)?(?:周|星期|礼拜)(?P<zh_wd>[一二三四五六日天]))"
    r"|(?P<zh_next_week>下个?(?:周|星期|礼拜))(?![一二三四五六日天])"
    r"|(?P<zh_next_month>下个?月)"
    r"|(?P<zh_season>(?:明年|下个?|下一个)(?:春天|夏天|秋天|冬天|春季|夏季|秋季|冬季)|下一季)"
    r"|(?P<en_days>\b(?:the day after tomorrow|tomorrow|today)\b)"
    r"|(?P<en_week>\b(?P<en_next>next|this|on) "
    r"(?P<en_wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b)"
    r"|(?P<en_next_week>\bnext week\b)"
    r"|(?P<en_next_month>\bnext month\b)"
    r"|(?P<en_season>\bnext (?:spring|summer|fall|autumn|winter|season)\b)",
    re.IGNORECASE,
)


def _weekday(today: dt.date, target: int, *, next_week: bool) -> dt.date:
    """The date of weekday ``target``: in the week after this one (``next_week``: 下周X,
    weeks starting on Monday), else the next such day from tomorrow on."""
    if next_week:
        monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=7)
        return monday + dt.timedelta(days=target)
    ahead = (target - today.weekday()) % 7
    return today + dt.timedelta(days=ahead)


def _note(today: dt.date, game_day: int | None, m: re.Match[str]) -> str:
    """What the match means, in the words of the bracket to add after it (a weekday,
    a week or a month is a real one: the game's calendar is not the player's week)."""
    english = any(m.group(g) for g in ("en_days", "en_week", "en_next_week", "en_next_month"))
    english = english or bool(m.group("en_season"))
    days: int | None = None
    when: dt.date | None = None
    if m.group("zh_days"):
        days = _DAYS_ZH[m.group("zh_days")]
    elif m.group("en_days"):
        days = _DAYS_EN[m.group("en_days").lower()]
    elif m.group("zh_week"):
        nxt = (m.group("zh_next") or "").startswith("下")
        when = _weekday(today, _WEEKDAY_ZH[m.group("zh_wd")], next_week=nxt)
    elif m.group("en_week"):
        nxt = m.group("en_next").lower() == "next"
        when = _weekday(today, _WEEKDAY_EN[m.group("en_wd").lower()], next_week=nxt)
    elif m.group("zh_next_week") or m.group("en_next_week"):
        monday = today - dt.timedelta(days=today.weekday()) + dt.timedelta(days=7)
        week = monday.isoformat()
        return f"the week of {week}" if english else f"{week} 起的那一周"
    elif m.group("zh_next_month") or m.group("en_next_month"):
        month = today.month % 12 + 1
        year = today.year + (today.month == 12)
        return f"{year}-{month:02d}"
    else:  # a season of the game: anchored to the day it was said on
        if game_day is None:
            return f"said on {today.isoformat()}" if english else f"{today.isoformat()} 说的"
        return f"said on in-game day {game_day}" if english else f"游戏第{game_day}天说的"
    if days is None:
        assert when is not None
        return when.isoformat()
    when = today + dt.timedelta(days=days)
    if game_day is None:
        return when.isoformat()
    if english:
        return f"{when.isoformat()}, in-game day {game_day + days}"
    return f"{when.isoformat()}，游戏第{game_day + days}天"


def resolve(text: str, today: dt.date, game_day: int | None = None) -> str:
    """``text`` with each relative date followed by what it means, in 「（…）」."""

    def one(m: re.Match[str]) -> str:
        rest = text[m.end() : m.end() + 2].lstrip(" \t")
        if rest[:1] in ("（", "("):
            return m.group(0)  # resolved already
        note = _note(today, game_day, m)
        if m.group(0).isascii():
            return f"{m.group(0)} ({note})"
        return f"{m.group(0)}（{note}）"

    return _PATTERN.sub(one, text)
