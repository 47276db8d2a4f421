"""A scripted OpenAI-compatible model server: a real HTTP/1.1 server on loopback.

Tests and ``xtyserver demo`` drive the real ``openai`` client against it, so
every byte goes through a real socket. It speaks just enough HTTP/1.1 for that
(request line, headers, ``Content-Length`` bodies, keep-alive for JSON
answers, chunked SSE streams that end with ``Connection: close``).

Endpoints:
    ``POST /v1/chat/completions``  streamed (SSE) or plain chat completion.
    ``GET /v1/models``             the one model it pretends to be.
    ``POST /_script``              JSON list of :class:`Reply` objects to enqueue.
    ``GET /_requests``             the recorded ``/v1/...`` requests as JSON.
    ``POST /_reset``               forget the queue and the recorded requests.

Every request to ``/v1/...`` is recorded (method, path, headers, raw body,
parsed JSON) in :attr:`FakeModelServer.requests`. What the next chat request
gets is scripted with :meth:`FakeModelServer.enqueue`; with nothing queued it
answers a deterministic Chinese default built from the last user text.

Example::

    async with FakeModelServer() as fake:
        fake.enqueue(Reply(status=429, retry_after=0.2), Reply(text="你好"))
        client = AsyncOpenAI(base_url=fake.base_url, api_key="x")
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Annotated, Any, Self

import anyio
import anyio.abc
import msgspec
import structlog
from anyio.streams.buffered import BufferedByteReceiveStream

__all__ = [
    "DEFAULT_MODEL",
    "FakeModelServer",
    "RecordedRequest",
    "Reply",
    "default_reply_text",
    "message_text",
    "run_fake_model",
    "split_chunks",
]

_log = structlog.get_logger("xtyserver.model.fake")

DEFAULT_MODEL = "xty-fake-1"
"""The model id the fake reports in ``/v1/models`` and in its answers."""

_CREATED = 1_790_000_000
"""Fixed ``created`` stamp: answers stay deterministic and need no clock."""

_MAX_HEAD = 64 * 1024
_MAX_BODY = 32 * 1024 * 1024
"""Room for a base64 screenshot (8 MiB decoded is ~11 MiB encoded) and then some."""

_FOREVER = 1e6
"""Delays at or above this many seconds mean "never" (a first token that never comes)."""

_NonNegative = Annotated[float, msgspec.Meta(ge=0)]


class Reply(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One scripted answer to one chat request.

    Attributes:
        text: The reply text; split into about four chunks when ``chunks`` is not given.
            ``None`` with no ``chunks`` means the default reply. With an error
            ``status`` it is the error message.
        chunks: The exact content pieces to stream, overriding ``text``.
        first_delay: Seconds between the response head and the first token.
            ``1e6`` or more: the first token never comes.
        chunk_delay: Seconds between later tokens.
        status: HTTP status; anything but 200 answers an OpenAI-style error body.
        retry_after: Seconds for a ``Retry-After`` header (sent as given, e.g. ``0.2``).
        cut_after: Drop the connection after this many content chunks, mid-stream,
            without the end of the chunked body (a non-streamed answer is cut halfway).
        usage: Send usage when the request asks for it (``stream_options.include_usage``
            for a stream; always in a plain completion).
        match: Only a request whose message text contains this substring gets this reply.
    """

    text: str | None = None
    chunks: list[str] | None = None
    first_delay: _NonNegative = 0.0
    chunk_delay: _NonNegative = 0.0
    status: Annotated[int, msgspec.Meta(ge=100, le=599)] = 200
    retry_after: _NonNegative | None = None
    cut_after: Annotated[int, msgspec.Meta(ge=0)] | None = None
    usage: bool = True
    match: str | None = None


class RecordedRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A request as the fake received it.

    Attributes:
        method: HTTP method.
        path: Request target (path and query) as sent.
        headers: Header names lower-cased; a repeated header keeps its last value.
        body: The raw body bytes.
        json: The body parsed as JSON, ``None`` when it is not JSON.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any = None

    @property
    def text(self) -> str:
        """All message text of a chat request, joined by newlines (empty otherwise)."""
        return message_text(self.json)


# ---------------------------------------------------------------------------
# Pure helpers


def message_text(payload: object) -> str:
    """Join the text of every message of a chat request body (string or text parts).

    Args:
        payload: A parsed chat completion request body (anything else gives "").

    Returns:
        The text of all messages, one message per line.
    """
    if not isinstance(payload, Mapping):
        return ""
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return ""
    return "\n".join(_content_text(m.get("content")) for m in messages if isinstance(m, Mapping))


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def _last_user_text(payload: object) -> str:
    if isinstance(payload, Mapping):
        messages = payload.get("messages")
        if isinstance(messages, list):
            for m in reversed(messages):
                if isinstance(m, Mapping) and m.get("role") == "user":
                    return _content_text(m.get("content"))
    return ""


def default_reply_text(payload: object) -> str:
    """Deterministic default answer: ``小汤圆收到：`` and the first 30 chars of the user text."""
    return "小汤圆收到：" + _last_user_text(payload).strip()[:30]


def split_chunks(text: str, parts: int = 4) -> list[str]:
    """Split ``text`` into at most ``parts`` non-empty pieces of near-equal length, in order."""
    if not text:
        return []
    parts = max(1, min(parts, len(text)))
    size, extra = divmod(len(text), parts)
    out: list[str] = []
    start = 0
    for i in range(parts):
        end = start + size + (1 if i < extra else 0)
        out.append(text[start:end])
        start = end
    return out


def _pick(queue: list[Reply], text: str) -> Reply | None:
    """Take the first queued reply whose ``match`` is in ``text``, else the first unmatched one."""
    for i, reply in enumerate(queue):
        if reply.match is not None and reply.match in text:
            return queue.pop(i)
    for i, reply in enumerate(queue):
        if reply.match is None:
            return queue.pop(i)
    return None


_REASONS = {
    200: "OK",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    411: "Length Required",
    413: "Content Too Large",
    429: "Too Many Requests",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
}

_ERROR_TYPES = {
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "permission_denied"),
    404: ("invalid_request_error", "not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def _error_body(status: int, message: str) -> bytes:
    kind, code = _ERROR_TYPES.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    return msgspec.json.encode(
        {"error": {"message": message, "type": kind, "param": None, "code": code}}
    )


def _chunk(
    n: int, delta: Mapping[str, Any], finish: str | None, with_usage: bool
) -> dict[str, Any]:
    chunk: dict[str, Any] = {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion.chunk",
        "created": _CREATED,
        "model": DEFAULT_MODEL,
        "system_fingerprint": None,
        "choices": [{"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}],
    }
    if with_usage:
        # OpenAI sends "usage": null on every chunk but the last when usage is asked for.
        chunk["usage"] = None
    return chunk


def _usage(prompt: str, completion: str) -> dict[str, int]:
    # Deterministic stand-in for token counts: one token per character.
    p, c = len(prompt), len(completion)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


_DISCONNECTED = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
    OSError,
)
"""What a send or receive raises when the client has gone away."""


class _BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


class _Request(msgspec.Struct, kw_only=True):
    method: str
    path: str
    version: str
    headers: dict[str, str]
    body: bytes


async def _sleep(seconds: float) -> None:
    if not math.isfinite(seconds) or seconds >= _FOREVER:
        await anyio.sleep_forever()
    elif seconds > 0:
        await anyio.sleep(seconds)


# ---------------------------------------------------------------------------
# The server


class FakeModelServer:
    """A scripted OpenAI-compatible model server, run inside the caller's structured scope.

    Use as ``async with FakeModelServer() as fake:``; leaving the block stops the
    listener and every connection task.

    Args:
        host: Address to bind (loopback by default).
        port: Port to bind; ``0`` picks a free one (see :attr:`port`).
        model: The model id reported to clients.
    """

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, model: str = DEFAULT_MODEL):
        self._host = host
        self._want_port = port
        self.model = model
        self.requests: list[RecordedRequest] = []
        self._queue: list[Reply] = []
        self._port: int | None = None
        self._listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._connections = 0

    # -- public API ---------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (only while running)."""
        if self._port is None:
            raise RuntimeError("FakeModelServer is not running")
        return self._port

    @property
    def base_url(self) -> str:
        """The OpenAI base URL, e.g. ``http://127.0.0.1:PORT/v1``."""
        host = f"[{self._host}]" if ":" in self._host else self._host
        return f"http://{host}:{self.port}/v1"

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/chat/completions`` requests, oldest first."""
        return [r for r in self.requests if r.path.split("?")[0] == "/v1/chat/completions"]

    @property
    def queued(self) -> int:
        """How many scripted replies are still waiting."""
        return len(self._queue)

    @property
    def open_connections(self) -> int:
        """How many client connections are being served right now."""
        return self._connections

    def enqueue(self, *replies: Reply) -> None:
        """Queue replies for the next chat requests (first in, first out)."""
        self._queue.extend(replies)

    def reset(self) -> None:
        """Forget queued replies and recorded requests."""
        self._queue.clear()
        self.requests.clear()

    async def __aenter__(self) -> Self:
        listener = await anyio.create_tcp_listener(
            local_host=self._host, local_port=self._want_port
        )
        self._port = listener.listeners[0].extra(anyio.abc.SocketAttribute.local_port)
        tg = anyio.create_task_group()
        await tg.__aenter__()
        self._listener, self._tg = listener, tg
        tg.start_soon(listener.serve, self._serve_connection, tg)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        tg, listener = self._tg, self._listener
        self._tg = self._listener = None
        self._port = None
        try:
            if tg is not None:
                tg.cancel_scope.cancel()
                return await tg.__aexit__(exc_type, exc, tb)
            return None
        finally:
            if listener is not None:
                with anyio.CancelScope(shield=True):
                    await listener.aclose()

    # -- connection handling ------------------------------------------------

    async def _serve_connection(self, stream: anyio.abc.SocketStream) -> None:
        # One task per connection; a misbehaving client must never take the server down.
        self._connections += 1
        try:
            async with stream:
                reader = BufferedByteReceiveStream(stream)
                while True:
                    try:
                        request = await _read_request(reader)
                    except _BadRequest as err:
                        await _send_json(stream, err.status, _error_body(err.status, err.message))
                        return
                    if request is None:
                        return
                    keep_alive = await self._dispatch(request, stream, reader)
                    if not keep_alive:
                        return
        except _DISCONNECTED:
            pass  # the client went away; nothing to answer
        except Exception:
            _log.exception("fake_model.connection_failed")
        finally:
            self._connections -= 1

    async def _dispatch(
        self,
        request: _Request,
        stream: anyio.abc.SocketStream,
        reader: BufferedByteReceiveStream,
    ) -> bool:
        """Answer one request; return whether the connection stays open."""
        keep_alive = (
            request.version == "HTTP/1.1"
            and "close" not in request.headers.get("connection", "").lower()
        )
        path = request.path.split("?")[0]
        parsed: Any = None
        if request.body:
            try:
                parsed = msgspec.json.decode(request.body)
            except msgspec.DecodeError:
                parsed = None

        if path.startswith("/v1/"):
            self.requests.append(
                RecordedRequest(
                    method=request.method,
                    path=request.path,
                    headers=request.headers,
                    body=request.body,
                    json=parsed,
                )
            )

        route = (request.method, path)
        if route == ("POST", "/v1/chat/completions"):
            return await self._chat(request, parsed, stream, reader, keep_alive)
        if route == ("GET", "/v1/models"):
            body = msgspec.json.encode(
                {
                    "object": "list",
                    "data": [
                        {
                            "id": self.model,
                            "object": "model",
                            "created": _CREATED,
                            "owned_by": "xty",
                        }
                    ],
                }
            )
            await _send_json(stream, 200, body, keep_alive=keep_alive)
        elif route == ("POST", "/_script"):
            try:
                replies = msgspec.json.decode(request.body, type=list[Reply])
            except msgspec.DecodeError as err:
                await _send_json(stream, 400, _error_body(400, str(err)), keep_alive=keep_alive)
            else:
                self.enqueue(*replies)
                body = msgspec.json.encode({"queued": len(self._queue)})
                await _send_json(stream, 200, body, keep_alive=keep_alive)
        elif route == ("GET", "/_requests"):
            await _send_json(stream, 200, msgspec.json.encode(self.requests), keep_alive=keep_alive)
        elif route == ("POST", "/_reset"):
            self.reset()
            await _send_json(stream, 200, b'{"ok":true}', keep_alive=keep_alive)
        else:
            await _send_json(
                stream, 404, _error_body(404, f"no route {route[0]} {path}"), keep_alive=keep_alive
            )
        return keep_alive

    async def _chat(
        self,
        request: _Request,
        payload: Any,
        stream: anyio.abc.SocketStream,
        reader: BufferedByteReceiveStream,
        keep_alive: bool,
    ) -> bool:
        if not isinstance(payload, dict) or not isinstance(payload.get("messages"), list):
            body = _error_body(400, "body must be a JSON object with a 'messages' list")
            await _send_json(stream, 400, body, keep_alive=keep_alive)
            return keep_alive
        prompt = message_text(payload)
        reply = _pick(self._queue, prompt) or Reply()

        if reply.status != 200:
            await _sleep(reply.first_delay)
            headers: dict[str, str] = {}
            if reply.retry_after is not None:
                headers["Retry-After"] = f"{reply.retry_after:g}"
            message = reply.text or _REASONS.get(reply.status, "error")
            if reply.status == 401:
                # Like real providers, echo the key back: the client must never show it.
                auth = request.headers.get("authorization", "")
                message = f"Incorrect API key provided: {auth.removeprefix('Bearer ')}"
            body = _error_body(reply.status, message)
            await _send_json(stream, reply.status, body, keep_alive=keep_alive, extra=headers)
            return keep_alive

        if reply.chunks is not None:
            pieces = [p for p in reply.chunks if p]
        else:
            pieces = split_chunks(
                reply.text if reply.text is not None else default_reply_text(payload)
            )
        text = "".join(pieces)

        if payload.get("stream") is True:
            options = payload.get("stream_options")
            want_usage = (
                isinstance(options, dict) and options.get("include_usage") is True and reply.usage
            )
            await self._stream(stream, reader, reply, pieces, prompt, text, want_usage)
            return False

        await _sleep(reply.first_delay)
        completion: dict[str, Any] = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": _CREATED,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "logprobs": None,
                    "finish_reason": "stop",
                }
            ],
        }
        if reply.usage:
            completion["usage"] = _usage(prompt, text)
        body = msgspec.json.encode(completion)
        if reply.cut_after is not None:
            await stream.send(_head(200, "application/json", len(body), keep_alive=True))
            await stream.send(body[: len(body) // 2])
            return False
        await _send_json(stream, 200, body, keep_alive=keep_alive)
        return keep_alive

    async def _stream(
        self,
        stream: anyio.abc.SocketStream,
        reader: BufferedByteReceiveStream,
        reply: Reply,
        pieces: Sequence[str],
        prompt: str,
        text: str,
        want_usage: bool,
    ) -> None:
        head = (
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/event-stream; charset=utf-8\r\n"
            "Cache-Control: no-cache\r\n"
            "Transfer-Encoding: chunked\r\n"
            "Connection: close\r\n\r\n"
        )
        await stream.send(head.encode("ascii"))

        async def event(data: bytes) -> None:
            payload = b"data: " + data + b"\n\n"
            await stream.send(b"%x\r\n%s\r\n" % (len(payload), payload))

        async def write() -> None:
            n = 0
            # The role chunk comes at once, like OpenAI's; it carries no token.
            await event(
                msgspec.json.encode(
                    _chunk(n, {"role": "assistant", "content": ""}, None, want_usage)
                )
            )
            for i, piece in enumerate(pieces):
                if reply.cut_after is not None and i >= reply.cut_after:
                    return  # drop the connection without ending the chunked body
                await _sleep(reply.first_delay if i == 0 else reply.chunk_delay)
                n += 1
                await event(msgspec.json.encode(_chunk(n, {"content": piece}, None, want_usage)))
            if reply.cut_after is not None:
                return  # cut after every content chunk: no finish, no usage, no [DONE]
            n += 1
            await event(msgspec.json.encode(_chunk(n, {}, "stop", want_usage)))
            if want_usage:
                final = {
                    "id": f"chatcmpl-fake-{n + 1}",
                    "object": "chat.completion.chunk",
                    "created": _CREATED,
                    "model": self.model,
                    "choices": [],
                    "usage": _usage(prompt, text),
                }
                await event(msgspec.json.encode(final))
            await event(b"[DONE]")
            await stream.send(b"0\r\n\r\n")

        async def watch_disconnect(scope: anyio.CancelScope) -> None:
            # Notice a client that hangs up during a long delay, so no task outlives it.
            try:
                while await reader.receive():
                    pass
            except _DISCONNECTED:
                pass
            scope.cancel()

        async with anyio.create_task_group() as tg:
            tg.start_soon(watch_disconnect, tg.cancel_scope)
            try:
                await write()
            except _DISCONNECTED:
                pass  # the client hung up mid-stream
            finally:
                tg.cancel_scope.cancel()


# ---------------------------------------------------------------------------
# Minimal HTTP/1.1


async def _read_request(reader: BufferedByteReceiveStream) -> _Request | None:
    """Read one request; ``None`` when the client closed between requests."""
    try:
        head = await reader.receive_until(b"\r\n\r\n", _MAX_HEAD)
    except anyio.IncompleteRead:
        return None
    except anyio.DelimiterNotFound:
        raise _BadRequest(431, "request head too large") from None
    try:
        lines = head.decode("latin-1").split("\r\n")
        method, target, version = lines[0].split(" ")
    except ValueError:
        raise _BadRequest(400, "malformed request line") from None
    if not version.startswith("HTTP/1."):
        raise _BadRequest(400, "only HTTP/1.x is spoken here")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if not sep or not name or name != name.strip():
            raise _BadRequest(400, "malformed header line")
        headers[name.lower()] = value.strip()
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _BadRequest(411, "send a Content-Length body")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _BadRequest(400, "bad Content-Length") from None
    if length < 0:
        raise _BadRequest(400, "bad Content-Length")
    if length > _MAX_BODY:
        raise _BadRequest(413, "body too large")
    body = await reader.receive_exactly(length) if length else b""
    return _Request(method=method, path=target, version=version, headers=headers, body=body)


def _head(
    status: int,
    content_type: str,
    length: int,
    *,
    keep_alive: bool,
    extra: Mapping[str, str] | None = None,
) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {_REASONS.get(status, 'Status')}",
        f"Content-Type: {content_type}",
        f"Content-Length: {length}",
        f"Connection: {'keep-alive' if keep_alive else 'close'}",
    ]
    lines += [f"{k}: {v}" for k, v in (extra or {}).items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _send_json(
    stream: anyio.abc.ByteSendStream,
    status: int,
    body: bytes,
    *,
    keep_alive: bool = False,
    extra: Mapping[str, str] | None = None,
) -> None:
    await stream.send(
        _head(status, "application/json", len(body), keep_alive=keep_alive, extra=extra) + body
    )


async def run_fake_model(
    host: str = "127.0.0.1", port: int = 0, *, on_ready: Callable[[str], None]
) -> None:
    """Run the fake model server until cancelled (``xtyserver fake-model``).

    Args:
        host: Address to bind.
        port: Port to bind; ``0`` picks a free one.
        on_ready: Called once with the base URL (``http://HOST:PORT/v1``) when listening.
    """
    async with FakeModelServer(host, port) as fake:
        on_ready(fake.base_url)
        await anyio.sleep_forever()
