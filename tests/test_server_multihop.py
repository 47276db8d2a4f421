"""Issue 39, multi-hop references over the real server and a real SQLite file: the
player names a person by what another memory says of him (「答应那个戴帽子的人的事」), and
the memory about that person reaches the model's request (memory/hop.py)."""

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

pytestmark = pytest.mark.anyio

SHORTS = "答应刘易斯帮他找回紫色短裤"
ROOF = "答应刘易斯帮他修好镇上的屋顶"  # the other save's promise to the same man


async def _idle(h: Any) -> None:
    await h.server.memory.wait_idle()
    await h.server.working.wait_written()


def _farm(h: Any) -> int:
    """The hat says who; the promise to him is the least important of four."""
    h.store.upsert_event(
        FARM, NewEvent("event", "刘易斯", "刘易斯总是戴着一顶帽子", importance=2), 0
    )
    shorts = h.store.upsert_event(
        FARM, NewEvent("promise", "刘易斯的短裤", SHORTS, importance=1), 0
    )
    for subject, summary in (
        ("木头", "答应阿比盖尔给她送五十块木头"),
        ("布料", "答应艾米丽帮她找一块布料"),
        ("防风草", "答应皮埃尔卖给他二十个防风草"),
    ):
        h.store.upsert_event(FARM, NewEvent("promise", subject, summary, importance=5), 0)
    h.store.upsert_event(OTHER, NewEvent("promise", "刘易斯的屋顶", ROOF, importance=5), 0)
    return shorts.id


@pytest.mark.parametrize("vectors", [False, True], ids=["words", "vectors"])
async def test_the_promise_to_the_man_in_the_hat_reaches_the_model(
    tmp_path: Path, vectors: bool
) -> None:
    if vectors and not local_embedding.available():
        pytest.skip("no in-process embedder here")
    overrides = {**NO_GRACE, "memory.local_embedding": vectors}
    async with running(tmp_path, overrides=overrides) as h:
        shorts = _farm(h)
        async with h.adapter() as ws:
            await _idle(h)  # the save's vectors formed
            h.fake.enqueue(Reply(text="还没找到呢"))
            _, done = await chat(ws, "答应那个戴帽子的人的事")
            assert done["type"] == "chat.done", done
            await _idle(h)
            request = turn_text(h)
            assert SHORTS in request
            assert "刘易斯总是戴着一顶帽子" in request  # the bridge says who he is
            assert ROOF not in request  # the other save's memory never leaks
            # Words alone reach it through the hat; with vectors ranked less what every
            # question is near (memory/vectors.py centered) the vectors find it themselves.
            via = injected(h)[-1][shorts]
            assert via.endswith("hop") or (vectors and "vectors" in via), via
            # the turn's places: no more than the relevant and recent sections hold
            assert len(injected(h)[-1]) <= 4 + 1
            if vectors:  # small talk still recalls nothing (its judgement needs vectors)
                while len(h.server.memory.chatter) < len(CHATTER):  # formed once, when idle
                    await anyio.sleep(0.05)
                h.fake.enqueue(Reply(text="休息一下吧"))
                await chat(ws, "今天上班好累啊", chat_id="c2")
                await _idle(h)
                assert injected(h)[-1] == {}


async def test_with_the_hop_off_the_words_alone_miss_it(tmp_path: Path) -> None:
    """The same turn with ``memory.budget.multi_hop = false``: what the hop adds."""
    overrides = {**NO_GRACE, "memory.budget.multi_hop": False}
    async with running(tmp_path, overrides=overrides) as h:
        _farm(h)
        async with h.adapter() as ws:
            await _idle(h)
            h.fake.enqueue(Reply(text="嗯？"))
            await chat(ws, "答应那个戴帽子的人的事")
            await _idle(h)
        assert SHORTS not in turn_text(h)
