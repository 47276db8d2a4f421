"""A turn's query vector over the real server: a question typed (chat.typing) is embedded
before its chat.send and not again, a question asked again costs no second embedding,
a draft's vector is never another text's, and the similarities the shell computes with
numpy are the core's."""

from __future__ import annotations

import random
from array import array
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import chat, running, send
from tests.test_server_embeddings import (
    ABIGAIL,
    EMBED,
    FARM,
    QUESTION,
    embedded_texts,
    idle,
    injected,
    turn_text,
)
from xtyserver.memory.types import NewEvent
from xtyserver.memory.vectors import normalized, similarities
from xtyserver.serve.turn_tasks import RECENT_QUERIES, similar
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio

PLACE = {"schemaVersion": 1, "world": {"location": "Pierre's General Store"}}


async def embedded(h: Any, texts: int) -> None:
    """Until the scripted route has embedded ``texts`` texts (a hint has no answer to await)."""
    with anyio.fail_after(10):
        while len(embedded_texts(h)) < texts:
            await anyio.sleep(0.01)


CHATTER = (
    "my flatmate moved out and I spent all Sunday cleaning the kitchen, found three "
    "mugs of mold, gross. anyway, "
)


@pytest.mark.parametrize(
    ("hint", "sent", "embeds"),
    [
        (QUESTION, QUESTION, [QUESTION]),  # typed: embedded before its chat.send, and not again
        ("What does", QUESTION, ["What does", QUESTION]),  # a draft's vector is never the sent's
        # A long message's question alone, typed as sent (memory/focus.py), as an untyped turn's.
        (CHATTER + QUESTION, CHATTER + QUESTION, ["anyway, " + QUESTION]),
    ],
)
async def test_a_typed_question_is_embedded_before_its_send(
    tmp_path: Path, hint: str, sent: str, embeds: list[str]
) -> None:
    async with running(tmp_path, overrides=EMBED) as h:
        abigail = h.store.upsert_event(FARM, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        async with h.adapter() as ws:
            await idle(h)
            background = len(embedded_texts(h))
            await send(ws, {"type": "state.update", "modelContext": PLACE})
            await send(ws, {"type": "chat.typing", "text": hint})
            await embedded(h, background + 1)  # embedded while the player "typed"
            h.fake.enqueue(Reply(text="紫水晶"))
            _, done = await chat(ws, sent)
            assert done["type"] == "chat.done", done
            await idle(h)
        # The player's words alone, though the modelContext names a place (lexical).
        assert "Pierre's General Store" in turn_text(h)
        assert embedded_texts(h)[background:] == embeds
        assert injected(h)[-1] == {abigail.id: "vectors"}


async def test_a_hint_with_memory_off_embeds_nothing(tmp_path: Path) -> None:
    async with running(tmp_path, overrides={**EMBED, "memory.enabled": False}) as h:
        async with h.adapter() as ws:
            await send(ws, {"type": "chat.typing", "text": QUESTION})
            h.fake.enqueue(Reply(text="嗯"))
            _, done = await chat(ws, "你好")  # the hint had no answer; the turn still runs
            assert done["type"] == "chat.done", done
        assert embedded_texts(h) == []


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
