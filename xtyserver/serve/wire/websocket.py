"""A WebSocket over an anyio stream: websockets' sans-I/O ``ServerProtocol`` and nothing else.

A shell. :func:`handshake` answers the upgrade h11 read
(:mod:`xtyserver.serve.wire.http`) through the same h11 connection;
:class:`WsPeer` then moves bytes between the stream and a protocol made in the
``OPEN`` state, a text message's UTF-8 checked without building a ``str`` (1007
when it is not, as websockets' own decoding would). A close waits for the
peer's answer at most ``close_timeout`` seconds, then drops the socket.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable

import anyio
import anyio.abc
import h11
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed, ConnectionClosedError
from websockets.frames import CloseCode, Frame, Opcode
from websockets.http11 import Request, Response
from websockets.protocol import State
from websockets.server import ServerProtocol

from xtyserver.serve.on_demand import LazyLock
from xtyserver.serve.text_frames import Message, utf8_error, valid_utf8
from xtyserver.serve.wire.http import DISCONNECTED, HttpStream

RECEIVE_BYTES = 256 * 1024
"""The most one receive takes: asyncio's own read size, so no chunk is split and copied again."""

__all__ = ["WsPeer", "encode_response", "handshake", "raw_response", "ws_request"]


def ws_request(request: h11.Request) -> Request:
    """The upgrade request h11 read, as websockets' ``Request`` (its headers as sent)."""
    headers = Headers()
    for name, value in request.headers.raw_items():
        headers[name.decode("latin-1")] = value.decode("latin-1")
    return Request(
        request.target.decode("ascii", "surrogateescape"),
        headers,
        request.method.decode("ascii", "surrogateescape"),
        "HTTP/" + request.http_version.decode("ascii"),
    )


def encode_response(http: HttpStream, response: Response) -> bytes:
    """``response`` as h11 sends it: a 101 switches the connection, anything else ends it."""
    headers = list(response.headers.raw_items())
    reason = response.reason_phrase.encode("latin-1")
    if response.status_code == 101:
        informational = h11.InformationalResponse(status_code=101, headers=headers, reason=reason)
        return http.h11.send(informational)
    return http.response(response.status_code, headers, bytes(response.body), reason)


def raw_response(response: Response) -> bytes:
    """``response`` written out by hand, for a request h11 refused (it answers no more)."""
    lines = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
    lines += [f"{name}: {value}" for name, value in response.headers.raw_items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + bytes(response.body)


async def handshake(
    http: HttpStream, request: h11.Request, *, max_size: int
) -> tuple[ServerProtocol, bytes] | None:
    """Answer an upgrade request: the open protocol and the bytes after the head, or None
    (no valid upgrade, answered with ``ServerProtocol.accept``'s refusal)."""
    protocol = ServerProtocol(state=State.OPEN, max_size=max_size)
    response = protocol.accept(ws_request(request))
    if response.status_code == 101:
        # A GET has no body: h11 is at the end of the request, waiting for the switch.
        event = await http.next_event()
        if not isinstance(event, h11.EndOfMessage):
            response = protocol.reject(400, "an upgrade request has no body\n")
    await http.stream.send(encode_response(http, response))
    if response.status_code != 101:
        return None
    data, _closed = http.h11.trailing_data
    return protocol, bytes(data)


class WsPeer:
    """One open WebSocket, as the connection runtime sees its peer.

    Args:
        stream: The socket, after the handshake.
        protocol: websockets' protocol in the ``OPEN`` state.
        first: Bytes that came after the upgrade's head.
        remote: The peer's address.
        close_timeout: Seconds a close waits for the peer's answer.
        drop: Closes the socket at once (the owner of the stream spawns its ``aclose``):
            every wait on it then ends.
    """

    def __init__(
        self,
        stream: anyio.abc.ByteStream,
        protocol: ServerProtocol,
        *,
        first: bytes,
        remote: tuple[str, int] | None,
        close_timeout: float,
        drop: Callable[[], None],
    ) -> None:
        self._stream = stream
        self._ws = protocol
        self._first = first
        self.remote_address = remote
        self.transport = self  # what the runtime calls abort() on
        self._close_timeout = close_timeout
        self._drop = drop
        self._send_lock = LazyLock()
        self._receive_lock = LazyLock()
        self._events: list[object] = []  # frames received and not looked at yet
        self._parts: list[bytes] = []  # the fragments of the message being received
        self._text = False
        self._held: Message | None = None
        self.dropped = False

    @property
    def close_code(self) -> int | None:
        """The close code received (1006 when the socket ended without one); None while open."""
        return self._ws.close_code

    @property
    def close_reason(self) -> str | None:
        return self._ws.close_reason

    @property
    def open(self) -> bool:
        return self._ws.state is State.OPEN

    def abort(self) -> None:
        """Drop the socket: every wait on it ends now, the connection counts as closed (1006)."""
        if self.dropped:
            return
        self.dropped = True
        self._ws.receive_eof()
        self._drop()

    # -- receiving -----------------------------------------------------------------------------

    async def first_message(self) -> Message | None:
        """Receive the first message ahead of :meth:`messages`, which then yields it first.

        Cancelling it loses nothing. None: the connection ended first.
        """
        self._held = await self._next_message()
        return self._held

    async def messages(self) -> AsyncIterator[Message]:
        """Each message as (bytes, is text) until the connection closes."""
        while True:
            message = self._held or await self._next_message()
            self._held = None
            if message is None:
                return
            data, text = message
            if text and not valid_utf8(data):
                error = utf8_error(data)
                assert error is not None
                # websockets' own words for it.
                await self.close(
                    CloseCode.INVALID_DATA, f"{error.reason} at position {error.start}"
                )
                return
            yield data, text

    async def _next_message(self) -> Message | None:
        while True:
            while self._events:
                frame = self._events.pop(0)
                if not isinstance(frame, Frame):
                    continue
                opcode, data, fin = frame.opcode, bytes(frame.data), frame.fin
                if opcode is Opcode.TEXT or opcode is Opcode.BINARY:
                    if fin:
                        return data, opcode is Opcode.TEXT
                    self._text, self._parts = opcode is Opcode.TEXT, [data]
                elif opcode is Opcode.CONT:
                    self._parts.append(data)
                    if fin:
                        whole, self._parts = b"".join(self._parts), []
                        return whole, self._text
            if self._ws.state is not State.OPEN:
                await self._closing()
                return None
            await self._receive()

    async def _receive(self) -> None:
        """Feed the protocol the next bytes (or the end), and send what it answers."""
        async with self._receive_lock:
            if self._ws.state is State.CLOSED:
                return
            data: bytes | None = None
            if self._first:
                data, self._first = self._first, b""
            else:
                with contextlib.suppress(*DISCONNECTED):
                    data = await self._stream.receive(RECEIVE_BYTES)
            if self.dropped:
                return
            if data is None:
                self._ws.receive_eof()
            else:
                self._ws.receive_data(data)
                self._events += self._ws.events_received()
        await self._flush()

    async def _closing(self) -> None:
        """The closing handshake under way: wait for the peer's end, dropping it when late."""
        with anyio.move_on_after(self._close_timeout):
            while self._ws.state is not State.CLOSED:
                await self._receive()
                self._events.clear()  # nothing is delivered once a close was sent
        if self._ws.state is not State.CLOSED:
            self.abort()

    # -- sending -------------------------------------------------------------------------------

    async def send(self, message: bytes) -> None:
        """Send one text message (the server sends no binary ones).

        Raises:
            websockets.ConnectionClosed: The connection is closing or closed.
        """
        async with self._send_lock:
            if self._ws.state is not State.OPEN:
                raise self._closed_error()
            self._ws.send_text(message)
            await self._write()

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Close with ``code``: send the close frame, wait for the answer (bounded), drop."""
        async with self._send_lock:
            if self._ws.state is State.OPEN:
                self._ws.send_close(code, reason)
                try:
                    await self._write()
                except ConnectionClosed:
                    return
        await self._closing()

    async def _flush(self) -> None:
        async with self._send_lock:
            with contextlib.suppress(ConnectionClosed):
                await self._write()

    async def _write(self) -> None:
        """Send what the protocol has to send (the send lock held); an empty piece is the EOF."""
        chunks = self._ws.data_to_send()
        if self.dropped:
            if chunks:
                raise self._closed_error()
            return
        try:
            for chunk in chunks:
                if chunk:
                    await self._stream.send(chunk)
                else:
                    await self._stream.send_eof()
        except DISCONNECTED:
            self.abort()
        if self.dropped:
            raise self._closed_error()

    def _closed_error(self) -> ConnectionClosed:
        if self._ws.state is State.CLOSED:
            return self._ws.close_exc
        return ConnectionClosedError(None, None)
