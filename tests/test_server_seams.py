"""The seams between the session, its connection runtime and the memory service.

Each test walks one seam over a real server, a real SQLite file (held by a
second real connection where the test needs the database stuck) and the
scripted model.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import apsw
import pytest

from tests.conftest import NO_GRACE, chat, hello_frame, is_job_request, recv, running, send
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio

FARM_A = Scope("stardew-valley", "farm-a")
FARM_B = Scope("stardew-valley", "farm-b")


@contextmanager
def database_locked(path: Path) -> Iterator[None]:
    """Hold the store's write lock from a second connection, as another process would."""
    other = apsw.Connection(str(path))
    other.execute("BEGIN IMMEDIATE")
    try:
        yield
    finally:
        other.execute("ROLLBACK")
        other.close()


def extraction(player: str, subject: str, summary: str) -> Reply:
    answer = {
        "profile": None,
        "events": [{"kind": "goal", "subject": subject, "summary": summary, "importance": 4}],
    }
    return Reply(text=json.dumps(answer, ensure_ascii=False), match=f"玩家说：\n{player}")


async def test_turn_without_image_after_switch_by_chat_context_gets_the_new_saves_memory(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h:
        h.store.set_profile_field("nickname", "阿汤")
        h.store.upsert_event(FARM_B, NewEvent("goal", "鱼塘", "在二号农场挖一个大鱼塘"), 0.0)
        async with h.adapter(save="farm-a") as ws:
            context = {"identity": {"gameId": "stardew-valley", "saveId": "farm-b"}}
            _, done = await chat(ws, "我们的鱼塘计划呢", context=context)
            assert done["type"] == "chat.done", done
        [request] = [
            r for r in h.fake.chat_requests if "鱼塘计划" in r.text and not is_job_request(r)
        ]
        assert "在二号农场挖一个大鱼塘" in request.text
        assert "阿汤" in request.text


async def test_a_failed_open_on_one_connection_leaves_anothers_memory_live(
    tmp_path: Path,
) -> None:
    # The memory is awaited before the turn that asks for it: no grace.
    async with running(tmp_path, overrides={"memory.busy_timeout_ms": 200, **NO_GRACE}) as h:
        async with h.adapter(save="farm-a") as first:
            with database_locked(h.store.path):
                # The second connection's play session cannot be written (store_busy).
                async with h.adapter(save="farm-a") as second:
                    await send(second, {"type": "stats.get", "id": "after-open"})
                    assert (await recv(second))["id"] == "after-open"
            await h.server.wait_connections(at_most=1)
            h.fake.enqueue(extraction("记住温室", "修温室", "约好先修好温室"))
            _, done = await chat(first, "记住温室", chat_id="c1")
            assert done["type"] == "chat.done"
            with anyio.fail_after(10):
                await h.server.memory.wait_idle()
            _, done = await chat(first, "我们约好了什么", chat_id="c2")
            assert done["type"] == "chat.done"
        [request] = [
            r for r in h.fake.chat_requests if "我们约好了什么" in r.text and not is_job_request(r)
        ]
        assert "约好先修好温室" in request.text


async def test_reply_does_not_wait_for_a_locked_database(tmp_path: Path) -> None:
    # A lock held far longer than any reply should take: the reply must not wait for it.
    async with running(tmp_path, overrides={"memory.busy_timeout_ms": 120_000}) as h:
        h.store.upsert_event(FARM_A, NewEvent("goal", "温室", "约好先修好温室"), 0.0)
        async with h.adapter(save="farm-a") as ws:
            await send(ws, {"type": "stats.get", "id": "opened"})
            assert (await recv(ws))["id"] == "opened"
            with database_locked(h.store.path):
                with anyio.fail_after(20):
                    _, done = await chat(ws, "温室怎么样了")
                assert done["type"] == "chat.done", done
                assert h.server.memory.statistics.touches_pending == 1
            with anyio.fail_after(20):
                await h.server.memory.wait_idle()
        [event] = h.store.load_scope(FARM_A)
        assert event.last_used_at == h.clock.now()


async def test_cancel_and_heartbeat_are_answered_while_a_store_request_waits(
    tmp_path: Path,
) -> None:
    settings = {"memory.busy_timeout_ms": 120_000}
    async with running(tmp_path, overrides=settings) as h, h.client() as ws:
        await send(ws, hello_frame())
        assert (await recv(ws))["type"] == "server.hello"
        await send(ws, {"type": "stats.get", "id": "opened"})
        assert (await recv(ws))["id"] == "opened"
        with database_locked(h.store.path):
            update = {
                "type": "profile.update",
                "id": "p1",
                "field": "nickname",
                "value": "阿汤",
            }
            await send(ws, update)
            await send(ws, {"type": "heartbeat"})
            await send(ws, {"type": "chat.cancel", "id": "nothing-streams"})
            with anyio.fail_after(10):
                answer = await recv(ws)
            assert (answer["type"], answer["code"]) == ("error", "unknown_chat")
        # Once the lock is gone the waiting request is answered.
        answer = await recv(ws, timeout=20)
        assert (answer["type"], answer["id"]) == ("memory.result", "p1")
        assert answer["profile"]["nickname"] == "阿汤"


async def test_a_change_by_another_process_reaches_the_next_turn(tmp_path: Path) -> None:
    """``xtyserver mcp`` or the CLI forgetting a memory while a save is played."""
    from xtyserver.clock import ManualClock
    from xtyserver.memory.manage import ForgetSpec
    from xtyserver.memory.sqlite.store import MemoryStore

    async with running(tmp_path) as h:
        h.store.upsert_event(FARM_A, NewEvent("goal", "温室", "约好先修好温室"), 0.0)
        h.store.set_profile_field("nickname", "阿汤")
        async with h.adapter(save="farm-a") as ws:
            await chat(ws, "温室怎么样了", chat_id="c1")
            assert "约好先修好温室" in h.turn_request().text
            # Another connection to the same file, as another process would have.
            with MemoryStore(h.store.path, clock=ManualClock()) as other:
                [event] = other.load_scope(FARM_A)
                other.forget(
                    ForgetSpec(
                        kind="item", game_id="stardew-valley", save_id="farm-a", item_id=event.id
                    )
                )
                other.set_profile_field("nickname", "小明")
            await chat(ws, "温室怎么样了", chat_id="c2")
        request = h.turn_request().text
        assert "约好先修好温室" not in request
        assert "小明" in request and "阿汤" not in request
