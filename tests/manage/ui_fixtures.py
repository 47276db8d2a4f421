"""For the page, HTTP and MCP tests: a raw HTTP client and a store filled through the server."""

from __future__ import annotations

import json
from datetime import datetime
from zoneinfo import ZoneInfo

import anyio

from tests.conftest import NO_GRACE, Harness, chat, model_context, recv, send
from xtyserver.testing import Reply

TZ = ZoneInfo("Asia/Shanghai")
DAY1 = datetime(2026, 6, 1, 20, 0, tzinfo=TZ).timestamp()
# fill() and fill_named() await each evening's jobs before the next chat: no grace needed.
MINUTE_BEATS = {
    "server.heartbeat_ms": 60_000,
    "server.default_timezone": "Asia/Shanghai",
    **NO_GRACE,
}

# (calendar day, game, save, minutes played, what the player says, the two memories it forms)
PLAYS: list[tuple[int, str, str, int, str, tuple[str, str]]] = [
    (
        0,
        "stardew-valley",
        "farm-a",
        10,
        "我要完成鱼缸收集包",
        ("完成社区中心的鱼缸收集包", "和阿比盖尔是好朋友"),
    ),
    (1, "stardew-valley", "farm-b", 20, "这个农场专门养鸡", ("第二个农场专门养鸡", "鸡舍已经升级")),
    (
        0,
        "dont-starve-together",
        "world-a",
        15,
        "基地建在猪王旁边",
        ("基地建在猪王旁边", "冬天前囤好木头"),
    ),
    (
        2,
        "dont-starve-together",
        "world-b",
        30,
        "这个世界先打巨鹿",
        ("这个世界先打巨鹿", "约好一起造科学机器"),
    ),
    (3, "stardew-valley", "farm-a", 40, "今天把温室修好了", ("温室已经修好", "下雨天去矿洞")),
]
GAMES = {"stardew-valley": {"farm-a", "farm-b"}, "dont-starve-together": {"world-a", "world-b"}}
DAYS_PLAYED = {"stardew-valley": 3, "dont-starve-together": 2}


def _reply(player: str, summaries: tuple[str, str], keys: tuple[str, ...] = ()) -> Reply:
    answer: dict[str, object] = {
        "profile": None,
        "events": [
            {"kind": "goal", "subject": summaries[0][:8], "summary": summaries[0], "importance": 4},
            {
                "kind": "event",
                "subject": summaries[1][:8],
                "summary": summaries[1],
                "importance": 2,
                **({"keys": list(keys)} if keys else {}),
            },
        ],
    }
    return Reply(text=json.dumps(answer, ensure_ascii=False), match=f"玩家说：\n{player}")


async def fill(h: Harness) -> None:
    """Play two games with two saves each over four evenings, through the real server.

    Heartbeats a minute apart make the play time; a chat per evening makes the
    scripted model's extraction form two memories; ``profile.update`` frames
    set the shared profile.
    """
    for n, (day, game, save, minutes, text, summaries) in enumerate(PLAYS):
        h.clock.set(DAY1 + day * 86400 + n * 600)
        h.fake.enqueue(_reply(text, summaries))
        async with h.adapter(game, save) as ws:
            await send(ws, {"type": "state.update", "modelContext": model_context(h.clock)})
            for _ in range(minutes):
                h.clock.advance(60)
                await send(ws, {"type": "heartbeat"})
                await send(ws, {"type": "stats.get", "id": "barrier"})  # frames run in order
                assert (await recv(ws))["type"] == "stats.result"
            _, done = await chat(ws, text)
            assert done["type"] == "chat.done", done
            if n == 0:
                for field, value in (("nickname", "小明"), ("hobbies", ["钓鱼", "种地"])):
                    await send(ws, {"type": "profile.update", "field": field, "value": value})
                    assert (await recv(ws))["type"] == "memory.result"
            with anyio.fail_after(10):
                await h.server.memory.wait_idle()
        with anyio.fail_after(10):  # its play session ends once the connection is gone
            await h.server.wait_connections(at_most=0)


class HttpAnswer:
    """One HTTP response read to its end."""

    def __init__(self, raw: bytes) -> None:
        head, _, self.body = raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        self.status = int(lines[0].split(" ")[1])
        self.headers: list[tuple[str, str]] = []
        for line in lines[1:]:
            name, _, value = line.partition(":")
            self.headers.append((name.strip().lower(), value.strip()))

    def header(self, name: str) -> str | None:
        values = [v for k, v in self.headers if k == name.lower()]
        return values[0] if values else None

    def json(self) -> dict[str, object]:
        value = json.loads(self.body)
        assert isinstance(value, dict)
        return value


async def http(
    port: int,
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    body: bytes | None = None,
) -> HttpAnswer:
    """Send one request over loopback, exactly the given header lines, and read the answer."""
    lines = [f"{method} {path} HTTP/1.1", *(f"{k}: {v}" for k, v in headers)]
    if method == "POST" and not any(k.lower() == "content-length" for k, _ in headers):
        lines.append(f"Content-Length: {len(body or b'')}")
    stream = await anyio.connect_tcp("127.0.0.1", port)
    async with stream:
        await stream.send(("\r\n".join(lines) + "\r\n\r\n").encode("utf-8") + (body or b""))
        raw = b""
        with anyio.fail_after(10):
            try:
                while True:
                    raw += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                pass
    return HttpAnswer(raw)


# (calendar day, game, save, its readable name or None, in-game day, what the player says, memories)
NAMED: list[tuple[int, str, str, str | None, int, str, tuple[str, str]]] = [
    (
        0,
        "stardew-valley",
        "5e7196e16e72300361c63bc7",
        "阳光农场",
        3,
        "我要完成鱼缸收集包",
        ("完成社区中心的鱼缸收集包", "和阿比盖尔是好朋友"),
    ),
    (
        1,
        "stardew-valley",
        "5e7196e16e72300361c63bc7",
        "阳光农场",
        12,
        "今天把温室修好了",
        ("温室已经修好", "下雨天去矿洞"),
    ),
    (
        1,
        "dont-starve-together",
        "a1b2c3d4e5f6a7b8",
        None,
        5,
        "基地建在猪王旁边",
        ("基地建在猪王旁边", "冬天前囤好木头"),
    ),
    (
        2,
        "oxygen-not-included",
        "colony-a",
        "绿洲殖民地",
        40,
        "先造水筛",
        ("Build a water sieve before cycle 50", "氧气扩散器放在基地中间"),
    ),
]


KEYS = {"和阿比盖尔是好朋友": ("阿比盖尔", "Abigail")}  # search keys the extraction gives


async def fill_named(h: Harness) -> None:
    """Three games, saves with and without a readable name, memories on in-game days.

    Through the real server: the hello names the save (``identity.saveName``),
    a ``state.update`` carries ``world.day``, a chat makes the scripted model's
    extraction form two memories on that day, heartbeats make play time.
    """
    for n, (day, game, save, name, game_day, text, summaries) in enumerate(NAMED):
        h.clock.set(DAY1 + day * 86400 + n * 600)
        h.fake.enqueue(_reply(text, summaries, KEYS.get(summaries[1], ())))
        identity = {"gameId": game, "saveId": save, **({"saveName": name} if name else {})}
        async with h.adapter(game, save, identity=identity) as ws:
            context = model_context(h.clock, world={"day": game_day})
            await send(ws, {"type": "state.update", "modelContext": context})
            for _ in range(3):
                h.clock.advance(60)
                await send(ws, {"type": "heartbeat"})
                await send(ws, {"type": "stats.get", "id": "barrier"})  # frames run in order
                assert (await recv(ws))["type"] == "stats.result"
            _, done = await chat(ws, text)
            assert done["type"] == "chat.done", done
            with anyio.fail_after(10):
                await h.server.memory.wait_idle()
