from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import chat, model_context, running, send

pytestmark = pytest.mark.anyio


async def test_adapter_gets_streamed_reply_after_hello_and_state(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        await send(
            ws,
            {
                "type": "state.update",
                "modelContext": model_context(h.clock, world={"location": "Farm", "day": 3}),
            },
        )
        deltas, done = await chat(ws, "今天钓什么鱼好？")
        assert done["type"] == "chat.done", done
        assert len(deltas) >= 2
        assert "".join(d["text"] for d in deltas) == done["text"]
        assert done["context"] == "fresh"
        request = h.turn_request()
        assert "Farm" in request.body.decode()
