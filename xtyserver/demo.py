"""``xtyserver demo``: the whole path in one command, no API key needed.

Starts the scripted model server and xtyserver on free loopback ports,
connects as a simulated Stardew Valley adapter, says hello, sends one
``state.update`` and two ``chat.send`` frames with a small generated PNG, and
prints the streamed reply as it arrives.
"""

from __future__ import annotations

import base64
import io
import json
import secrets
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from PIL import Image, ImageDraw
from websockets.asyncio.client import ClientConnection, connect

from xtyserver.clock import SystemClock
from xtyserver.config import load_settings
from xtyserver.server import serving
from xtyserver.testing import FakeModelServer, Reply

QUESTIONS = ("今天适合去钓鱼吗？", "我想先完成社区中心的鱼缸收集包，有什么建议？")
# What the scripted model answers (a real provider replaces it via XTY_MODEL_BASE_URL).
SCRIPTED = (
    "晴天、春季、手里正好拿着鱼竿，还有 18 个鱼饵，非常适合钓鱼！农场池塘就在旁边，先去试试吧。",
    "好主意！鱼缸收集包春天能钓到的先钓：太阳鱼、鲶鱼（雨天）、西鲱。我帮你记下这个目标啦。",
)


def demo_png() -> str:
    """A small generated 'screenshot': a pond, a farmer, a sun."""
    image = Image.new("RGB", (320, 180), (110, 180, 90))
    draw = ImageDraw.Draw(image)
    draw.ellipse((180, 90, 300, 160), fill=(60, 120, 200))
    draw.rectangle((80, 80, 100, 120), fill=(200, 80, 60))
    draw.ellipse((20, 10, 60, 50), fill=(250, 220, 60))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _now_rfc3339() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


async def _send(ws: ClientConnection, frame: dict[str, Any]) -> None:
    await ws.send(json.dumps(frame, ensure_ascii=False))


async def _recv(ws: ClientConnection) -> dict[str, Any]:
    with anyio.fail_after(30):
        value: dict[str, Any] = json.loads(await ws.recv())
    return value


async def _adapter(url: str, token: str, out: Any) -> None:
    async with connect(url) as ws:
        await _send(
            ws,
            {
                "type": "adapter.hello",
                "id": "hello-1",
                "protocol": "v1",
                "adapter": {"name": "demo-stardew", "version": "0.1.0"},
                "identity": {"gameId": "stardew-valley", "saveId": "demo-farm"},
                "token": token,
                "capabilities": {"image": True, "voice": False},
                "timezone": "Asia/Shanghai",
            },
        )
        hello = await _recv(ws)
        print(
            f"<- server.hello  session {hello['sessionId']}, heartbeat {hello['heartbeatMs']} ms",
            file=out,
        )
        context = {
            "schemaVersion": 1,
            "capturedAt": _now_rfc3339(),
            "world": {
                "location": "Farm",
                "time": "08:10",
                "season": "spring",
                "weather": "sunny",
                "day": 5,
            },
            "player": {
                "health": 100,
                "stamina": 72,
                "status": ["hungry"],
                "heldItem": "Fishing Rod",
            },
            "focus": {"kind": "water", "name": "farm pond", "reachable": True},
            "nearby": [{"kind": "npc", "name": "Abigail", "distance": 4}],
            "relevantItems": [{"name": "Bait", "count": 18}],
            "ui": {"busy": False, "menu": None},
        }
        await _send(ws, {"type": "state.update", "modelContext": context})
        await _send(ws, {"type": "heartbeat"})
        print("-> state.update  Farm, 08:10, spring, holding a Fishing Rod", file=out)
        image = demo_png()
        for n, question in enumerate(QUESTIONS, start=1):
            chat_id = f"chat-{n}"
            print(f"\n-> chat.send     {question}  (+ screenshot)", file=out)
            await _send(
                ws,
                {
                    "type": "chat.send",
                    "id": chat_id,
                    "text": question,
                    "source": "text",
                    "image": {"mime": "image/png", "data": image},
                },
            )
            print("<- 小汤圆: ", end="", file=out, flush=True)
            while True:
                frame = await _recv(ws)
                if frame["type"] == "chat.delta":
                    print(frame["text"], end="", file=out, flush=True)
                elif frame["type"] == "chat.done":
                    usage = frame.get("usage") or {}
                    print(
                        f"\n<- chat.done     {len(frame['text'])} chars,"
                        f" context {frame['context']},"
                        f" image sent {frame.get('imageSent', False)},"
                        f" tokens {usage.get('totalTokens', '?')}",
                        file=out,
                    )
                    break
                else:
                    print(f"\n<- {frame['type']}: {frame}", file=out)
                    break


async def run_demo(data_dir: str | None = None, out: Any = None) -> int:
    """Run the demo; returns the exit code."""
    out = out or sys.stdout
    token = secrets.token_urlsafe(32)
    with tempfile.TemporaryDirectory(prefix="xty-demo-") as tmp:
        folder = Path(data_dir or tmp)
        async with FakeModelServer() as fake:
            for question, answer in zip(QUESTIONS, SCRIPTED, strict=True):
                fake.enqueue(Reply(text=answer, match=question, chunk_delay=0.05))
            settings = load_settings(
                None,
                env={},
                overrides={
                    "data_dir": str(folder),
                    "server.port": 0,
                    "model.base_url": fake.base_url,
                    "model.model": "scripted-vl",
                },
            )
            async with serving(settings, token=token, clock=SystemClock()) as server:
                print(f"scripted model at {fake.base_url}", file=out)
                print(f"listening {server.url}", file=out)
                await _adapter(server.url, token, out)
                # Let background memory extraction finish (bounded) before stopping.
                with anyio.move_on_after(5):
                    await server.memory.wait_idle()
            sent = [r for r in fake.requests if r.path.endswith("/chat/completions")]
            images = sum('"image_url"' in r.body.decode("utf-8", "replace") for r in sent)
            print(
                f"\nthe scripted model got {len(sent)} requests ({images} with the screenshot;"
                " the others are background memory extraction)",
                file=out,
            )
    return 0
