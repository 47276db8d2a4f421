"""The companion's memory tools end to end: real server, real store, scripted tool calls.

The three sentences of the design's acceptance case (v1.md "Memory tools"):
"你记得我什么", "删掉 farm-a 的社区中心计划" + "是的，删掉", and "我其实更喜欢自动化，
把共同爱好改一下".
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import NO_GRACE, chat, running
from tests.memory.conftest import buried
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.session.prompt import unfence
from xtyserver.session.tool_schemas import CORRECT, FORGET, OFFERS, READ, SEARCH, TOOL_SPECS, VIEW
from xtyserver.testing import Reply, ToolCallScript

pytestmark = pytest.mark.anyio
FARM_A = Scope("stardew-valley", "farm-a")
FARM_B = Scope("stardew-valley", "farm-b")
TZ = "Asia/Shanghai"
NO_EXTRACTION = {"memory.extraction": False}


def _seed(h: Any) -> int:
    now = h.clock.now()
    h.store.set_profile_field("hobbies", ["钓鱼"])
    play = h.store.open_play_session(FARM_A, now - 600, TZ, save_name="阳光农场")
    h.store.close_play_session(play, now - 300)
    plan = h.store.upsert_event(
        FARM_A, NewEvent("goal", "社区中心", "计划先完成社区中心的鱼缸收集包"), now
    )
    h.store.upsert_event(FARM_B, NewEvent("goal", "温室", "修好温室"), now)
    return plan.id


def _tool_messages(h: Any, n: int) -> list[str]:
    """The tool results of request ``n``, inside their data fences."""
    body = h.fake.chat_requests[n].json
    return [unfence(m["content"])[0] for m in body["messages"] if m["role"] == "tool"]


def _call(name: str, **arguments: Any) -> ToolCallScript:
    return ToolCallScript(name=name, arguments=arguments)


async def test_a_turn_offers_only_the_tools_its_words_or_a_waiting_preview_need(
    tmp_path: Path,
) -> None:
    # Timers run on the manual clock: the 120 s jump must not time the heartbeat out.
    overrides = {**NO_EXTRACTION, "server.heartbeat_ms": 600_000}
    async with running(tmp_path, overrides=overrides) as h:
        plan = _seed(h)
        async with h.adapter() as ws:
            # A question about the game: no tools, the turn's memories are in the prompt.
            _, done = await chat(ws, "今天适合钓鱼吗？", "g")
            assert done["type"] == "chat.done" and "tools" not in h.fake.chat_requests[-1].json
            # Words about forgetting: every tool, the same bytes as ever.
            forget = _call(FORGET, target="item", item=plan)
            h.fake.enqueue(Reply(tool_calls=[forget]), Reply(text="这条会删掉。"))
            await chat(ws, "把社区中心的计划删掉", "f")
            assert h.fake.chat_requests[-2].json["tools"] == TOOL_SPECS
            assert h.fake.chat_requests[-1].json["tools"] == TOOL_SPECS
            # The preview waits for a yes: a bare yes is offered every tool, up to the
            # token's last valid second (120 s), and none after it.
            h.clock.advance(120)
            await chat(ws, "好", "y")
            assert h.fake.chat_requests[-1].json["tools"] == TOOL_SPECS
            h.clock.advance(0.001)
            await chat(ws, "好", "z")
            assert "tools" not in h.fake.chat_requests[-1].json
        assert [e.id for e in h.store.load_scope(FARM_A)] == [plan]


async def test_a_tool_the_turn_did_not_offer_is_not_run(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        plan = _seed(h)
        async with h.adapter() as ws:
            # Words about memory offer the read tools; a forget the model was talked into
            # is answered with an error result and runs nothing (no preview, no token).
            h.fake.enqueue(Reply(tool_calls=[_call(FORGET, target="all")]), Reply(text="嗯"))
            frames_done = await chat(ws, "你记得我什么")
            assert frames_done[1]["type"] == "chat.done"
        (result,) = _tool_messages(h, 1)
        assert "这一轮没有提供工具" in result and FORGET in result
        assert [t["function"]["name"] for t in h.fake.chat_requests[1].json["tools"]] == [
            VIEW,
            SEARCH,
        ]
        assert [e.id for e in h.store.load_scope(FARM_A)] == [plan]


async def test_what_do_you_remember_views_profile_saves_and_stats(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        _seed(h)
        h.fake.enqueue(Reply(tool_calls=[_call(VIEW)]), Reply(text="我记得你喜欢钓鱼。"))
        async with h.adapter(save="farm-b") as ws:
            deltas, done = await chat(ws, "你记得我什么")
        assert done["type"] == "chat.done" and done["text"] == "我记得你喜欢钓鱼。"
        assert "".join(d["text"] for d in deltas) == done["text"]
        first, second = h.fake.chat_requests
        # Words about memory offer the read tools only (tool_offer.py).
        names = [t["function"]["name"] for t in first.json["tools"]]
        assert names == [VIEW, SEARCH]
        # What is sent is what the argument Structs generate, the same bytes in each request.
        assert first.json["tools"] == second.json["tools"] == OFFERS[READ]
        sent = [re.search(rb'"tools":\s*(\[.*\])', r.body) for r in (first, second)]
        assert sent[0] is not None and sent[1] is not None
        assert sent[0].group(1) == sent[1].group(1)
        (result,) = _tool_messages(h, 1)
        assert "钓鱼" in result and "阳光农场" in result and "社区中心" in result
        assert "温室" in result and "（当前存档）" in result
        assert second.json["messages"][-2]["tool_calls"][0]["function"]["name"] == VIEW


async def test_delete_farm_a_plan_from_farm_b_needs_a_preview_naming_the_save_and_a_yes(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        plan = _seed(h)
        forget = {"target": "item", "save": "阳光农场", "item": plan}
        h.fake.enqueue(
            Reply(tool_calls=[_call(FORGET, **forget)]),
            Reply(text="「阳光农场」的社区中心计划会删掉。"),
        )
        async with h.adapter(save="farm-b") as ws:
            _, done = await chat(ws, "删掉 farm-a 的社区中心计划", "c1")
            assert done["type"] == "chat.done"
            (preview,) = _tool_messages(h, 1)
            assert "还没有删" in preview and "阳光农场" in preview and "社区中心" in preview
            assert "游玩统计：保留" in preview
            assert [e.id for e in h.store.load_scope(FARM_A)] == [plan]  # nothing deleted yet
            token = re.search(r"确认码[:：]([b-z]+)", preview)
            assert token is not None
            confirm = {**forget, "confirmToken": token.group(1)}
            h.fake.enqueue(Reply(tool_calls=[_call(FORGET, **confirm)]), Reply(text="删好了。"))
            _, done = await chat(ws, "是的，删掉", "c2")
            assert done["text"] == "删好了。"
            (result,) = _tool_messages(h, 3)
            assert "已删除 1 条记忆" in result and "游玩统计保留" in result
            # The same token again deletes nothing and says why.
            h.fake.enqueue(Reply(tool_calls=[_call(FORGET, **confirm)]), Reply(text="好"))
            await chat(ws, "再删一次", "c3")
            assert "无效或已经用过" in _tool_messages(h, 5)[0]
        assert h.store.load_scope(FARM_A) == []
        assert h.store.stats().saves[0].save_name == "阳光农场"
        assert ("stardew-valley", "farm-a", "goal", "社区中心") in buried(h.store)
        # The next farm-a prompt has no trace of it.
        async with h.adapter(save="farm-a") as ws:
            await chat(ws, "我们的计划是什么", "c4")
        assert "鱼缸收集包" not in json.dumps(h.turn_request().json, ensure_ascii=False)


async def test_hobby_correction_replaces_the_field(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        _seed(h)
        h.fake.enqueue(
            Reply(tool_calls=[_call(CORRECT, field="hobbies", value=["自动化"])]),
            Reply(text="记下了，你更喜欢自动化。"),
        )
        async with h.adapter(save="farm-b") as ws:
            _, done = await chat(ws, "我其实更喜欢自动化，把共同爱好改一下")
        assert done["text"] == "记下了，你更喜欢自动化。"
        assert h.store.get_profile().hobbies == ["自动化"]
        assert "自动化" in _tool_messages(h, 1)[0]


async def test_at_most_four_tool_calls_run_in_a_turn_and_then_it_must_answer(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        _seed(h)
        h.fake.enqueue(
            Reply(tool_calls=[_call(VIEW) for _ in range(4)]),
            Reply(tool_calls=[_call(VIEW)]),  # no tools were offered: ignored
            Reply(text="不会到这里"),
        )
        async with h.adapter() as ws:
            _, done = await chat(ws, "你记得我什么")
        assert done["type"] == "chat.done"
        first, second = h.fake.chat_requests
        assert "tools" in first.json and "tools" not in second.json
        assert len(_tool_messages(h, 1)) == 4 and all("共同记忆" in t for t in _tool_messages(h, 1))

        # Five in one answer (4 per answer): the fifth is refused by the
        # model shell, never run and never echoed back; the turn goes on.
        h.fake.reset()
        h.fake.enqueue(Reply(tool_calls=[_call(VIEW) for _ in range(5)]), Reply(text="好的"))
        async with h.adapter() as ws:
            _, done = await chat(ws, "你记得我什么")
        assert done["text"] == "好的"
        results = _tool_messages(h, 1)
        assert len(results) == 4 and all("共同记忆" in t for t in results)
        (assistant,) = [m for m in h.fake.chat_requests[1].json["messages"] if m.get("tool_calls")]
        assert len(assistant["tool_calls"]) == 4


async def test_a_failing_tool_is_a_result_the_model_explains(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        h.fake.enqueue(
            Reply(tool_calls=[_call(CORRECT, field="hobbies", value="C:\\Users\\ann\\x")]),
            Reply(tool_calls=[ToolCallScript(name=FORGET, arguments="{not json")]),
            Reply(text="没改成。"),
        )
        async with h.adapter() as ws:
            _, done = await chat(ws, "把爱好改成那个路径")
        assert done["text"] == "没改成。"
        # The player never said the value: refused before the store, and redacted.
        assert _tool_messages(h, 1)[0].startswith("没有改：")
        assert "C:\\Users" not in json.dumps(h.fake.chat_requests[1].json)
        assert "参数不对" in _tool_messages(h, 2)[-1]


async def test_a_forgotten_memory_is_not_extracted_again_unless_told_on_purpose(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:  # each extraction is awaited
        plan = _seed(h)
        h.store.forget(
            ForgetSpec(kind="item", game_id=FARM_A.game_id, save_id=FARM_A.save_id, item_id=plan)
        )
        again = json.dumps(
            {
                "profile": None,
                "events": [{"kind": "goal", "subject": "社区中心", "summary": "完成社区中心"}],
            },
            ensure_ascii=False,
        )
        h.fake.enqueue(Reply(match="记忆整理员", text=again), Reply(text="好呀"))
        async with h.adapter() as ws:
            await chat(ws, "社区中心还挺好玩的", "c1")
            with anyio.fail_after(10):
                await h.server.memory.wait_idle()
            assert h.store.load_scope(FARM_A) == []
            h.fake.enqueue(Reply(match="记忆整理员", text=again), Reply(text="记住了"))
            await chat(ws, "记住：我要完成社区中心", "c2")
            with anyio.fail_after(10):
                await h.server.memory.wait_idle()
        (kept,) = h.store.load_scope(FARM_A)
        assert kept.subject == "社区中心" and kept.pinned


async def test_viewing_memory_by_frame_or_cli_asks_no_model(tmp_path: Path) -> None:
    from tests.cli.test_main import xty
    from tests.conftest import recv, send

    async with running(tmp_path / "a") as h:
        _seed(h)
        async with h.adapter() as ws:
            await send(ws, {"type": "memory.get", "id": "m1"})
            assert (await recv(ws))["type"] == "memory.result"
            await send(ws, {"type": "stats.get", "id": "s1"})
            assert (await recv(ws))["type"] == "stats.result"
        with anyio.fail_after(10):
            await h.server.memory.wait_idle()
        assert h.fake.requests == []
        cli = await anyio.to_thread.run_sync(
            lambda: xty(Path(h.settings.data_path), "memory", "view")
        )
        assert cli.returncode == 0 and "阳光农场" in cli.stdout
        assert h.fake.requests == []


async def test_view_with_a_save_shows_only_that_save_of_this_game(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        _seed(h)
        h.fake.enqueue(
            Reply(tool_calls=[_call(VIEW, what="saves", save="阳光农场")]),
            Reply(tool_calls=[_call(VIEW, save="没有这个存档")]),
            Reply(text="好的"),
        )
        async with h.adapter(save="farm-b") as ws:
            _, done = await chat(ws, "看看阳光农场的记忆")
        assert done["text"] == "好的"
        (only,) = _tool_messages(h, 1)
        assert "阳光农场" in only and "社区中心" in only and "温室" not in only
        (unknown,) = _tool_messages(h, 2)[1:]
        assert "没有叫「没有这个存档」的存档" in unknown


async def test_search_finds_the_current_save_by_another_name_and_never_another_save(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        now = h.clock.now()
        h.store.set_profile_field("hobbies", ["钓鱼"])
        own = h.store.upsert_event(
            FARM_A, NewEvent("relationship", "阿比盖尔", "阿比盖尔最喜欢紫水晶, 每周送两次"), now
        )
        h.store.upsert_event(FARM_A, NewEvent("event", "矿井", "矿井第一次下到了第40层"), now)
        # The other save holds the same entity under the same name: never found.
        hates = NewEvent("relationship", "Abigail", "Abigail hates amethyst")
        h.store.upsert_event(FARM_B, hates, now)
        for n in range(12):  # long memories: the 600-character cut
            h.store.upsert_event(
                FARM_A, NewEvent("event", f"紫水晶{n}", f"第{n}次挖到紫水晶, " + "很多" * 30), now
            )
        h.fake.enqueue(
            Reply(
                tool_calls=[
                    _call(SEARCH, query="What does Abigail like?", kind="relationship"),
                    _call(SEARCH, query="fishing"),
                    _call(SEARCH, query="amethyst"),
                ]
            ),
            Reply(
                tool_calls=[_call(SEARCH, query="Abigail", save="farm-b"), _call(SEARCH, query="x")]
            ),
            Reply(text="她喜欢紫水晶。"),
        )
        async with h.adapter(save="farm-a") as ws:
            _, done = await chat(ws, "她喜欢什么来着")
        assert done["type"] == "chat.done" and done["text"] == "她喜欢紫水晶。"
        by_kind, profile, many = _tool_messages(h, 1)
        other_save, fifth = _tool_messages(h, 2)[-2:]
        assert f"#{own.id}" in by_kind and "矿井" not in by_kind and "hates" not in by_kind
        assert "共同记忆" in profile and "钓鱼" in profile  # the shared profile is searched
        assert len(many) <= 600 and f"#{own.id}" in many
        assert len([line for line in many.splitlines() if line.startswith("  #")]) == 5
        assert "hates" not in many
        assert other_save.startswith("错误")  # no argument names another save
        # The fifth call of the turn is refused: the search counts in the four.
        assert "4 次" in fifth
        assert "tools" not in h.fake.chat_requests[2].json
        assert all("hates" not in r.text for r in h.fake.chat_requests)
