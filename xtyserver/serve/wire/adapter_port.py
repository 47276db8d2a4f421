"""The adapter port: its listener, what each request becomes, and its bounded shutdown.

A shell (v1.md "Transport", "Upgrade", "HTTP transport"). h11 reads each request
head once; ``POST /v1/http`` goes to :mod:`xtyserver.serve.http_transport`,
anything else is an upgrade judged by :func:`xtyserver.protocol.upgrade.check_upgrade`.
Both kinds of session run in :mod:`xtyserver.serve.wire.sessions`.
"""

from __future__ import annotations

import socket
from collections.abc import Sequence
from dataclasses import dataclass

import anyio
import anyio.abc
import h11
from websockets.frames import CloseCode
from websockets.server import ServerProtocol

from xtyserver import log
from xtyserver.protocol.upgrade import (
    HTTP_PATH,
    PATH,
    Refusal,
    bearer,
    check_headers,
    check_upgrade,
    header_values,
)
from xtyserver.serve.http_transport import HttpPeer, HttpTransport, broken_answer
from xtyserver.serve.on_demand import Gauge
from xtyserver.serve.wire.http import DISCONNECTED, BadRequest, HttpStream
from xtyserver.serve.wire.limits import WireLimits
from xtyserver.serve.wire.listen import accept_forever
from xtyserver.serve.wire.sessions import Sessions
from xtyserver.serve.wire.websocket import WsPeer, encode_response, handshake, raw_response
from xtyserver.session.machine import CLOSE_SERVER_FULL
from xtyserver.token import matches as token_matches

HELLO_WITH_CONNECTION = 0.5
"""Seconds a tokenless connection's first message is awaited before it joins the pre-auth pool."""
AFTER_ABORT = 0.5
"""Seconds the sessions get to end once their sockets were dropped (they need no peer)."""


@dataclass(frozen=True)
class Gate:
    """Who may connect: the bind and the allowed web origins (``[server]``)."""

    host: str
    allowed_origins: tuple[str, ...]


class AdapterPort:
    """The adapter port's listener and every session on it.

    Args:
        gate: The bind host and the allowed web origins.
        wire: The transport limits.
        sessions: Every session, and what they share.
        hello_wait: Seconds an HTTP session's first call waits for ``server.hello``.
    """

    def __init__(
        self, gate: Gate, wire: WireLimits, sessions: Sessions, *, hello_wait: float
    ) -> None:
        self.gate = gate
        self.wire = wire
        self.sessions = sessions
        self.seats = sessions.seats
        self.connections = sessions.connections
        self.port: int | None = None
        self.addresses: tuple[str, ...] = ()
        self.stopping_at: float | None = None
        self.http = HttpTransport(
            self._run_http,
            check=self._http_headers,
            punish=sessions.failed.punish,
            proves=sessions.proves_token,
            hello_wait=hello_wait,
            body_bytes=wire.body_bytes,
        )
        self._log = log.get("xtyserver.server")
        # Every accepted TCP connection, and its WebSocket once upgraded.
        self._sockets: dict[anyio.abc.SocketStream, WsPeer | None] = {}
        self._open_sockets = Gauge()
        self._conns: anyio.abc.TaskGroup | None = None
        self._stopped = anyio.Event()
        self._stopping = False

    @property
    def url(self) -> str:
        host = self.gate.host
        shown = f"[{host}]" if ":" in host else host
        return f"ws://{shown}:{self.port}{PATH}"

    # -- listening -----------------------------------------------------------------------------

    async def serve(
        self,
        sockets: Sequence[socket.socket],
        *,
        task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen on ``sockets`` (already bound, one port) until cancelled, then shut down.

        Play sessions are recovered only here, once the port is this process's
        (a second ``serve`` must not close the running server's sessions).
        """
        self.port = int(sockets[0].getsockname()[1])
        self.addresses = tuple(str(sock.getsockname()[0]) for sock in sockets)
        recovered = await self.sessions.services.memory.recover_open_sessions()
        if recovered:
            self._log.info("play.recovered", sessions=recovered)
        listeners = [await anyio.abc.SocketListener.from_socket(sock) for sock in sockets]
        async with anyio.create_task_group() as tg:
            await tg.start(self.http.run)
            await tg.start(self._own_connections)
            conns = self._conns
            assert conns is not None
            try:
                async with anyio.create_task_group() as accepting:
                    for listener in listeners:
                        accepting.start_soon(
                            accept_forever,
                            listener,
                            self._socket,
                            conns,
                            self._log,
                            "server.accept_failed",
                        )
                    self._log.info("server.listening", url=self.url, addresses=list(self.addresses))
                    task_status.started(self.url)
                    await anyio.sleep_forever()
            finally:
                with anyio.CancelScope(shield=True):
                    for listener in listeners:
                        await listener.aclose()
                    await self._close_connections()
                self._stopped.set()
                tg.cancel_scope.cancel()

    async def _own_connections(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Own every accepted connection's task until the stop has ended them.

        Shielded: at a stop the connections end in the stop's own time
        (:meth:`_close_connections`), not when the server's task group is cancelled.
        """
        with anyio.CancelScope(shield=True):
            async with anyio.create_task_group() as conns:
                self._conns = conns
                task_status.started()
                await self._stopped.wait()
                conns.cancel_scope.cancel()

    def _drop(self, stream: anyio.abc.SocketStream) -> None:
        """Close ``stream`` now (in a task: closing is a coroutine); its waits end at once."""
        assert self._conns is not None
        self._conns.start_soon(stream.aclose)

    async def _socket(self, stream: anyio.abc.SocketStream) -> None:
        """One accepted TCP connection, until it closes."""
        self._sockets[stream] = None
        self._open_sockets.add(1)
        try:
            async with stream:
                opened = await self._route(stream)
                if opened is not None:
                    await self._websocket(stream, *opened)
        except DISCONNECTED:
            pass  # dropped, or the peer went away while answered
        except Exception as exc:  # a bug of one connection must not end the others
            self._log.error("connection.failed", error=type(exc).__name__, exc_info=exc)
        finally:
            del self._sockets[stream]
            self._open_sockets.add(-1)

    async def _route(self, stream: anyio.abc.SocketStream) -> _Opened | None:
        """Read the request head; answer an HTTP call, or open the WebSocket (returned)."""
        remote = _remote_of(stream)
        http = HttpStream(stream, head_bytes=self.wire.head_bytes)
        call: tuple[h11.Request, bytes] | None = None
        opened = None
        with anyio.move_on_after(self.wire.open_timeout):
            try:
                request = await http.read_head()
            except BadRequest as exc:
                await stream.send(self._unreadable(http, exc))
                return None
            if request is None:
                return None
            if request.method == b"POST" and request.target.split(b"?", 1)[0] == _HTTP_PATH:
                body = await self.http.read_call(http, request)
                call = None if body is None else (request, body)
            else:
                opened = await self._upgrade(http, request, remote)
        if call is not None:
            await self.http.answer_call(http, *call, remote)
        return opened  # None: answered, refused, or too slow

    async def _websocket(
        self, stream: anyio.abc.SocketStream, protocol: ServerProtocol, first: bytes, asked: _Asked
    ) -> None:
        ws = WsPeer(
            stream,
            protocol,
            first=first,
            remote=_remote_of(stream),
            close_timeout=self.wire.close_timeout,
            drop=lambda: self._drop(stream),
        )
        self._sockets[stream] = ws
        try:
            await self._connection(ws, *asked)
        except Exception:
            if ws.open:
                await ws.close(CloseCode.INTERNAL_ERROR)
            raise
        if ws.open:
            await ws.close()

    def _unreadable(self, http: HttpStream, exc: BadRequest) -> bytes:
        """The answer to a head h11 refused: a missing or repeated Host is a wrong one."""
        if http.start.startswith(_HTTP_PATH_LINE):
            return broken_answer(400, b"bad HTTP request\n")
        refusal = Refusal(exc.status, "bad HTTP request")
        if "Host" in exc.message:
            refusal = Refusal(403, "host not allowed")
        self._log.info("upgrade.refused", status=refusal.status, reason=refusal.reason)
        return raw_response(ServerProtocol().reject(refusal.status, refusal.reason + "\n"))

    async def _upgrade(
        self, http: HttpStream, request: h11.Request, remote: tuple[str, int] | None
    ) -> _Opened | None:
        """Judge and answer an upgrade request: the open protocol, or None (answered)."""
        assert self.port is not None
        raw = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers.raw_items()]
        refusal = check_upgrade(
            request.target.decode("ascii", "surrogateescape"),
            raw,
            bind_host=self.gate.host,
            port=self.port,
            allowed_origins=self.gate.allowed_origins,
            token=self.sessions.tokens.current(),
            connections=self.seats.taken,
            max_connections=self.sessions.max_connections,
            accepts=self.sessions.is_paired_key,
        )
        if refusal is None and self._stopping:
            refusal = Refusal(503, "Server is shutting down.")
        if refusal is not None:
            if refusal.status == 401:
                await self.sessions.failed.punish(remote[0] if remote else "?")
            self._log.info("upgrade.refused", status=refusal.status, reason=refusal.reason)
            refuse = ServerProtocol().reject(refusal.status, refusal.reason + "\n")
            await http.stream.send(encode_response(http, refuse))
            return None
        opened = await handshake(http, request, max_size=self.wire.frame_bytes)
        # Only what the session needs of the head is kept: an idle connection is smaller.
        return (
            None if opened is None else (*opened, (bearer(raw), bool(header_values(raw, "Origin"))))
        )

    # -- one WebSocket -------------------------------------------------------------------------

    async def _connection(self, ws: WsPeer, given: str | None, browser: bool) -> None:
        token = self.sessions.tokens.current()
        by_header = token_matches(given, token) or (
            given is not None and self.sessions.key_check(ws)(given)
        )
        if by_header and not self.seats.take():  # filled since the upgrade was checked
            await ws.close(CLOSE_SERVER_FULL, "too many connections")
            return
        seated = by_header or await self._hello_seats(ws)
        # A web page (allowed by server.allowed_origins) never pairs.
        await self.sessions.run(ws, seated=seated, by_header=by_header, may_pair=not browser)

    async def _hello_seats(self, ws: WsPeer) -> bool:
        """Judge a hello that came with a tokenless connection before it may join the pool.

        A hello proving the token within :data:`HELLO_WITH_CONNECTION` seconds
        takes a seat at once, so idle connections filling the pool cannot keep a
        mod out; anything else waits in the pool, the message kept for the session.
        """
        with anyio.move_on_after(HELLO_WITH_CONNECTION):
            first = await ws.first_message()
            if first is not None and first[1] and self.sessions.proves_token(first[0], ws):
                return self.seats.take()
        return False

    async def _run_http(self, peer: HttpPeer) -> None:
        seated = peer.proven and self.seats.take()
        await self.sessions.run(peer, seated=seated, by_header=False, transport="http")

    def _http_headers(self, headers: list[tuple[str, str]]) -> Refusal | None:
        assert self.port is not None
        return check_headers(
            headers,
            bind_host=self.gate.host,
            port=self.port,
            allowed_origins=self.gate.allowed_origins,
            token=self.sessions.tokens.current(),
            accepts=self.sessions.is_paired_key,
        )

    # -- the stop ------------------------------------------------------------------------------

    async def _close_connections(self) -> None:
        """End every connection, within ``close_timeout`` and a bit (the listeners are closed).

        Every connection is asked to close (1001); what has not gone after
        ``close_timeout`` has its socket dropped, and a session still running a
        moment after that is cancelled. Call it shielded.
        """
        self.stopping_at = anyio.current_time()
        self._stopping = True
        self.http.close_sessions()
        with anyio.move_on_after(min(self.wire.close_timeout, self.wire.stop_timeout)):
            async with anyio.create_task_group() as closing:
                for ws in list(self._sockets.values()):
                    if ws is not None and ws.open:
                        closing.start_soon(ws.close, 1001, "")
                await self._all_closed()
        if self.connections.value or self._sockets:
            self._log.info("server.dropping", connections=self.connections.value)
        for stream, ws in list(self._sockets.items()):
            if ws is None:
                self._drop(stream)  # a request still coming, or an HTTP call waiting
            else:
                ws.abort()
        with anyio.move_on_after(AFTER_ABORT):
            await self._all_closed()
        cut = bool(self.sessions.scopes)
        for scope in self.sessions.scopes:
            scope.cancel()
        self.http.cancel_sessions()
        with anyio.move_on_after(AFTER_ABORT):
            await self.connections.wait_at_most(0)
        if cut:  # a session cut short leaves its play session open: end it at its last heartbeat
            with anyio.move_on_after(AFTER_ABORT):
                closed = await self.sessions.services.memory.recover_open_sessions()
                self._log.info("play.closed_at_stop", sessions=closed)

    async def _all_closed(self) -> None:
        await self._open_sockets.wait_at_most(0)
        await self.connections.wait_at_most(0)


_Asked = tuple[str | None, bool]
"""What an upgrade's head asked: its bearer token, and whether a web page sent it (Origin)."""
_Opened = tuple[ServerProtocol, bytes, _Asked]
"""An accepted upgrade: the open protocol, the bytes after the head, what the head asked."""
_HTTP_PATH = HTTP_PATH.encode("ascii")
_HTTP_PATH_LINE = b"POST " + _HTTP_PATH


def _remote_of(stream: anyio.abc.SocketStream) -> tuple[str, int] | None:
    address = stream.extra(anyio.abc.SocketAttribute.remote_address, None)
    return (str(address[0]), int(address[1])) if isinstance(address, tuple) else None
