"""One HTTP/1.1 server connection: ``h11`` parses and frames, an anyio socket stream carries.

The scripted model server speaks HTTP through this class only, so every byte
on the wire is h11's (request parsing, keep-alive, chunked bodies).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio
import anyio.abc
import h11
import msgspec

__all__ = ["DISCONNECTED", "MAX_BODY", "MAX_HEAD", "REASONS", "BadRequest", "HttpConnection"]

MAX_HEAD = 64 * 1024
"""Most bytes of a request head h11 buffers while it is incomplete."""

MAX_BODY = 32 * 1024 * 1024
"""Room for a base64 screenshot (8 MiB decoded is ~11 MiB encoded) and then some."""

REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    413: "Content Too Large",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}

DISCONNECTED = (
    anyio.EndOfStream,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    OSError,
)
"""What a send or receive raises when the client has gone away."""


class BadRequest(Exception):
    """A request the server refuses before routing it.

    Attributes:
        status: The HTTP status to answer (400, 413 or 431).
        message: What is wrong, for the error body.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """One whole request.

    Attributes:
        method: HTTP method, e.g. ``POST``.
        target: Request target (path and query) as sent.
        headers: Header names lower-cased; a repeated header keeps its last value.
        body: The whole body (``Content-Length`` or chunked).
    """

    method: str
    target: str
    headers: dict[str, str]
    body: bytes


class HttpConnection:
    """The server side of one HTTP/1.1 connection.

    Args:
        stream: The accepted client socket; the caller closes it.
    """

    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self._stream = stream
        self._h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=MAX_HEAD)

    async def read_request(self) -> Request | None:
        """Read the next request with its whole body.

        Returns:
            The request, or ``None`` when the client closed the connection between requests.

        Raises:
            BadRequest: The bytes are not an acceptable HTTP/1.x request.
        """
        head = await self._next_event()
        if not isinstance(head, h11.Request):
            return None  # ConnectionClosed: the client is done
        if not head.http_version.startswith(b"1."):
            raise BadRequest(400, "only HTTP/1.x is spoken here")
        headers = {name.decode("latin-1"): value.decode("latin-1") for name, value in head.headers}
        # h11 has checked that Content-Length is a number; refuse before reading the body.
        if int(headers.get("content-length", "0")) > MAX_BODY:
            raise BadRequest(413, f"body over {MAX_BODY} bytes")
        body = bytearray()
        while not isinstance(event := await self._next_event(), h11.EndOfMessage):
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > MAX_BODY:  # a chunked body has no length up front
                    raise BadRequest(413, f"body over {MAX_BODY} bytes")
        return Request(
            method=head.method.decode("ascii"),
            target=head.target.decode("latin-1"),
            headers=headers,
            body=bytes(body),
        )

    async def send_response(
        self,
        status: int,
        body: bytes,
        *,
        content_type: str = "application/json",
        headers: Sequence[tuple[str, str]] = (),
        close: bool = False,
    ) -> None:
        """Send a whole response with a ``Content-Length`` body.

        Args:
            status: HTTP status.
            body: The body.
            content_type: The ``Content-Type``.
            headers: More headers.
            close: Close the connection after this response; otherwise keep it open
                unless the client asked to close it (h11 then says ``close`` itself).
        """
        head = self._head(
            status,
            [
                ("Content-Type", content_type),
                ("Content-Length", str(len(body))),
                ("Connection", "close" if close else "keep-alive"),
                *headers,
            ],
        )
        # One write: a small answer goes out in one segment, as real servers send it.
        await self._stream.send(head + self._body(body) + self._h11.send(h11.EndOfMessage()))

    async def send_head(self, status: int, headers: Sequence[tuple[str, str]]) -> None:
        """Send the status line and headers; without ``Content-Length`` h11 chunks the body."""
        await self._stream.send(self._head(status, headers))

    async def send_data(self, data: bytes) -> None:
        """Send a piece of the body (one chunk of a chunked body)."""
        await self._stream.send(self._body(data))

    async def end_body(self) -> None:
        """End the body (the last, empty chunk of a chunked body)."""
        await self._stream.send(self._h11.send(h11.EndOfMessage()))

    def next_cycle(self) -> bool:
        """Get ready for the next request on this connection.

        Returns:
            ``False`` when the connection must close instead: either side asked to
            close it, or the last response was never finished (cut or abandoned).
        """
        if self._h11.our_state is h11.DONE and self._h11.their_state is h11.DONE:
            self._h11.start_next_cycle()
            return True
        return False

    async def unless_hung_up(self, work: Callable[[], Awaitable[None]]) -> bool:
        """Run ``work``, cancelling it if the client hangs up meanwhile.

        Reading is how a hang-up shows, so this reads while ``work`` runs; bytes that
        come (a pipelined next request) are kept for :meth:`read_request`.

        Args:
            work: Sends (part of) a response; may wait long (a scripted delay).

        Returns:
            ``True`` when ``work`` finished, ``False`` when the client hung up first.
        """
        hung_up = False

        async def watch(scope: anyio.CancelScope) -> None:
            nonlocal hung_up
            kept = 0
            try:
                # A client that sends without end while it waits is treated as gone too.
                while kept <= MAX_HEAD + MAX_BODY:
                    data = await self._stream.receive()
                    self._h11.receive_data(data)
                    kept += len(data)
            except DISCONNECTED:
                pass
            hung_up = True
            scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch, tg.cancel_scope)
            try:
                await work()
            except DISCONNECTED:
                hung_up = True  # a send failed: the client is gone
            finally:
                tg.cancel_scope.cancel()
        return not hung_up

    async def aclose(self) -> None:
        """Close the socket now (closing it again later is harmless)."""
        await self._stream.aclose()

    def _head(self, status: int, headers: Sequence[tuple[str, str]]) -> bytes:
        reason = REASONS.get(status, "Status")
        response = h11.Response(status_code=status, reason=reason, headers=list(headers))
        return self._h11.send(response)

    def _body(self, data: bytes) -> bytes:
        # h11 drops an empty Data in a chunked body itself; skip it for Content-Length too.
        return self._h11.send(h11.Data(data=data)) if data else b""

    async def _next_event(self) -> h11.Event:
        while True:
            try:
                event = self._h11.next_event()
            except h11.RemoteProtocolError as err:
                if err.error_status_hint == 431:  # h11 only says "Receive buffer too long"
                    raise BadRequest(431, f"request head over {MAX_HEAD} bytes") from None
                raise BadRequest(err.error_status_hint, f"bad request: {err}") from None
            if isinstance(event, h11.Event):
                return event
            if event is h11.PAUSED:
                # h11 pauses between requests until next_cycle(), which callers call first.
                raise RuntimeError("read_request() before next_cycle()")
            try:
                data = await self._stream.receive()
            except anyio.EndOfStream:
                data = b""  # tells h11 the client closed its side
            self._h11.receive_data(data)
