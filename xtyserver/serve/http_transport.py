"""protocol/v1 over plain HTTP: ``POST /v1/http`` for mods without sockets (v1.md "HTTP transport").

A shell. Don't Starve Together's mod Lua reaches local services only through
``TheSim:QueryServer(url, callback, method, body)``: one HTTP request with a
body, no custom headers. Each call carries client frames and long-polls for
the server frames queued since the last call.

The session behind a handle is the very one a WebSocket gets: a
:class:`~xtyserver.session.machine.GameAgentSession` run by the same
:class:`~xtyserver.serve.connection.Connection` runtime, through
:class:`HttpPeer`, which looks to the runtime like a WebSocket: frames posted
by calls are its incoming messages, frames the writer sends wait in its outbox
for the next call. So budgets, rate limits, the hello and heartbeat deadlines,
save switches and privacy are the WebSocket's, and the session dies (4003)
when no ``heartbeat`` frame comes, whatever the polls do.

The listener is the WebSocket server's: :func:`front_connection` is the
``create_connection`` class given to ``websockets.serve``; it reads the first
bytes of each TCP connection and hands a ``POST /v1/http`` request to
:class:`HttpTransport` (h11), anything else to websockets, unchanged. The
memory page's HTTP (:mod:`xtyserver.manage`) is not touched.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
from collections import deque
from collections.abc import (
    AsyncIterator,
    Awaitable,
    Callable,
    Coroutine,
    MutableSet,
    Sequence,
)
from typing import Any

import anyio
import anyio.abc
import h11
from websockets.asyncio.server import ServerConnection

from xtyserver import log
from xtyserver.errors import PeerError
from xtyserver.protocol.http_body import Call, decode_call, encode_answer
from xtyserver.protocol.limits import FRAME_MAX_BYTES
from xtyserver.protocol.upgrade import HTTP_PATH, Refusal
from xtyserver.serve.connection import THREAD_DECODE_BYTES
from xtyserver.serve.text_frames import BytesConnection, Message

REQUEST_LINE = b"POST " + HTTP_PATH.encode("ascii")
BODY_MAX_BYTES = FRAME_MAX_BYTES + 64 * 1024
"""A body holds at most one screenshot frame's worth (v1.md "HTTP transport")."""
OUTBOX_FRAMES = 256
"""Server frames one session keeps for its next call; then the writer waits (a slow consumer)."""
LINGER_SECONDS = 60.0
"""A closed session's last frames and close code wait this long for a call; then 404."""
HEAD_MAX_BYTES = 16 * 1024


class HttpPeer:
    """One HTTP session, as the connection runtime sees a WebSocket.

    The runtime iterates it for incoming messages, ``send``s frames, ``close``s it
    and reads ``close_code``; ``transport.abort()`` drops it (a slow consumer).
    """

    def __init__(
        self,
        handle: str,
        *,
        remote: tuple[str, int] | None = None,
        outbox_frames: int = OUTBOX_FRAMES,
    ) -> None:
        self.handle = handle
        self.remote_address = remote
        self.transport = self
        self.close_code: int | None = None
        self.close_reason: str | None = None
        # The first call's hello proved the token: the session skips the pre-auth pool.
        self.proven = False
        self.finished = anyio.Event()
        self._in_send, self._in = anyio.create_memory_object_stream[str](64)
        self._out: deque[bytes] = deque()
        self._max = outbox_frames
        self._wake = anyio.Event()
        self._generation = 0

    # -- the runtime's side ---------------------------------------------------------------------

    async def messages(self) -> AsyncIterator[Message]:
        """The frames calls posted, in order, as text messages."""
        async with self._in:
            async for message in self._in:
                yield message.encode("utf-8", "surrogatepass"), True

    async def send(self, message: bytes | str, *, text: bool | None = True) -> None:
        """Queue a server frame for the next call; waits while the outbox is full."""
        data = message.encode("utf-8") if isinstance(message, str) else message
        while len(self._out) >= self._max and self.close_code is None:
            await self._changed()
        if self.close_code is None:
            self._out.append(data)
            self._notify()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        self._closed(code, reason)

    def abort(self) -> None:
        self._closed(1006, "")

    def _closed(self, code: int, reason: str) -> None:
        if self.close_code is None:
            self.close_code, self.close_reason = code, reason
            self._in_send.close()
            self._notify()

    # -- the calls' side ------------------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self.close_code is not None

    async def post(self, frames: Sequence[str]) -> None:
        """Hand a call's frames to the runtime, in order."""
        for frame in frames:
            if self.closed:
                return
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await self._in_send.send(frame)

    async def collect(self, wait: float) -> tuple[list[bytes], tuple[int, str] | None]:
        """The frames queued since the last call, waiting up to ``wait`` s for the first.

        A newer call makes this one return at once (at most one call waits). The
        close code comes with the last frames of a closed session.
        """
        self._generation += 1
        mine = self._generation
        self._notify()
        with anyio.move_on_after(wait):
            while not self._out and not self.closed and self._generation == mine:
                await self._changed()
        frames = list(self._out)
        self._out.clear()
        self._notify()
        closed = None
        if self.close_code is not None:
            closed = (self.close_code, self.close_reason or "")
        return frames, closed

    async def _changed(self) -> None:
        await self._wake.wait()

    def _notify(self) -> None:
        self._wake.set()
        self._wake = anyio.Event()


class HttpTransport:
    """The ``POST /v1/http`` endpoint: its sessions, its calls, their task group.

    Args:
        run_peer: Runs one session over a peer until it closes (the server's, shared
            with the WebSocket).
        check: The header checks of the upgrade guard (Host, Origin, token).
        punish: Awaited with the remote address before a wrong-token answer (the guess delay).
        proves: Whether a client frame is an ``adapter.hello`` with the right token (or a
            paired key, which counts the peer as that key's connection).
        open_timeout: Seconds a request's head and body may take to arrive.
        hello_wait: Seconds the first call waits for ``server.hello`` (or its refusal).
    """

    def __init__(
        self,
        run_peer: Callable[[HttpPeer], Awaitable[None]],
        *,
        check: Callable[[list[tuple[str, str]]], Refusal | None],
        punish: Callable[[str], Awaitable[None]],
        proves: Callable[[str, HttpPeer], bool],
        open_timeout: float,
        hello_wait: float,
    ) -> None:
        self._run_peer = run_peer
        self._check = check
        self._punish = punish
        self._proves = proves
        self.open_timeout = open_timeout
        self._hello_wait = hello_wait
        self._sessions: dict[str, HttpPeer] = {}
        self._decoding = anyio.CapacityLimiter(1)
        self._scopes: dict[str, anyio.CancelScope] = {}
        self._protocols: set[_HttpProtocol] = set()
        self._tg: anyio.abc.TaskGroup | None = None
        self._log = log.get("xtyserver.http")

    async def run(
        self, *, task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED
    ) -> None:
        """Own every session and call until cancelled (the server's lifetime)."""
        try:
            async with anyio.create_task_group() as tg:
                self._tg = tg
                task_status.started()
                await anyio.sleep_forever()
        finally:
            self._tg = None
            for protocol in list(self._protocols):
                protocol.abort()

    def close_sessions(self) -> None:
        """Server shutdown: every session ends as a WebSocket's does (1001), in its own time."""
        for peer in list(self._sessions.values()):
            peer._closed(1001, "server shutdown")

    def cancel_sessions(self) -> None:
        """Server shutdown, once the sessions had their time: cancel what is left."""
        for scope in list(self._scopes.values()):
            scope.cancel()

    @property
    def sessions(self) -> int:
        return len(self._sessions)

    def accept(self, transport: asyncio.Transport, head: bytes) -> None:
        """Take over a TCP connection whose first bytes are ``head`` (``POST /v1/http...``)."""
        if self._tg is None:
            transport.abort()
            return
        protocol = _HttpProtocol(self, transport)
        transport.set_protocol(protocol)
        protocol.data_received(head)

    def spawn(self, fn: Callable[..., Coroutine[Any, Any, None]], *args: Any) -> None:
        if self._tg is not None:
            self._tg.start_soon(fn, *args)

    # -- one call -------------------------------------------------------------------------------

    async def handle(
        self,
        method: str,
        target: str,
        headers: list[tuple[str, str]],
        body: bytes,
        remote: tuple[str, int] | None = None,
    ) -> tuple[int, bytes, str]:
        """Answer one request: (status, body, content type)."""
        if target.split("?", 1)[0] != HTTP_PATH:
            return 404, b"not found; the endpoint is /v1/http\n", _TEXT
        if method != "POST":
            return 405, b"use POST\n", _TEXT
        refusal = self._check(headers)
        if refusal is not None:
            if refusal.status == 401:
                await self._punish(remote[0] if remote else "?")
            self._log.info("http.refused", status=refusal.status, reason=refusal.reason)
            return refusal.status, refusal.reason.encode() + b"\n", _TEXT
        try:
            call = await self._decode(body)
        except PeerError as exc:
            self._log.info("http.bad_body", code=exc.code, fields=list(exc.fields)[:20])
            return 400, _error(exc.code, exc.message, list(exc.fields)), _JSON
        wait = call.wait_ms / 1000
        if call.session is None:
            # A new session is a tokenless connection: it waits in the server's
            # pre-auth pool until its hello proves the token (v1.md "Upgrade").
            peer = HttpPeer(secrets.token_urlsafe(24), remote=remote)
            peer.proven = bool(call.frames) and self._proves(call.frames[0], peer)
            self._sessions[peer.handle] = peer
            self.spawn(self._session, peer)
            if call.frames:  # the first answer holds server.hello or the refusal
                wait = max(wait, self._hello_wait)
        else:
            found = self._sessions.get(call.session)
            if found is None:
                message = (
                    "no such session (it ended or never was); send adapter.hello with session null"
                )
                return 404, _error("unknown_session", message, ["session"]), _JSON
            peer = found
        await peer.post(call.frames)
        frames, closed = await peer.collect(wait)
        if closed is not None:
            self._sessions.pop(peer.handle, None)
        return 200, encode_answer(peer.handle, frames, closed), _JSON

    async def _decode(self, body: bytes) -> Call:
        """Decode a body; a large one on a worker thread, one at a time, off the event loop.

        Anyone can post a body before the token is checked (it is in the hello
        inside), so a large one must not hold the other adapters' frames back;
        one decode at a time bounds the memory of many.
        """
        if len(body) <= THREAD_DECODE_BYTES:
            return decode_call(body)
        return await anyio.to_thread.run_sync(decode_call, body, limiter=self._decoding)

    async def _session(self, peer: HttpPeer) -> None:
        # Shielded: at shutdown the session ends as a WebSocket's does, after
        # close_sessions(), and only cancel_sessions() cuts it short.
        with anyio.CancelScope(shield=True) as scope:
            self._scopes[peer.handle] = scope
            try:
                await self._run_peer(peer)
            finally:
                del self._scopes[peer.handle]
                peer.abort()
                peer.finished.set()
        # The last frames and the close code wait a while for a call to fetch them.
        await anyio.sleep(LINGER_SECONDS)
        if self._sessions.get(peer.handle) is peer:
            del self._sessions[peer.handle]


_TEXT = "text/plain; charset=utf-8"
_JSON = "application/json"


def _error(code: str, message: str, fields: list[str]) -> bytes:
    value: dict[str, Any] = {"type": "error", "code": code, "message": message}
    if fields:
        value["fields"] = fields
    return json.dumps(value, ensure_ascii=False).encode("utf-8")


class _HttpProtocol(asyncio.Protocol):
    """One HTTP/1.1 connection of ``POST /v1/http`` (h11): one request, one answer, close."""

    def __init__(self, owner: HttpTransport, transport: asyncio.Transport) -> None:
        self._owner = owner
        self._transport = transport
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=HEAD_MAX_BYTES)
        self._request: h11.Request | None = None
        self._body = bytearray()
        self._scope = anyio.CancelScope()
        self._started = False
        self._timer = asyncio.get_running_loop().call_later(owner.open_timeout, self.abort)
        owner._protocols.add(self)

    def abort(self) -> None:
        self._transport.abort()

    def data_received(self, data: bytes) -> None:
        if self._started:
            return  # one request per connection; ignore what follows
        self._h11.receive_data(data)
        try:
            while True:
                event = self._h11.next_event()
                if event is h11.NEED_DATA or event is h11.PAUSED:
                    return
                if isinstance(event, h11.Request):
                    self._request = event
                    length = dict(event.headers).get(b"content-length")
                    if length is not None and length.isdigit() and int(length) > BODY_MAX_BYTES:
                        self._answer(413, b"body too large\n", _TEXT)
                        return
                elif isinstance(event, h11.Data):
                    self._body += event.data
                    if len(self._body) > BODY_MAX_BYTES:
                        self._answer(413, b"body too large\n", _TEXT)
                        return
                elif isinstance(event, h11.EndOfMessage):
                    self._started = True
                    self._timer.cancel()
                    self._owner.spawn(self._respond)
                    return
        except h11.ProtocolError:
            self._answer(400, b"bad HTTP request\n", _TEXT)

    async def _respond(self) -> None:
        request = self._request
        assert request is not None
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers]
        with self._scope:
            peer = self._transport.get_extra_info("peername")
            status, body, kind = await self._owner.handle(
                request.method.decode("ascii", "replace"),
                request.target.decode("ascii", "replace"),
                headers,
                bytes(self._body),
                tuple(peer[:2]) if isinstance(peer, tuple) else None,
            )
            self._answer(status, body, kind)

    def _answer(self, status: int, body: bytes, kind: str) -> None:
        self._started = True
        self._timer.cancel()
        if self._transport.is_closing():
            return
        try:
            if self._h11.their_state is h11.ERROR or self._h11.our_state is not h11.SEND_RESPONSE:
                self._h11 = h11.Connection(h11.SERVER)  # answer a broken request all the same
                self._transport.write(
                    f"HTTP/1.1 {status} {_PHRASES.get(status, '')}\r\nContent-Type: {kind}\r\n"
                    f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
            else:
                headers = [
                    ("Content-Type", kind),
                    ("Content-Length", str(len(body))),
                    ("Connection", "close"),
                    ("Cache-Control", "no-store"),
                ]
                out = self._h11.send(h11.Response(status_code=status, headers=headers))
                out = (out or b"") + (self._h11.send(h11.Data(data=body)) or b"")
                out += self._h11.send(h11.EndOfMessage()) or b""
                self._transport.write(out)
        except h11.LocalProtocolError:
            pass
        self._transport.close()

    def connection_lost(self, exc: Exception | None) -> None:
        self._timer.cancel()
        # A caller that hung up mid-poll takes nothing: its frames wait for the next call.
        self._scope.cancel()
        self._owner._protocols.discard(self)


_PHRASES = {400: "Bad Request", 413: "Content Too Large"}


def front_connection(
    accept: Callable[[asyncio.Transport, bytes], None],
    open_timeout: float,
    transports: MutableSet[asyncio.Transport],
) -> type[ServerConnection]:
    """A ``ServerConnection`` class that hands ``POST /v1/http`` requests to ``accept``.

    It waits for the request line's first bytes before websockets sees the
    connection: a request for ``/v1/http`` goes to ``accept`` with the bytes
    read so far; anything else goes on to websockets, unchanged, its messages
    received as bytes (:class:`~xtyserver.serve.text_frames.BytesConnection`).
    Every accepted TCP connection is added to ``transports`` (a weak set: the
    server drops whatever is left of it at shutdown).
    """

    class FrontConnection(BytesConnection):
        _sniffing = True
        _head = b""
        _front: asyncio.Transport
        _timer: asyncio.TimerHandle

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            assert isinstance(transport, asyncio.Transport)
            self._front = transport
            transports.add(transport)
            loop = asyncio.get_running_loop()
            self._timer = loop.call_later(open_timeout, transport.abort)

        def data_received(self, data: bytes) -> None:
            if not self._sniffing:
                super().data_received(data)
                return
            head = self._head + data
            if len(head) <= len(REQUEST_LINE) and REQUEST_LINE.startswith(head):
                self._head = head  # not enough to tell yet
                return
            self._sniffing = False
            self._timer.cancel()
            after = head[len(REQUEST_LINE) : len(REQUEST_LINE) + 1]
            if head.startswith(REQUEST_LINE) and after in (b" ", b"?"):
                accept(self._front, head)
                return
            super().connection_made(self._front)
            super().data_received(head)

        def eof_received(self) -> None:
            if not self._sniffing:
                super().eof_received()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._sniffing:
                self._timer.cancel()
                return
            super().connection_lost(exc)

    return FrontConnection
