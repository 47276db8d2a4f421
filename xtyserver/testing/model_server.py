"""A scripted OpenAI-compatible model server: a real HTTP/1.1 server on loopback.

Tests and ``xtyserver demo`` drive the server's model clients against it (and
tests the real ``openai`` client too, the reference of what a client sends), so
every byte goes through a real socket; ``h11`` parses and frames the HTTP.
Answers keep the connection alive (HTTP/1.1 keep-alive, as real providers do);
streamed (SSE) answers are chunked, and one that is scripted to break off
(``cut_after``) says ``Connection: close`` and closes it.

Endpoints:
    ``POST /v1/chat/completions``  streamed (SSE) or plain chat completion.
    ``GET /v1/models``             the one model it pretends to be.
    ``POST /v1/embeddings``        deterministic vectors (:mod:`xtyserver.testing.embeddings`),
                                   after :attr:`FakeModelServer.embedding_delay` seconds.
    ``POST /_script``              JSON list of :class:`Reply` objects to enqueue.
    ``GET /_requests``             the recorded ``/v1/...`` requests as JSON.
    ``POST /_reset``               forget the queue and the recorded requests.

Like a local server (llama.cpp, Ollama on one GPU), it can serve one chat
request at a time (``serial=True``): a request waits until the answer before it
is whole or its client hung up. With ``vision=False`` it refuses a request with
an image part (HTTP 400 naming the image), like a text-only model. It never
honours ``max_tokens``: a scripted reply streams whole (or forever, ``endless``).

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

import contextlib
import math
from collections.abc import Callable
from functools import partial
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.abc
import msgspec
import structlog

from xtyserver.memory.tokenize import tokenize
from xtyserver.testing.connection import (
    DISCONNECTED,
    REASONS,
    BadRequest,
    HttpConnection,
    Request,
)
from xtyserver.testing.embeddings import scripted_vector
from xtyserver.testing.keys import keys_reply
from xtyserver.testing.script import (
    CREATED,
    DEFAULT_MODEL,
    RecordedRequest,
    Reply,
    completion_body,
    content_chunk,
    error_body,
    message_text,
    pick_reply,
    reply_pieces,
    stream_events,
)

__all__ = ["FakeModelServer", "run_fake_model"]

_log = structlog.get_logger("xtyserver.testing.model_server")

_FOREVER = 1e6
"""Delays at or above this many seconds mean "never" (a first token that never comes)."""

_CHAT = "/v1/chat/completions"
_EMBEDDINGS = "/v1/embeddings"


async def _delay(seconds: float) -> None:
    if not math.isfinite(seconds) or seconds >= _FOREVER:
        await anyio.sleep_forever()
    elif seconds > 0:
        await anyio.sleep(seconds)


class _Count:
    """A count of open things that a task can wait on without polling."""

    def __init__(self) -> None:
        self.value = 0
        # Made on first wait: an anyio.Event needs a running event loop.
        self._changed: anyio.Event | None = None

    def add(self, delta: int) -> None:
        self.value += delta
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    async def wait_for(self, value: int) -> None:
        while self.value != value:
            if self._changed is None:
                self._changed = anyio.Event()
            await self._changed.wait()


class FakeModelServer:
    """A scripted OpenAI-compatible model server, run inside the caller's structured scope.

    Use as ``async with FakeModelServer() as fake:``; leaving the block stops the
    listener and every connection task. ``port`` 0 picks a free one (:attr:`port`);
    ``serial`` and ``vision`` as in the module docstring.
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        *,
        model: str = DEFAULT_MODEL,
        serial: bool = False,
        vision: bool = True,
    ):
        self._host = host
        self._want_port = port
        self.model = model
        self.serial = serial
        self.vision = vision
        self._serving: anyio.Lock | None = None
        self.bytes_streamed = 0
        self.requests: list[RecordedRequest] = []
        self._queue: list[Reply] = []
        # Search keys the scripted model writes for a memory (by its summary) when
        # asked by the enrichment job, as a real model would (testing/keys.py).
        self.search_keys: dict[str, list[str]] = {}
        # Seconds every /v1/embeddings answer waits first (a slow embedding route).
        self.embedding_delay = 0.0
        self._port: int | None = None
        self._listener: anyio.abc.Listener[anyio.abc.SocketStream] | None = None
        self._tg: anyio.abc.TaskGroup | None = None
        self._connections = _Count()
        self._streams = _Count()

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
        return [r for r in self.requests if r.path.split("?")[0] == _CHAT]

    @property
    def embedding_requests(self) -> list[RecordedRequest]:
        """The recorded ``POST /v1/embeddings`` requests, oldest first."""
        return [r for r in self.requests if r.path.split("?")[0] == _EMBEDDINGS]

    @property
    def queued(self) -> int:
        """How many scripted replies are still waiting."""
        return len(self._queue)

    @property
    def open_connections(self) -> int:
        """How many client connections are open right now (until their socket is closed)."""
        return self._connections.value

    @property
    def open_streams(self) -> int:
        """Streamed chat answers open now: until the last chunk, or the socket's close if cut."""
        return self._streams.value

    async def wait_open_connections(self, count: int) -> None:
        """Wait until exactly ``count`` client connections are open (wrap in a timeout)."""
        await self._connections.wait_for(count)

    async def wait_open_streams(self, count: int) -> None:
        """Wait until exactly ``count`` streamed answers are open (wrap in a timeout)."""
        await self._streams.wait_for(count)

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

    async def _serve_connection(self, stream: anyio.abc.SocketStream) -> None:
        # One task per connection; a misbehaving client must never take the server down.
        self._connections.add(1)
        try:
            async with stream:
                conn = HttpConnection(stream)
                while True:
                    try:
                        request = await conn.read_request()
                    except BadRequest as err:
                        body = error_body(err.status, err.message)
                        await conn.send_response(err.status, body, close=True)
                        return
                    if request is None:
                        return
                    await self._dispatch(conn, request)
                    if not conn.next_cycle():
                        return
        except DISCONNECTED:
            pass  # the client went away; nothing to answer
        except Exception:
            _log.exception("fake_model.connection_failed")
        finally:
            # Only now is the socket closed: a waiter on the count sees it really gone.
            self._connections.add(-1)

    async def _dispatch(self, conn: HttpConnection, request: Request) -> None:
        path = request.target.split("?")[0]
        parsed: Any = None
        if request.body:
            with contextlib.suppress(msgspec.DecodeError):
                parsed = msgspec.json.decode(request.body)

        if path.startswith("/v1/"):
            self.requests.append(
                RecordedRequest(
                    method=request.method,
                    path=request.target,
                    headers=request.headers,
                    body=request.body,
                    json=parsed,
                )
            )

        route = (request.method, path)
        if route == ("POST", _CHAT):
            await self._chat(conn, request, parsed)
        elif route == ("POST", _EMBEDDINGS):
            await self._embeddings(conn, parsed)
        elif route == ("GET", "/v1/models"):
            model = {"id": self.model, "object": "model", "created": CREATED, "owned_by": "xty"}
            body = msgspec.json.encode({"object": "list", "data": [model]})
            await conn.send_response(200, body)
        elif route == ("POST", "/_script"):
            try:
                replies = msgspec.json.decode(request.body, type=list[Reply])
            except msgspec.DecodeError as err:
                await conn.send_response(400, error_body(400, str(err)))
            else:
                self.enqueue(*replies)
                await conn.send_response(200, msgspec.json.encode({"queued": len(self._queue)}))
        elif route == ("GET", "/_requests"):
            await conn.send_response(200, msgspec.json.encode(self.requests))
        elif route == ("POST", "/_reset"):
            self.reset()
            await conn.send_response(200, b'{"ok":true}')
        else:
            await conn.send_response(404, error_body(404, f"no route {route[0]} {path}"))

    async def _embeddings(self, conn: HttpConnection, payload: Any) -> None:
        texts = payload.get("input") if isinstance(payload, dict) else None
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            body = error_body(400, "'input' must be a text or a list of texts")
            await conn.send_response(400, body)
            return
        if self.embedding_delay > 0:
            waiting = partial(_delay, self.embedding_delay)
            if not await conn.unless_hung_up(waiting):
                return
        data = [
            {"object": "embedding", "index": i, "embedding": scripted_vector(t)}
            for i, t in enumerate(texts)
        ]
        tokens = sum(len(tokenize(t)) for t in texts)
        answer = {
            "object": "list",
            "model": payload.get("model", self.model),
            "data": data,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        await conn.send_response(200, msgspec.json.encode(answer))

    async def _chat(self, conn: HttpConnection, request: Request, payload: Any) -> None:
        if not self.serial:
            await self._answer(conn, request, payload)
            return
        if self._serving is None:
            self._serving = anyio.Lock()
        lock = self._serving
        acquired = False

        async def take_turn() -> None:
            nonlocal acquired
            await lock.acquire()
            acquired = True

        # One at a time: a waiting client that hangs up leaves the queue.
        if not await conn.unless_hung_up(take_turn):
            if acquired:
                lock.release()
            await conn.aclose()
            return
        try:
            await self._answer(conn, request, payload)
        finally:
            lock.release()

    async def _answer(self, conn: HttpConnection, request: Request, payload: Any) -> None:
        if not isinstance(payload, dict) or not isinstance(payload.get("messages"), list):
            body = error_body(400, "body must be a JSON object with a 'messages' list")
            await conn.send_response(400, body)
            return
        if not self.vision and _has_image(payload):
            message = "Invalid content type. image_url is only supported by certain models."
            await conn.send_response(400, error_body(400, message))
            return
        prompt = message_text(payload)
        reply = pick_reply(self._queue, prompt) or keys_reply(payload, self.search_keys) or Reply()

        if reply.status == 200 and payload.get("stream") is True:
            options = payload.get("stream_options")
            want_usage = (
                isinstance(options, dict) and options.get("include_usage") is True and reply.usage
            )
            await self._stream(conn, reply, payload, prompt, want_usage)
            return

        # A client that hangs up during the delay ends the answer (and the connection).
        waiting = partial(_delay, reply.first_delay)
        if reply.first_delay > 0 and not await conn.unless_hung_up(waiting):
            return
        if reply.status != 200:
            headers: list[tuple[str, str]] = []
            if reply.retry_after is not None:
                headers.append(("Retry-After", f"{reply.retry_after:g}"))
            message = reply.text or REASONS.get(reply.status, "error")
            if reply.status == 401:
                # Like real providers, echo the key back: the client must never show it.
                auth = request.headers.get("authorization", "")
                message = f"Incorrect API key provided: {auth.removeprefix('Bearer ')}"
            body = error_body(reply.status, message)
            await conn.send_response(reply.status, body, headers=headers)
            return

        text = "".join(reply_pieces(reply, payload))
        body = completion_body(self.model, text, prompt=prompt, usage=reply.usage)
        if reply.cut_after is not None:
            # Promise the whole body and a kept-alive connection, then send half and close.
            head = [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(body))),
                ("Connection", "keep-alive"),
            ]
            await conn.send_head(200, head)
            await conn.send_data(body[: len(body) // 2])
            return
        await conn.send_response(200, body)

    async def _stream(
        self,
        conn: HttpConnection,
        reply: Reply,
        payload: dict[str, Any],
        prompt: str,
        want_usage: bool,
    ) -> None:
        pieces = reply_pieces(reply, payload)
        events, complete = stream_events(
            reply, pieces, model=self.model, prompt=prompt, want_usage=want_usage
        )

        async def write() -> None:
            await conn.send_head(
                200,
                [
                    ("Content-Type", "text/event-stream; charset=utf-8"),
                    ("Cache-Control", "no-cache"),
                    # Like real providers: a whole answer leaves the connection open.
                    ("Connection", "keep-alive" if complete else "close"),
                ],
            )
            # A scripted long line comes after the first piece of text (or, with
            # none, after the role chunk).
            long_after = 1 if pieces and len(events) > 1 else 0
            for i, (delay, data) in enumerate(events):
                await _delay(delay)
                await conn.send_data(b"data: " + data + b"\n\n")
                self.bytes_streamed += len(data) + 8
                if reply.line_bytes is not None and i == long_after:
                    await self._long_line(conn, reply.line_bytes)
            n = len(events)
            while reply.endless:
                for piece in pieces or ["。"]:
                    await _delay(reply.chunk_delay)
                    n += 1
                    data = content_chunk(self.model, n, piece)
                    await conn.send_data(b"data: " + data + b"\n\n")
                    self.bytes_streamed += len(data) + 8
            if complete:
                await conn.end_body()
            # else: the connection closes without the end of the chunked body

        self._streams.add(1)
        ended = False
        try:
            # Notice a client that hangs up during a long delay, so no task outlives it.
            ended = await conn.unless_hung_up(write) and complete
        finally:
            if not ended:
                # A cut or abandoned stream is over only once its socket is closed (the
                # caller's close is then a no-op): a test waiting for zero streams sees
                # the upstream gone. A whole answer keeps its connection for the next.
                with anyio.CancelScope(shield=True):
                    await conn.aclose()
            self._streams.add(-1)

    async def _long_line(self, conn: HttpConnection, size: int) -> None:
        """One content chunk of ``size`` bytes on one SSE line, 64 KiB per write."""
        head = b'data: {"choices":[{"index":0,"delta":{"content":"'
        await conn.send_data(head)
        self.bytes_streamed += len(head)
        for start in range(0, size, 65536):
            part = b"a" * min(65536, size - start)
            await conn.send_data(part)
            self.bytes_streamed += len(part)
        tail = b'"},"finish_reason":null}]}\n\n'
        await conn.send_data(tail)
        self.bytes_streamed += len(tail)


def _has_image(payload: dict[str, Any]) -> bool:
    for message in payload.get("messages", []):
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for part in content:
                if isinstance(part, dict) and part.get("type") in ("image_url", "input_image"):
                    return True
    return False


async def run_fake_model(
    host: str = "127.0.0.1", port: int = 0, *, on_ready: Callable[[str], None]
) -> None:
    """Run the fake model server until cancelled; ``on_ready`` gets its base URL."""
    async with FakeModelServer(host, port) as fake:
        on_ready(fake.base_url)
        await anyio.sleep_forever()
