"""Working memory and the layered prompt over the real server.

A long conversation keeps its beginning through the rolling session summary
while the request stays bounded; a reconnect of the same save resumes it; the
stable layers are byte-identical from turn to turn; the injection log holds
sizes, ids and scores but no text.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import NO_GRACE, chat, model_context, player_text, recv, running, send
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.session.fold import FOLD_MARKER
from xtyserver.session.prompt import unfence
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
FACT = "我的农场叫枫叶谷 Maple Hollow"
NO_EXTRACTION = {"memory.extraction": False, **NO_GRACE}
STAGE = "下面是这次游戏过程中最近的对话"


def fold_answer(*requests: str) -> Reply:
    """A scripted fold: keeps the farm's name (as a model that reads the old summary would)."""
    body = {
        "requests": ["农场名字叫枫叶谷 Maple Hollow", *requests],
        "decisions": ["先修温室"],
        "preferences": ["喜欢钓鱼"],
        "open_questions": [],
        "mood": "开心",
    }
    return Reply(text=json.dumps(body, ensure_ascii=False), match=FOLD_MARKER)


async def idle(h: Any) -> None:
    with anyio.fail_after(10):
        await h.server.memory.wait_idle()
        await h.server.working.wait_written()  # the injection log is written behind


async def gone(h: Any) -> None:
    """Wait until the server has seen the connection end (and parked its working memory)."""
    with anyio.fail_after(10):
        await h.server.wait_connections(at_most=0)
    await idle(h)


def round_text(n: int) -> str:
    """Round ``n``'s text as the model sees it (ASCII punctuation: no normalisation applies)."""
    return FACT if n == 2 else f"第{n}轮: 今天先去矿洞第{n}层看看, 再回来浇水和收菜"


async def play(h: Any, ws: Any, first: int, last: int) -> None:
    for n in range(first, last + 1):
        h.clock.advance(4)  # the chat.send rate (20 a minute) and a heartbeat keep up
        await send(ws, {"type": "heartbeat"})
        h.fake.enqueue(Reply(text=f"好呀，第{n}轮我们一起去！记得带上镐子和食物。"))
        _, done = await chat(ws, round_text(n), chat_id=f"c{n}")
        assert done["type"] == "chat.done", done
        await idle(h)  # a fold asked for after this round has come back


def chat_request(h: Any, n: int) -> Any:
    key = "我的农场叫" if n == 2 else f"第{n}轮"
    found = [
        r
        for r in h.fake.chat_requests
        if FOLD_MARKER not in r.text and player_text(r).startswith(key)
    ]
    assert len(found) == 1, n
    return found[0]


def folds(h: Any) -> list[Any]:
    return [r for r in h.fake.chat_requests if FOLD_MARKER in r.text]


async def test_a_60_round_evening_keeps_its_beginning_in_a_bounded_request(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        h.fake.enqueue(*[fold_answer() for _ in range(12)])
        async with h.adapter() as ws:
            await play(h, ws, 1, 60)
        size15 = len(chat_request(h, 15).body)
        size60 = len(chat_request(h, 60).body)
        at60 = chat_request(h, 60)
        assert "枫叶谷 Maple Hollow" in at60.text
        assert FACT not in at60.text  # it is there through the summary, not the window
        assert size60 <= 1.5 * size15, (size15, size60)
        # Rounds 5..14 are the window and 1..4 wait for their fold at round 15.
        messages15 = chat_request(h, 15).json["messages"]
        assert unfence(messages15[1]["content"])[0]  # the early data block (the profile)
        assert sum(m["role"] == "user" for m in messages15[3:]) == 15
        assert FACT in chat_request(h, 15).text
        # The folds: every 5 rounds once 5 have left the window, stateless.
        made = folds(h)
        assert len(made) == 10  # after rounds 15, 20, ..., 60
        first = made[0].json["messages"]
        assert FACT in first[1]["content"] and round_text(6) not in first[1]["content"]
        assert all("小汤圆，一个陪玩家" not in r.text for r in made)  # no persona, no memory
        assert all(r.json.get("tools") is None for r in made)
        print(f"request bytes: round 15 = {size15}, round 60 = {size60}")


async def test_a_reconnect_at_round_30_keeps_the_fact_and_summarises_no_round_twice(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:
        h.fake.enqueue(*[fold_answer() for _ in range(12)])
        h.fake.enqueue(*[Reply(text='{"events": []}', match="玩家说") for _ in range(70)])
        async with h.adapter() as ws:
            await play(h, ws, 1, 30)
        await gone(h)
        stage = [r for r in h.fake.chat_requests if STAGE in r.text]
        assert len(stage) == 1 and round_text(30) in stage[0].text
        h.clock.advance(600)  # the game crashed; it is back ten minutes later (the edge)
        async with h.adapter() as ws:
            await play(h, ws, 31, 32)
        await gone(h)
        assert "枫叶谷 Maple Hollow" in chat_request(h, 31).text
        assert round_text(30) in chat_request(h, 31).text  # the window came back too
        await idle(h)
        stages = [r for r in h.fake.chat_requests if STAGE in r.text]
        assert len(stages) == 2
        last = stages[-1].text
        assert round_text(31) in last and round_text(30) not in last  # summarised once


async def test_a_reconnect_after_the_resume_time_starts_afresh(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        async with h.adapter() as ws:
            await play(h, ws, 1, 2)
        await gone(h)
        h.clock.advance(600.001)
        async with h.adapter() as ws:
            await play(h, ws, 3, 3)
        assert FACT not in chat_request(h, 3).text
        async with h.adapter(save="farm-b") as ws:  # another save never gets it
            await play(h, ws, 4, 4)
        assert round_text(3) not in chat_request(h, 4).text


async def test_the_stable_layers_are_byte_identical_and_the_injection_log_holds_no_text(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        farm = Scope("stardew-valley", "farm-a")
        h.store.set_profile_field("nickname", "豆豆")
        h.store.set_profile_field("reply_style", "简短")
        goal = NewEvent(kind="goal", subject="温室", summary="修好温室")
        ids = [h.store.upsert_event(farm, goal, h.clock.now()).id]
        async with h.adapter() as ws:
            ctx = model_context(h.clock, world={"location": "鹈鹕镇", "day": 3})
            await send(ws, {"type": "state.update", "modelContext": ctx})
            # Connecting lists the game in the profile ("一起玩过") by a store write
            # of this connection; a stats.get answered after it orders the turns
            # after it, so all three see the same profile.
            await send(ws, {"type": "stats.get", "id": "settled"})
            assert (await recv(ws))["type"] == "stats.result"
            await play(h, ws, 1, 3)
        bodies = [chat_request(h, n).body for n in (1, 2, 3)]
        stable = chat_request(h, 1).json["messages"][:3]
        assert [m["role"] for m in stable] == ["system", "user", "assistant"]
        data, rest = unfence(stable[1]["content"])
        assert [line[:4] for line in data.split("\n") if not line.startswith("-")] == [
            "说话方式",
            "关于玩家",
        ]
        assert rest == ""
        last_stable = stable[1]["content"]
        for a, b in itertools.pairwise(bodies):
            # Where the last stable layer ends in the body, however the client escapes it.
            ends = [
                a.find(enc) + len(enc)
                for enc in (json.dumps(last_stable, ensure_ascii=flag).encode() for flag in (0, 1))
                if a.find(enc) >= 0
            ]
            assert ends, "the profile layer is not in the request"
            common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), 0)
            assert common >= ends[0] > 0, "stable layers changed between turns"
            assert a[: ends[0]] == b[: ends[0]]
        log_path = tmp_path / "profiles" / "default" / "injections.jsonl"
        raw = log_path.read_text(encoding="utf-8")
        records = [json.loads(line) for line in raw.splitlines()]
        assert len(records) == 3
        for n in (1, 2, 3):
            assert round_text(n) not in raw and f"第{n}轮我们" not in raw
        assert "鹈鹕镇" not in raw and "修好温室" not in raw and "豆豆" not in raw
        last = records[-1]
        assert [layer["name"] for layer in last["layers"]] == [
            "identity",
            "style",
            "profile",
            "memory",
            "window",
            "current",
            "fence",
            "tools",
        ]
        assert last["memories"][0]["id"] == ids[0] and last["memories"][0]["why"] == "goal"
        assert last["context"] in ("fresh", "stale") and last["model"] == "fake-vl"
        assert last["window_rounds"] == 2
        done = subprocess.run(
            [sys.executable, "-m", "xtyserver", "why", "--last", "2", "--json"],
            env={**os.environ, "XTY_DATA_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        assert len(json.loads(done.stdout)) == 2
        text = subprocess.run(
            [sys.executable, "-m", "xtyserver", "why", "--last", "1"],
            env={**os.environ, "XTY_DATA_DIR": str(tmp_path)},
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        ).stdout
        assert "identity" in text and f"#{ids[0]} goal" in text
