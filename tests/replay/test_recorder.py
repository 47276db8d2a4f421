"""serve --record: one JSON-lines file per connection, tokens never written, images described."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TOKEN, hello_frame, model_context, png_b64, recv, running, send
from xtyserver.replay.command import load

pytestmark = pytest.mark.anyio


def lines(folder: Path) -> list[dict[str, Any]]:
    (path,) = folder.glob("*.jsonl")
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_a_connection_is_recorded_without_token_or_pixels(tmp_path: Path) -> None:
    folder = tmp_path / "rec"
    async with running(tmp_path / "data", record=folder) as h:
        async with h.client() as ws:
            await send(ws, hello_frame())
            await recv(ws)
            h.clock.advance(2.5)
            await send(ws, {"type": "state.update", "modelContext": model_context(h.clock)})
            await send(ws, f"not json {TOKEN}")
            await recv(ws)
            await send(ws, '{"type":"adapter.hello","token":"an-old-token"} trailing')
            await recv(ws)
            await send(ws, b"\x00\x01")
            await recv(ws)
            image = {"mime": "image/png", "data": png_b64(64, 48)}
            await send(
                ws,
                {"type": "chat.send", "id": "c1", "text": "看图", "source": "text", "image": image},
            )
            while (await recv(ws))["type"] == "chat.delta":
                pass
        await h.server.wait_connections(0)
    rows = lines(folder)
    text = json.dumps(rows)
    assert TOKEN not in text and png_b64(64, 48)[:40] not in text
    assert rows[0]["auth"] == "hello" and rows[0]["images"] == "described"
    assert json.loads(rows[1]["in"])["token"] == "[redacted]"
    assert rows[2]["out"]["type"] == "server.hello" and rows[2]["t"] == 0.0
    assert rows[3]["t"] == 2.5 and json.loads(rows[3]["in"])["type"] == "state.update"
    assert rows[4]["in"] == "not json [redacted]"
    assert rows[6]["in"] == '{"type":"adapter.hello","token":"[redacted]"} trailing'
    assert "an-old-token" not in text
    assert rows[8]["binary"]["bytes"] == 2 and len(rows[8]["binary"]["sha256"]) == 64
    chat = next(r for r in rows if "image" in r)
    assert chat["image"]["width"] == 64 and chat["image"]["height"] == 48
    assert chat["image"]["format"] == "PNG" and json.loads(chat["in"])["image"]["data"] == "[image]"
    assert rows[-1]["close"]["code"] == 1000
    assert len(load(next(folder.glob("*.jsonl"))).outbound()) >= 4


async def test_header_token_and_record_images(tmp_path: Path) -> None:
    folder = tmp_path / "rec"
    async with running(tmp_path / "data", record=folder, record_images=True) as h:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with h.client(additional_headers=headers) as ws:
            await send(ws, hello_frame(token=None))
            await recv(ws)
            image = {"mime": "image/png", "data": png_b64(8, 8)}
            await send(
                ws,
                {"type": "chat.send", "id": "c1", "text": "x", "source": "voice", "image": image},
            )
            while (await recv(ws))["type"] == "chat.delta":
                pass
        await h.server.wait_connections(0)
    rows = lines(folder)
    assert rows[0]["auth"] == "header" and rows[0]["images"] == "kept"
    assert TOKEN not in json.dumps(rows)
    chat = next(r for r in rows if "in" in r and "chat.send" in r["in"])
    assert json.loads(chat["in"])["image"]["data"] == png_b64(8, 8) and "image" not in chat
