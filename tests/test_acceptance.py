"""The acceptance case of the design: three games, two saves each, seven days.

Over the real server: each adapter connects, drives heartbeats with an injected
clock, chats so the scripted model's extraction forms memories, and the test
checks what the model server recorded and what the statistics say.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import pytest

from tests.conftest import NO_GRACE, Harness, chat, model_context, recv, running, send
from xtyserver.clock import ManualClock
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio

TZ = ZoneInfo("Asia/Shanghai")
DAY1 = datetime(2026, 6, 1, 20, 0, tzinfo=TZ).timestamp()  # evenings, local time

# (calendar day index, game, save, what the player says, the memory it forms)
PLAN: list[tuple[int, str, str, str, str]] = [
    (
        0,
        "stardew-valley",
        "farm-a",
        "我打算先完成社区中心的鱼缸收集包",
        "计划先完成社区中心的鱼缸收集包",
    ),
    (1, "stardew-valley", "farm-b", "这个农场我要和阿比盖尔一起去矿洞", "和阿比盖尔约好一起去矿洞"),
    (2, "stardew-valley", "farm-a", "今天把温室修好了", "温室已经修好"),
    (2, "stardew-valley", "farm-b", "第二个农场专门养鸡", "第二个农场专门养鸡"),
    (3, "dont-starve-together", "world-a", "基地建在猪王旁边", "基地建在猪王旁边"),
    (4, "dont-starve-together", "world-b", "这个世界先打巨鹿", "这个世界先打巨鹿"),
    (5, "oxygen-not-included", "colony-a", "殖民地先做电解水制氧", "殖民地先做电解水制氧"),
    (6, "oxygen-not-included", "colony-b", "第二个殖民地要找间歇泉", "第二个殖民地要找间歇泉"),
]


def extraction_reply(player: str, summary: str, profile: dict[str, str] | None = None) -> Reply:
    answer = {
        "profile": profile,
        "events": [{"kind": "goal", "subject": summary[:10], "summary": summary, "importance": 4}],
    }
    return Reply(text=json.dumps(answer, ensure_ascii=False), match=f"玩家说：\n{player}")


# The simulated adapters send a heartbeat a minute (the deadline runs on the test's clock);
# each evening's jobs are awaited before the next chat, so no grace.
MINUTE_BEATS = {"server.heartbeat_ms": 60_000, **NO_GRACE}


async def until(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    """Wait for background work of the real server (not for time to pass)."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.01)


async def barrier(ws: Any) -> None:
    """Frames are handled in order: once stats.get is answered, the heartbeat was counted."""
    await send(ws, {"type": "stats.get", "id": "barrier"})
    assert (await recv(ws))["type"] == "stats.result"


async def play_evening(
    h: Harness, game: str, save: str, text: str, summary: str, day: int, jobs: int
) -> int:
    h.fake.enqueue(extraction_reply(text, summary, {"field": "hobbies", "value": "钓鱼"}))
    async with h.adapter(game, save) as ws:
        await send(
            ws, {"type": "state.update", "modelContext": model_context(h.clock, world={"day": day})}
        )
        for _ in range(10):  # ten minutes of play, a heartbeat a minute
            h.clock.advance(60)
            await send(ws, {"type": "heartbeat"})
            await barrier(ws)
        _, done = await chat(ws, text)
        assert done["type"] == "chat.done", done
        jobs += 1
        with anyio.fail_after(10):
            await h.server.memory.wait_idle()
    return jobs


async def test_three_games_two_saves_each_stay_isolated_and_counted(tmp_path: Path) -> None:
    clock = ManualClock(DAY1)
    async with running(tmp_path, clock=clock, overrides=MINUTE_BEATS) as h:
        jobs = 0
        for n, (day, game, save, text, summary) in enumerate(PLAN):
            clock.set(DAY1 + day * 86400 + n * 1800)
            jobs = await play_evening(h, game, save, text, summary, 10 + day, jobs)

        # One shared profile and six scopes.
        scopes = h.store.list_scopes()
        assert len(scopes) == 6
        assert h.store.get_profile().hobbies == ["钓鱼"]

        # Enter farm-a again late on the third Stardew evening (same local date)
        # and ask about everything else by name.
        clock.set(DAY1 + 2 * 86400 + 3 * 3600 + 50 * 60)
        async with h.adapter("stardew-valley", "farm-a") as ws:
            await send(
                ws,
                {"type": "state.update", "modelContext": model_context(clock, world={"day": 20})},
            )
            question = (
                "还记得阿比盖尔和矿洞吗？养鸡呢？猪王、巨鹿、电解水、间歇泉、社区中心、温室？"
            )
            _, done = await chat(ws, question)
            assert done["type"] == "chat.done"
            # The model gets the text as typed (v1.md "Normalisation"): ？ stays ？.
            asked = question
            sent = [r for r in h.fake.chat_requests if asked in r.text and "玩家说" not in r.text]
            prompt = sent[-1].text
            assert "计划先完成社区中心的鱼缸收集包" in prompt
            assert "温室已经修好" in prompt
            assert "钓鱼" in prompt  # the shared profile
            for _, _, save, _, summary in PLAN:
                if save != "farm-a":
                    assert summary not in prompt, f"{save} leaked into farm-a"

            # Statistics, over the protocol.
            await send(ws, {"type": "stats.get", "id": "s1"})
            stats = await recv(ws)
        assert stats["type"] == "stats.result"
        games = {g["gameId"]: g for g in stats["games"]}
        assert games["stardew-valley"]["days"] == 3  # farm-a and farm-b on one day: one day
        assert games["dont-starve-together"]["days"] == 2
        assert games["oxygen-not-included"]["days"] == 2
        saves = {(s["gameId"], s["saveId"]): s for s in stats["saves"]}
        assert len(saves) == 6
        assert saves[("stardew-valley", "farm-a")]["days"] == 2
        assert saves[("stardew-valley", "farm-a")]["sessions"] == 3
        assert saves[("stardew-valley", "farm-b")]["days"] == 2
        assert saves[("stardew-valley", "farm-b")]["sessions"] == 2
        assert saves[("dont-starve-together", "world-a")]["days"] == 1
        # Ten minutes of heartbeats per evening.
        assert saves[("dont-starve-together", "world-a")]["activeMs"] == 10 * 60_000


async def test_reloading_an_older_save_hides_memories_from_its_future(tmp_path: Path) -> None:
    clock = ManualClock(DAY1)
    async with running(tmp_path, clock=clock, overrides=MINUTE_BEATS) as h:
        text, summary = "我们在第十天和村长约好修桥", "和村长约好修桥"
        await play_evening(h, "stardew-valley", "farm-a", text, summary, 10, 0)

        async def prompt_at(day: int) -> str:
            async with h.adapter("stardew-valley", "farm-a") as ws:
                await send(
                    ws,
                    {
                        "type": "state.update",
                        "modelContext": model_context(clock, world={"day": day}),
                    },
                )
                question = f"第{day}天，村长的桥怎么样了？"
                _, done = await chat(ws, question)
                assert done["type"] == "chat.done"
            return next(r for r in h.fake.chat_requests if question in r.text).text

        assert summary not in await prompt_at(8)  # reloaded to day 8: not yet happened
        assert summary in await prompt_at(10)  # the game reached day 10 again
        assert any(e.summary == summary for e in h.store.load_scope(_scope()))  # never deleted


def _scope() -> Any:
    from xtyserver.memory.types import Scope

    return Scope("stardew-valley", "farm-a")
