"""The WebSocket shell: carries out what each ``GameAgentSession`` asks (v1.md "Transport").

One :class:`Server` owns the listening socket, the memory store, the model
client and a background worker for memory extraction. Every connection gets
one task group holding its writer, timers and model call; nothing outlives
the group that started it.

HTTP-level refusals happen before any handler runs (v1.md "Upgrade"): a wrong
path (404), a ``Host`` that is not this loopback server (403, DNS rebinding),
an ``Origin`` outside the allow-list (403, cross-site WebSocket hijacking), a
wrong ``Authorization: Bearer`` token (401) and a full server (503).
"""

from __future__ import annotations

import contextlib
import math
import secrets
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from http import HTTPStatus
from typing import Any, TypeVar

import anyio
import anyio.abc
import msgspec
import websockets
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from xtyserver import __version__, errors, log
from xtyserver.clock import Clock
from xtyserver.config import Settings
from xtyserver.image import check_and_prepare
from xtyserver.memory import extraction
from xtyserver.memory.accounting import timezone_known
from xtyserver.memory.retrieval import SaveIndex
from xtyserver.memory.store import MemoryStore
from xtyserver.memory.types import MemoryEvent, NewEvent, PlayStats, Scope, SharedProfile
from xtyserver.model.client import Delta, Done, ModelClient
from xtyserver.protocol.codec import decode_client_frame, encode_frame
from xtyserver.protocol.frames import (
    Error,
    GameStats,
    MemoryForget,
    MemoryGet,
    MemoryItem,
    MemoryResult,
    ProfileUpdate,
    SaveStats,
    ServerInfo,
    StatsGet,
    StatsResult,
    Usage,
    frame_type,
)
from xtyserver.protocol.limits import FRAME_MAX_BYTES, Limits
from xtyserver.session import (
    Action,
    ArmTimer,
    CallModel,
    CancelModel,
    CancelTimer,
    Close,
    CloseScope,
    Connected,
    Disconnected,
    Event,
    FrameIn,
    FrameRefused,
    GameAgentSession,
    ImageReady,
    ImageRefused,
    Log,
    ModelDelta,
    ModelDone,
    ModelFailed,
    OpenScope,
    PlayBeat,
    PrepareImage,
    Query,
    Remember,
    ScopeLoaded,
    Send,
    Summarize,
    TimerFired,
    TouchMemories,
)
from xtyserver.token import matches as token_matches

T = TypeVar("T")
PATH = "/v1"
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
THREAD_DECODE_BYTES = 64 * 1024


@dataclass(eq=False)
class _CloseRequest:
    code: int
    reason: str


@dataclass(eq=False)
class _Conn:
    """Per-connection shell state; owned by the connection's task group."""

    ws: ServerConnection
    session: GameAgentSession
    tg: anyio.abc.TaskGroup
    out: MemoryObjectSendStream[bytes | _CloseRequest]
    timers: dict[str, anyio.CancelScope] = field(default_factory=dict)
    model_scopes: dict[int, anyio.CancelScope] = field(default_factory=dict)
    plays: dict[Scope, int] = field(default_factory=dict)
    closing: bool = False
    writer_done: anyio.Event = field(default_factory=anyio.Event)


@dataclass(eq=False)
class _IndexRef:
    index: SaveIndex
    users: int = 0


class Server:
    """The xtyserver WebSocket server.

    Args:
        settings: All settings.
        store: The open memory store of the profile.
        model: The model client.
        token: The adapter token.
        clock: The wall clock (injected so tests control time).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        store: MemoryStore,
        model: ModelClient,
        token: str,
        clock: Clock,
    ) -> None:
        self.settings = settings
        self.store = store
        self.model = model
        self.clock = clock
        self._token = token
        self._log = log.get("xtyserver.server")
        srv = settings.server
        self.limits = Limits(
            context_stale_after_ms=int(srv.stale_after * 1000),
            context_drop_after_ms=int(srv.drop_after * 1000),
            image_max_bytes=settings.images.max_decoded_bytes,
            image_max_side_px=settings.images.max_side,
            chat_per_minute=int(srv.chats_per_minute),
            chat_burst=srv.chat_burst,
            frames_per_second=int(srv.frames_per_second),
            frame_burst=srv.frame_burst,
            heartbeat_misses=srv.heartbeat_misses,
        )
        self.port: int | None = None
        self._conns: set[_Conn] = set()
        self._indexes: dict[Scope, _IndexRef] = {}
        self._jobs_in: MemoryObjectSendStream[Remember | Summarize]
        self._jobs_out: MemoryObjectReceiveStream[Remember | Summarize]
        self._jobs_in, self._jobs_out = anyio.create_memory_object_stream[Remember | Summarize](64)
        self._worker_done = anyio.Event()
        # Shielded so a shutdown lets queued jobs drain; serve() cancels it after the drain.
        self._worker_scope = anyio.CancelScope(shield=True)
        self._handlers = 0
        self._handlers_idle = anyio.Event()
        self.jobs_done = 0

    @property
    def url(self) -> str:
        host = self.settings.server.host
        shown = f"[{host}]" if ":" in host else host
        return f"ws://{shown}:{self.port}{PATH}"

    async def serve(
        self, *, task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Listen until cancelled; ``task_status.started`` gets the URL."""
        srv = self.settings.server
        recovered = await self._thread(self.store.recover_open_sessions)
        if recovered:
            self._log.info("play.recovered", sessions=recovered)
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._background_worker)
            async with websockets.serve(
                self._handler,
                srv.host,
                srv.port,
                process_request=self._process_request,
                max_size=FRAME_MAX_BYTES,
                max_queue=4,
                write_limit=64 * 1024,
                open_timeout=srv.open_timeout,
                close_timeout=5,
                ping_interval=20,
                ping_timeout=20,
                server_header=None,
            ) as ws_server:
                sock = next(iter(ws_server.sockets))
                self.port = int(sock.getsockname()[1])
                self._log.info("server.listening", url=self.url)
                task_status.started(self.url)
                try:
                    await anyio.sleep_forever()
                finally:
                    with anyio.CancelScope(shield=True):
                        ws_server.close(close_connections=True)
                        with anyio.move_on_after(5):
                            await ws_server.wait_closed()
                            while self._handlers:
                                await self._handlers_idle.wait()
                        # Let queued memory jobs (end-of-session summaries) finish, briefly.
                        self._jobs_in.close()
                        with anyio.move_on_after(self.settings.memory.drain_timeout):
                            await self._worker_done.wait()
                        self._worker_scope.cancel()
                        tg.cancel_scope.cancel()

    # -- HTTP-level checks, before any handler runs ----------------------------------------

    def _process_request(self, ws: ServerConnection, request: Request) -> Response | None:
        headers = request.headers
        if request.path.split("?", 1)[0] != PATH:
            return self._refuse(ws, HTTPStatus.NOT_FOUND, "not found; the endpoint is /v1")
        hosts = headers.get_all("Host")
        if len(hosts) != 1 or not self._host_ok(hosts[0]):
            return self._refuse(ws, HTTPStatus.FORBIDDEN, "host not allowed")
        origins = headers.get_all("Origin")
        if origins and (len(origins) > 1 or origins[0] not in self.settings.server.allowed_origins):
            return self._refuse(ws, HTTPStatus.FORBIDDEN, "origin not allowed")
        if "Authorization" in headers and (
            len(headers.get_all("Authorization")) > 1
            or not token_matches(_bearer(headers), self._token)
        ):
            return self._refuse(ws, HTTPStatus.UNAUTHORIZED, "wrong token")
        if len(self._conns) >= self.settings.server.max_connections:
            return self._refuse(ws, HTTPStatus.SERVICE_UNAVAILABLE, "too many connections")
        return None

    def _refuse(self, ws: ServerConnection, status: HTTPStatus, why: str) -> Response:
        self._log.info("upgrade.refused", status=int(status), reason=why)
        return ws.respond(status, why + "\n")

    def _host_ok(self, host: str | None) -> bool:
        """DNS-rebinding guard: Host must name this loopback server and port."""
        if host is None:
            return False
        allowed = {f"{name}:{self.port}" for name in LOOPBACK_NAMES}
        bind = self.settings.server.host
        if bind not in ("127.0.0.1", "localhost", "::1", "0.0.0.0", "::"):
            allowed.add(f"{bind}:{self.port}")
        return host.lower() in allowed

    # -- one connection ----------------------------------------------------------------------

    async def _handler(self, ws: ServerConnection) -> None:
        self._handlers += 1
        try:
            await self._connection(ws)
        finally:
            self._handlers -= 1
            if not self._handlers:
                self._handlers_idle.set()
                self._handlers_idle = anyio.Event()

    async def _connection(self, ws: ServerConnection) -> None:
        now = self.clock.now()
        assert ws.request is not None
        session = GameAgentSession(
            session_id=secrets.token_hex(8),
            settings=self.settings.server,
            texts=self.settings.texts,
            limits=self.limits,
            budget=self.settings.memory.budget,
            token=self._token,
            authenticated=token_matches(_bearer(ws.request.headers), self._token),
            model_configured=self.model.configured,
            vision=self.settings.model.vision,
            server_info=ServerInfo(name="xtyserver", version=__version__),
            timezone_ok=timezone_known,
            now=now,
        )
        out, pending = anyio.create_memory_object_stream[bytes | _CloseRequest](
            self.settings.server.write_queue_frames
        )
        self._log.info("connection.open", session=session.session_id)
        async with anyio.create_task_group() as tg:
            conn = _Conn(ws, session, tg, out)
            self._conns.add(conn)
            tg.start_soon(self._writer, conn, pending)
            try:
                await self._feed(conn, Connected())
                await self._read_loop(conn)
            finally:
                with anyio.CancelScope(shield=True):
                    self._conns.discard(conn)
                    await self._feed(conn, Disconnected())
                    for scope in list(conn.plays):
                        self._release_index(scope)
                    if conn.closing:
                        # A close asked for by a frame (4001, 4008): let the writer put
                        # the close frame on the wire before it is cancelled.
                        with anyio.move_on_after(self.settings.server.send_timeout):
                            await conn.writer_done.wait()
                    tg.cancel_scope.cancel()
        self._log.info(
            "connection.close",
            session=session.session_id,
            code=ws.close_code,
            reason=ws.close_reason or "",
        )

    async def _read_loop(self, conn: _Conn) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            async for message in conn.ws:
                event: Event
                if isinstance(message, bytes):
                    event = FrameRefused(
                        errors.FrameError(
                            "binary frames are not accepted; send JSON text frames",
                            code="binary_not_supported",
                        )
                    )
                else:
                    try:
                        if len(message) > THREAD_DECODE_BYTES:
                            # A screenshot frame takes tens of ms to decode and check:
                            # off the event loop, so other adapters stay on time.
                            decoded = await self._thread(decode_client_frame, message)
                        else:
                            decoded = decode_client_frame(message)
                        event = FrameIn(decoded)
                    except errors.PeerError as exc:
                        event = FrameRefused(exc)
                await self._feed(conn, event)
                if conn.closing:
                    return

    async def _writer(
        self, conn: _Conn, pending: MemoryObjectReceiveStream[bytes | _CloseRequest]
    ) -> None:
        """The connection's only writer: frames in order, a deadline on each send."""
        timeout = self.settings.server.send_timeout
        try:
            with contextlib.suppress(websockets.ConnectionClosed):
                async with pending:
                    async for item in pending:
                        if isinstance(item, _CloseRequest):
                            with anyio.move_on_after(timeout):
                                await conn.ws.close(item.code, item.reason)
                            return
                        with anyio.move_on_after(timeout) as deadline:
                            await conn.ws.send(item, text=True)
                        if deadline.cancelled_caught:
                            self._log.info(
                                "connection.slow_consumer", session=conn.session.session_id
                            )
                            conn.closing = True
                            conn.ws.transport.abort()
                            return
        finally:
            conn.writer_done.set()

    async def _feed(self, conn: _Conn, event: Event) -> None:
        actions = conn.session.handle(event, self.clock.now())
        await self._apply(conn, actions)

    async def _apply(self, conn: _Conn, actions: Sequence[Action]) -> None:
        for action in actions:
            try:
                await self._do(conn, action)
            except errors.StoreError as exc:
                # The store failing must not cost the player the conversation.
                self._log.warning("store.failed", code=exc.code, action=type(action).__name__)
            except (errors.XtyError, ValueError, OverflowError, OSError) as exc:
                # A bug of ours must not kill the connection; log the kind, not the data.
                self._log.error(
                    "action.failed", action=type(action).__name__, error=type(exc).__name__
                )

    async def _do(self, conn: _Conn, action: Action) -> None:
        sid = conn.session.session_id
        match action:
            case Send(frame=Error(code="rate_limited") as frame):
                # Refusals of a flood are advisory: when the peer is not reading, drop
                # them rather than stop reading (the flood must still be counted).
                if not conn.closing:
                    with contextlib.suppress(anyio.WouldBlock):
                        conn.out.send_nowait(encode_frame(frame))
            case Send(frame=frame):
                if not conn.closing:
                    await conn.out.send(encode_frame(frame))
            case Close(code=code, reason=reason):
                self._log.info("connection.closing", session=sid, code=code, reason=reason)
                conn.closing = True
                with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                    await conn.out.send(_CloseRequest(code, reason))
            case ArmTimer(kind=kind, seconds=seconds):
                self._cancel_timer(conn, kind)
                scope = anyio.CancelScope()
                conn.timers[kind] = scope
                conn.tg.start_soon(self._timer, conn, scope, kind, seconds)
            case CancelTimer(kind=kind):
                self._cancel_timer(conn, kind)
            case OpenScope(scope=scope, timezone=tz, at=at):
                conn.plays[scope] = await self._thread(self.store.open_play_session, scope, at, tz)
                profile, index = await self._load(scope)
                await self._feed(conn, ScopeLoaded(scope, profile, index))
            case CloseScope(scope=scope, at=at):
                play = conn.plays.pop(scope, None)
                self._release_index(scope)
                if play is not None:
                    await self._thread(self.store.close_play_session, play, at)
            case PlayBeat(scope=scope, timezone=tz, at=at):
                play = conn.plays.get(scope)
                if play is not None:
                    await self._thread(self.store.record_heartbeat, play, at, tz)
            case PrepareImage(turn=turn, image=image):
                try:
                    prepared = await self._thread(
                        check_and_prepare, image.mime, image.data, self.settings.images
                    )
                except errors.PeerError as exc:
                    self._log.info("image.refused", session=sid, code=exc.code)
                    await self._feed(conn, ImageRefused(turn, exc))
                else:
                    await self._feed(conn, ImageReady(turn, prepared))
            case CallModel(turn=turn, messages=messages, image_sent=image_sent):
                scope = anyio.CancelScope()
                conn.model_scopes[turn] = scope
                conn.tg.start_soon(self._model_turn, conn, scope, turn, messages, image_sent)
            case CancelModel(turn=turn):
                model_scope = conn.model_scopes.pop(turn, None)
                if model_scope is not None:
                    model_scope.cancel()
            case TouchMemories(scope=scope, ids=ids, at=at):
                ref = self._indexes.get(scope)
                if ref is not None:
                    ref.index.touch(ids, at)
                await self._thread(self.store.touch, scope, list(ids), at)
            case Remember() | Summarize():
                if self.settings.memory.enabled and self.settings.memory.extraction:
                    try:
                        self._jobs_in.send_nowait(action)
                    except anyio.WouldBlock:
                        self._log.warning("memory.job_dropped", reason="queue full")
                    except (anyio.ClosedResourceError, anyio.BrokenResourceError):
                        self._log.warning("memory.job_dropped", reason="shutting down")
            case Query(frame=frame, scope=scope):
                try:
                    await self._query(conn, frame, scope)
                except errors.StoreError as exc:
                    self._log.warning("store.failed", code=exc.code, action=frame_type(frame))
                    err = Error(code=exc.code, message=exc.message, id=frame.id)
                    await self._apply(conn, [Send(err)])
            case Log(event=event, fields=fields):
                self._log.info(event, session=sid, **fields)

    async def _timer(
        self, conn: _Conn, scope: anyio.CancelScope, kind: Any, seconds: float
    ) -> None:
        with scope:
            await anyio.sleep(seconds)
            if conn.timers.get(kind) is scope:
                del conn.timers[kind]
                await self._feed(conn, TimerFired(kind))

    def _cancel_timer(self, conn: _Conn, kind: str) -> None:
        scope = conn.timers.pop(kind, None)
        if scope is not None:
            scope.cancel()

    async def _model_turn(
        self,
        conn: _Conn,
        scope: anyio.CancelScope,
        turn: int,
        messages: list[dict[str, Any]],
        image_sent: bool,
    ) -> None:
        started = anyio.current_time()
        first: float | None = None
        outcome = "done"
        usage: Usage | None = None
        with scope:
            try:
                async with contextlib.aclosing(self.model.stream_chat(messages)) as stream:
                    async for event in stream:
                        match event:
                            case Delta(text=text):
                                if first is None:
                                    first = anyio.current_time()
                                await self._feed(conn, ModelDelta(turn, text))
                            case Done(text=text, usage=raw_usage):
                                if raw_usage is not None:
                                    usage = Usage(
                                        prompt_tokens=raw_usage.prompt_tokens,
                                        completion_tokens=raw_usage.completion_tokens,
                                        total_tokens=raw_usage.total_tokens,
                                    )
                                await self._feed(conn, ModelDone(turn, text, usage))
            except errors.ModelError as exc:
                outcome = exc.code
                await self._feed(conn, ModelFailed(turn, exc.code))
            except Exception:  # a bug of ours or the client's: never a hung turn
                outcome = "model_error"
                self._log.exception("model.unexpected", session=conn.session.session_id)
                await self._feed(conn, ModelFailed(turn, "model_error"))
        if scope.cancelled_caught:
            outcome = "cancelled"
        conn.model_scopes.pop(turn, None)
        self._log.info(
            "model.call",
            session=conn.session.session_id,
            outcome=outcome,
            first_token_ms=None if first is None else round((first - started) * 1000),
            total_ms=round((anyio.current_time() - started) * 1000),
            image=image_sent,
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )

    # -- memory ---------------------------------------------------------------------------------

    async def _load(self, scope: Scope) -> tuple[SharedProfile | None, SaveIndex | None]:
        if not self.settings.memory.enabled:
            return None, None
        profile = await self._thread(self.store.get_profile)
        ref = self._indexes.get(scope)
        if ref is None:
            events = await self._thread(self.store.load_scope, scope)
            ref = self._indexes.get(scope)  # another connection may have loaded it meanwhile
            if ref is None:
                ref = self._indexes[scope] = _IndexRef(SaveIndex(scope, events))
        ref.users += 1
        return profile, ref.index

    def _release_index(self, scope: Scope) -> None:
        ref = self._indexes.get(scope)
        if ref is not None:
            ref.users -= 1
            if ref.users <= 0:
                del self._indexes[scope]

    async def _refresh_profile(self) -> None:
        profile = await self._thread(self.store.get_profile)
        for conn in list(self._conns):
            scope = conn.session.identity
            if scope is not None:
                key = Scope(scope.game_id, scope.save_id)
                ref = self._indexes.get(key)
                await self._feed(conn, ScopeLoaded(key, profile, ref.index if ref else None))

    async def _background_worker(self) -> None:
        """Runs memory jobs one at a time, after replies, never blocking a player."""
        with self._worker_scope:
            try:
                async with self._jobs_out:
                    async for job in self._jobs_out:
                        try:
                            if isinstance(job, Remember):
                                await self._remember(job)
                            else:
                                await self._summarize(job)
                        except errors.XtyError as exc:
                            self._log.info("memory.job_failed", code=exc.code)
                        except Exception:
                            self._log.exception("memory.job_crashed")
                        self.jobs_done += 1
            finally:
                self._worker_done.set()

    async def _remember(self, job: Remember) -> None:
        if not self.model.configured:
            return
        profile = await self._thread(self.store.get_profile)
        messages = extraction.build_extraction_messages(job.player_text, job.reply)
        answer = await self.model.complete(messages, model=self.settings.model.extraction_model)
        result = extraction.parse_extraction(answer, profile=profile, day=job.day)
        for candidate in result.events:
            await self._store_event(job.scope, candidate, job.at)
        if result.profile is not None and profile.auto_shared:
            name, value = extraction.profile_update(profile, result.profile)
            await self._thread(self.store.set_profile_field, name, value)
            await self._refresh_profile()

    async def _summarize(self, job: Summarize) -> None:
        if not self.model.configured:
            return
        turns = [extraction.Turn(player, reply) for player, reply in job.turns]
        messages = extraction.build_summary_messages(turns)
        if messages is None:
            return
        answer = await self.model.complete(messages, model=self.settings.model.extraction_model)
        for candidate in extraction.parse_summary(answer, day=job.day):
            await self._store_event(job.scope, candidate, job.at)

    async def _store_event(self, scope: Scope, event: NewEvent, at: float) -> None:
        stored = await self._thread(self.store.upsert_event, scope, event, at)
        ref = self._indexes.get(scope)
        if ref is not None:
            ref.index.upsert(stored)
        if ref is not None and len(ref.index) > self.settings.memory.soft_cap:
            merged = await self._thread(
                partial(self.store.compact_scope, cap=self.settings.memory.soft_cap), scope, at
            )
            if merged:
                _resync(ref.index, await self._thread(self.store.load_scope, scope))

    async def _query(
        self, conn: _Conn, frame: StatsGet | MemoryGet | MemoryForget | ProfileUpdate, scope: Scope
    ) -> None:
        match frame:
            case StatsGet():
                stats = await self._thread(self.store.stats)
                await self._apply(conn, [Send(stats_frame(stats, frame.id))])
                return
            case MemoryForget(target="event", event_id=None):
                await self._apply(
                    conn,
                    [
                        Send(
                            Error(
                                code="invalid_frame",
                                message="target event needs eventId",
                                id=frame.id,
                                fields=["eventId"],
                            )
                        )
                    ],
                )
                return
            case MemoryForget(target=target, event_id=event_id):
                await self._forget(scope, target, event_id)
            case ProfileUpdate(field=name, value=value):
                try:
                    await self._thread(self.store.set_profile_field, _snake(name), value)
                except errors.XtyError as exc:
                    err = Error(code=exc.code, message=exc.message, id=frame.id, fields=["value"])
                    await self._apply(conn, [Send(err)])
                    return
                await self._refresh_profile()
        profile = await self._thread(self.store.get_profile)
        events = await self._thread(self.store.load_scope, scope)
        await self._apply(conn, [Send(memory_frame(profile, events, frame.id))])

    async def _forget(self, scope: Scope, target: str, event_id: int | None) -> None:
        if target == "event" and event_id is not None:
            await self._thread(self.store.forget_event, scope, event_id)
        elif target == "save":
            await self._thread(self.store.forget_scope, scope)
        elif target == "profile":
            await self._thread(self.store.clear_profile)
        else:
            # "Forget everything" is every memory, not the play statistics.
            await self._thread(self.store.clear_profile)
            for each in await self._thread(self.store.list_scopes):
                await self._thread(self.store.forget_scope, each)
        for key, ref in list(self._indexes.items()):
            _resync(ref.index, await self._thread(self.store.load_scope, key))
        await self._refresh_profile()

    async def _thread(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(partial(fn, *args))


@asynccontextmanager
async def serving(settings: Settings, *, token: str, clock: Clock) -> AsyncIterator[Server]:
    """Open the profile's store and the model client, and run a :class:`Server`.

    The server listens once this is entered (``server.url`` is set) and stops,
    closing the client and the store, when it is left. ``xtyserver serve``, the
    demo and the tests all start the server this one way.
    """
    store = MemoryStore.open_profile(settings.data_path, settings.profile, clock=clock)
    model = ModelClient(settings.model)
    server = Server(settings, store=store, model=model, token=token, clock=clock)
    try:
        async with anyio.create_task_group() as tg:
            await tg.start(server.serve)
            yield server
            tg.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True):
            await model.aclose()
        store.close()


def _resync(index: SaveIndex, events: Sequence[MemoryEvent]) -> None:
    """Make a shared index match the store in place (sessions hold a reference to it)."""
    keep = {event.id for event in events}
    for old in index.events():
        if old.id not in keep:
            index.remove(old.id)
    for event in events:
        index.upsert(event)


def _bearer(headers: Headers) -> str | None:
    values = headers.get_all("Authorization")
    value = values[0] if len(values) == 1 else None
    if value is None:
        return None
    scheme, _, credentials = value.partition(" ")
    return credentials.strip() if scheme.lower() == "bearer" else None


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name)


def _iso(ts: float | None) -> str | None:
    if ts is None or not math.isfinite(ts):
        return None
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def stats_frame(stats: PlayStats, frame_id: str | None) -> StatsResult:
    """The ``stats.result`` frame for a store's statistics (v1.md "stats.get")."""
    return StatsResult(
        saves=[
            SaveStats(
                game_id=s.game_id,
                save_id=s.save_id,
                days=s.days,
                sessions=s.sessions,
                active_ms=s.active_ms,
                last_played=_iso(s.last_played),
            )
            for s in stats.saves
        ],
        games=[
            GameStats(
                game_id=g.game_id,
                days=g.days,
                sessions=g.sessions,
                active_ms=g.active_ms,
                last_played=_iso(g.last_played),
            )
            for g in stats.games
        ],
        id=frame_id,
    )


def memory_frame(
    profile: SharedProfile, events: Sequence[Any], frame_id: str | None
) -> MemoryResult:
    """The ``memory.result`` frame: the shared profile and this save's events."""
    raw = msgspec.to_builtins(profile)
    return MemoryResult(
        profile=raw,
        events=[
            MemoryItem(
                id=e.id,
                kind=e.kind,
                subject=e.subject,
                summary=e.summary,
                importance=e.importance,
                status=e.status,
                pinned=e.pinned,
                updated_at=_iso(e.updated_at) or "",
                day=e.day,
            )
            for e in events
        ],
        id=frame_id,
    )
