"""One HTTP/1.1 server connection of the scripted model server, over the wire's h11 loop.

The scripted model server speaks HTTP through this class only, and this class
reads through :class:`~xtyserver.serve.wire.http.HttpStream`, so every byte
on the wire is h11's (request parsing, keep-alive, chunked bodies), read the
way the product's own listeners read.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence

import anyio.abc
import msgspec

from xtyserver.serve.wire.http import DISCONNECTED, BadRequest, HttpStream

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


class Request(msgspec.Struct, frozen=True, kw_only=True):
    """One whole request: header names lower-cased (a repeated one keeps its last value)."""

    method: str
    target: str
    headers: dict[str, str]
    body: bytes


class HttpConnection:
    """The server side of one HTTP/1.1 connection (the caller closes ``stream``)."""

    def __init__(self, stream: anyio.abc.SocketStream) -> None:
        self._stream = stream
        self._http = HttpStream(stream, head_bytes=MAX_HEAD)

    async def read_request(self) -> Request | None:
        """The next request with its whole body; ``None`` when the client closed the
        connection between requests; BadRequest for anything but an HTTP/1.x request."""
        try:
            head = await self._http.read_head()
            if head is None:
                return None  # the client is done
            if not head.http_version.startswith(b"1."):
                raise BadRequest(400, "only HTTP/1.x is spoken here")
            body = await self._http.read_body(head, MAX_BODY)
        except BadRequest as err:
            if err.status == 431:  # h11 only says "Receive buffer too long"
                raise BadRequest(431, f"request head over {MAX_HEAD} bytes") from None
            if err.status == 413:
                raise
            raise BadRequest(err.status, f"bad request: {err.message}") from None
        return Request(
            method=head.method.decode("ascii"),
            target=head.target.decode("latin-1"),
            headers={k.decode("latin-1"): v.decode("latin-1") for k, v in head.headers},
            body=body,
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

        ``close``: close the connection after it; otherwise it stays open unless the
        client asked to close it (h11 then says ``close`` itself).
        """
        lines = [
            ("Content-Type", content_type),
            ("Content-Length", str(len(body))),
            ("Connection", "close" if close else "keep-alive"),
            *headers,
        ]
        # One write: a small answer goes out in one segment, as real servers send it.
        await self._stream.send(self._http.response(status, lines, body, self._reason(status)))

    async def send_head(self, status: int, headers: Sequence[tuple[str, str]]) -> None:
        """Send the status line and headers; without ``Content-Length`` h11 chunks the body."""
        await self._stream.send(self._http.head(status, headers, self._reason(status)))

    async def send_data(self, data: bytes) -> None:
        """Send a piece of the body (one chunk of a chunked body)."""
        await self._stream.send(self._http.data(data))

    async def end_body(self) -> None:
        """End the body (the last, empty chunk of a chunked body)."""
        await self._stream.send(self._http.end())

    def next_cycle(self) -> bool:
        """Get ready for the next request; ``False`` when the connection must close
        instead (either side asked to, or the last response was cut or abandoned)."""
        return self._http.next_cycle()

    async def unless_hung_up(self, work: Callable[[], Awaitable[None]]) -> bool:
        """Run ``work`` (sending a response, maybe after a long scripted delay) unless the
        client hangs up first (:meth:`HttpStream.unless_hung_up`); True when it finished."""
        return await self._http.unless_hung_up(work, keep=MAX_HEAD + MAX_BODY)

    async def aclose(self) -> None:
        """Close the socket now (closing it again later is harmless)."""
        await self._stream.aclose()

    @staticmethod
    def _reason(status: int) -> bytes:
        return REASONS.get(status, "Status").encode()
