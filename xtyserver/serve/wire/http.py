"""HTTP/1.1 over an anyio byte stream: the one h11 loop of the product.

Every request any listener reads (the adapter port's upgrades and
``POST /v1/http`` calls, the memory page, the scripted model server) comes
through :meth:`HttpStream.next_event`: h11 parses, and bytes are received only
when h11 needs more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio
import anyio.abc
import h11

__all__ = ["DISCONNECTED", "BadRequest", "HttpStream", "PausedError"]

DISCONNECTED = (
    anyio.EndOfStream,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    OSError,
)
"""What a send or receive raises when the peer has gone away."""


class BadRequest(Exception):
    """A request refused before it is routed.

    Attributes:
        status: The HTTP status to answer (400, 413 or 431).
        message: What is wrong.
    """

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class PausedError(RuntimeError):
    """h11 waits for :meth:`HttpStream.next_cycle` (or a protocol switch) before reading on."""


class HttpStream:
    """The server side of one HTTP/1.1 connection: h11 over ``stream``.

    Args:
        stream: The accepted connection; the caller closes it.
        head_bytes: Most bytes of an incomplete request head h11 buffers.
    """

    def __init__(self, stream: anyio.abc.ByteStream, *, head_bytes: int) -> None:
        self.stream = stream
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=head_bytes)
        self.eof = False  # the peer closed its side
        # The first bytes received, which name the request when h11 refuses its head.
        self.start = b""

    async def next_event(self) -> h11.Event:
        """The next event of the peer's side, receiving as h11 needs.

        Raises:
            BadRequest: The bytes are not an acceptable HTTP/1.x request.
            PausedError: A whole request was read and the answer is not sent yet.
        """
        while True:
            try:
                event = self.h11.next_event()
            except h11.RemoteProtocolError as err:
                raise BadRequest(err.error_status_hint, str(err)) from None
            if event is h11.PAUSED:
                raise PausedError("the request was read; answer it first")
            if event is not h11.NEED_DATA:
                assert isinstance(event, h11.Event)
                return event
            try:
                data = await self.stream.receive(65536)
            except DISCONNECTED:
                data = b""
            self.eof = not data
            if not self.start:
                self.start = data[:32]
            self.h11.receive_data(data)

    async def read_head(self) -> h11.Request | None:
        """The next request's head; None when the peer closed between requests."""
        event = await self.next_event()
        return event if isinstance(event, h11.Request) else None

    async def read_body(self, request: h11.Request, max_bytes: int) -> bytes:
        """The whole body of ``request`` (``Content-Length`` or chunked).

        Raises:
            BadRequest: 413 past ``max_bytes`` (checked on ``Content-Length`` before
                reading), or the bytes are not HTTP.
        """
        too_large = BadRequest(413, f"body over {max_bytes} bytes")
        for name, value in request.headers:
            # h11 has checked that a Content-Length is a number.
            if name == b"content-length" and int(value) > max_bytes:
                raise too_large
        body = bytearray()
        while not isinstance(event := await self.next_event(), h11.EndOfMessage):
            if isinstance(event, h11.Data):
                body += event.data
                if len(body) > max_bytes:  # a chunked body has no length up front
                    raise too_large
            elif isinstance(event, h11.ConnectionClosed):
                raise BadRequest(400, "the body ended early")
        return bytes(body)

    def head(self, status: int, headers: Sequence[tuple[str, str]], reason: bytes = b"") -> bytes:
        """A response's status line and headers (h11 chunks a body without a length)."""
        return self.h11.send(h11.Response(status_code=status, headers=list(headers), reason=reason))

    def data(self, data: bytes) -> bytes:
        """A piece of the body (h11 drops an empty one of a chunked body itself)."""
        return self.h11.send(h11.Data(data=data)) if data else b""

    def end(self) -> bytes:
        """The end of the body (the last chunk of a chunked one)."""
        return self.h11.send(h11.EndOfMessage())

    def response(
        self, status: int, headers: Sequence[tuple[str, str]], body: bytes, reason: bytes = b""
    ) -> bytes:
        """A whole response, its body of known length."""
        return self.head(status, headers, reason) + self.data(body) + self.end()

    def next_cycle(self) -> bool:
        """Get ready for the next request; False when the connection must close instead."""
        if self.h11.our_state is h11.DONE and self.h11.their_state is h11.DONE:
            self.h11.start_next_cycle()
            return True
        return False

    async def unless_hung_up(self, work: Callable[[], Awaitable[None]], keep: int) -> bool:
        """Run ``work``, cancelling it if the peer hangs up meanwhile.

        Reading is how a hang-up shows, so this reads while ``work`` runs; bytes
        that come (a pipelined next request) are kept for h11, at most ``keep``:
        a peer that sends without end while it waits counts as gone.

        Returns:
            True when ``work`` finished, False when the peer hung up first.
        """
        hung_up = False

        async def watch(scope: anyio.CancelScope) -> None:
            nonlocal hung_up
            kept = 0
            try:
                while kept <= keep:
                    data = await self.stream.receive()
                    self.h11.receive_data(data)
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
                hung_up = True  # a send failed: the peer is gone
            finally:
                tg.cancel_scope.cancel()
        return not hung_up
