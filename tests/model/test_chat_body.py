"""The chat request body skips the openai SDK's request transform: prove it needs none.

``ModelClient`` posts :func:`chat_body` straight to ``/chat/completions`` instead
of calling ``chat.completions.create()``, whose only extra work is
``async_maybe_transform`` over the params (issue 12: 2-3 ms a turn). That is
only honest while the transform is an identity for every message shape we
send; this test runs the installed SDK's transform over all of them.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai._utils import async_maybe_transform
from openai._utils._json import openapi_dumps
from openai.types.chat import completion_create_params

from xtyserver.model.request import _ENCODER, chat_body, post_chat
from xtyserver.session.tools import TOOL_SPECS, ToolCall, assistant_message, tool_message
from xtyserver.testing import FakeModelServer, Reply


def _messages() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "你是小汤圆"},
        {"role": "system", "content": "你记得的事（仅供参考）：\n- 鱼缸收集包"},
        {"role": "user", "content": "之前那句"},
        {"role": "assistant", "content": "好的"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "今天适合去钓鱼吗？"},
                {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,/9j/AA=="}},
            ],
        },
        assistant_message("", (ToolCall("call-1", "xiaotangyuan_memory_view", '{"a": 1}'),)),
        tool_message("call-1", "没有记忆"),
    ]


@pytest.mark.anyio
@pytest.mark.parametrize("tools", [None, TOOL_SPECS])
async def test_the_sdk_transform_leaves_our_chat_body_unchanged(
    tools: list[dict[str, Any]] | None,
) -> None:
    body = chat_body("scripted", _messages(), tools)
    snapshot = json.dumps(body, sort_keys=True)
    transformed = await async_maybe_transform(
        body, completion_create_params.CompletionCreateParamsStreaming
    )
    assert json.dumps(transformed, sort_keys=True) == snapshot
    assert ("tools" in body) == bool(tools)


@pytest.mark.anyio
@pytest.mark.parametrize("tools", [None, TOOL_SPECS])
async def test_post_chat_sends_the_bytes_the_sdk_would_have_sent(
    tools: list[dict[str, Any]] | None,
) -> None:
    # post_chat serialises the body itself (msgspec, issue 22) and hands it over as
    # content: the provider must get the very bytes and content type the SDK's own
    # json.dumps would have produced, CJK as UTF-8 and not \u escapes.
    body = chat_body("scripted", _messages(), tools)
    async with FakeModelServer() as fake:
        fake.enqueue(Reply(text="好"))
        client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-x", max_retries=0)
        try:
            async for _ in await post_chat(client, body):
                pass
        finally:
            await client.close()
        [request] = fake.chat_requests
    assert request.body == openapi_dumps(body)
    assert "钓鱼".encode() in request.body
    assert request.headers["content-type"] == "application/json"


@pytest.mark.parametrize("tools", [None, TOOL_SPECS])
def test_the_posted_bytes_are_the_ones_the_sdk_would_serialise(
    tools: list[dict[str, Any]] | None,
) -> None:
    """``post_chat`` encodes the body with msgspec: byte for byte the SDK's own JSON."""
    messages = _messages()
    # Every character a text may hold: controls, quotes, backslash, CJK, line separators, emoji.
    messages.append({"role": "user", "content": "".join(map(chr, range(0x300))) + "\u2028😀"})
    body = chat_body("scripted", messages, tools, limits={"max_tokens": 800})
    assert _ENCODER.encode(body) == openapi_dumps(body)
