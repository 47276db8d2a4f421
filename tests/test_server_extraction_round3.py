"""Extraction stores the right thing once, over the real server and the scripted model:
the player's health, address and real name never reach the extraction or summary
model; the summary call carries the per-turn privacy rules and what the save holds,
and a reworded subject updates that memory; 明天 is stored as the date it meant."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import NO_GRACE, chat, model_context, running, send
from xtyserver.memory.extraction import (
    EXTRACTION_SYSTEM_PROMPT,
    PRIVACY_RULES,
    SUMMARY_SYSTEM_PROMPT,
)
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")
# The clock's start, 2026-09-21 22:13 in Shanghai (a Monday).
SETTINGS = {"memory.extraction": True, "server.default_timezone": "Asia/Shanghai", **NO_GRACE}
PRIVATE = "我真名叫张伟，我家住在北京市朝阳区建国路88号，我有糖尿病。明天我们去找阿比盖尔吧"


def job(reply: dict[str, Any], prompt: str) -> Reply:
    return Reply(text=json.dumps(reply, ensure_ascii=False), match=prompt[:20])


def requests_with(h: Any, prompt: str) -> list[str]:
    found = []
    for r in h.fake.chat_requests:
        messages = r.json["messages"]
        if messages[0]["content"] == prompt:
            found.append("\n".join(str(m["content"]) for m in messages))
    return found


async def idle(h: Any) -> None:
    with anyio.fail_after(10):
        await h.server.memory.wait_idle()


async def test_private_facts_never_reach_the_extractor_and_tomorrow_is_stored_resolved(
    tmp_path: Path,
) -> None:
    answer = {
        "profile": None,
        "events": [
            {
                "kind": "promise",
                "subject": "找阿比盖尔",
                "summary": "约好明天一起去找阿比盖尔",
                "importance": 4,
                "keys": ["阿比盖尔", "Abigail"],
            },
            {  # the server's own check refuses what the model should not have proposed
                "kind": "event",
                "subject": "玩家的真名",
                "summary": "玩家说真名叫张伟",
                "importance": 3,
            },
            # and what a model writes of the player in English
            {"kind": "event", "subject": "Health", "summary": "The player has diabetes"},
            {"kind": "event", "subject": "Home", "summary": "The player lives at 12 Elm Street"},
        ],
    }
    async with running(tmp_path, overrides=SETTINGS) as h:
        h.fake.enqueue(Reply(text="好呀！"), job(answer, EXTRACTION_SYSTEM_PROMPT))
        async with h.adapter() as ws:
            context = model_context(h.clock, world={"day": 12, "season": "spring"})
            await send(ws, {"type": "state.update", "modelContext": context})
            _, done = await chat(ws, PRIVATE)
            assert done["type"] == "chat.done", done
            await idle(h)
        [sent] = requests_with(h, EXTRACTION_SYSTEM_PROMPT)
        for private in ("张伟", "建国路", "糖尿病", "北京"):
            assert private not in sent
        assert "阿比盖尔" in sent  # the rest of the player's words are there
        assert "今天：2026-09-21（星期一，游戏第12天）" in sent
        [stored] = h.store.load_scope(FARM)
        assert stored.summary == "约好明天（2026-09-22，游戏第13天）一起去找阿比盖尔"


async def test_the_summary_sees_the_rules_and_the_save_and_updates_a_reworded_goal(
    tmp_path: Path,
) -> None:
    answer = {
        "events": [
            {
                "kind": "goal",
                "subject": "完成鱼缸收集包",  # the held goal's subject, reworded
                "summary": "鱼缸收集包只差一条鲶鱼了，下周二前要钓到",
                "importance": 4,
            }
        ]
    }
    nothing = job({"profile": None, "events": []}, EXTRACTION_SYSTEM_PROMPT)
    async with running(tmp_path, overrides=SETTINGS) as h:
        held = h.store.upsert_event(
            FARM, NewEvent("goal", "鱼缸收集包", "计划完成鱼缸收集包"), h.clock.now()
        )
        h.fake.enqueue(Reply(text="好的"), nothing, Reply(text="加油"), nothing)
        h.fake.enqueue(job(answer, SUMMARY_SYSTEM_PROMPT))
        async with h.adapter() as ws:
            for n, text in enumerate(("鱼缸收集包还差什么", "我的地址是北京市建国路88号")):
                _, done = await chat(ws, text, chat_id=f"c{n}")
                assert done["type"] == "chat.done", done
                await idle(h)
        with anyio.fail_after(10):
            await h.server.wait_connections(at_most=0)
        await idle(h)
        [sent] = requests_with(h, SUMMARY_SYSTEM_PROMPT)
        assert all(rule in SUMMARY_SYSTEM_PROMPT for rule in PRIVACY_RULES)
        assert "鱼缸收集包：计划完成鱼缸收集包" in sent  # what the save holds
        assert "建国路" not in sent
        [stored] = h.store.load_scope(FARM)  # updated, not a second goal
        assert stored.id == held.id
        assert stored.summary == "鱼缸收集包只差一条鲶鱼了，下周二（2026-09-29）前要钓到"
