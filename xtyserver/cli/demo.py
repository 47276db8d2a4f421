"""``xtyserver demo``: the whole path in one command, no API key needed.

Starts the scripted model server and xtyserver on free loopback ports,
connects as a simulated Stardew Valley adapter through the adapter client
(:mod:`xtyserver.adapter`) with a ``saveId`` derived from the farm's features
(:func:`~xtyserver.adapter.derive_save_id`), says hello, sends one
``state.update`` and two ``chat.send`` frames with a small generated PNG, each
with the modelContext projected from one full observation for that question
(:func:`~xtyserver.adapter.project`), and prints the streamed reply as it
arrives.
"""

from __future__ import annotations

import io
import secrets
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
from PIL import Image, ImageDraw

from xtyserver.adapter import (
    AdapterClient,
    AdapterInfo,
    Capabilities,
    ChatDone,
    Identity,
    captured_at,
    derive_save_id,
    new_salt,
    project,
    screenshot,
)
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


def demo_png() -> bytes:
    """A small generated 'screenshot': a pond, a farmer, a sun."""
    image = Image.new("RGB", (320, 180), (110, 180, 90))
    draw = ImageDraw.Draw(image)
    draw.ellipse((180, 90, 300, 160), fill=(60, 120, 200))
    draw.rectangle((80, 80, 100, 120), fill=(200, 80, 60))
    draw.ellipse((20, 10, 60, 50), fill=(250, 220, 60))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return buf.getvalue()


def observation() -> dict[str, Any]:
    """The simulated game's full state; each question gets its own projection of it."""
    return {
        "capturedAt": captured_at(),
        "world": {
            "location": "Farm",
            "time": "08:10",
            "season": "spring",
            "weather": "sunny",
            "day": 5,
        },
        "player": {"health": 100, "stamina": 72, "status": ["hungry"], "heldItem": "Fishing Rod"},
        "focus": {"kind": "water", "name": "farm pond", "reachable": True},
        "nearby": [
            {"kind": "npc", "name": "Abigail", "distance": 4},
            {"kind": "crop", "name": "Parsnip", "distance": 2},
        ],
        "relevantItems": [{"name": "Bait", "count": 18}],
        "inventory": [
            {"name": "Fishing Rod", "count": 1, "tags": ["fishing"]},
            {"name": "Parsnip Seeds", "count": 15, "tags": ["farming"]},
            {"name": "Pickaxe", "count": 1},
        ],
        "quests": [{"name": "Community Center: Fish Tank", "items": ["Sunfish"]}],
        "ui": {"busy": False},
    }


async def _adapter(url: str, token: str, out: Any) -> None:
    # A real mod keeps the salt in its config and names its save's stable features.
    features = {"farm": "Sunny Farm", "created": "1714700000", "seed": "42"}
    save_id = derive_save_id(features, new_salt())
    identity = Identity(game_id="stardew-valley", save_id=save_id, save_name="Sunny Farm")
    async with AdapterClient(
        url,
        token=token,
        identity=identity,
        adapter=AdapterInfo(name="demo-stardew", version="0.1.0"),
        capabilities=Capabilities(image=True),
        timezone="Asia/Shanghai",
    ) as client:
        hello = client.server_hello
        print(
            f"<- server.hello  session {hello.session_id}, heartbeat {hello.heartbeat_ms} ms,"
            f" saveId {save_id}",
            file=out,
        )
        await client.update_state(project(observation(), "", "stardew-valley"))
        print("-> state.update  Farm, 08:10, spring, holding a Fishing Rod", file=out)
        image = screenshot(demo_png(), "image/png")
        for question in QUESTIONS:
            print(f"\n-> chat.send     {question}  (+ screenshot)", file=out)
            context = project(observation(), question, "stardew-valley")
            kept = sorted(k for k in context if k not in ("schemaVersion", "capturedAt"))
            print(f"   modelContext   {', '.join(kept)}", file=out)
            reply = await client.chat(question, image=image, model_context=context)
            print("<- 小汤圆: ", end="", file=out, flush=True)
            async for piece in reply:
                print(piece, end="", file=out, flush=True)
            with anyio.fail_after(30):
                outcome = await reply.result()
            if isinstance(outcome, ChatDone):
                usage = outcome.usage
                print(
                    f"\n<- chat.done     {len(outcome.text)} chars,"
                    f" context {outcome.context},"
                    f" image sent {outcome.image_sent},"
                    f" tokens {usage.total_tokens if usage else '?'}",
                    file=out,
                )
            else:
                print(f"\n<- {type(outcome).__name__}: {outcome.code} {outcome.message}", file=out)


async def run_demo(data_dir: str | None = None, out: Any = None) -> int:
    """Run the demo; returns the exit code."""
    out = out or sys.stdout
    token = secrets.token_urlsafe(32)
    with tempfile.TemporaryDirectory(prefix="xty-demo-") as tmp:
        folder = Path(data_dir or tmp)
        async with FakeModelServer() as fake:
            for question, answer in zip(QUESTIONS, SCRIPTED, strict=True):
                # The server hands the model the text as typed (v1.md "Normalisation").
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
