"""One connection's store lane: its store effects in order, and the leases of its saves.

A shell (v1.md "Memory", "stats.get", "memory.get"): it runs what the session
asked of the store and posts the answer event back; it decides nothing. Store
failures become a logged line (play accounting) or a ``StoreFailed`` answer
(management frames); they never end the connection.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from typing import Any, cast

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from xtyserver import errors
from xtyserver.errors import StoreError
from xtyserver.memory.aliases import Naming, Unnaming
from xtyserver.memory.commands import Correct, ForgetName, MemoryCommand, Preview, View
from xtyserver.memory.manage import Overview
from xtyserver.memory.types import Scope
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.on_demand import next_or_idle
from xtyserver.session import tools
from xtyserver.session.effects import (
    CloseSave,
    LoadStats,
    NameSaid,
    OpenSave,
    PlayBeat,
    RunCommands,
    StoreRequest,
)
from xtyserver.session.events import CommandsDone, Event, StatsLoaded, StoreFailed
from xtyserver.session.tools import (
    CorrectOp,
    PreviewOp,
    ToolAnswer,
    ToolFailure,
    ToolOp,
    ViewOp,
)

StoreEffect = OpenSave | CloseSave | PlayBeat | NameSaid | StoreRequest


class StoreLane:
    """Runs one connection's store effects one at a time, in the order they were asked.

    Its task runs only while effects come (:mod:`xtyserver.serve.on_demand`);
    the leases stay held between two runs.

    Args:
        post: Hands an answer event to the connection's session.
        queue: Effects that may wait; the connection waits beyond that.
        spawn: Starts a task in the connection's task group.
    """

    def __init__(
        self,
        memory: MemoryService,
        post: Callable[[Event], Awaitable[None]],
        logger: Any,
        *,
        queue: int,
        spawn: Callable[..., None],
    ) -> None:
        self._memory = memory
        self._post = post
        self._log = logger
        self._spawn = spawn
        self._queue = queue
        # The running lane's queue and its end; None while no lane task runs.
        self._in: MemoryObjectSendStream[StoreEffect] | None = None
        self._done: anyio.Event | None = None
        self._closed = False  # no more effects come
        self._released = False  # the leases are let go: the lane has ended for good
        self._leases: dict[Scope, AbstractAsyncContextManager[None]] = {}
        self._plays: dict[Scope, int] = {}

    async def send(self, effect: StoreEffect) -> None:
        """Queue ``effect``, starting the lane's task unless it runs; dropped once it ended."""
        if self._closed or self._released:
            return
        if self._in is None:
            self._in, out = anyio.create_memory_object_stream[StoreEffect](self._queue)
            self._done = anyio.Event()
            self._spawn(self._run, out, self._done)
        with contextlib.suppress(anyio.BrokenResourceError):
            await self._in.send(effect)

    def close(self) -> None:
        """Accept no more effects; the lane ends after the queued ones, releasing its leases."""
        self._closed = True
        if self._in is not None:
            self._in.close()

    async def wait_done(self) -> None:
        """Wait for the queued effects to be run and every lease to be let go."""
        if self._done is not None:
            await self._done.wait()
        await self._release()

    async def _run(self, out: MemoryObjectReceiveStream[StoreEffect], done: anyio.Event) -> None:
        """Run queued effects until idle; once closed (or cancelled), release every lease."""
        ended = True
        try:
            while (effect := await next_or_idle(out)) is not None:
                try:
                    await self._apply(effect)
                except errors.XtyError as exc:
                    # The store failing must not cost the player the conversation.
                    self._log.warning("store.failed", code=exc.code, effect=type(effect).__name__)
            ended = False
        except anyio.EndOfStream:
            pass
        finally:
            out.close()
            try:
                if ended:
                    await self._release()
                else:
                    self._in = self._done = None
            finally:
                done.set()

    async def _release(self) -> None:
        self._released = True
        with anyio.CancelScope(shield=True):
            for lease in self._leases.values():
                await lease.__aexit__(None, None, None)
            self._leases.clear()

    async def _apply(self, effect: StoreEffect) -> None:
        memory = self._memory
        match effect:
            case OpenSave(save=save, timezone=timezone, at=at, save_name=name):
                await self._lease(save)
                self._plays[save] = await memory.open_play(save, at, timezone, name)
            case CloseSave(save=save, at=at):
                if save in self._leases:
                    await self._leases.pop(save).__aexit__(None, None, None)
                play = self._plays.pop(save, None)
                if play is not None:
                    await memory.close_play(play, at)
            case PlayBeat(save=save, timezone=timezone, at=at):
                play = self._plays.get(save)
                if play is not None:
                    await memory.play_beat(play, at, timezone)
            case NameSaid(save=save, said=Naming(alias=alias, means=means), at=at):
                await memory.learn_alias(save, alias, means, at)
                self._log.info("memory.name_learnt")
            case NameSaid(save=save, said=Unnaming(alias=alias)):
                gone = await memory.execute(ForgetName(scope=save, alias=alias))
                self._log.info("memory.name_dropped", names=gone)
            case StoreRequest():
                await self._answer(effect.request, self._request(effect))

    async def _lease(self, save: Scope) -> None:
        """Hold ``save``'s memory loaded; a failed load holds nothing (and releases nothing)."""
        if save in self._leases:
            return
        lease = self._memory.lease(save)
        try:
            await lease.__aenter__()
        except StoreError as exc:
            self._log.warning("store.failed", code=exc.code, effect="lease")
        else:
            self._leases[save] = lease

    async def _answer(self, request: int, work: Awaitable[Event]) -> None:
        """Await ``work`` and post its answer, or a StoreFailed with the error's code."""
        answer: Event
        try:
            answer = await work
        except errors.XtyError as exc:
            self._log.warning("store.failed", code=exc.code)
            answer = StoreFailed(request, exc.code, exc.message)
        await self._post(answer)

    async def _request(self, effect: StoreRequest) -> Event:
        """Run one store request of a menu frame; the core decided everything about it."""
        match effect:
            case LoadStats(request=request):
                return StatsLoaded(request, await self._memory.play_stats())
            case RunCommands(request=request, commands=commands):
                return CommandsDone(
                    request, tuple([await self._memory.execute(c) for c in commands])
                )
        raise errors.UsageError(f"unknown store request {type(effect).__name__}")


async def run_tool(memory: MemoryService, op: ToolOp) -> ToolAnswer:
    """Carry out one memory tool operation against the memory service (v1.md "Memory tools").

    The core decided what to do; only the save a view, preview or correction names is
    looked up here.

    Raises:
        XtyError: The store refused or failed (the caller turns it into a result).
    """
    command: MemoryCommand
    match op:
        case ViewOp(game_id=game_id):
            return tools.narrow(op, cast(Overview, await memory.execute(View(game_id=game_id))))
        case CorrectOp(field=field, value=value, save=save):
            seen = cast(Overview, await memory.execute(View(scope=save)))
            events = [e for v in seen.saves for e in v.events]
            why = tools.guard_correction(op, [t for e in events for t in (e.subject, e.summary)])
            if why is not None:
                return ToolFailure("refused", why)
            command = Correct(field=field, value=value)
        case PreviewOp(current=current):
            seen = cast(Overview, await memory.execute(View(game_id=current.game_id)))
            spec = tools.resolve(op, seen)
            if isinstance(spec, str):
                return ToolFailure("not_found", spec)
            command = Preview(target=spec)
        case _:
            command = op
    found = await memory.execute(command)
    if found is None:
        return ToolFailure("memory_disabled", "记忆没有开启")
    return cast(ToolAnswer, found)
