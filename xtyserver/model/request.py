"""The streamed chat request: its JSON body, and its answer read by the bounded SSE reader.

The body is plain JSON built here and encoded by msgspec: the very bytes the
openai SDK's ``create()`` would send for it (compact UTF-8; the SDK's
typed-dict transform is an identity for these messages), which
``tests/model/test_chat_body.py`` checks against the installed SDK.

The answer's bytes are split by :class:`~xtyserver.model.bounds.SseLines`,
which refuses a line or event over ``line_bytes`` (64 KiB) with
:class:`~xtyserver.model.bounds.OversizedLine` having kept at most that much:
one 256 MB line from a hostile or broken provider is never held whole. The
request asks for an uncompressed body (``Accept-Encoding: identity``), so the
bytes read are the bytes sent. Each event's JSON is kept as parsed
(:class:`RawChunk`); ``model.client`` reads it leniently.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import anyio
import httpx2
import msgspec

from xtyserver.model.bounds import LINE_BYTES, SseLines
from xtyserver.model.provider import TRANSPORT_ERRORS, Provider
from xtyserver.model.provider_errors import ProviderAnswerError, ProviderConnection, ProviderTimeout

__all__ = ["DRAIN_SECONDS", "ChatStream", "RawChunk", "chat_body", "post_chat"]

DRAIN_SECONDS = 1.0
"""The longest the end of a finished answer is waited for (to keep its connection)."""


class RawChunk:
    """One streamed chunk: the provider's JSON as parsed (``data``), no typed model built."""

    __slots__ = ("data",)

    def __init__(self, data: object) -> None:
        self.data = data


class ChatStream:
    """The chunks of one streamed answer, every SSE line and event capped.

    Ends at ``data: [DONE]`` or the end of the body. An event whose JSON
    carries an ``error`` (a provider failing mid-stream) or is not JSON raises
    :class:`~xtyserver.model.provider_errors.ProviderAnswerError`; a broken or stalled
    transport :class:`~.ProviderConnection` or :class:`~.ProviderTimeout`.
    :meth:`close` closes ``response``.
    """

    def __init__(self, response: httpx2.Response, line_bytes: int = LINE_BYTES) -> None:
        self.response = response
        self._iterator = self._chunks(line_bytes)

    def __aiter__(self) -> ChatStream:
        return self

    async def __anext__(self) -> RawChunk:
        return await self._iterator.__anext__()

    async def close(self) -> None:
        """Stop reading and release the connection."""
        await self._iterator.aclose()
        await self.response.aclose()

    async def _chunks(self, line_bytes: int) -> AsyncGenerator[RawChunk, None]:
        decoder = SseLines(line_bytes)
        pieces = self.response.aiter_bytes()
        try:
            async for piece in pieces:
                for event in decoder.feed(piece):
                    if event.data.startswith("[DONE]"):
                        await _drain(pieces, line_bytes)
                        return
                    yield _chunk(event.data)
            for event in decoder.finish():
                if event.data.startswith("[DONE]"):
                    return
                yield _chunk(event.data)
        except httpx2.TimeoutException as err:
            raise ProviderTimeout("the stream stopped") from err
        except TRANSPORT_ERRORS as err:
            raise ProviderConnection("the stream broke off") from err
        finally:
            with anyio.CancelScope(shield=True):
                await self.response.aclose()


async def _drain(pieces: AsyncIterator[bytes], cap: int) -> None:
    """Read what follows ``[DONE]`` (the chunked body's end), so the connection is kept.

    An answer closed unread costs its connection: the next turn would open a new
    one. At most ``cap`` bytes and :data:`DRAIN_SECONDS`; past either the
    connection is given up instead, and nothing read is ever an error.
    """
    size = 0
    with anyio.move_on_after(DRAIN_SECONDS), contextlib.suppress(*TRANSPORT_ERRORS):
        async for piece in pieces:
            size += len(piece)
            if size > cap:
                return


def _chunk(data: str) -> RawChunk:
    try:
        value = msgspec.json.decode(data)
    except msgspec.DecodeError:
        raise ProviderAnswerError("a streamed event is not JSON") from None
    if isinstance(value, dict) and value.get("error"):
        raise ProviderAnswerError("the provider sent an error mid-stream")
    return RawChunk(value)


def chat_body(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    *,
    limits: dict[str, int] | None = None,
    json_mode: bool = False,
) -> dict[str, Any]:
    """The JSON body of a streamed chat request, exactly as ``create()`` would send it."""
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if limits:
        body.update(limits)
    if tools:
        body["tools"] = tools
    if json_mode:
        body["response_format"] = {"type": "json_object"}
    return body


async def post_chat(
    client: Provider, body: dict[str, Any], *, line_bytes: int = LINE_BYTES
) -> ChatStream:
    """POST /chat/completions through ``client`` and return its chunks as they come."""
    return ChatStream(await client.open_stream("/chat/completions", body), line_bytes)
