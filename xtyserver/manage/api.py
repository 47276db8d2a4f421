"""Memory management for the page and the MCP server: the one place they call into memory.

Every memory operation the page (:mod:`xtyserver.manage.http`) and the MCP server
(:mod:`xtyserver.manage.mcp`) use goes through :class:`ManageApi`, named after
the operation: :meth:`~ManageApi.view`, :meth:`~ManageApi.correct_shared`,
:meth:`~ManageApi.set_auto_shared`, :meth:`~ManageApi.pin`,
:meth:`~ManageApi.forget_preview`, :meth:`~ManageApi.forget_confirm`,
:meth:`~ManageApi.stats`. It is built over today's
:class:`~xtyserver.serve.memory_service.MemoryService`; the shared operations layer
of the management issue can replace the bodies without touching either caller.

Forgetting takes two steps here: a preview lists exactly what would go and
returns a single-use confirmation token (five minutes); confirming with it
deletes those memories, and is refused when the token is unknown, used,
expired, or the memories changed since the preview. Play statistics are never
deleted.

Not in today's store (see the README): save display names (saves are shown
by id) and a one-transaction "forget a game" (done here save by save).
"""

from __future__ import annotations

import secrets
from datetime import date, timedelta
from typing import Any, Literal

import msgspec

from xtyserver.clock import Clock
from xtyserver.errors import StoreError, UsageError
from xtyserver.memory.accounting import local_date
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.types import (
    PROFILE_FIELDS,
    DailyPlay,
    GamePlayStats,
    MemoryEvent,
    SavePlayStats,
    Scope,
    SharedProfile,
)
from xtyserver.serve.memory_service import MemoryService

CONFIRM_SECONDS = 300.0
STATS_DAYS = 30
EDITABLE_FIELDS: tuple[str, ...] = tuple(f for f in PROFILE_FIELDS if f != "auto_shared")


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w.capitalize() for w in rest)


FIELD_BY_NAME = {**{f: f for f in PROFILE_FIELDS}, **{_camel(f): f for f in PROFILE_FIELDS}}

ForgetKind = Literal["event", "save", "game", "shared_field"]


class ManageError(Exception):
    """A management request that cannot be done; ``message`` is safe to show the player.

    Attributes:
        status: The HTTP status the page answers with.
    """

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


class SaveView(msgspec.Struct, frozen=True, rename="camel"):
    """One save: its id, its display name when known (never today), events and statistics."""

    game_id: str
    save_id: str
    name: str | None
    events: list[MemoryEvent]
    stats: SavePlayStats | None


class GameView(msgspec.Struct, frozen=True, rename="camel"):
    game_id: str
    saves: list[SaveView]
    stats: GamePlayStats | None


class Overview(msgspec.Struct, frozen=True, rename="camel"):
    """Everything the page's memory view shows."""

    profile: SharedProfile
    games: list[GameView]


class TokenDay(msgspec.Struct, frozen=True, rename="camel"):
    """Tokens the provider reported for one local date (every save and purpose)."""

    date: str
    calls: int
    prompt_tokens: int
    completion_tokens: int


class StatsView(msgspec.Struct, frozen=True, rename="camel"):
    """Play statistics per game and save, and active time per day (last ``days`` days).

    Attributes:
        until: The last date of the window (``YYYY-MM-DD``).
    """

    games: list[GamePlayStats]
    saves: list[SavePlayStats]
    daily: list[DailyPlay]
    days: int
    until: str
    tokens: list[TokenDay] = msgspec.field(default_factory=list)


class ForgetTarget(msgspec.Struct, frozen=True, rename="camel"):
    """What to forget: one event, one save, one game, or one shared field (reset)."""

    kind: ForgetKind
    game_id: str | None = None
    save_id: str | None = None
    event_id: int | None = None
    field: str | None = None


class ForgetPreview(msgspec.Struct, frozen=True, rename="camel"):
    """What confirming would delete, and the single-use token to confirm it with."""

    token: str
    target: ForgetTarget
    events: list[MemoryEvent]
    field: str | None
    value: Any
    statistics_kept: bool = True


class ForgetResult(msgspec.Struct, frozen=True, rename="camel"):
    target: ForgetTarget
    events_deleted: int
    field_reset: str | None


class _Pending(msgspec.Struct, frozen=True):
    preview: ForgetPreview
    expires_at: float


def shared_field(name: str) -> str:
    """The profile attribute for ``name`` (snake_case or camelCase), or ManageError."""
    field = FIELD_BY_NAME.get(name)
    if field is None or field == "auto_shared":
        raise ManageError(f"unknown shared field {name!r}; one of {', '.join(EDITABLE_FIELDS)}")
    return field


def _scope(game_id: str | None, save_id: str | None) -> Scope:
    if not game_id or not save_id:
        raise ManageError("gameId and saveId are required")
    try:
        return msgspec.convert({"gameId": game_id, "saveId": save_id}, Scope)
    except msgspec.ValidationError as exc:
        raise ManageError(f"not a save: {exc}") from exc


class ManageApi:
    """The management operations of one profile's memory.

    Args:
        memory: The profile's memory service.
        clock: Time for confirmation deadlines and the statistics window.
        timezone: The zone whose date ends the statistics window (this PC's).
    """

    def __init__(self, memory: MemoryService, clock: Clock, *, timezone: str = "UTC") -> None:
        self.memory = memory
        self.clock = clock
        self.timezone = timezone
        self._pending: dict[str, _Pending] = {}

    async def view(self) -> Overview:
        """The shared profile and every game, save and event, with their statistics."""
        profile = await self.memory.read_profile()
        stats = await self.memory.play_stats()
        game_stats = {g.game_id: g for g in stats.games}
        save_stats = {(s.game_id, s.save_id): s for s in stats.saves}
        games: dict[str, list[SaveView]] = {}
        names = await self.memory.save_names()
        for scope in await self.memory.scopes():
            _, events = await self.memory.view(scope)
            games.setdefault(scope.game_id, []).append(
                SaveView(
                    scope.game_id,
                    scope.save_id,
                    names.get(scope),
                    sorted(events, key=lambda e: (not e.pinned, -e.updated_at)),
                    save_stats.get((scope.game_id, scope.save_id)),
                )
            )
        return Overview(
            profile=profile,
            games=[GameView(g, saves, game_stats.get(g)) for g, saves in sorted(games.items())],
        )

    async def view_save(self, game_id: str, save_id: str) -> SaveView:
        """One save's events and statistics."""
        scope = _scope(game_id, save_id)
        _, events = await self.memory.view(scope)
        stats = await self.memory.play_stats()
        mine = [s for s in stats.saves if s.game_id == game_id and s.save_id == save_id]
        name = (await self.memory.save_names()).get(scope)
        return SaveView(game_id, save_id, name, list(events), mine[0] if mine else None)

    async def correct_shared(self, field: str, value: Any) -> SharedProfile:
        """Replace one shared-profile field (validated like every other write)."""
        name = shared_field(field)
        try:
            return await self.memory.set_profile_field(name, value)
        except StoreError as exc:
            raise ManageError(exc.message) from exc

    async def set_auto_shared(self, on: bool) -> SharedProfile:
        """Turn automatic forming of shared memory on or off."""
        return await self.memory.set_profile_field("auto_shared", bool(on))

    async def pin(self, game_id: str, save_id: str, event_id: int, pinned: bool) -> None:
        """Pin (keep) or unpin one event."""
        if not await self.memory.set_pinned(_scope(game_id, save_id), event_id, pinned):
            raise ManageError("no such memory", 404)

    async def stats(self, days: int = STATS_DAYS) -> StatsView:
        """Play statistics and active time per game and day over the last ``days`` days."""
        stats = await self.memory.play_stats()
        now = self.clock.now()
        recent = await self.memory.daily_play(now - (days + 1) * 86400)
        until = max([local_date(now, self.timezone), *(d.date for d in recent)])
        first = (date.fromisoformat(until) - timedelta(days=days - 1)).isoformat()
        daily = [d for d in recent if d.date >= first]
        per_day: dict[str, list[int]] = {}
        for use in stats.tokens:
            if use.date >= first:
                total = per_day.setdefault(use.date, [0, 0, 0])
                total[0] += use.calls
                total[1] += use.prompt_tokens
                total[2] += use.completion_tokens
        tokens = [TokenDay(day, *per_day[day]) for day in sorted(per_day, reverse=True)]
        return StatsView(
            games=stats.games,
            saves=stats.saves,
            daily=daily,
            days=days,
            until=until,
            tokens=tokens,
        )

    # -- forgetting, in two steps ---------------------------------------------------------

    async def _affected(self, target: ForgetTarget) -> tuple[list[MemoryEvent], str | None, Any]:
        if target.kind == "shared_field":
            name = shared_field(target.field or "")
            profile = await self.memory.read_profile()
            return [], name, msgspec.to_builtins(getattr(profile, name))
        if target.kind == "game":
            if not target.game_id:
                raise ManageError("gameId is required")
            scopes = [s for s in await self.memory.scopes() if s.game_id == target.game_id]
        else:
            scopes = [_scope(target.game_id, target.save_id)]
        events: list[MemoryEvent] = []
        for scope in scopes:
            events.extend((await self.memory.view(scope))[1])
        if target.kind == "event":
            events = [e for e in events if e.id == target.event_id]
            if not events:
                raise ManageError("no such memory", 404)
        return events, None, None

    async def forget_preview(self, target: ForgetTarget) -> ForgetPreview:
        """What forgetting ``target`` would delete, and a token to confirm it once."""
        events, field, value = await self._affected(target)
        now = self.clock.now()
        self._pending = {k: p for k, p in self._pending.items() if p.expires_at > now}
        preview = ForgetPreview(
            token=secrets.token_urlsafe(18), target=target, events=events, field=field, value=value
        )
        self._pending[preview.token] = _Pending(preview, now + CONFIRM_SECONDS)
        return preview

    async def forget_confirm(self, token: str) -> ForgetResult:
        """Delete what the preview of ``token`` listed (the token is used up either way)."""
        pending = self._pending.pop(token, None)
        if pending is None or pending.expires_at <= self.clock.now():
            raise ManageError("confirmation unknown, used or expired; preview again", 409)
        preview = pending.preview
        target = preview.target
        events, _, value = await self._affected(target)
        if [e.id for e in events] != [e.id for e in preview.events] or value != preview.value:
            raise ManageError("memory changed since the preview; preview again", 409)
        if target.kind == "shared_field":
            assert preview.field is not None
            default = getattr(SharedProfile(), preview.field)
            await self.memory.set_profile_field(preview.field, default)
            return ForgetResult(target, 0, preview.field)
        # The shared operations layer: one transaction, tombstones, statistics kept.
        if target.kind == "event":
            event = events[0]
            spec = ForgetSpec(
                kind="item", game_id=event.game_id, save_id=event.save_id, item_id=event.id
            )
        elif target.kind == "save":
            spec = ForgetSpec(kind="save", game_id=target.game_id, save_id=target.save_id)
        else:
            spec = ForgetSpec(kind="game", game_id=target.game_id)
        done = await self.memory.forget(spec)
        return ForgetResult(target, done.items, None)


def decode_target(data: dict[str, Any]) -> ForgetTarget:
    """A :class:`ForgetTarget` from JSON-like data, or ManageError."""
    try:
        return msgspec.convert(data, ForgetTarget)
    except (msgspec.ValidationError, UsageError) as exc:
        raise ManageError(f"not a forget target: {exc}") from exc
