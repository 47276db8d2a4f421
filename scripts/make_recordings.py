"""Regenerate ``recordings/``: six adapter sessions against the real server and the scripted model.

    .venv/bin/python scripts/make_recordings.py [--out recordings]

Runs ``serving(..., record=DIR)`` (what ``xtyserver serve --record DIR`` runs) on a
ManualClock, so time offsets are realistic (heartbeats every 5 s, a minute or two
of play) and the files come out the same on every run except for session ids and
hashes of nothing secret. The scripted model answers with its default reply, so
``xtyserver replay --check`` against any scripted model gets the same texts.
The client side is a raw WebSocket, as a game mod's would be: it sends some
frames the adapter client would refuse to send (over budget, forbidden content).
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from PIL import Image, ImageDraw
from websockets.asyncio.client import ClientConnection, connect

from xtyserver.clock import ManualClock
from xtyserver.config import load_settings
from xtyserver.server import serving
from xtyserver.testing import FakeModelServer

TOKEN = "recording-token-not-a-secret-0123456789ab"
START = 1_790_000_000.0
Context = Callable[[int], dict[str, Any]]


def stardew(step: int) -> dict[str, Any]:
    tools = ["Watering Can", "Hoe", "Fishing Rod", "Axe", "Pickaxe"]
    return {
        "world": {
            "location": "Farm" if step < 8 else "Beach",
            "time": f"{8 + step // 3:02d}:{step % 3 * 20:02d}",
            "season": "spring",
            "weather": "rainy" if step % 7 == 6 else "sunny",
            "day": 5,
        },
        "player": {
            "health": 100,
            "stamina": 270 - 9 * step,
            "status": ["well-fed"] if step < 6 else [],
            "heldItem": tools[step % len(tools)],
        },
        "focus": {"kind": "crop", "name": "Parsnip", "reachable": True},
        "nearby": [
            {"kind": "npc", "name": n, "distance": d} for n, d in (("Robin", 6), ("Abigail", 11))
        ],
        "relevantItems": [
            {"name": "Parsnip Seeds", "count": 15 - step % 5},
            {"name": "Bait", "count": 18},
        ],
        "ui": {"busy": False},
    }


def dst(step: int) -> dict[str, Any]:
    night = step >= 9
    return {
        "world": {
            "location": "Forest",
            "time": "night" if night else "dusk",
            "season": "autumn",
            "weather": "clear",
            "day": 12,
        },
        "player": {
            "health": 150 - 4 * step,
            "status": [
                f"hunger {120 - 3 * step}/150",
                f"sanity {180 - 5 * step}/200",
                "night danger" if night else "safe",
            ],
            "heldItem": "Torch" if night else "Spear",
        },
        "focus": {"kind": "structure", "name": "Campfire", "reachable": True},
        "nearby": [{"kind": "monster", "name": "Hound", "distance": 14 - step % 5}]
        if step % 4 == 3
        else [{"kind": "npc", "name": "Pig Man", "distance": 8}],
        "relevantItems": [
            {"name": "Cut Grass", "count": 12},
            {"name": "Twigs", "count": 9},
            {"name": "Log", "count": 4},
        ],
    }


def oni(step: int) -> dict[str, Any]:
    return {
        "world": {
            "location": "Asteroid",
            "time": f"cycle {41 + step // 6} {step % 6 * 100}/600",
            "day": 41 + step // 6,
        },
        "player": {
            "status": [
                f"oxygen {2100 - 40 * step} g/tile",
                f"stress {18 + 3 * step}%",
                "food 12,400 kcal",
            ]
        },
        "focus": {"kind": "building", "name": "Oxygen Diffuser", "reachable": True},
        "nearby": [
            {"kind": "duplicant", "name": n, "distance": d}
            for n, d in (("Meep", 3), ("Ada", 7), ("Stinky", 12))
        ],
        "relevantItems": [
            {"name": "Algae", "count": 850 - 20 * step},
            {"name": "Water", "count": 4000},
        ],
        "ui": {"busy": False, "menu": "Priorities" if step == 4 else None},
    }


@dataclass
class Plan:
    game: str
    save: str
    other: str
    name: str
    context: Context
    chats: list[tuple[str, str]]  # (text, source)
    header_token: bool = True
    switch: bool = False  # a save switch to `other` near the end
    switch_while_streaming: bool = False  # refused with reply_in_progress
    sparse: bool = False  # one heartbeat gap of 9 s (lint finds it)
    chatty: bool = False  # two state updates 0.3 s apart (lint finds it)
    padded: bool = False  # a 17 KiB heartbeat (frame_too_large)
    bad_image: bool = False  # a PNG declared as JPEG (invalid_image)


PLANS = [
    Plan(
        "stardew-valley",
        "farm-a",
        "farm-b",
        "Sunny Farm",
        stardew,
        [
            ("今天适合钓鱼吗？", "voice"),
            ("Robin 喜欢什么礼物？", "text"),
            ("帮我记住：先攒钱升级水壶", "text"),
            ("海边现在能钓到什么？", "voice"),
        ],
        switch=True,
    ),
    Plan(
        "stardew-valley",
        "farm-b",
        "farm-a",
        "Moon Farm",
        stardew,
        [
            ("What should I plant first this spring?", "text"),
            ("我的存档在 C:\\Users\\Ann\\AppData 里吗", "text"),
            ("下雨天做什么好？", "voice"),
        ],
        header_token=False,
        chatty=True,
    ),
    Plan(
        "dont-starve-together",
        "world-a",
        "world-b",
        "Autumn Camp",
        dst,
        [
            ("天快黑了，我该做什么？", "voice"),
            ("猎犬要来了吗？", "voice"),
            ("How do I raise sanity fast?", "text"),
        ],
        switch_while_streaming=True,
    ),
    Plan(
        "dont-starve-together",
        "world-b",
        "world-a",
        "Swamp Base",
        dst,
        [("今天第几天了？", "text"), ("火把还能烧多久？", "voice"), ("给我一个过冬清单", "text")],
        sparse=True,
        bad_image=True,
    ),
    Plan(
        "oxygen-not-included",
        "colony-a",
        "colony-b",
        "Terra",
        oni,
        [
            ("氧气够用吗？", "text"),
            ("Meep 压力太高怎么办？", "voice"),
            ("What should the next research be?", "text"),
        ],
        padded=True,
    ),
    Plan(
        "oxygen-not-included",
        "colony-b",
        "colony-a",
        "Oasisse",
        oni,
        [
            ("藻类还能撑几个周期？", "text"),
            ("下一步该建什么？", "voice"),
            ("帮我记住：优先建电解水", "text"),
        ],
        header_token=False,
        sparse=True,
    ),
]


def picture(width: int, height: int, fmt: str) -> bytes:
    image = Image.new("RGB", (width, height), (90, 150, 90))
    draw = ImageDraw.Draw(image)
    draw.rectangle((width // 3, height // 3, width // 2, height // 2), fill=(200, 120, 60))
    buf = io.BytesIO()
    image.save(buf, format=fmt)
    return buf.getvalue()


class Driver:
    def __init__(self, ws: ClientConnection, clock: ManualClock) -> None:
        self.ws, self.clock, self.n = ws, clock, 0

    async def send(self, frame: dict[str, Any] | str) -> None:
        await self.ws.send(
            frame if isinstance(frame, str) else json.dumps(frame, ensure_ascii=False)
        )

    async def recv(self) -> dict[str, Any]:
        with anyio.fail_after(20):
            value: dict[str, Any] = json.loads(await self.ws.recv())
        return value

    async def until(self, done: Callable[[dict[str, Any]], bool], count: int = 1) -> None:
        while count:
            count -= done(await self.recv())

    def stamp(self) -> str:
        return (
            datetime.fromtimestamp(self.clock.now(), UTC).isoformat(timespec="milliseconds")[:-6]
            + "Z"
        )

    def context(self, plan: Plan, step: int) -> dict[str, Any]:
        return {"schemaVersion": 1, "capturedAt": self.stamp(), **plan.context(step)}

    async def beat(self) -> None:
        """A heartbeat, and a barrier: the server has read everything sent before it once
        its 15 s heartbeat deadline is armed again, so the clock may move on."""
        await self.send({"type": "heartbeat"})
        await self.clock.wait_deadline(self.clock.now() + 15.0)

    async def chat(self, chat_id: str, text: str, source: str, **extra: Any) -> None:
        await self.send(
            {"type": "chat.send", "id": chat_id, "text": text, "source": source, **extra}
        )
        await self.until(lambda f: f.get("id") == chat_id and f["type"] != "chat.delta")


async def drive(url: str, clock: ManualClock, plan: Plan) -> None:
    headers = {"Authorization": f"Bearer {TOKEN}"} if plan.header_token else {}
    async with connect(url, additional_headers=headers, max_size=None) as ws:
        d = Driver(ws, clock)
        hello: dict[str, Any] = {
            "type": "adapter.hello",
            "id": "hello-1",
            "protocol": "v1",
            "adapter": {"name": f"XTY {plan.game}", "version": "1.2.0"},
            "identity": {"gameId": plan.game, "saveId": plan.save, "saveName": plan.name},
            "capabilities": {"image": True, "voice": True},
            "timezone": "Asia/Shanghai",
        }
        if not plan.header_token:
            hello["token"] = TOKEN
        await d.send(hello)
        await d.recv()
        chats = iter(enumerate(plan.chats, start=1))
        jpeg = base64.b64encode(picture(1280, 720, "JPEG")).decode()
        png = base64.b64encode(picture(640, 360, "PNG")).decode()
        for step in range(16):
            clock.advance(9.0 if plan.sparse and step == 5 else 5.0)
            if step in (0, 3, 6, 9, 12):
                await d.send({"type": "state.update", "modelContext": d.context(plan, step)})
            if step == 6 and plan.chatty:
                await d.beat()
                clock.advance(0.3)
                await d.send({"type": "state.update", "modelContext": d.context(plan, step)})
            if step in (1, 4, 10) or (step == 7 and len(plan.chats) > 3):
                n, (text, source) = next(chats)
                extra: dict[str, Any] = {}
                if step == 1:
                    extra["image"] = {"mime": "image/jpeg", "data": jpeg}
                if step == 4:
                    extra["context"] = {"modelContext": d.context(plan, step)}
                if step == 10 and plan.bad_image:
                    extra["image"] = {"mime": "image/jpeg", "data": png}
                elif step == 10:
                    extra["image"] = {"mime": "image/png", "data": png}
                await d.chat(f"chat-{n}", text, source, **extra)
            if step == 2:  # six villagers nearby: over the budget of five
                crowded = d.context(plan, step)
                crowded["nearby"] = [
                    {"kind": "npc", "name": f"Villager {i}", "distance": i} for i in range(6)
                ]
                await d.send({"type": "state.update", "modelContext": crowded})
                await d.recv()
            if step == 5:
                await d.send({"type": "stats.get", "id": "stats-1"})
                await d.recv()
            if step == 8:  # a path leaking into the state: refused
                leaky = d.context(plan, step)
                leaky["world"]["location"] = "D:/Games/Saves/" + plan.save
                await d.send({"type": "state.update", "id": "s-leak", "modelContext": leaky})
                await d.recv()
            if step == 11 and plan.padded:
                await d.send('{"type":"heartbeat"}' + " " * 17_000)
                await d.recv()
            if step == 13:
                await d.send({"type": "memory.get", "id": "mem-1"})
                await d.recv()
                await d.send(
                    {"type": "profile.update", "id": "prof-1", "field": "nickname", "value": "小明"}
                )
                await d.recv()
            await d.beat()
        other = {"gameId": plan.game, "saveId": plan.other}
        if plan.switch_while_streaming:
            await d.send(
                {
                    "type": "chat.send",
                    "id": "chat-9",
                    "text": "等一下，我换个存档",
                    "source": "voice",
                }
            )
            await d.send(
                {
                    "type": "state.update",
                    "id": "s-switch",
                    "identity": other,
                    "modelContext": d.context(plan, 15),
                }
            )
            await d.until(
                lambda f: f.get("id") in ("chat-9", "s-switch") and f["type"] != "chat.delta", 2
            )
        if plan.switch:
            clock.advance(5.0)
            await d.beat()
            await d.send(
                {"type": "state.update", "identity": other, "modelContext": d.context(plan, 15)}
            )
            await d.chat("chat-10", "这是另一个农场了吗？", "text")
        clock.advance(5.0)
        await d.beat()


async def main(out: Path) -> None:
    clock = ManualClock(START)
    with tempfile.TemporaryDirectory(prefix="xty-rec-") as tmp:
        raw = Path(tmp) / "raw"
        async with FakeModelServer() as fake:
            settings = load_settings(
                None,
                env={},
                overrides={
                    "data_dir": str(Path(tmp) / "data"),
                    "server.port": 0,
                    "model.base_url": fake.base_url,
                    "model.model": "scripted-vl",
                },
            )
            async with serving(settings, token=TOKEN, clock=clock, record=raw) as server:
                out.mkdir(parents=True, exist_ok=True)
                for plan in PLANS:
                    before = set(raw.iterdir())
                    await drive(server.url, clock, plan)
                    await server.wait_connections(0)
                    (made,) = set(raw.iterdir()) - before
                    target = out / f"{plan.game}-{plan.save}.jsonl"
                    shutil.move(made, target)
                    print(f"{target}: {sum(1 for _ in target.open())} lines")
                    clock.advance(60.0)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parents[1] / "recordings"
    )
    anyio.run(main, parser.parse_args().out)
