"""The connection runtime: one adapter connection's reader, writer, timers and effect runner.

A shell (v1.md "Transport"): it moves bytes and runs the effects its
``GameAgentSession`` hands out, and decides nothing. The driver runs quick
effects inline and slow ones in tasks (:mod:`xtyserver.serve.turn_tasks`), so a
``chat.cancel`` or a heartbeat never waits behind a database or a screenshot.
The writer alone writes to the socket, with a deadline on each send; it and the
store lane run only while they have work (:mod:`xtyserver.serve.on_demand`).
Every queue is bounded. Nothing outlives the connection's task group.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

import anyio
import anyio.abc
import anyio.lowlevel
import msgspec
import websockets
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from xtyserver import errors, log
from xtyserver.clock import Clock
from xtyserver.memory.types import Scope
from xtyserver.model.router import ModelRouter
from xtyserver.protocol.codec import decode_client_frame, encode_frame
from xtyserver.protocol.images import ImageLimits
from xtyserver.serve.image import BandHelper
from xtyserver.serve.jobs import EnrichKeys, MemoryJobs
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.meter import TokenMeter
from xtyserver.serve.on_demand import next_or_idle
from xtyserver.serve.store_lane import StoreLane
from xtyserver.serve.text_frames import Message
from xtyserver.serve.turn_tasks import TurnTasks
from xtyserver.serve.working import WORKING_EFFECTS, WorkingShell
from xtyserver.session.effects import (
    ArmTimer,
    AskPairing,
    AudioIn,
    CallModel,
    CancelModel,
    CancelTimer,
    ClaimSeat,
    Close,
    CloseSave,
    Effect,
    EndListening,
    Hush,
    Listen,
    LoadTurnMemory,
    Log,
    NameSaid,
    OpenSave,
    PlayBeat,
    PrepareImage,
    PrepareQuery,
    Remember,
    RunTool,
    Send,
    Speak,
    StoreRequest,
    Summarize,
    TouchMemories,
)
from xtyserver.session.events import (
    Connected,
    Disconnected,
    Event,
    FrameIn,
    FrameRefused,
    PairingAnswered,
    SeatAnswered,
    TimerFired,
    TimerKind,
    VoiceFailed,
)
from xtyserver.session.machine import CLOSE_UNAUTHORIZED, GameAgentSession, State
from xtyserver.voice.service import VoiceLink, VoiceService

if TYPE_CHECKING:
    from xtyserver.replay.recorder import ConnectionRecorder, Recorder

# Frames past this size (screenshots: tens of ms) are decoded off the event loop.
THREAD_DECODE_BYTES = 64 * 1024

_T = TypeVar("_T")


class _Abortable(Protocol):
    def abort(self) -> None: ...


class Peer(Protocol):
    """What the runtime needs of its peer: a :class:`~xtyserver.serve.wire.websocket.WsPeer`
    or an HTTP transport session (:class:`~xtyserver.serve.http_transport.HttpPeer`)."""

    @property
    def close_code(self) -> int | None: ...

    @property
    def transport(self) -> _Abortable: ...

    def messages(self) -> AsyncIterator[Message]: ...

    async def send(self, message: bytes) -> None: ...

    async def close(self, code: int = ..., reason: str = ...) -> None: ...

    def __hash__(self) -> int: ...


class RuntimeLimits(msgspec.Struct, frozen=True, kw_only=True):
    """Queue sizes and deadlines of one connection's runtime.

    Attributes:
        send_timeout: Seconds one frame may take to leave; then the peer is closed.
        write_queue: Frames waiting for the writer.
        inbox: Events waiting for the session.
        store_queue: Store effects waiting for the store lane.
        embedding_timeout: Seconds a turn waits for its query's vector (then lexical alone);
            None: by where the embedding model runs.
    """

    send_timeout: float
    write_queue: int
    embedding_timeout: float | None
    inbox: int = 64
    store_queue: int = 32


async def _hand_over(stream: MemoryObjectSendStream[_T], item: _T) -> None:
    """``stream.send(item)``, but the woken receiver runs before this task goes on.

    anyio's ``send`` yields before the put, so a model call handing on a reply's
    first piece read on before the driver and the writer ran. Put, then yield.
    """
    await anyio.lowlevel.checkpoint_if_cancelled()
    try:
        stream.send_nowait(item)
    except anyio.WouldBlock:
        await stream.send(item)
    else:
        await anyio.lowlevel.cancel_shielded_checkpoint()


@dataclass(eq=False)
class _CloseRequest:
    code: int
    reason: str


@dataclass(frozen=True, eq=False)
class Services:
    """What every connection's runtime is given."""

    memory: MemoryService
    jobs: MemoryJobs
    model: ModelRouter
    meter: TokenMeter
    images: ImageLimits
    clock: Clock
    runtime: RuntimeLimits
    working: WorkingShell
    bands: BandHelper
    recorder: Recorder | None
    voice: VoiceService | None = None


class Connection:
    """Runs one adapter connection until it closes.

    Args:
        ws: The upgraded WebSocket (or an HTTP transport session, v1.md "HTTP transport").
        session: The connection's state machine.
        services: What the server's connections share.
        recorder: Writes every frame in and out (``serve --record``), or None.
        claim_seat: Takes an authenticated seat for a pre-auth connection whose
            hello proved the token (``ClaimSeat``); False when none is free.
        on_unauthorized: Awaited before a wrong-token close (the guess delay).
        pairing: Serves an ``AskPairing`` (the server's pairing desk), posting its
            answers; None: this connection may not pair (refused).
    """

    def __init__(
        self,
        ws: Peer,
        session: GameAgentSession,
        services: Services,
        *,
        recorder: ConnectionRecorder | None = None,
        claim_seat: Callable[[], bool] | None = None,
        on_unauthorized: Callable[[], Awaitable[None]] | None = None,
        pairing: Callable[
            [AskPairing, Callable[[PairingAnswered], Awaitable[None]]], Awaitable[None]
        ]
        | None = None,
    ) -> None:
        self.ws = ws
        self._pairing = pairing
        self.seated = False
        self._claim_seat = claim_seat
        self._on_unauthorized = on_unauthorized
        self._working = services.working
        self._recorder = recorder
        self.session = session
        self._memory = memory = services.memory
        self._jobs = services.jobs
        self._clock = services.clock
        self._limits = limits = services.runtime
        self._log = log.get("xtyserver.serve.connection").bind(session=session.session_id)
        # The writer's queue, made with the writer; None while no writer runs.
        self._out_in: MemoryObjectSendStream[bytes | _CloseRequest] | None = None
        self._inbox_in, self._inbox = anyio.create_memory_object_stream[Event](limits.inbox)
        self._store = StoreLane(
            memory, self._post, self._log, queue=limits.store_queue, spawn=self._spawn
        )
        self._tasks = TurnTasks(
            memory=memory,
            model=services.model,
            meter=services.meter,
            images=services.images,
            post=self._post,
            logger=self._log,
            bands=services.bands,
            embedding_timeout=limits.embedding_timeout,
        )
        self._timers: dict[TimerKind, float] = {}  # each armed timer's deadline (Clock.deadline)
        self._model_calls: dict[int, anyio.CancelScope] = {}
        self._closing = False
        # Set when the running writer ends; None while no writer runs.
        self._writer_done: anyio.Event | None = None
        self._writer_ended = False  # after a close, a slow consumer or a peer gone
        self._tg: anyio.abc.TaskGroup | None = None
        self._voice_service = services.voice
        self._voice: VoiceLink | None = None  # made by the first voice effect

    # -- lifetime ------------------------------------------------------------------------------

    async def run(self) -> None:
        """Serve the connection until the peer leaves or the session closes it."""
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                tg.start_soon(self._reader)
                try:
                    await self._drive()
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._finish()
                        tg.cancel_scope.cancel()
        finally:
            if self._recorder is not None:
                self._recorder.close(self.ws.close_code)

    async def _drive(self) -> None:
        await self._feed(Connected())
        async with self._inbox:
            while self.session.state is not State.CLOSED:
                try:
                    event = await self._next_event()
                except anyio.EndOfStream:
                    return
                await self._feed(event)

    async def _next_event(self) -> Event:
        """An event waiting in the inbox; else the first to come of the next one and a timer."""
        with contextlib.suppress(anyio.WouldBlock):
            return self._inbox.receive_nowait()
        if not self._timers:
            return await self._inbox.receive()
        kind = min(self._timers, key=self._timers.__getitem__)
        with self._clock.move_on_at(self._timers[kind]):
            return await self._inbox.receive()
        del self._timers[kind]
        return TimerFired(kind)

    async def _finish(self) -> None:
        """Tell the session (if it does not know yet), then let the store lane and writer drain."""
        if self.session.state is not State.CLOSED:
            await self._feed(Disconnected())
        self._store.close()
        with anyio.move_on_after(self._limits.send_timeout):
            await self._store.wait_done()
        writer = self._writer_done
        if self._closing and writer is not None:
            # A close the session asked for: the writer sends the close frame first.
            with anyio.move_on_after(self._limits.send_timeout):
                await writer.wait()

    async def _post(self, event: Event) -> None:
        """Hand an event to the driver; dropped once the connection is finishing."""
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await _hand_over(self._inbox_in, event)

    def _spawn(self, fn: object, *args: object) -> None:
        assert self._tg is not None
        self._tg.start_soon(fn, *args)  # type: ignore[arg-type]

    # -- reader and writer ---------------------------------------------------------------------

    async def _reader(self) -> None:
        try:
            with contextlib.suppress(websockets.ConnectionClosed):
                async for data, text in self.ws.messages():
                    if self._recorder is not None:  # a recording keeps the text as text
                        message = data.decode("utf-8", "surrogatepass") if text else data
                        await self._recorder.received(message)
                    await self._post(await self._decode(data, text))
        finally:
            with anyio.CancelScope(shield=True):
                await self._post(Disconnected())

    @staticmethod
    async def _decode(message: bytes, text: bool) -> Event:
        if not text:
            return FrameRefused(
                errors.FrameError(
                    "binary frames are not accepted; send JSON text frames",
                    code="binary_not_supported",
                )
            )
        try:
            if len(message) > THREAD_DECODE_BYTES:
                decoded = await anyio.to_thread.run_sync(decode_client_frame, message)
            else:
                decoded = decode_client_frame(message)
        except errors.PeerError as exc:
            return FrameRefused(exc)
        return FrameIn(decoded)

    def _outbox(self) -> MemoryObjectSendStream[bytes | _CloseRequest] | None:
        """The writer's queue, the writer started unless it runs; None once it ended for good."""
        if self._writer_ended:
            return None
        if self._out_in is None:
            self._out_in, out = anyio.create_memory_object_stream[bytes | _CloseRequest](
                self._limits.write_queue
            )
            self._writer_done = anyio.Event()
            self._spawn(self._writer, out, self._writer_done)
        return self._out_in

    async def _writer(
        self, out: MemoryObjectReceiveStream[bytes | _CloseRequest], done: anyio.Event
    ) -> None:
        """The connection's only writer: frames in order, a deadline on each send.

        Ends when idle (the next frame starts it again), and for good after a
        close, a slow consumer or a peer gone.
        """
        timeout = self._limits.send_timeout
        for_good = True
        try:
            with contextlib.suppress(websockets.ConnectionClosed):
                while (item := await next_or_idle(out)) is not None:
                    if isinstance(item, _CloseRequest):
                        with anyio.move_on_after(timeout):
                            await self.ws.close(item.code, item.reason)
                        return
                    with anyio.move_on_after(timeout) as deadline:
                        await self.ws.send(item)
                    if deadline.cancelled_caught:
                        self._log.info("connection.slow_consumer")
                        self._closing = True
                        self.ws.transport.abort()
                        return
                    if self._recorder is not None:
                        self._recorder.sent(item)
                for_good = False
        finally:
            self._writer_ended = for_good
            out.close()
            self._out_in = self._writer_done = None
            done.set()

    # -- effects -------------------------------------------------------------------------------

    async def _feed(self, event: Event) -> None:
        follow: list[Event] = []
        for effect in self.session.handle(event, self._clock.now()):
            try:
                answer = await self._run(effect)
                follow += [answer] if answer is not None else []
            except (errors.XtyError, ValueError, OverflowError, OSError) as exc:
                # A bug of ours must not kill the connection; log the kind, not the data.
                self._log.error(
                    "effect.failed", effect=type(effect).__name__, error=type(exc).__name__
                )
        for answer in follow:
            await self._feed(answer)

    async def _run(self, effect: Effect) -> Event | None:
        """Carry out one effect; return an event to feed at once, if any."""
        match effect:
            case _ if isinstance(effect, WORKING_EFFECTS):
                return await self._working.run(effect, self._post)
            case Send(frame=frame, droppable=True):
                # Flood refusals are advisory: dropped rather than stop reading.
                if not self._closing and (out := self._outbox()) is not None:
                    with contextlib.suppress(anyio.WouldBlock):
                        out.send_nowait(encode_frame(frame))
            case Send(frame=frame):
                # The writer is gone once the peer is: the frame has nowhere to go.
                if not self._closing and (out := self._outbox()) is not None:
                    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                        await _hand_over(out, encode_frame(frame))
            case AskPairing():
                if self._pairing is None:
                    return PairingAnswered("refused")
                self._spawn(self._pairing, effect, self._post)
            case ClaimSeat():
                self.seated = self._claim_seat() if self._claim_seat is not None else True
                await self._post(SeatAnswered(self.seated))
            case Close(code=code, reason=reason):
                if code == CLOSE_UNAUTHORIZED and self._on_unauthorized is not None:
                    await self._on_unauthorized()
                self._log.info("connection.closing", code=code, reason=reason)
                self._closing = True
                if (out := self._outbox()) is not None:
                    with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                        await out.send(_CloseRequest(code, reason))
            case ArmTimer(kind=kind, seconds=seconds):
                self._timers[kind] = self._clock.deadline(seconds)
            case CancelTimer(kind=kind):
                self._timers.pop(kind, None)
            case Log(event=name, fields=fields):
                self._log.info(name, **fields)
            case LoadTurnMemory(turn=turn, save=save, read_memory=read_memory, query=query):
                self._jobs.vectors.turn_began()  # the backlog keeps off until its reply ends
                ready = self._tasks.cached_memory(turn, save, read_memory, query)
                if ready is not None:
                    return ready  # all in memory: fed now, no task or hop
                self._spawn(self._tasks.load_memory, turn, save, read_memory, query)
            case PrepareImage(turn=turn, image=image):
                self._spawn(self._tasks.prepare_image, turn, image.mime, image.data)
            case PrepareQuery(save=save, query=query):
                self._jobs.vectors.player_typing()  # a turn is near: the backlog keeps off
                if self._tasks.want_query(save, query):  # none under way: one task
                    self._spawn(self._tasks.prepare_queries)
            case CallModel(turn=turn, messages=messages, image_sent=image_sent, tools=tools):
                cancel_scope = anyio.CancelScope()
                self._model_calls[turn] = cancel_scope
                self._spawn(self._call_model, cancel_scope, turn, messages, image_sent, tools)
            case RunTool(turn=turn, call_id=call_id, op=op):
                self._spawn(self._tasks.run_tool, turn, call_id, op)
            case CancelModel(turn=turn):
                call = self._model_calls.pop(turn, None)
                if call is not None:
                    call.cancel()
            case TouchMemories(save=save, ids=ids, at=at):
                self._memory.touch(save, ids, at)
            case Remember() | Summarize():
                self._jobs.submit(effect)
            case Listen() | AudioIn() | EndListening() | Speak() | Hush():
                if isinstance(effect, Listen):  # the player speaks: a turn is near
                    self._jobs.vectors.player_typing()
                if self._voice is None and self._voice_service is not None:
                    self._voice = VoiceLink(self._voice_service, self._post, self._spawn)
                if self._voice is not None:
                    await self._voice.run(effect)
                elif isinstance(effect, Listen):
                    return VoiceFailed(effect.utterance, "voice_unavailable")
            case OpenSave() | CloseSave() | PlayBeat() | NameSaid() | StoreRequest():
                await self._store.send(effect)
                if isinstance(effect, OpenSave):
                    # In the background: search keys, then vectors (keys are embedded too).
                    if self._jobs.enrich:
                        self._jobs.submit(EnrichKeys(effect.save))
                    self._jobs.embed_later(effect.save, first=True)
        return None

    async def _call_model(
        self,
        cancel_scope: anyio.CancelScope,
        turn: int,
        messages: list[dict[str, object]],
        image_sent: bool,
        tools: list[dict[str, object]] | None,
    ) -> None:
        identity = self.session.identity
        save = Scope(identity.game_id, identity.save_id) if identity else None
        try:
            await self._tasks.model_call(cancel_scope, turn, messages, image_sent, tools, save)
        finally:
            self._model_calls.pop(turn, None)
            self._jobs.vectors.reply_ended()
