"""protocol/v1 over plain HTTP: ``POST /v1/http`` for mods without sockets (v1.md "HTTP transport").

A shell. Don't Starve Together's mod Lua has only ``TheSim:QueryServer``: one
request with a body, no custom headers. Each call carries client frames and
long-polls for the server frames queued since the last call. :class:`HttpPeer`
looks to the :class:`~xtyserver.serve.connection.Connection` like a WebSocket,
so everything but the transport is the WebSocket's, and the session dies (4003)
when no ``heartbeat`` frame comes, whatever the polls do.
"""

from __future__ import annotations

import contextlib
import json
import secrets
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any

import anyio
import anyio.abc
import h11

from xtyserver import log
from xtyserver.errors import PeerError
from xtyserver.protocol.http_body import Call, decode_call, encode_answer
from xtyserver.protocol.limits import FRAME_MAX_BYTES
from xtyserver.protocol.upgrade import Refusal
from xtyserver.serve.connection import THREAD_DECODE_BYTES
from xtyserver.serve.text_frames import Message
from xtyserver.serve.wire.http import BadRequest, HttpStream

BODY_MAX_BYTES = FRAME_MAX_BYTES + 64 * 1024
"""A body holds at most one screenshot frame's worth (v1.md "HTTP transport")."""
OUTBOX_FRAMES = 256
"""Server frames one session keeps for its next call; then the writer waits (a slow consumer)."""
LINGER_SECONDS = 60.0
"""A closed session's last frames and close code wait this long for a call; then 404."""


class HttpPeer:
    """One HTTP session, as the connection runtime sees a WebSocket (its ``Peer``)."""

    def __init__(self, handle: str, *, remote: tuple[str, int] | None = None) -> None:
        self.handle = handle
        self.remote_address = remote
        self.transport = self
        self.close_code: int | None = None
        self.close_reason: str | None = None
        # The first call's hello proved the token: the session skips the pre-auth pool.
        self.proven = False
        self._in_send, self._in = anyio.create_memory_object_stream[str](64)
        self._out: deque[bytes] = deque()
        self._wake = anyio.Event()
        self._generation = 0

    # -- the runtime's side ---------------------------------------------------------------------

    async def messages(self) -> AsyncIterator[Message]:
        """The frames calls posted, in order, as text messages."""
        async with self._in:
            async for message in self._in:
                yield message.encode("utf-8", "surrogatepass"), True

    async def send(self, message: bytes) -> None:
        """Queue a server frame for the next call; waits while the outbox is full."""
        while len(self._out) >= OUTBOX_FRAMES and self.close_code is None:
            await self._wake.wait()
        if self.close_code is None:
            self._out.append(message)
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
                await self._wake.wait()
        frames = list(self._out)
        self._out.clear()
        self._notify()
        closed = None if self.close_code is None else (self.close_code, self.close_reason or "")
        return frames, closed

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
        hello_wait: Seconds the first call waits for ``server.hello`` (or its refusal).
        body_bytes: The largest body.
    """

    def __init__(
        self,
        run_peer: Callable[[HttpPeer], Awaitable[None]],
        *,
        check: Callable[[list[tuple[str, str]]], Refusal | None],
        punish: Callable[[str], Awaitable[None]],
        proves: Callable[[str, HttpPeer], bool],
        hello_wait: float,
        body_bytes: int = BODY_MAX_BYTES,
    ) -> None:
        self._run_peer = run_peer
        self._check = check
        self._punish = punish
        self._proves = proves
        self._hello_wait = hello_wait
        self._body_bytes = body_bytes
        self._sessions: dict[str, HttpPeer] = {}
        self._decoding = anyio.CapacityLimiter(1)
        self._scopes: dict[str, anyio.CancelScope] = {}
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

    def close_sessions(self) -> None:
        """Server shutdown: every session ends as a WebSocket's does (1001), in its own time."""
        for peer in list(self._sessions.values()):
            peer._closed(1001, "server shutdown")

    def cancel_sessions(self) -> None:
        """Server shutdown, once the sessions had their time: cancel what is left."""
        for scope in list(self._scopes.values()):
            scope.cancel()

    async def read_call(self, http: HttpStream, request: h11.Request) -> bytes | None:
        """A call's body; None when it was refused (answered: too large, not HTTP)."""
        try:
            return await http.read_body(request, self._body_bytes)
        except BadRequest as exc:
            large = exc.status == 413
            said = b"body too large\n" if large else b"bad HTTP request\n"
            await http.stream.send(_answer(http, 413 if large else 400, said, _TEXT))
            return None

    async def answer_call(
        self,
        http: HttpStream,
        request: h11.Request,
        body: bytes,
        remote: tuple[str, int] | None,
    ) -> None:
        """Answer a call; a caller that hangs up mid-poll takes nothing (the frames wait)."""
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers]

        async def answer() -> None:
            status, out, kind = await self.handle(headers, body, remote)
            await http.stream.send(_answer(http, status, out, kind))

        await http.unless_hung_up(answer, keep=self._body_bytes)

    # -- one call -------------------------------------------------------------------------------

    async def handle(
        self, headers: list[tuple[str, str]], body: bytes, remote: tuple[str, int] | None
    ) -> tuple[int, bytes, str]:
        """Answer one ``POST /v1/http`` (the port routes only those here): (status, body, type)."""
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
            # A new session waits in the pre-auth pool until its hello proves the token.
            peer = HttpPeer(secrets.token_urlsafe(24), remote=remote)
            peer.proven = bool(call.frames) and self._proves(call.frames[0], peer)
            self._sessions[peer.handle] = peer
            if self._tg is not None:
                self._tg.start_soon(self._session, peer)
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
        inside): one decode at a time bounds the memory of many.
        """
        if len(body) <= THREAD_DECODE_BYTES:
            return decode_call(body)
        return await anyio.to_thread.run_sync(decode_call, body, limiter=self._decoding)

    async def _session(self, peer: HttpPeer) -> None:
        # Shielded: at shutdown only cancel_sessions() cuts it short.
        with anyio.CancelScope(shield=True) as scope:
            self._scopes[peer.handle] = scope
            try:
                await self._run_peer(peer)
            finally:
                del self._scopes[peer.handle]
                peer.abort()
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


def _answer(http: HttpStream, status: int, body: bytes, kind: str) -> bytes:
    """One answer, and the connection ends (a broken request is answered all the same)."""
    if http.h11.their_state is h11.ERROR or http.h11.our_state is not h11.SEND_RESPONSE:
        return broken_answer(status, body, kind)
    headers = [
        ("Content-Type", kind),
        ("Content-Length", str(len(body))),
        ("Connection", "close"),
        ("Cache-Control", "no-store"),
    ]
    return http.response(status, headers, body)


def broken_answer(status: int, body: bytes, kind: str = _TEXT) -> bytes:
    """An answer to a request h11 could not read."""
    return (
        f"HTTP/1.1 {status} {_PHRASES.get(status, '')}\r\nContent-Type: {kind}\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
        + body
    )


_PHRASES = {400: "Bad Request", 413: "Content Too Large"}
