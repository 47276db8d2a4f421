"""Paths with code behind them that no test walked before, over the real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import apsw
import pytest

from tests.conftest import NO_GRACE, chat, model_context, png_b64, recv, running, send
from tests.conftest import player_text as last_player_text
from xtyserver.memory.types import Scope
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio

FARM_A = Scope("stardew-valley", "farm-a")


def extraction(player: str, subject: str, summary: str) -> Reply:
    answer = {
        "profile": None,
        "events": [{"kind": "goal", "subject": subject, "summary": summary, "importance": 4}],
    }
    return Reply(text=json.dumps(answer, ensure_ascii=False), match=f"玩家说：\n{player}")


def asked(h: Any, player_text: str) -> str:
    """The text of the one chat request whose newest message is ``player_text``."""
    [request] = [r for r in h.fake.chat_requests if last_player_text(r) == player_text]
    return str(request.text)


async def test_switch_while_a_reply_streams_is_refused_and_the_reply_finishes(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h, h.adapter(save="farm-a") as ws:
        h.fake.enqueue(Reply(chunks=["第一段", "第二段"], chunk_delay=0.2, match="慢慢说"))
        await send(ws, {"type": "chat.send", "id": "c1", "text": "慢慢说", "source": "text"})
        assert (await recv(ws))["type"] == "chat.delta"
        update = {
            "type": "state.update",
            "id": "s1",
            "identity": {"gameId": "stardew-valley", "saveId": "farm-b"},
            "modelContext": model_context(h.clock, world={"location": "Beach"}),
        }
        await send(ws, update)
        frames = []
        while not frames or frames[-1]["type"] != "chat.done":
            frames.append(await recv(ws))
        [refusal] = [f for f in frames if f["type"] == "error"]
        assert (refusal["code"], refusal["id"], refusal["fields"]) == (
            "reply_in_progress",
            "s1",
            ["identity"],
        )
        assert frames[-1]["text"] == "第一段第二段"
        await send(ws, {"type": "stats.get", "id": "q"})
        stats = await recv(ws)
        assert [s["saveId"] for s in stats["saves"]] == ["farm-a"]  # no switch happened


async def test_cancel_during_a_retry_backoff_ends_the_turn_and_no_request_follows(
    tmp_path: Path,
) -> None:
    backoff = {"model.backoff_base": 2.0, "model.backoff_cap": 2.0}
    async with running(tmp_path, overrides=backoff) as h, h.adapter() as ws:
        h.fake.enqueue(Reply(status=500, text="down", match="重试"))
        await send(ws, {"type": "chat.send", "id": "c1", "text": "重试一下", "source": "text"})
        with anyio.fail_after(10):
            while len(h.fake.chat_requests) < 1:
                await anyio.sleep(0.01)
        await send(ws, {"type": "chat.cancel", "id": "c1"})
        with anyio.fail_after(1.5):  # well inside the 2 s backoff
            answer = await recv(ws)
        assert (answer["type"], answer["code"]) == ("chat.error", "cancelled")
        await anyio.sleep(3.0)  # past the backoff: a retry would have arrived by now
        assert len([r for r in h.fake.chat_requests if "重试一下" in r.text]) == 1


async def test_cancel_while_the_screenshot_is_prepared_makes_no_model_request(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        image = {"mime": "image/png", "data": png_b64(3000, 2000)}
        frame = {"type": "chat.send", "id": "c1", "text": "看图", "source": "text", "image": image}
        await send(ws, frame)
        await send(ws, {"type": "chat.cancel", "id": "c1"})
        answer = await recv(ws)
        assert (answer["type"], answer["code"]) == ("chat.error", "cancelled")
        _, done = await chat(ws, "下一句", chat_id="c2")
        assert done["type"] == "chat.done"
        await anyio.sleep(1.0)  # the screenshot of c1 is ready long before this
        assert not [r for r in h.fake.chat_requests if "看图" in r.text]


async def test_two_connections_on_one_save_share_memories_and_count_two_sessions(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:  # each memory is awaited
        async with h.adapter(save="farm-a") as first:
            async with h.adapter(save="farm-a") as second:
                h.fake.enqueue(extraction("记住鸡舍", "鸡舍", "约好先盖鸡舍"))
                await chat(first, "记住鸡舍", chat_id="a1")
                await h.server.memory.wait_idle()
                await chat(second, "我们约好了什么", chat_id="b1")
                h.fake.enqueue(extraction("记住鱼塘", "鱼塘", "约好挖鱼塘"))
                await chat(second, "记住鱼塘", chat_id="b2")
                await h.server.memory.wait_idle()
                await chat(first, "鱼塘的事呢", chat_id="a2")
                await send(first, {"type": "stats.get", "id": "q"})
                [save] = (await recv(first))["saves"]
                assert save["sessions"] == 2
            await h.server.wait_connections(at_most=1)
            # Closing one connection leaves the other's index working.
            h.fake.enqueue(extraction("记住温室", "温室", "约好修温室"))
            await chat(first, "记住温室", chat_id="a3")
            await h.server.memory.wait_idle()
            await chat(first, "温室的事呢", chat_id="a4")
        assert "约好先盖鸡舍" in asked(h, "我们约好了什么")
        assert "约好挖鱼塘" in asked(h, "鱼塘的事呢")
        assert "约好修温室" in asked(h, "温室的事呢")


async def test_a_full_job_queue_drops_jobs_and_chats_go_on(tmp_path: Path) -> None:
    # The stuck job would end at the 5 s first-token timeout; the drain gives up first.
    overrides = {"memory.job_queue": 1, "memory.drain_timeout": 0.5}
    async with running(tmp_path, overrides=overrides) as h, h.adapter() as ws:
        # The first extraction hangs, so the worker is busy and the queue holds one more.
        gate = Reply(text="{}", first_delay=1e6, match="玩家说：\n第1句")
        h.fake.enqueue(gate)
        for n in range(1, 5):
            _, done = await chat(ws, f"第{n}句", chat_id=f"c{n}")
            assert done["type"] == "chat.done", done
        stats = h.server.memory.statistics
        assert stats.jobs_dropped == 2  # c1 runs, c2 waits, c3 and c4 are dropped
        assert stats.jobs_queued == 2
        assert h.store.load_scope(FARM_A) == []
    # Shutdown gave up on the stuck job after the drain timeout; the file is whole.
    db = apsw.Connection(str(h.store.path))
    assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert db.execute("SELECT count(*) FROM game_memory").fetchall() == [(0,)]


async def test_a_cancelled_turn_closes_the_upstream_model_stream(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        h.fake.enqueue(Reply(chunks=["一", "二", "三"], chunk_delay=30, match="长长的回答"))
        await send(ws, {"type": "chat.send", "id": "c1", "text": "长长的回答", "source": "text"})
        assert (await recv(ws))["type"] == "chat.delta"
        with anyio.fail_after(10):
            await h.fake.wait_open_streams(1)
        await send(ws, {"type": "chat.cancel", "id": "c1"})
        assert (await recv(ws))["code"] == "cancelled"
        with anyio.fail_after(10):
            await h.fake.wait_open_streams(0)


async def test_a_cut_turn_leaves_no_upstream_stream_open(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        h.fake.enqueue(Reply(chunks=["一", "二", "三"], cut_after=1, match="断线"))
        _, end = await chat(ws, "断线")
        assert (end["type"], end["code"]) == ("chat.error", "model_stream_cut")
        with anyio.fail_after(10):
            await h.fake.wait_open_streams(0)
