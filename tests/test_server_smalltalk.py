"""Issue 39 item 4 over the real server, a real SQLite file and the in-process
multilingual-e5-small: small talk after real memories carries only the always-on goals,
even when its words match a memory (「我饿了，想吃炸鸡」 and the coop's chick), and a real
question that sits nearer everyday chatter than any memory (「我最拿手的那道菜是啥」) still
recalls its memory; a rhetorical complaint about the player's week (「为什么周一总是这么难熬」)
reads as a question and asks nothing, the same words about the game's chickens
(「为什么我的鸡总是不下蛋」) ask (memory/smalltalk.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import NO_GRACE, chat, running
from tests.test_server_embeddings import FARM, OTHER, injected, turn_text
from xtyserver.memory.smalltalk import CHATTER
from xtyserver.memory.types import NewEvent
from xtyserver.model import local_embedding
from xtyserver.testing import Reply

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not local_embedding.available(), reason="no in-process embedder here"),
]
# The whole query budget of a busy 2-core machine: what is tested is what the turn
# decided with the vectors, not how fast they came.
OVERRIDES = {**NO_GRACE, "memory.local_embedding": True, "memory.embedding_timeout_ms": 5000}
LOADS = 120  # seconds the model may take to load and embed on a busy machine

GOAL = "打算秋天前把鸡舍升级成大鸡舍"
CHICK = "鸡舍里孵出了第一只小鸡"
DISH = "学会了做辣椒炒肉，做了十份"
ELSEWHERE = "学会了做辣椒炒肉，卖了二十份"  # another save's: never in this save's turns
OTHERS = (CHICK, "下雨天去河边钓到了一条鲶鱼", DISH, "第一次下到矿洞四十层")


async def _idle(h: Any) -> None:
    with anyio.fail_after(LOADS):
        await h.server.memory.wait_idle()
        await h.server.working.wait_written()


def _remember(h: Any, events: tuple[tuple[str, str], ...]) -> None:
    """The goal and ``(subject, summary)`` events in the farm save; the dish elsewhere."""
    h.store.upsert_event(FARM, NewEvent("goal", "鸡舍", GOAL), 0)
    for subject, summary in events:
        h.store.upsert_event(FARM, NewEvent("event", subject, summary, importance=4), 0)
    h.store.upsert_event(OTHER, NewEvent("event", "辣椒炒肉", ELSEWHERE), 0)


async def _vectors_formed(h: Any) -> None:
    await _idle(h)  # the save's vectors formed
    with anyio.fail_after(LOADS):  # the chatter's too (once per process)
        while len(h.server.memory.chatter) < len(CHATTER):
            await anyio.sleep(0.05)


async def _turn(h: Any, ws: Any, text: str, chat_id: str) -> str:
    """One turn of ``text``; the model request it made."""
    h.fake.enqueue(Reply(text="嗯嗯"))
    _, done = await chat(ws, text, chat_id=chat_id)
    assert done["type"] == "chat.done", done
    await _idle(h)
    return turn_text(h)


def _goal_alone(h: Any, request: str, text: str, others: tuple[str, ...]) -> None:
    assert GOAL in request  # the always-on goal
    for other in others:
        assert other not in request, (text, other)
    assert len(injected(h)[-1]) == 1


async def test_small_talk_carries_the_goals_alone_and_a_chatty_question_recalls(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=OVERRIDES) as h:
        _remember(h, tuple(zip(("小鸡", "钓鱼", "辣椒炒肉", "矿洞"), OTHERS, strict=True)))
        async with h.adapter() as ws:
            await _vectors_formed(h)
            # Small talk, one of them sharing 鸡 (a word and the glossary's chicken) with
            # the chick: the goal alone.
            for n, text in enumerate(("我饿了，想吃炸鸡", "今天上班好累啊")):
                _goal_alone(h, await _turn(h, ws, text, f"s{n}"), text, OTHERS)
            # A question about the game's food, nearer the chatter (中午吃什么好呢) than the
            # memory by cosine, with no word in common: it asks, so it recalls.
            request = await _turn(h, ws, "我最拿手的那道菜是啥", "q")
        assert DISH in request
        assert ELSEWHERE not in request


EGGS = "忘了喂鸡，鸡舍里的鸡两天没下蛋"


async def test_a_rhetorical_complaint_carries_the_goal_alone_and_one_about_the_game_recalls(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=OVERRIDES) as h:
        subjects = ("小鸡", "钓鱼", "辣椒炒肉", "矿洞", "下蛋")
        _remember(h, tuple(zip(subjects, (*OTHERS, EGGS), strict=True)))
        async with h.adapter() as ws:
            await _vectors_formed(h)
            # A complaint about the player's own week, a question's words (为什么, 总是,
            # "how is it already"): the goal alone.
            for n, text in enumerate(("为什么周一总是这么难熬", "how is it already Monday")):
                _goal_alone(h, await _turn(h, ws, text, f"c{n}"), text, (*OTHERS, EGGS))
            # The same shape about the game's chickens asks what the save remembers of them.
            request = await _turn(h, ws, "为什么我的鸡总是不下蛋", "q")
        assert EGGS in request
