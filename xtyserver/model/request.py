"""The streamed chat request as plain JSON, posted without the openai SDK's transform.

``chat.completions.create()`` runs ``async_maybe_transform`` over every message
part against the SDK's typed-dict unions (2-3 ms per turn, issue 12). For the
plain JSON messages xtyserver builds it is an identity
(``tests/model/test_chat_body.py`` checks that against the installed SDK), so
:func:`post_chat` hands the body to the same ``post()`` that ``create()`` ends
in: same auth, timeout, SSE parsing and error types.

The streamed chunks are not built into the SDK's pydantic ``ChatCompletionChunk``
either (about 60 us a chunk, seven chunks a short reply): :class:`RawChunk` is
the SDK's hook for a type that builds itself (``ModelBuilderProtocol``) and
keeps the chunk's JSON as parsed; ``model.client`` reads it leniently.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.types.chat import ChatCompletion

__all__ = ["RawChunk", "chat_body", "post_chat"]


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


def chat_body(
    model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None
) -> dict[str, Any]:
    """The JSON body of a streamed chat request, exactly as ``create()`` would send it."""
    body: dict[str, Any] = {
        "model": model,
        "messages": messages,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if tools:
        body["tools"] = tools
    return body


async def post_chat(
    client: openai.AsyncOpenAI, body: dict[str, Any]
) -> openai.AsyncStream[RawChunk]:
    """POST /chat/completions through ``client`` (its retry and timeout settings apply)."""
    return await client.post(
        "/chat/completions",
        body=body,
        cast_to=ChatCompletion,
        options=openai.RequestOptions(security={"bearer_auth": True}),
        stream=True,
        stream_cls=openai.AsyncStream[RawChunk],
    )
