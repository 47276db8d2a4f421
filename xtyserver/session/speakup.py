"""Whether the companion speaks up about a game event: the player's budget (docs/speakup.md).

Pure: the time of each decision is passed in (epoch seconds) with the
adapter's zone for quiet hours. One :class:`SpeakUp` per session keeps what its
rules need (the last line of each kind, the lines of the last hour); the
settings are per game (:class:`SpeakUpSettings`), off by default.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Literal

import msgspec

from xtyserver.memory.accounting import timezone
from xtyserver.memory.tokens import DailyBudget
from xtyserver.protocol.frames import ModelContext

HOUR_S = 3600.0

Verdict = Literal[
    "speak",
    "off",
    "quiet_hours",
    "cooldown",
    "hourly_cap",
    "turn_streaming",
    "typing",
    "menu_open",
    "budget_share",
    "no_model",
]
"""What became of an event: ``speak``, or why the companion kept quiet."""


class GameSpeakUp(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """How one game's companion may speak up (``[speakup.games.<gameId>]``).

    Attributes:
        enabled: Whether it speaks up at all (off by default: lines cost tokens).
        cooldown_minutes: Minutes after a line about one kind of event before
            another line about that kind.
        lines_per_hour: Lines at most in any 60 minutes.
        token_share: Share of ``model.daily_token_budget`` lines may start in:
            a line is spoken only while today's tokens are below this share of
            the budget, so speaking up never takes the player's part (no
            budget: no limit here).
        quiet_from: Local hour (0–23) quiet hours begin, in the adapter's zone.
        quiet_until: Local hour they end; equal to ``quiet_from``: no quiet hours.
    """

    enabled: bool = False
    cooldown_minutes: Annotated[float, msgspec.Meta(ge=0, le=1440)] = 10.0
    lines_per_hour: Annotated[int, msgspec.Meta(ge=0, le=60)] = 4
    token_share: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.2
    quiet_from: Annotated[int, msgspec.Meta(ge=0, le=23)] = 0
    quiet_until: Annotated[int, msgspec.Meta(ge=0, le=23)] = 0

    def quiet_at(self, hour: int) -> bool:
        """Whether local ``hour`` is inside the quiet hours (which may span midnight)."""
        start, end = self.quiet_from, self.quiet_until
        if start == end:
            return False
        return start <= hour < end if start < end else hour >= start or hour < end


class SpeakUpSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Every game's speak-up settings (``[speakup]``).

    Attributes:
        default: A game not named in ``games`` (``[speakup.default]``).
        games: Per game id (``[speakup.games.stardew-valley]``); the page sets
            the three reference games'.
    """

    default: GameSpeakUp = msgspec.field(default_factory=GameSpeakUp)
    games: dict[str, GameSpeakUp] = msgspec.field(default_factory=dict)

    def of(self, game_id: str) -> GameSpeakUp:
        return self.games.get(game_id, self.default)


PAGE_GAMES: tuple[str, ...] = ("stardew-valley", "dont-starve-together", "oxygen-not-included")
"""The games whose speak-up settings the page shows (the reference adapters' ``gameId``)."""


def page_keys() -> tuple[str, ...]:
    """The dotted settings the page stores for speaking up: every field of each page game."""
    return tuple(
        f"speakup.games.{game}.{field}"
        for game in PAGE_GAMES
        for field in GameSpeakUp.__struct_fields__
    )


def local_hour(now: float, zone: str) -> int:
    """The hour (0–23) of epoch seconds ``now`` in the IANA zone ``zone``."""
    return dt.datetime.fromtimestamp(now, tz=timezone(zone)).hour


def player_busy(context: ModelContext | None) -> Literal["typing", "menu_open"] | None:
    """Why the game state says the player is busy (typing, a menu or a cutscene), if it does."""
    ui = context.ui if context is not None else None
    if ui is None:
        return None
    if ui.typing:
        return "typing"
    if ui.menu or ui.busy:
        return "menu_open"
    return None


class SpeakUp:
    """One session's speak-up rules: cooldowns per kind and the lines of the last hour."""

    def __init__(self) -> None:
        self._last: dict[str, float] = {}
        self._lines: list[float] = []
        # The kind of the line just started and its kind's line before, until it is said.
        self._undo: tuple[str, float | None] | None = None

    def decide(
        self,
        settings: GameSpeakUp,
        kind: str,
        *,
        now: float,
        zone: str,
        streaming: bool,
        context: ModelContext | None,
    ) -> Verdict:
        """Whether an event of ``kind`` at ``now`` may start a line (the budget share comes later).

        ``context``: the save's modelContext while it is fresh enough to trust
        (None when it is dropped): its ``ui`` says whether the player types or
        a menu is open.
        """
        if not settings.enabled:
            return "off"
        if streaming:
            return "turn_streaming"
        busy = player_busy(context)
        if busy is not None:
            return busy
        if settings.quiet_at(local_hour(now, zone)):
            return "quiet_hours"
        last = self._last.get(kind)
        if last is not None and now - last < settings.cooldown_minutes * 60:
            return "cooldown"
        self._lines = [t for t in self._lines if now - t < HOUR_S]
        if len(self._lines) >= settings.lines_per_hour:
            return "hourly_cap"
        return "speak"

    def spoke(self, kind: str, now: float) -> None:
        """A line about ``kind`` started at ``now``: its cooldown and the hour count begin."""
        self._undo = (kind, self._last.get(kind))
        self._last[kind] = now
        self._lines.append(now)

    def unsaid(self) -> None:
        """The line just started was never said (the budget share kept it quiet): it counts
        toward neither its kind's cooldown nor the hour's lines."""
        if self._undo is None:
            return
        kind, before = self._undo
        self._undo = None
        if before is None:
            self._last.pop(kind, None)
        else:
            self._last[kind] = before
        if self._lines:
            self._lines.pop()

    @staticmethod
    def within_share(settings: GameSpeakUp, budget: DailyBudget, spent: int | None) -> bool:
        """Whether today's ``spent`` tokens leave room for a line (below the game's share)."""
        if budget.tokens is None or spent is None:
            return True
        return spent < budget.tokens * settings.token_share
