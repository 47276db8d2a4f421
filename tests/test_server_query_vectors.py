"""A turn's query vector over the real server: a question asked again costs no second
embedding, and the similarities the shell computes with numpy are the core's."""

from __future__ import annotations

import random
from array import array
from pathlib import Path

import pytest

from tests.conftest import chat, running
from tests.test_server_embeddings import (
    ABIGAIL,
    EMBED,
    FARM,
    QUESTION,
    embedded_texts,
    idle,
    injected,
)
from xtyserver.memory.types import NewEvent
from xtyserver.memory.vectors import normalized, similarities
from xtyserver.serve.turn_tasks import RECENT_QUERIES, similar
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio


async def test_a_question_asked_again_is_embedded_once(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=EMBED) as h:
        abigail = h.store.upsert_event(FARM, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        async with h.adapter() as ws:
            await idle(h)
            background = len(embedded_texts(h))
            for answer in ("紫水晶", "还是紫水晶", "紫色的"):
                h.fake.enqueue(Reply(text=answer))
                _, done = await chat(ws, QUESTION)
                assert done["type"] == "chat.done", done
                await idle(h)
            h.fake.enqueue(Reply(text="不知道"))
            _, done = await chat(ws, "Who is Abigail?")
            assert done["type"] == "chat.done", done
            await idle(h)
        queries = embedded_texts(h)[background:]
        assert [q.startswith(QUESTION) for q in queries] == [True, False]
        # Every turn found the memory by its vector, the repeated ones too.
        assert [record.get(abigail.id) for record in injected(h)[:3]] == ["vectors"] * 3


async def test_a_connection_keeps_its_latest_questions_only(tmp_path: Path) -> None:
    overrides = {**EMBED, "server.chat_burst": 100, "server.chats_per_minute": 1000}
    async with running(tmp_path, overrides=overrides) as h:
        h.store.upsert_event(FARM, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        async with h.adapter() as ws:
            await idle(h)
            background = len(embedded_texts(h))
            # Words, not numbers: a run of digits across messages reads as a split key.
            things = "春夏秋冬东南西北金木水火土日月星云雨雪风"
            asked = [f"阿比盖尔喜欢{c}吗" for c in things[: RECENT_QUERIES + 1]]
            for text in [*asked, asked[-1], asked[0]]:
                h.fake.enqueue(Reply(text="嗯"))
                _, done = await chat(ws, text)
                assert done["type"] == "chat.done", done
        queries = [q.split(" ")[0] for q in embedded_texts(h)[background:]]
        # The last one was kept; the first was let go when the seventeenth came.
        assert queries == [*asked, asked[0]]


def test_numpy_finds_the_same_similarities_as_the_core() -> None:
    pytest.importorskip("numpy")
    rng = random.Random(5)

    def unit(size: int) -> array[float]:
        return normalized([rng.uniform(-1, 1) for _ in range(size)])

    query = unit(384)
    vectors = [(i, unit(384)) for i in range(1, 200)] + [(500, unit(128))]
    vectors.append((600, array("f", vectors[3][1])))  # a tie: the smaller id first
    assert [(i, round(s, 6)) for i, s in similar(query, vectors)] == [
        (i, round(s, 6)) for i, s in similarities(query, vectors)
    ]
    assert similar(query, [(1, unit(128))]) == []
