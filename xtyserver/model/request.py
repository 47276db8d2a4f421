"""The streamed chat request as plain JSON, posted without the openai SDK's transform.

``chat.completions.create()`` runs ``async_maybe_transform`` over every message
part against the SDK's typed-dict unions (2-3 ms per turn, issue 12). For the
plain JSON messages xtyserver builds it is an identity
(``tests/model/test_chat_body.py`` checks that against the installed SDK), so
:func:`post_chat` hands the body to the same ``post()`` that ``create()`` ends
in: same auth, timeout, SSE parsing and error types.
"""

from __future__ import annotations

from typing import Any

import openai
from openai.types.chat import ChatCompletion, ChatCompletionChunk

__all__ = ["chat_body", "post_chat"]


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
) -> openai.AsyncStream[ChatCompletionChunk]:
    """POST /chat/completions through ``client`` (its retry and timeout settings apply)."""
    return await client.post(
        "/chat/completions",
        body=body,
        cast_to=ChatCompletion,
        options=openai.RequestOptions(security={"bearer_auth": True}),
        stream=True,
        stream_cls=openai.AsyncStream[ChatCompletionChunk],
    )
