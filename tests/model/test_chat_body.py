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

import pytest
from openai._utils import async_maybe_transform
from openai.types.chat import completion_create_params

from xtyserver.model.request import chat_body
from xtyserver.session.tools import TOOL_SPECS, ToolCall, assistant_message, tool_message


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


@pytest.mark.parametrize("tools", [None, TOOL_SPECS])
def test_the_posted_bytes_are_the_ones_the_sdk_would_serialise(
    tools: list[dict[str, Any]] | None,
) -> None:
    """``post_chat`` encodes the body with msgspec: byte for byte the SDK's own JSON."""
    import msgspec
    from openai._utils._json import openapi_dumps

    messages = _messages()
    # Every character a text may hold: controls, quotes, backslash, CJK, line separators, emoji.
    messages.append({"role": "user", "content": "".join(map(chr, range(0x300))) + "\u2028😀"})
    body = chat_body("scripted", messages, tools, limits={"max_tokens": 800})
    assert msgspec.json.encode(body) == openapi_dumps(body)
