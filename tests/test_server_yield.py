"""Issue 18 section 2: background work yields to the player.

Against a scripted provider that serves one request at a time (as llama.cpp
or Ollama on one GPU does): while a 5-second background call is in flight, the
next chat.send gets its first delta within 1.5 s; the background call is
aborted (its upstream stream closed), asked again later, and its result stored once.
"""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from tests.conftest import chat, is_job_request, recv, running, send
from xtyserver.memory.extraction import EXTRACTION_SYSTEM_PROMPT
from xtyserver.memory.types import Scope
from xtyserver.model.scheduler import Lane, Scheduler

pytestmark = pytest.mark.anyio

FARM_A = Scope("stardew-valley", "farm-a")
SLOW_S = 5.0


def extraction_reply(**extra: Any) -> Any:
    from xtyserver.testing import Reply

    answer = {
        "profile": None,
        "events": [
            {
                "kind": "goal",
                "subject": "鱼缸收集包",
                "summary": "计划完成鱼缸收集包",
                "importance": 4,
            }
        ],
    }
    return Reply(
        text=json.dumps(answer, ensure_ascii=False), match=EXTRACTION_SYSTEM_PROMPT[:20], **extra
    )


async def test_a_chat_gets_its_first_delta_within_1_5_s_while_a_5_s_background_call_runs(
    tmp_path: Any,
) -> None:
    from xtyserver.testing import Reply

    overrides = {"model.first_token_timeout": 10.0, "model.idle_timeout": 10.0}
    async with running(tmp_path, overrides=overrides, fake_options={"serial": True}) as h:
        h.fake.enqueue(
            Reply(text="好呀，一起去钓鱼。"),
            extraction_reply(first_delay=SLOW_S),  # the first try: 5 s before its answer
            extraction_reply(),  # the retry
            Reply(text="鱼缸收集包需要很多鱼。"),
        )
        async with h.adapter() as ws:
            _, done = await chat(ws, "我打算先完成鱼缸收集包")
            assert done["type"] == "chat.done"
            with anyio.fail_after(5):
                while True:
                    await h.fake.wait_open_streams(1)
                    if any(is_job_request(r) for r in h.fake.chat_requests):
                        break
                    await h.fake.wait_open_streams(0)  # still the turn's own stream
            # The background call holds the one-at-a-time provider now.
            start = anyio.current_time()
            await send(
                ws, {"type": "chat.send", "id": "c2", "text": "鱼缸要什么鱼", "source": "text"}
            )
            first = await recv(ws, timeout=SLOW_S)
            first_delta_s = anyio.current_time() - start
            assert first["type"] == "chat.delta" and first["id"] == "c2"
            assert first_delta_s < 1.5, f"first delta after {first_delta_s:.2f} s"
            while (frame := await recv(ws))["type"] == "chat.delta":
                pass
            assert frame["type"] == "chat.done" and frame["text"] == "鱼缸收集包需要很多鱼。"
            with anyio.fail_after(10):
                await h.server.memory.wait_idle()
        lane = h.server.model.scheduler.lanes()[0]
        assert lane.aborted == 1 and lane.retried == 1
        jobs = [r for r in h.fake.chat_requests if is_job_request(r)]
        assert (
            len([r for r in jobs if r.json["messages"][0]["content"] == EXTRACTION_SYSTEM_PROMPT])
            >= 2
        )
        # Stored once: the retried job is not run twice.
        events = h.store.load_scope(FARM_A)
        assert [e.subject for e in events] == ["鱼缸收集包"]


# -- the scheduler itself ----------------------------------------------------------------------


async def test_background_waits_while_a_chat_is_on_its_lane() -> None:
    scheduler = Scheduler()
    lane = scheduler.lane("http://127.0.0.1:9/v1")
    ran = anyio.Event()

    async def job() -> str:
        ran.set()
        return "done"

    results: list[str] = []
    async with anyio.create_task_group() as tg:
        async with scheduler.chat(lane):

            async def background() -> None:
                results.append(await scheduler.background(lane, job))

            tg.start_soon(background)
            for _ in range(20):
                await anyio.sleep(0)
            assert not ran.is_set(), "no background call while a chat streams"
        with anyio.fail_after(2):
            await ran.wait()
    assert results == ["done"]


async def test_a_chat_aborts_the_background_call_only_at_max_concurrency() -> None:
    scheduler = Scheduler()
    lane: Lane = scheduler.lane("https://api.example.invalid/v1", max_concurrency=2)
    assert lane.limit == 2
    started = 0
    release = anyio.Event()

    async def job() -> int:
        nonlocal started
        started += 1
        if started == 1:
            await anyio.sleep_forever()  # the first run is aborted
        await release.wait()
        return started

    results: list[int] = []
    async with anyio.create_task_group() as tg:

        async def background() -> None:
            results.append(await scheduler.background(lane, job))

        tg.start_soon(background)
        with anyio.fail_after(2):
            while started == 0:
                await anyio.sleep(0)
        async with scheduler.chat(lane):
            await anyio.sleep(0)
            assert lane.aborted == 0, "one chat and one background call fit in 2"
            async with scheduler.chat(lane):
                await anyio.sleep(0)
                assert lane.aborted == 1
            assert started == 1, "not restarted while a chat is on the lane"
        with anyio.fail_after(2):
            while started < 2:
                await anyio.sleep(0)
        release.set()
    assert results == [2] and lane.retried == 1


def test_loopback_lanes_take_one_call_and_services_four() -> None:
    scheduler = Scheduler()
    assert scheduler.lane("http://localhost:11434/v1").limit == 1
    assert scheduler.lane("https://api.deepseek.com/v1").limit == 4
    assert scheduler.lane("https://api.deepseek.com/v1/").limit == 4  # the same lane
    assert len(scheduler.lanes()) == 2


async def test_a_background_call_waits_the_grace_after_a_chat_ends() -> None:
    """A player who answers at once would abort it at once: it waits 1.5 s (here 0.3 s)."""
    scheduler = Scheduler(grace=0.3)
    lane = scheduler.lane("http://127.0.0.1:9/v1")
    started_at: list[float] = []

    async def job() -> None:
        started_at.append(anyio.current_time())

    async with scheduler.chat(lane):
        pass
    ended = anyio.current_time()
    with anyio.fail_after(2):
        await scheduler.background(lane, job)
    assert started_at[0] - ended >= 0.3
    assert Scheduler().grace == 1.5


async def test_the_grace_is_the_memory_background_grace_setting(tmp_path: Any) -> None:
    """1.5 s unless configured (tests that await each turn's jobs set 0)."""
    async with running(tmp_path) as h:
        assert h.server.model.scheduler.grace == 1.5
    async with running(tmp_path, overrides={"memory.background_grace": 0.25}) as h:
        assert h.server.model.scheduler.grace == 0.25


async def test_a_stopping_server_runs_its_queued_jobs_without_the_grace(tmp_path: Any) -> None:
    """No chat follows a shutdown: the extraction queued by the last turn runs at once."""
    from xtyserver.memory.sqlite.store import MemoryStore
    from xtyserver.testing import Reply

    overrides = {"memory.background_grace": 30.0, "memory.drain_timeout": 5.0}
    async with running(tmp_path, overrides=overrides) as h:
        h.fake.enqueue(Reply(text="好呀，一起去钓鱼。"), extraction_reply())
        async with h.adapter() as ws:
            _, done = await chat(ws, "我要完成鱼缸收集包")
            assert done["type"] == "chat.done"
    # Stored: with the 30 s grace the 5 s drain deadline would have cancelled the job.
    with MemoryStore.open_profile(h.settings.data_path, h.settings.profile, clock=h.clock) as store:
        assert [e.summary for e in store.load_scope(FARM_A)] == ["计划完成鱼缸收集包"]
