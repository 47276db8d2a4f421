"""The streamed chat request as plain JSON, posted without the openai SDK's transform.

``chat.completions.create()`` runs ``async_maybe_transform`` over every message
part against the SDK's typed-dict unions (2-3 ms per turn, issue 12). For the
plain JSON messages xtyserver builds it is an identity
(``tests/model/test_chat_body.py`` checks that against the installed SDK), so
:func:`post_chat` hands the body to the same ``post()`` that ``create()`` ends
in: same auth, timeout, SSE parsing and error types.

The body is serialised by msgspec and handed to ``post()`` as ``content``
(the SDK's own parameter for a ready body; its ``Content-Type`` stays
``application/json``): the SDK's ``json.dumps`` took 1.1-1.6 ms for a request
carrying a 1440x810 screenshot's data URL, msgspec 0.2-0.3 ms (issue 22,
``scripts/bench/image_turn_steps.py``), and the bytes are the same compact
UTF-8 JSON (``tests/model/test_chat_body.py``).

The streamed chunks are not built into the SDK's pydantic ``ChatCompletionChunk``
either (about 60 us a chunk, seven chunks a short reply): :class:`RawChunk` is
the SDK's hook for a type that builds itself (``ModelBuilderProtocol``) and
keeps the chunk's JSON as parsed; ``model.client`` reads it leniently.

The stream's bytes are not split by the SDK's SSE decoder either: it has no
line or event size limit, so one 256 MB line from a hostile or broken
provider would be held whole (issue 18). :class:`BoundedStream` reads the
body through :class:`~xtyserver.model.bounds.SseLines`, which refuses a line or
event over ``line_bytes`` (64 KiB) with :class:`~xtyserver.model.bounds.OversizedLine`
having kept at most that much. The request asks for an uncompressed body
(``Accept-Encoding: identity``), so the bytes read are the bytes sent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import msgspec
import openai
from openai._httpx2 import request_exceptions, timeout_exceptions
from openai._streaming import ServerSentEvent
from openai.types.chat import ChatCompletion

from xtyserver.model.bounds import LINE_BYTES, SseLines

__all__ = ["BoundedStream", "RawChunk", "chat_body", "post_chat"]

_ENCODER = msgspec.json.Encoder()


class RawChunk:
    """One streamed chunk: the provider's JSON as parsed, no typed model built.

    Attributes:
        data: The chunk's JSON value (a dict from any well-behaved provider).
    """

    __slots__ = ("data",)

    def __init__(self, data: object) -> None:
        self.data = data

    @classmethod
    def build(cls, *, response: object, data: object) -> RawChunk:
        """The SDK's ``ModelBuilderProtocol``: called with each chunk's parsed JSON."""
        return cls(data)


class BoundedStream(openai.AsyncStream[RawChunk]):
    """The SDK's stream with our own SSE decoding: every line and event capped.

    ``line_bytes`` is set per stream by :func:`post_chat` (the SDK builds the
    stream itself, so the cap cannot be a constructor argument).
    """

    line_bytes = LINE_BYTES

    async def _iter_events(self) -> AsyncIterator[ServerSentEvent]:
        decoder = SseLines(self.line_bytes)
        try:
            async for chunk in self.response.aiter_bytes():
                for event in decoder.feed(chunk):
                    yield ServerSentEvent(event=event.event, data=event.data)
            for event in decoder.finish():
                yield ServerSentEvent(event=event.event, data=event.data)
        # As the SDK's own decoder does: transport trouble is the SDK's error.
        except timeout_exceptions() as err:
            raise openai.APITimeoutError(request=self.response.request) from err
        except request_exceptions() as err:
            raise openai.APIConnectionError(request=self.response.request) from err


def chat_body(
    model: str,
    messages: list[dict[str, Any]],
    tools: list[dict[str, Any]] | None = None,
    *,
    limits: dict[str, int] | None = None,
    json_mode: bool = False,
) -> dict[str, Any]:
    """The JSON body of a streamed chat request, exactly as ``create()`` would send it.

    Args:
        model: The model name.
        messages: The chat messages.
        tools: Tool definitions to offer, or None.
        limits: The token limit keys (:func:`xtyserver.model.bounds.token_limits`).
        json_mode: Ask for one JSON object (``response_format``).
    """
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
    client: openai.AsyncOpenAI, body: dict[str, Any], *, line_bytes: int = LINE_BYTES
) -> BoundedStream:
    """POST /chat/completions through ``client`` (its retry and timeout settings apply).

    The body goes as bytes encoded by msgspec: the very bytes the SDK's own
    ``json.dumps`` would send (compact, UTF-8; ``tests/model/test_chat_body.py``),
    in a tenth of its time.
    """
    stream = await client.post(
        "/chat/completions",
        content=_ENCODER.encode(body),
        cast_to=ChatCompletion,
        options=openai.RequestOptions(
            security={"bearer_auth": True}, headers={"Accept-Encoding": "identity"}
        ),
        stream=True,
        stream_cls=BoundedStream,
    )
    stream.line_bytes = line_bytes
    return stream
