"""Search keys over the real server: extraction writes them, retrieval uses them,
the background job gives old memories some — one save at a time, within the daily budget,
resuming where it stopped."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import NO_GRACE, chat, is_job_request, running
from xtyeval.scoring import message_text
from xtyserver.memory.enrichment import BATCH, ENRICHMENT_SYSTEM_PROMPT
from xtyserver.memory.extraction import EXTRACTION_SYSTEM_PROMPT
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.serve.jobs import ENRICH_BATCHES
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")
OTHER = Scope("stardew-valley", "farm-b")
ENRICH = {"memory.extraction": False, "memory.enrich_keys": True}
JUN = "Jun 每到周末来一起玩, 她负责种花"


async def idle(h: Any) -> None:
    with anyio.fail_after(10):
        await h.server.memory.wait_idle()
        await h.server.working.wait_written()


def enrichment_requests(h: Any) -> list[str]:
    return [
        r.json["messages"][1]["content"]
        for r in h.fake.chat_requests
        if r.json["messages"][0]["content"] == ENRICHMENT_SYSTEM_PROMPT
    ]


def injected_via(h: Any) -> list[dict[int, str]]:
    path = Path(h.settings.data_path) / "profiles" / "default" / "injections.jsonl"
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [{m["id"]: m.get("via", "") for m in r["memories"]} for r in records]


async def test_old_memories_get_keys_when_their_save_opens_and_the_job_resumes(
    tmp_path: Path,
) -> None:
    total = ENRICH_BATCHES * BATCH + 3  # more than one job does
    async with running(tmp_path, overrides=ENRICH) as h:
        ids = [
            h.store.upsert_event(FARM, NewEvent("event", f"事{n}", f"第{n}件事"), 0).id
            for n in range(total)
        ]
        other = h.store.upsert_event(OTHER, NewEvent("event", "别的", "别的存档的事"), 0)
        h.fake.search_keys = {f"第{n}件事": [f"key{n}", "事情"] for n in range(total)}
        async with h.adapter():
            await idle(h)
        asked = enrichment_requests(h)
        assert len(asked) == ENRICH_BATCHES
        assert all("别的存档" not in text for text in asked)  # one save at a time
        left = h.store.without_search_keys(FARM, 100)
        assert len(left) == 3
        assert h.store.without_search_keys(OTHER, 10)[0].id == other.id
        # The next session of the save goes on where the job stopped.
        async with h.adapter():
            await idle(h)
        assert len(enrichment_requests(h)) == ENRICH_BATCHES + 1
        assert h.store.without_search_keys(FARM, 100) == []
        stored = {e.id: e.search_keys for e in h.store.load_scope(FARM)}
        assert stored[ids[5]] == ("key5", "事情")
        # Nothing left: opening the save again asks nothing.
        async with h.adapter():
            await idle(h)
        assert len(enrichment_requests(h)) == ENRICH_BATCHES + 1


async def test_keys_find_a_memory_no_word_of_the_question_is_in(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=ENRICH) as h:
        jun = h.store.upsert_event(FARM, NewEvent("relationship", "Jun", JUN), 0)
        h.fake.search_keys = {JUN: ["Jun", "朋友", "weekend", "friend", "flowers"]}
        async with h.adapter() as ws:
            await idle(h)  # the loaded index takes the keys at once
            h.fake.enqueue(Reply(text="Jun 周末来"))
            _, done = await chat(ws, "Which friend comes on the weekend?")
            assert done["type"] == "chat.done", done
            await idle(h)
        turn = [r for r in h.fake.chat_requests if not is_job_request(r)][-1]
        assert JUN in "\n".join(message_text(m) for m in turn.json["messages"])
        assert injected_via(h)[-1][jun.id] == "keys"  # no word of the question is in it


async def test_no_keys_are_asked_for_once_the_daily_budget_runs_low(tmp_path: Path) -> None:
    low = {**ENRICH, "model.daily_token_budget": 100_000, "model.budget_low_share": 0.9999}
    async with running(tmp_path, overrides=low) as h:
        h.fake.search_keys = {"一件事": ["事情"]}
        async with h.adapter() as ws:
            h.fake.enqueue(Reply(text="好"))
            _, done = await chat(ws, "你好")  # any chat makes the budget low
            assert done["type"] == "chat.done"
            await idle(h)
        h.store.upsert_event(FARM, NewEvent("event", "事", "一件事"), 0)  # e.g. imported
        async with h.adapter():
            await idle(h)
        assert enrichment_requests(h) == []
        assert len(h.store.without_search_keys(FARM, 10)) == 1


async def test_extraction_writes_keys_with_the_memory(tmp_path: Path) -> None:
    answer = {
        "profile": None,
        "events": [
            {
                "kind": "relationship",
                "subject": "阿比盖尔",
                "summary": "阿比盖尔最喜欢紫水晶",
                "keys": ["阿比盖尔", "Abigail", "紫水晶", "Amethyst", "礼物"],
            }
        ],
    }
    # The extraction is awaited: no grace.
    async with running(tmp_path, overrides={"memory.enrich_keys": False, **NO_GRACE}) as h:
        h.fake.enqueue(
            Reply(text="紫水晶！"),
            Reply(text=json.dumps(answer, ensure_ascii=False), match=EXTRACTION_SYSTEM_PROMPT),
        )
        async with h.adapter() as ws:
            _, done = await chat(ws, "阿比盖尔最喜欢紫水晶，记一下")
            assert done["type"] == "chat.done"
            await idle(h)
        (stored,) = h.store.load_scope(FARM)
        assert stored.search_keys == ("阿比盖尔", "Abigail", "紫水晶", "Amethyst", "礼物")
