"""The shared profile stays clean over the real server."""

from __future__ import annotations

import io
import json
from pathlib import Path

import anyio
import msgspec
import pytest
import structlog

from tests.conftest import NO_GRACE, chat, model_context, running, send
from xtyserver import log
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
FARM_A = Scope("stardew-valley", "farm-a")


async def idle(h) -> None:  # type: ignore[no-untyped-def]
    with anyio.fail_after(10):
        await h.server.memory.wait_idle()


SMUGGLING = [
    # (farm-a's stored plan, the smuggled shared value, the field, the marker to look for)
    (("鸡舍", "答应阿比盖尔明天在河边建鸡舍"), "hobbies", "在河边建鸡舍", "河边建鸡舍"),
    (("鸡舍", "答应阿比盖尔明天在河边建鸡舍"), "nickname", "阿比盖尔的邻居", "阿比盖尔"),
    (
        ("coop", "Build the coop by the river for Abigail"),
        "hobbies",
        "river coop for Abigail",
        "river coop",
    ),
    (
        ("coop", "Build the coop by the river for Abigail"),
        "replyStyle",
        "talk about the coop by the river",
        "coop by the river",
    ),
]


@pytest.mark.parametrize(("plan", "field", "value", "marker"), SMUGGLING)
async def test_a_smuggled_plan_of_farm_a_never_reaches_farm_b(
    tmp_path: Path, plan: tuple[str, str], field: str, value: str, marker: str
) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:
        subject, summary = plan
        h.store.upsert_event(
            FARM_A, NewEvent(kind="promise", subject=subject, summary=summary), h.clock.now()
        )
        answer = {"profile": {"field": field, "value": value}, "events": []}
        h.fake.enqueue(Reply(text=json.dumps(answer, ensure_ascii=False), match="玩家说"))
        async with h.adapter() as ws:
            _, done = await chat(ws, "今天做点什么？")
            assert done["type"] == "chat.done"
            await idle(h)
        profile = msgspec.json.encode(h.store.get_profile()).decode()
        assert marker not in profile
        async with h.adapter(save="farm-b") as ws:
            _, done = await chat(ws, "你好")
            assert done["type"] == "chat.done"
        assert marker not in h.turn_request().text


async def test_a_name_of_the_current_model_context_is_refused(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:
        answer = {"profile": {"field": "nickname", "value": "塞巴斯蒂安"}, "events": []}
        h.fake.enqueue(Reply(text=json.dumps(answer, ensure_ascii=False), match="玩家说"))
        async with h.adapter() as ws:
            ctx = model_context(h.clock, focus={"kind": "npc", "name": "塞巴斯蒂安"})
            await send(ws, {"type": "state.update", "modelContext": ctx})
            _, done = await chat(ws, "他喜欢什么？")
            assert done["type"] == "chat.done"
            await idle(h)
        assert h.store.get_profile().nickname == ""


async def test_a_clean_hobby_is_saved(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:
        answer = {"profile": {"field": "hobbies", "value": "钓鱼"}, "events": []}
        h.fake.enqueue(Reply(text=json.dumps(answer, ensure_ascii=False), match="玩家说"))
        async with h.adapter() as ws:
            _, done = await chat(ws, "我平时最喜欢钓鱼")
            assert done["type"] == "chat.done"
            await idle(h)
        assert h.store.get_profile().hobbies == ["钓鱼"]


async def test_games_are_recorded_by_the_server_with_readable_names(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:
        for game in ("stardew-valley", "oxygen-not-included", "my-mod-game", "stardew-valley"):
            async with h.adapter(game=game) as ws:
                await send(ws, {"type": "stats.get", "id": "barrier"})
                await ws.recv()
        await idle(h)
        assert h.store.get_profile().games == ["星露谷物语", "缺氧", "my-mod-game"]
        answer = {"profile": {"field": "games", "value": "饥荒联机版"}, "events": []}
        h.fake.enqueue(Reply(text=json.dumps(answer, ensure_ascii=False), match="玩家说"))
        async with h.adapter() as ws:
            _, done = await chat(ws, "我还玩饥荒")
            assert done["type"] == "chat.done"
            await idle(h)
        assert "饥荒联机版" not in h.store.get_profile().games


async def test_no_game_is_recorded_when_auto_shared_is_off(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:
        h.store.set_profile_field("auto_shared", False)
        async with h.adapter() as ws:
            await send(ws, {"type": "stats.get", "id": "barrier"})
            await ws.recv()
        assert h.store.get_profile().games == []


async def test_the_end_of_session_summary_stores_at_most_two_durable_kinds(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:
        events = [
            {"kind": "event", "subject": "聊天", "summary": "聊了天气"},
            {"kind": "goal", "subject": "温室", "summary": "还没修好温室"},
            {"kind": "promise", "subject": "礼物", "summary": "答应给阿比盖尔送紫水晶"},
            {"kind": "milestone", "subject": "矿洞", "summary": "下到矿洞40层"},
        ]
        summary = json.dumps({"events": events}, ensure_ascii=False)
        h.fake.enqueue(Reply(text=summary, match="第1轮 玩家："))
        async with h.adapter() as ws:
            for n in range(3):
                _, done = await chat(ws, f"第{n}句", chat_id=f"c{n}")
                assert done["type"] == "chat.done"
        await h.server.wait_connections(at_most=0)
        await idle(h)
        stored = h.store.load_scope(FARM_A)
        assert sorted(e.kind for e in stored) == ["goal", "promise"]


async def test_a_refusal_is_logged_with_its_reason_never_the_value(tmp_path: Path) -> None:
    sink = io.StringIO()
    log.configure(stream=sink, json=True)
    try:
        async with running(tmp_path, overrides=NO_GRACE) as h:
            h.store.upsert_event(
                FARM_A, NewEvent(kind="promise", subject="鸡舍", summary="答应阿比盖尔建鸡舍"), 0.0
            )
            answer = {"profile": {"field": "hobbies", "value": "给阿比盖尔建鸡舍"}, "events": []}
            h.fake.enqueue(Reply(text=json.dumps(answer, ensure_ascii=False), match="玩家说"))
            async with h.adapter() as ws:
                _, done = await chat(ws, "今天做点什么？")
                assert done["type"] == "chat.done"
                await idle(h)
    finally:
        structlog.reset_defaults()
    lines = [json.loads(line) for line in sink.getvalue().splitlines() if line.strip()]
    [refused] = [line for line in lines if line.get("event") == "memory.shared_refused"]
    assert refused["reason"] == "save_specific"
    assert "阿比盖尔" not in json.dumps(refused, ensure_ascii=False)
