"""The listener: accept upgrades, run one :class:`~xtyserver.serve.connection.Connection` each.

Shuts down within a bound, whatever the peers do (:meth:`Server._close_connections`).

A shell (v1.md "Transport"). The upgrade guard is :func:`xtyserver.protocol.upgrade.check_upgrade`;
each connection's runtime is :mod:`xtyserver.serve.connection`; memory lives behind
:class:`~xtyserver.serve.memory_service.MemoryService`. :func:`serving` is the one
place that wires them: ``xtyserver serve``, the demo and the tests all start
the server through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import socket
import weakref
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
import msgspec
import websockets
from websockets.asyncio.server import Server as WsServer
from websockets.asyncio.server import ServerConnection
from websockets.http11 import Request, Response

from xtyserver import __version__, log
from xtyserver.clock import Clock
from xtyserver.config import Settings
from xtyserver.errors import StoreError
from xtyserver.files import tighten_data_dir
from xtyserver.manage.access import open_link
from xtyserver.manage.http import UiHttp
from xtyserver.manage.page_secret import new_page_secret
from xtyserver.manage.pairing import PagePairing
from xtyserver.manage.settings import PageSettings
from xtyserver.memory.glossary import Glossary
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.model.router import ModelRouter
from xtyserver.model.routing import resolve
from xtyserver.model.scheduler import Scheduler
from xtyserver.protocol.forbidden import compile_patterns
from xtyserver.protocol.limits import FRAME_MAX_BYTES, SMALL_FRAME_MAX_BYTES, Limits
from xtyserver.protocol.upgrade import (
    PATH,
    Refusal,
    bearer,
    check_headers,
    check_upgrade,
    header_values,
    hello_token,
)
from xtyserver.replay.recorder import Recorder
from xtyserver.serve.connection import Connection, Peer
from xtyserver.serve.gate import FailedTokens, Gauge, Seats
from xtyserver.serve.glossary import GlossaryOnce, has_player_files, load_glossary
from xtyserver.serve.http_transport import HttpPeer, HttpTransport, front_connection
from xtyserver.serve.image import BandHelper
from xtyserver.serve.instance import (
    ServerFile,
    hold_instance,
    now_iso,
    remove_server_file,
    write_server_file,
)
from xtyserver.serve.jobs import MemoryJobs
from xtyserver.serve.localzone import detect_local_timezone, server_zone, zone_resolver
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.meter import TokenMeter
from xtyserver.serve.paired_keys import PairedKeys
from xtyserver.serve.pairing import PairingDesk
from xtyserver.serve.player_settings import PlayerSettings
from xtyserver.serve.runtime_settings import (
    daily_budget,
    gate_limits,
    runtime_limits,
    session_settings,
)
from xtyserver.serve.text_frames import BytesConnection
from xtyserver.serve.trash_purge import purge_trash_every
from xtyserver.serve.working import InjectionLog, ParkedWork, WorkingShell, injection_log_path
from xtyserver.session.machine import CLOSE_SERVER_FULL, CLOSE_UNAUTHORIZED, GameAgentSession
from xtyserver.token import TokenSource, token_path
from xtyserver.token import matches as token_matches


class Server:
    """The xtyserver WebSocket server.

    Args:
        settings: All settings.
        memory: The memory service of the profile.
        jobs: The background memory worker.
        model: The model router.
        meter: The token meter (bill and daily budget).
        token: The adapter token at start.
        clock: The wall clock (injected so tests control time).
        recorder: Records every connection (``serve --record``), or None.
        token_file: The token's file: a rotated token takes effect at once.
        page_secret: What ``xtyserver ui`` proves to open the page (not the token);
            "": a random one nobody can read (a server in a test, opened by ``ui_link``).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        memory: MemoryService,
        jobs: MemoryJobs,
        model: ModelRouter,
        meter: TokenMeter,
        token: str,
        clock: Clock,
        recorder: Recorder | None = None,
        token_file: Path | None = None,
        player: PlayerSettings | None = None,
        env: Mapping[str, str] | None = None,
        page_secret: str = "",
    ) -> None:
        self.settings = settings
        self.recorder = recorder
        self.memory = memory
        self.jobs = jobs
        self.model = model
        self.meter = meter
        self.clock = clock
        self._tokens = TokenSource(token, token_file)
        if recorder is not None:
            recorder.follow(self._tokens.current)  # a rotated token is blanked out too
        gate = gate_limits(settings)
        self.seats: Seats[Peer] = Seats(gate)
        self._failed = FailedTokens(gate)
        # Paired mods' keys (v1.md "Pairing"), and the open connections of each.
        self.pairing = PairingDesk(PairedKeys(settings.data_path, clock), clock)
        self._by_key: dict[str, set[Peer]] = {}
        self._log = log.get("xtyserver.server")
        self._zone_of = zone_resolver()
        self._accept_logged = -1.0
        local = detect_local_timezone()
        if local is None and not settings.server.default_timezone:
            self._log.warning("timezone.unknown", hint="set server.default_timezone")
        default_zone = ""
        if settings.server.default_timezone:
            default_zone = server_zone(settings.server.default_timezone)
        settings = msgspec.structs.replace(
            settings,
            server=msgspec.structs.replace(settings.server, default_timezone=default_zone),
        )
        routing = model.routing
        self._session_settings = session_settings(
            settings,
            model_configured=model.configured,
            local_timezone=local or "UTC",
            vision=routing.chat.vision or routing.vision.vision,
        )
        self._runtime = runtime_limits(settings)
        self.working = WorkingShell(
            ParkedWork(settings.server.resume_within),
            jobs,
            InjectionLog(injection_log_path(settings.data_path, settings.profile)),
            settings.model.model,
        )
        self.port: int | None = None
        self.addresses: tuple[str, ...] = ()
        self._sessions: weakref.WeakSet[GameAgentSession] = weakref.WeakSet()
        self.connections = Gauge()
        # Every TCP connection the listener accepted and has not lost (dropped at shutdown).
        self._transports: weakref.WeakSet[asyncio.Transport] = weakref.WeakSet()
        self._peer_scopes: set[anyio.CancelScope] = set()
        self.stopping_at: float | None = None
        self.bands = BandHelper()  # its thread is a task of serve()
        self.http = HttpTransport(
            self._run_http,
            check=self._http_headers,
            punish=self._failed.punish,
            proves=self._proves_token,
            open_timeout=settings.server.open_timeout,
            hello_wait=settings.server.hello_timeout + 1.0,
        )
        self.ui = UiHttp(
            memory,
            bind_host=settings.server.host,
            secret=page_secret or secrets.token_urlsafe(32),
            key_ttl=settings.server.page_key_ttl,
            punish=self._failed.punish,
            clock=clock,
            timezone=default_zone or local or "UTC",
        )
        self.ui.pairing = PagePairing(self.pairing, self.revoke_key)
        if player is not None:
            self.ui.settings = PageSettings(
                player,
                lambda s: self.apply_settings(s, env),
                env,
                configured=lambda: self.model.configured,
                embedder=lambda: self.model.embedder,
            )

    @property
    def store(self) -> MemoryStore:
        return self.memory.store

    @property
    def limits(self) -> Limits:
        return self._session_settings.limits

    @property
    def url(self) -> str:
        host = self.settings.server.host
        shown = f"[{host}]" if ":" in host else host
        return f"ws://{shown}:{self.port}{PATH}"

    @property
    def ui_port(self) -> int:
        """The memory page's port (its own listener; README "Memory page")."""
        assert self.ui.port is not None
        return self.ui.port

    @property
    def ui_link(self) -> str:
        """A link that opens the memory page once: each read mints a fresh single-use key.

        Show it only locally (``xtyserver serve`` prints one at start).
        """
        return open_link(self.settings.server.host, self.ui_port, self.ui.mint_key())

    async def apply_settings(
        self, settings: Settings, env: Mapping[str, str] | None = None
    ) -> None:
        """Take changed model settings and the daily budget for the next turn, without a restart.

        The model routes are rebuilt from ``settings`` (e.g.
        :meth:`xtyserver.serve.player_settings.PlayerSettings.effective` after the
        player saved a key); open sessions learn whether a model is configured
        and takes images. A route whose settings did not change keeps its client;
        turns under way finish on the client they started on, which is closed
        when the last of them ends (:meth:`ModelRouter.reroute`).
        """
        routing = resolve(settings.model, settings.models, os.environ if env is None else env)
        await self.model.reroute(routing)
        vision = routing.chat.vision or routing.vision.vision
        configured = self.model.configured
        budget = daily_budget(settings)
        self._session_settings = msgspec.structs.replace(
            self._session_settings, model_configured=configured, vision=vision, daily_budget=budget
        )
        self.jobs.set_budget(budget)
        self.memory.set_trash_window(settings.memory.trash_window)
        for session in list(self._sessions):
            session.model_changed(configured=configured, vision=vision, daily_budget=budget)
        self._log.info("settings.applied", model_configured=configured, vision=vision)

    async def wait_connections(self, at_most: int) -> None:
        """Return once at most ``at_most`` connections are open."""
        await self.connections.wait_at_most(at_most)

    async def serve(
        self,
        sockets: Sequence[socket.socket],
        *,
        task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen on ``sockets`` (already bound, one port) until cancelled.

        ``task_status.started`` gets the URL. Crash recovery of play sessions
        runs only here, once the port is this process's (issue 19: a second
        ``serve`` must not close the running server's sessions).
        """
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        loop.set_exception_handler(self._loop_exception)
        try:
            await self._serve(sockets, task_status)
        finally:
            loop.set_exception_handler(previous)

    def _loop_exception(self, loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        """asyncio's report of an accept error, once per second at most (issue 17 §6).

        Out of file descriptors, asyncio's accept loop reports every failed try
        (about a hundred a second, each with a traceback); one line a second says
        the same. Everything else goes to asyncio's default handler.
        """
        if context.get("message") == "socket.accept() out of system resource":
            now = anyio.current_time()
            if now - self._accept_logged >= 1.0:
                self._accept_logged = now
                error = context.get("exception")
                self._log.warning(
                    "server.accept_failed",
                    error=getattr(error, "strerror", None) or type(error).__name__,
                )
            return
        loop.default_exception_handler(context)

    async def _serve(
        self, sockets: Sequence[socket.socket], task_status: anyio.abc.TaskStatus[str]
    ) -> None:
        srv = self.settings.server
        self.port = int(sockets[0].getsockname()[1])
        self.addresses = tuple(str(sock.getsockname()[0]) for sock in sockets)
        recovered = await self.memory.recover_open_sessions()
        if recovered:
            self._log.info("play.recovered", sessions=recovered)
        servers: list[WsServer] = []
        try:
            async with anyio.create_task_group() as http:
                for sock in sockets:
                    servers.append(await self._listen(sock))
                await http.start(self.http.run)
                self._log.info("server.listening", url=self.url, addresses=list(self.addresses))
                try:
                    async with anyio.create_task_group() as tg:  # the page and the image thread
                        await tg.start(self.bands.run)
                        await tg.start(self.ui.serve, srv.page_port)
                        task_status.started(self.url)
                        await anyio.sleep_forever()
                finally:
                    with anyio.CancelScope(shield=True):
                        await self._close_connections(servers)
                    http.cancel_scope.cancel()
        finally:
            for ws_server in servers:
                ws_server.close()  # idempotent: a start that failed half-way listens no more

    async def _listen(self, sock: socket.socket) -> WsServer:
        """A websockets server on one bound socket (closed by :meth:`_close_connections`).

        Not an ``async with``: its exit awaits ``wait_closed()`` under the
        cancellation that ends the server, and a fresh ``CancelledError`` raised
        there, re-raised by an anyio task group inside an ``AsyncExitStack``, came
        out as its own ``__context__``, which anyio's task teardown then walked
        forever at a full core. The shutdown's waits are bounded instead.
        """
        srv = self.settings.server
        return await websockets.serve(
            self._connection,
            sock=sock,
            process_request=self._process_request,
            # POST /v1/http goes to the HTTP transport, the rest to websockets.
            create_connection=front_connection(
                self.http.accept, srv.open_timeout, self._transports
            ),
            max_size=FRAME_MAX_BYTES,
            max_queue=4,
            write_limit=64 * 1024,
            open_timeout=srv.open_timeout,
            close_timeout=srv.close_timeout,
            # No keepalive pings (v1.md "Deadlines"): the heartbeat deadline
            # closes a silent peer within 15 s, and each idle connection saves
            # the ping task.
            ping_interval=None,
            # No permessage-deflate: frames are small JSON or a base64 screenshot
            # that barely compresses, and deflating one costs the game's PC ~20 ms
            # each way on loopback. A client that offers it gets none.
            compression=None,
            server_header=None,
        )

    async def _close_connections(self, servers: Sequence[WsServer]) -> None:
        """Stop listening and end every connection, within ``server.close_timeout`` and a bit.

        Every connection is asked to close (1001, and ``closed`` for an HTTP
        session); what has not gone after ``close_timeout`` (a peer that never
        reads, never answers a close, never finished its request, or never spoke)
        has its socket dropped, so its session sees the end at once and ends its
        play session at the last heartbeat. A session still running a moment
        after that is cancelled. Call it shielded.
        """
        srv = self.settings.server
        self.stopping_at = anyio.current_time()
        for ws_server in servers:
            ws_server.close(close_connections=True)
        self.http.close_sessions()
        with anyio.move_on_after(min(srv.close_timeout, srv.stop_timeout)):
            await self._all_closed(servers)
        if self.connections.value or any(not t.is_closing() for t in self._transports):
            self._log.info("server.dropping", connections=self.connections.value)
        for transport in list(self._transports):
            transport.abort()
        with anyio.move_on_after(_AFTER_ABORT):
            await self._all_closed(servers)
        cut = bool(self._peer_scopes)
        for scope in list(self._peer_scopes):
            scope.cancel()
        self.http.cancel_sessions()
        with anyio.move_on_after(_AFTER_ABORT):
            await self.connections.wait_at_most(0)
        if cut:  # a session cut short leaves its play session open: end it at its last heartbeat
            with anyio.move_on_after(_AFTER_ABORT):
                closed = await self.memory.recover_open_sessions()
                self._log.info("play.closed_at_stop", sessions=closed)

    def log_stopped(self) -> None:
        """One line once everything is closed: how long the stop took."""
        if self.stopping_at is not None:
            took = anyio.current_time() - self.stopping_at
            self._log.info("server.stopped", seconds=round(took, 3))

    async def _all_closed(self, servers: Sequence[WsServer]) -> None:
        for ws_server in servers:
            await ws_server.wait_closed()
        await self.connections.wait_at_most(0)

    async def _process_request(self, ws: ServerConnection, request: Request) -> Response | None:
        assert self.port is not None
        refusal = check_upgrade(
            request.path,
            list(request.headers.raw_items()),
            bind_host=self.settings.server.host,
            port=self.port,
            allowed_origins=self.settings.server.allowed_origins,
            token=self._tokens.current(),
            connections=self.seats.taken,
            max_connections=self.settings.server.max_connections,
            accepts=self._is_paired_key,
        )
        if refusal is None:
            return None
        if refusal.status == 401:
            await self._failed.punish(_remote(ws))
        self._log.info("upgrade.refused", status=refusal.status, reason=refusal.reason)
        return ws.respond(refusal.status, refusal.reason + "\n")

    async def _connection(self, ws: ServerConnection) -> None:
        assert ws.request is not None
        assert isinstance(ws, BytesConnection)  # create_connection=front_connection(...)
        token = self._tokens.current()
        raw = list(ws.request.headers.raw_items())
        given = bearer(raw)
        by_header = token_matches(given, token) or (
            given is not None and self._key_check(ws)(given)
        )
        # A web page (allowed by server.allowed_origins) never pairs.
        browser = bool(header_values(raw, "Origin"))
        if by_header and not self.seats.take():  # filled since the upgrade was checked
            await ws.close(CLOSE_SERVER_FULL, "too many connections")
            return
        seated = by_header or await self._hello_seats(ws)
        # Nothing reads the handshake's headers after this: an idle connection
        # is a few KiB smaller without them (scripts/bench/idle.py). The request
        # object itself stays: websockets treats a missing one as "not yet received".
        ws.request.headers.clear()
        if ws.response is not None:
            ws.response.headers.clear()
        await self._run_peer(ws, seated=seated, by_header=by_header, may_pair=not browser)

    async def _hello_seats(self, ws: BytesConnection) -> bool:
        """Judge a hello that came with a tokenless connection before it may join the pool.

        A hello proving the token within :data:`HELLO_WITH_CONNECTION` seconds
        seats the connection at once: idle connections filling the pre-auth
        pool cannot keep out a mod that says hello as it connects. Anything
        else (no message yet, another frame, a wrong token) waits in the pool
        as before, the message kept for the session.
        """
        with anyio.move_on_after(HELLO_WITH_CONNECTION):
            with contextlib.suppress(websockets.ConnectionClosed):
                message, text = await ws.first_message()
                if text and self._proves_token(message, ws):
                    return self.seats.take()
        return False

    def _proves_token(self, message: bytes | str, peer: Peer) -> bool:
        """Whether ``message`` is a hello with the right token or a paired mod's key.

        Judged on the event loop: a hello is small, and anything larger is not one.
        """
        if len(message) > SMALL_FRAME_MAX_BYTES:
            return False
        token = hello_token(message)
        if token_matches(token, self._tokens.current()):
            return True
        # A paired key counts the peer as its connection: a revoke closes it (4001).
        return token is not None and self._key_check(peer)(token)

    async def _run_http(self, peer: HttpPeer) -> None:
        seated = peer.proven and self.seats.take()
        await self._run_peer(peer, seated=seated, by_header=False, transport="http")

    def _http_headers(self, headers: list[tuple[str, str]]) -> Refusal | None:
        assert self.port is not None
        return check_headers(
            headers,
            bind_host=self.settings.server.host,
            port=self.port,
            allowed_origins=self.settings.server.allowed_origins,
            token=self._tokens.current(),
            accepts=self._is_paired_key,
        )

    def _is_paired_key(self, key: str) -> bool:
        return self.pairing.keys.check(key) is not None

    def _key_check(self, ws: Peer) -> Callable[[str], bool]:
        """Whether a key is a paired mod's; a match counts ``ws`` as that key's connection."""

        def check(key: str) -> bool:
            record = self.pairing.keys.check(key)
            if record is None:
                return False
            self.pairing.keys.used(record)
            self._by_key.setdefault(record.id, set()).add(ws)
            return True

        return check

    async def revoke_key(self, key_id: str) -> bool:
        """Forget a paired key and close its open connections (4001); False when unknown."""
        if self.pairing.keys.revoke(key_id) is None:
            return False
        peers = self._by_key.pop(key_id, set())
        with anyio.move_on_after(1):
            for peer in peers:
                await peer.close(CLOSE_UNAUTHORIZED, "key revoked")
        for peer in peers:
            if peer.close_code is None:
                peer.transport.abort()
        return True

    async def _run_peer(
        self,
        ws: Peer,
        *,
        seated: bool,
        by_header: bool,
        transport: str = "ws",
        may_pair: bool = True,
    ) -> None:
        """One session over a WebSocket or an HTTP transport session, until it closes.

        A session that holds no seat yet (no header token, and no hello that
        came with the connection proving it) waits in the pre-auth pool until
        its hello proves the token and takes a seat.
        """
        token = self._tokens.current()
        session = GameAgentSession(
            session_id=secrets.token_hex(8),
            settings=self._session_settings,
            token=token,
            authenticated=seated,
            zone_of=self._zone_of,
            now=self.clock.now(),
            paired=self._key_check(ws),
        )
        self._sessions.add(session)
        recorder = None
        if self.recorder is not None:
            recorder = self.recorder.open(
                session.session_id, auth="header" if by_header else "hello"
            )
        connection = Connection(
            ws,
            session,
            memory=self.memory,
            jobs=self.jobs,
            model=self.model,
            meter=self.meter,
            images=self.settings.images,
            clock=self.clock,
            limits=self._runtime,
            recorder=recorder,
            working=self.working,
            bands=self.bands,
            claim_seat=lambda: self._seat(ws),
            on_unauthorized=lambda: self._failed.punish(_remote(ws)),
            pairing=self.pairing.serve if may_pair else None,
        )
        if not seated:
            await self._wait_preauth(ws)

        self.connections.add(1)
        self._log.info("connection.open", session=session.session_id, transport=transport)
        try:
            with anyio.CancelScope() as scope:  # cancelled only by a shutdown past its bound
                self._peer_scopes.add(scope)
                await connection.run()
        finally:
            self._peer_scopes.discard(scope)
            self.connections.add(-1)
            self.seats.leave(ws)
            for peers in self._by_key.values():
                peers.discard(ws)
            if seated or connection.seated:
                self.seats.release()
            self._log.info(
                "connection.close",
                session=session.session_id,
                code=ws.close_code,
                reason=getattr(ws, "close_reason", None) or "",
            )

    async def _wait_preauth(self, ws: Peer) -> None:
        """Put a tokenless connection in the pool, dropping the oldest when it is full."""
        oldest = self.seats.wait(ws)
        if oldest is not None:
            self._log.info("connection.preauth_dropped", waiting=self.seats.waiting)
            with anyio.move_on_after(1):
                await oldest.close(CLOSE_SERVER_FULL, "too many connections without a token")
            oldest.transport.abort()

    def _seat(self, ws: Peer) -> bool:
        """A pre-auth connection's hello proved the token: seat it if one is free."""
        self.seats.leave(ws)
        return self.seats.take()


HELLO_WITH_CONNECTION = 0.5
"""Seconds a tokenless connection's first message is awaited before it joins the pre-auth pool."""
_AFTER_ABORT = 0.5
"""Seconds the sessions get to end once their sockets were dropped (they need no peer)."""


def _remote(ws: Peer | ServerConnection) -> str:
    address = getattr(ws, "remote_address", None)
    return str(address[0]) if isinstance(address, tuple) and address else "?"


@asynccontextmanager
async def serving(
    settings: Settings,
    *,
    token: str,
    clock: Clock,
    record: Path | None = None,
    record_images: bool = False,
    env: Mapping[str, str] | None = None,
    token_file: Path | None = None,
    tighten: bool = False,
    player: PlayerSettings | None = None,
) -> AsyncIterator[Server]:
    """Open the profile's store and the model client, and run a :class:`Server`.

    With ``record``, every connection is written to a JSON-lines file in that
    folder (:mod:`xtyserver.replay.recorder`; screenshots described unless ``record_images``).

    The server listens once this is entered (``server.url`` is set) and stops when
    it is left, within ``server.stop_timeout`` whatever the peers do: connections
    close (each has ``server.close_timeout`` to answer, then its socket is
    dropped), then queued memory jobs (end-of-session summaries) get
    ``memory.drain_timeout`` seconds, or what is left of the bound, then the
    client and the store close. ``env`` is where the routed models' keys are read
    (``[models.*] api_key_env``); None: the process environment.

    Before the store is opened it takes the data folder's lock and binds the
    port (:mod:`xtyserver.serve.instance`): a second server on the same folder
    or a busy port raises :class:`~xtyserver.serve.instance.NotStarted` and
    changes nothing. Once listening it writes ``server.json``; leaving removes it.
    With ``tighten`` (``xtyserver serve``) the data folder is made owner-only
    (:func:`xtyserver.files.tighten_data_dir`) once the lock and the port are held.
    """
    data, srv = settings.data_path, settings.server
    page = _page_url(srv.host, srv.page_port)
    held = hold_instance(data, srv.host, srv.port, ipv6_loopback=srv.ipv6_loopback, page=page)
    with held as sockets:
        if tighten:
            for path in tighten_data_dir(data):
                log.get("xtyserver.server").warning("data_dir.tightened", path=path.name)
        # Written only by the server that holds the lock: `xtyserver ui` reads it.
        page_secret = new_page_secret(data)
        async with _serving(
            settings,
            sockets,
            token=token,
            clock=clock,
            record=record,
            record_images=record_images,
            env=env,
            token_file=token_file,
            player=player,
            page_secret=page_secret,
        ) as server:
            yield server


def _page_url(host: str, port: int) -> str:
    """The memory page's address without a launch key (``xtyserver ui`` mints one)."""
    return open_link(host, port, "").split("#", 1)[0]


def _token_file(settings: Settings) -> str | None:
    """The token file a mod reads, or None when the token came from ``XTY_TOKEN``."""
    path = token_path(settings.data_path)
    return None if settings.token or not path.exists() else str(path)


def _after_listening(glossary: Glossary | GlossaryOnce) -> None:
    """What only frames and turns need, made on a worker thread once the server listens."""
    compile_patterns()
    if isinstance(glossary, GlossaryOnce):
        glossary()


@asynccontextmanager
async def _serving(
    settings: Settings,
    sockets: Sequence[socket.socket],
    *,
    token: str,
    clock: Clock,
    record: Path | None,
    record_images: bool,
    env: Mapping[str, str] | None,
    token_file: Path | None,
    player: PlayerSettings | None = None,
    page_secret: str = "",
) -> AsyncIterator[Server]:
    # A player's own glossary file is checked before anything opens: a bad one stops
    # the start. The packaged files alone are read once listening (GlossaryOnce).
    glossary: Glossary | GlossaryOnce = Glossary()
    if settings.memory.glossary and has_player_files(settings.data_path):
        glossary = load_glossary(settings.data_path)
    elif settings.memory.glossary:
        glossary = GlossaryOnce(partial(load_glossary, settings.data_path))
    store = MemoryStore.open_profile(
        settings.data_path,
        settings.profile,
        clock=clock,
        busy_timeout_ms=settings.memory.busy_timeout_ms,
        trash_window=settings.memory.trash_window,
    )
    try:  # at start; then every 10 minutes (serve/trash_purge.py)
        purged = store.purge_trash()
    except StoreError as exc:  # a locked store must not keep the server from starting
        log.get("xtyserver.memory").warning("store.failed", code=exc.code, effect="PurgeTrash")
    else:
        if purged:
            log.get("xtyserver.memory").info("memory.trash_purged", entries=purged)
    routing = resolve(settings.model, settings.models, os.environ if env is None else env)
    model = ModelRouter(
        routing,
        Scheduler(grace=settings.memory.background_grace),
        local_embedding=settings.memory.enabled and settings.memory.local_embedding,
        provider_embedding=settings.memory.enabled and settings.memory.provider_embedding,
    )
    memory = MemoryService(
        store,
        enabled=settings.memory.enabled,
        soft_cap=settings.memory.soft_cap,
        glossary=glossary,
        search_keys=settings.memory.search_keys,
        spelling=settings.memory.spelling,
        vector_model=(
            model.embedder.model if model.embedder is not None and settings.memory.enabled else None
        ),
    )
    meter = TokenMeter(
        memory,
        clock,
        timezone=server_zone(settings.server.default_timezone),
    )
    jobs = MemoryJobs(
        memory,
        model,
        meter,
        daily_budget(settings),
        queue_size=settings.memory.job_queue,
        enrich=settings.memory.enabled
        and settings.memory.search_keys
        and settings.memory.enrich_keys,
    )
    recorder = None
    if record is not None:
        recorder = Recorder(record, clock=clock, token=token, keep_images=record_images)
    server = Server(
        settings,
        memory=memory,
        jobs=jobs,
        model=model,
        meter=meter,
        token=token,
        clock=clock,
        recorder=recorder,
        token_file=token_file,
        # The page's settings view: the player's stored choices under the rest.
        player=player or PlayerSettings(settings.data_path, env=os.environ if env is None else env),
        env=env,
        page_secret=page_secret,
    )
    try:
        async with anyio.create_task_group() as background:
            background.start_soon(jobs.run)
            background.start_soon(memory.write_touches)
            background.start_soon(meter.write_bills)
            background.start_soon(server.working.write_injections)
            # Whatever the window: the page may raise it from 0 while running.
            background.start_soon(purge_trash_every, memory, settings.memory.trash_purge_every)
            try:
                async with anyio.create_task_group() as listener:
                    await listener.start(server.serve, sockets)
                    # After the listener: importing numpy holds the GIL, and the
                    # listening line need not wait for what only a turn's query needs.
                    background.start_soon(model.warm_embedder)
                    background.start_soon(anyio.to_thread.run_sync, _after_listening, glossary)
                    pid = os.getpid()
                    write_server_file(
                        settings.data_path,
                        ServerFile(
                            url=server.url,
                            port=server.port or 0,
                            addresses=server.addresses,
                            ui_port=server.ui_port,
                            page_url=_page_url(settings.server.host, server.ui_port),
                            token_file=str(token_file) if token_file else _token_file(settings),
                            pid=pid,
                            started_at=now_iso(),
                            version=__version__,
                        ),
                    )
                    try:
                        yield server
                    finally:
                        remove_server_file(settings.data_path, pid)
                    listener.cancel_scope.cancel()
            finally:
                with anyio.CancelScope(shield=True):
                    jobs.close()
                    memory.close_touches()
                    server.working.close_injections()
                    model.scheduler.stopping()  # the connections are closed: no chat follows
                    with anyio.move_on_after(_drain_time(settings, server.stopping_at)):
                        await memory.wait_idle()
                        meter.close()
                        await meter.wait_written()
                        await server.working.wait_written()
                    background.cancel_scope.cancel()
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(_AFTER_ABORT):
            await model.aclose()
        store.close()
        server.log_stopped()


def _drain_time(settings: Settings, stopping_at: float | None) -> float:
    """Seconds queued memory jobs may still take: ``memory.drain_timeout``, within the stop's bound.

    The stop's bound (``server.stop_timeout``) counts from the moment the
    connections were asked to close; a second is kept for closing the model
    clients and the store.
    """
    drain = settings.memory.drain_timeout
    if stopping_at is None:
        return drain
    left = settings.server.stop_timeout - (anyio.current_time() - stopping_at) - 2 * _AFTER_ABORT
    return max(0.0, min(drain, left))
