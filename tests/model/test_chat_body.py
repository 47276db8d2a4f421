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

from xtyserver.model.request import chat_body, post_chat
from xtyserver.model.tls import provider_client
from xtyserver.session.tool_schemas import TOOL_SPECS
from xtyserver.session.tools import ToolCall, assistant_message, tool_message
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


async def _both_sent(body: dict[str, Any]) -> tuple[Any, Any]:
    """The requests ``post_chat`` and the SDK's own ``create()`` make of ``body``."""
    async with FakeModelServer() as fake:
        fake.enqueue(Reply(text="好"), Reply(text="好"))
        ours = provider_client(fake.base_url, "sk-x", timeout=30.0)
        sdk = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-x", max_retries=0)
        try:
            async for _ in await post_chat(ours, body):
                pass
            async for _ in await sdk.chat.completions.create(**body):
                pass
        finally:
            await ours.close()
            await sdk.close()
        mine, theirs = fake.chat_requests
    return mine, theirs


@pytest.mark.anyio
@pytest.mark.parametrize("tools", [None, TOOL_SPECS])
async def test_post_chat_sends_the_bytes_the_sdk_would_have_sent(
    tools: list[dict[str, Any]] | None,
) -> None:
    # The provider must get the very bytes, path, key and content type the SDK's
    # create() sends, CJK as UTF-8 and not \u escapes.
    body = chat_body("scripted", _messages(), tools)
    mine, theirs = await _both_sent(body)
    # The same JSON as create() sends (its keys in its own order), serialised as the SDK does.
    assert json.loads(mine.body) == json.loads(theirs.body)
    assert mine.body == openapi_dumps(body)
    assert "钓鱼".encode() in mine.body
    assert mine.path == theirs.path
    for header in ("content-type", "authorization"):
        assert mine.headers[header] == theirs.headers[header]
    assert mine.headers["accept-encoding"] == "identity"


@pytest.mark.anyio
async def test_the_posted_bytes_are_the_ones_the_sdk_would_serialise() -> None:
    """Byte for byte the SDK's own JSON for every character a text may hold."""
    messages = _messages()
    # Controls, quotes, backslash, CJK, line separators, emoji.
    messages.append({"role": "user", "content": "".join(map(chr, range(0x300))) + "\u2028😀"})
    body = chat_body("scripted", messages, TOOL_SPECS, limits={"max_tokens": 800})
    mine, theirs = await _both_sent(body)
    assert json.loads(mine.body) == json.loads(theirs.body)
    assert mine.body == openapi_dumps(body)
