"""Memory and deadlines over the real server: last-used, soft cap, closing at the last heartbeat."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.conftest import NO_GRACE, chat, running, send
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")


async def jobs(h, n: int) -> None:  # type: ignore[no-untyped-def]
    with anyio.fail_after(10):
        await h.server.memory.wait_idle()
    assert h.server.memory.statistics.jobs_done >= n


async def test_stalled_handshake_is_closed_after_open_timeout(tmp_path: Path) -> None:
    async with running(tmp_path, overrides={"server.open_timeout": 0.5}) as h:
        host, port = h.url.removeprefix("ws://").split("/")[0].split(":")
        stream = await anyio.connect_tcp(host, int(port))
        await stream.send(b"GET /v1 HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # ... and never finishes
        with anyio.fail_after(5):
            try:
                rest = await stream.receive()
                assert rest == b"" or rest.startswith(b"HTTP/1.1 ")
            except (anyio.EndOfStream, anyio.BrokenResourceError, ConnectionResetError):
                pass
        await stream.aclose()


async def test_heartbeat_timeout_closes_the_play_session_at_its_last_heartbeat(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h:
        async with h.adapter() as ws:
            h.clock.advance(10)
            await send(ws, {"type": "heartbeat"})
            last_beat = h.clock.now()
            await send(ws, {"type": "stats.get", "id": "barrier"})
            await ws.recv()
            h.clock.advance(600)  # the game hangs for ten minutes
            with anyio.fail_after(5):
                await h.server.wait_connections(at_most=0)
        sessions = h.store.export().sessions
        assert len(sessions) == 1
        assert sessions[0].ended_at == last_beat
        assert sessions[0].active_ms == 10_000


async def test_a_used_memory_gets_its_last_used_time_updated(tmp_path: Path) -> None:
    async with running(tmp_path, overrides={"memory.extraction": False}) as h:
        goal = NewEvent(kind="goal", subject="鱼缸", summary="计划先完成社区中心的鱼缸收集包")
        stored = h.store.upsert_event(FARM, goal, h.clock.now())
        h.clock.advance(3600)
        async with h.adapter() as ws:
            _, done = await chat(ws, "鱼缸收集包还差什么？")
            assert done["type"] == "chat.done"
            await send(ws, {"type": "stats.get", "id": "barrier"})
            await ws.recv()
        assert "鱼缸收集包" in h.turn_request().text
        [after] = h.store.load_scope(FARM)
        assert after.last_used_at == stored.created_at + 3600


async def test_past_the_soft_cap_ended_low_importance_events_are_merged(tmp_path: Path) -> None:
    async with running(tmp_path, overrides={"memory.soft_cap": 5, **NO_GRACE}) as h:
        for n in range(5):
            ended = NewEvent(
                kind="event",
                subject=f"小事{n}",
                summary=f"第{n}件小事",
                importance=1,
                status="done",
            )
            h.store.upsert_event(FARM, ended, h.clock.now())
        pinned = NewEvent(kind="goal", subject="温室", summary="修好温室", pinned=True)
        h.store.upsert_event(FARM, pinned, h.clock.now())
        answer = {
            "profile": None,
            "events": [
                {"kind": "goal", "subject": "鱼缸", "summary": "完成鱼缸收集包", "importance": 4}
            ],
        }
        h.fake.enqueue(Reply(text=json.dumps(answer, ensure_ascii=False), match="玩家说"))
        async with h.adapter() as ws:
            _, done = await chat(ws, "我要完成鱼缸收集包")
            assert done["type"] == "chat.done"
            await jobs(h, 1)
        events = h.store.load_scope(FARM)
        summaries = {e.summary for e in events}
        assert "修好温室" in summaries and "完成鱼缸收集包" in summaries  # kept
        assert not any(s.startswith("第") for s in summaries)  # the small ended ones merged
        assert len(events) < 8


@pytest.mark.parametrize(("total_chars", "all_shown"), [(3000, True), (1200, False)])
async def test_a_raised_memory_budget_injects_more_than_1200_characters(
    tmp_path: Path, total_chars: int, all_shown: bool
) -> None:
    """``memory.budget.total_chars`` raised past 1,200 is what the turn gets (the context
    window used to clip it back to 1,200 silently); the default still cuts at 1,200."""
    overrides = {
        "memory.extraction": False,
        "memory.budget.relevant": 10,
        "memory.budget.recent": 0,
        "memory.budget.total_chars": total_chars,
    }
    async with running(tmp_path, overrides=overrides) as h:
        chatter = "需要在春天的雨天去河边钓鲶鱼，然后交给法师" * 6
        lines = [f"鱼缸收集包第{n}件：{chatter}" for n in range(10)]
        for line in lines:
            h.store.upsert_event(FARM, NewEvent("event", line[:7], line), h.clock.now())
        async with h.adapter() as ws:
            _, done = await chat(ws, "鱼缸收集包的事还记得吗？")
            assert done["type"] == "chat.done"
        text = h.turn_request().text
        shown = [line for line in lines if line in text]
        assert len(shown) == 10 if all_shown else 0 < len(shown) < 10
        assert sum(map(len, shown)) > 1200 if all_shown else sum(map(len, shown)) <= 1200
