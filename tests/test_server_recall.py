"""Issue 39, round five, over the real server, a real SQLite file and the in-process
multilingual-e5-small: a description that shares no word with its memory
(「那片遍地黄沙、晒得要命的地方」 for the desert) finds it, although plain memories (去矿井下了
前五层, 去森林里走了一圈) sit nearer it by raw cosine: the vectors rank less what every
question is near (memory/vectors.py centered, against everyday chatter's centroid)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio

from tests.conftest import chat, running
from tests.test_server_embeddings import FARM, OTHER, turn_text
from tests.test_server_smalltalk import LOADS, OVERRIDES, _idle
from tests.test_server_smalltalk import pytestmark as pytestmark
from xtyserver.memory.smalltalk import CHATTER
from xtyserver.memory.types import NewEvent
from xtyserver.testing import Reply

DESERT = "玩家第一次坐巴士去了沙漠，在绿洲买了仙人掌种子"
MINES = "玩家去矿井下了前五层"  # near every question by raw cosine
WALK = "玩家去森林里走了一圈"  # so is this one
PLAIN = (
    ("矿井", MINES),
    ("散步", WALK),
    ("委托", "玩家在镇上的公告板接了一个委托"),
    ("贝壳", "玩家在海滩捡了几个贝壳"),
    ("韭葱", "玩家去山上的湖边采了一堆韭葱"),
    ("木材", "玩家在木匠铺买了木材"),
)
ELSEWHERE = "玩家第一次坐巴士去了沙漠，在绿洲买了杨桃种子"  # another save's


async def _ready(h: Any) -> None:
    """The save's vectors and everyday chatter's (once per process) formed."""
    await _idle(h)
    with anyio.fail_after(LOADS):
        while len(h.server.memory.chatter) < len(CHATTER):
            await anyio.sleep(0.05)


async def test_a_description_finds_its_memory_past_the_plain_ones(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=OVERRIDES) as h:
        for scope, subject, summary in (
            (FARM, "沙漠", DESERT),
            *((FARM, subject, summary) for subject, summary in PLAIN),
            (OTHER, "沙漠", ELSEWHERE),
        ):
            h.store.upsert_event(scope, NewEvent("event", subject, summary), 0)
        async with h.adapter() as ws:
            await _ready(h)
            h.fake.enqueue(Reply(text="去买种子了"))
            question = "那片遍地黄沙、晒得要命的地方，我头一回去干嘛了？"
            assert (await chat(ws, question))[1]["type"] == "chat.done"
            await _idle(h)
        request = turn_text(h)
        assert DESERT in request
        assert MINES not in request and WALK not in request  # the vectors' one place
        assert ELSEWHERE not in request
