"""Memory vectors over the real server: formed in the background through
the real ``openai`` client and the scripted ``/v1/embeddings``, used in a turn, skipped on
a slow route, gone with a forgotten memory, and no change at all without the route."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from tests.conftest import NO_GRACE, chat, is_job_request, running
from xtyeval.scoring import message_text
from xtyserver.memory.commands import Forget
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.model.embedding import BATCH
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")
OTHER = Scope("stardew-valley", "farm-b")
MODEL = "fake-embed"
# The server's glossary is off, so words alone cannot meet "Abigail" and 阿比盖尔;
# the (scripted) embedding model knows the name in both languages.
# Every test awaits the jobs after each turn, so no grace.
EMBED = {"models.embedding.model": MODEL, "memory.glossary": False, **NO_GRACE}
ABIGAIL = "阿比盖尔最喜欢紫水晶"
QUESTION = "What does Abigail like?"


async def idle(h: Any, *, within: float = 10) -> None:
    """Wait for the memory jobs; ``within``: a guard against a hang, never a speed bound."""
    with anyio.fail_after(within):
        await h.server.memory.wait_idle()
        await h.server.working.wait_written()


def injected(h: Any) -> list[dict[int, str]]:
    path = Path(h.settings.data_path) / "profiles" / "default" / "injections.jsonl"
    if not path.exists():
        return []
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return [{m["id"]: m.get("via", "") for m in r["memories"]} for r in records]


def turn_text(h: Any) -> str:
    turn = [r for r in h.fake.chat_requests if not is_job_request(r)][-1]
    return "\n".join(message_text(m) for m in turn.json["messages"])


def vector_rows(h: Any) -> list[tuple[int, str, int]]:
    conn = h.store._db._writer
    return [
        (int(i), str(m), int(n))
        for i, m, n in conn.execute(
            "SELECT event_id, model, length(vector) FROM memory_vector ORDER BY event_id"
        )
    ]


def embedded_texts(h: Any) -> list[str]:
    return [t for r in h.fake.embedding_requests for t in r.json["input"]]


async def test_vectors_are_formed_in_the_background_for_every_save_and_resume(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=EMBED) as h:
        ids = [
            h.store.upsert_event(FARM, NewEvent("event", f"事{n}", f"第{n}件事"), 0).id
            for n in range(BATCH + 5)
        ]
        other = h.store.upsert_event(OTHER, NewEvent("event", "别的", "别的存档的事"), 0).id
        async with h.adapter():
            await idle(h)
        rows = vector_rows(h)
        # Every memory of the store, the save never opened too (the backlog is the store's).
        assert [r[0] for r in rows] == [*ids, other]
        assert {r[1] for r in rows} == {MODEL}
        assert {r[2] for r in rows} == {256 * 4}  # float32 blobs
        assert len(h.fake.embedding_requests) == 3  # batches of BATCH, one save a request
        assert embedded_texts(h)[-1] == "别的：别的存档的事"  # the opened save went first
        assert h.server.memory.statistics.jobs_dropped == 0
        # A memory rewritten since loses its vector; the next session forms only that one.
        h.store.upsert_event(FARM, NewEvent("event", "事3", "第3件事改了"), 0)
        assert ids[3] not in [r[0] for r in vector_rows(h)]
        async with h.adapter():
            await idle(h)
        assert [r[0] for r in vector_rows(h)] == [*ids, other]
        assert embedded_texts(h)[-1] == "事3：第3件事改了"
        assert len(h.fake.embedding_requests) == 4


async def test_a_turn_finds_by_vector_what_no_word_finds(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=EMBED) as h:
        abigail = h.store.upsert_event(FARM, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        async with h.adapter() as ws:
            await idle(h)
            h.fake.enqueue(Reply(text="紫水晶"))
            _, done = await chat(ws, QUESTION)
            assert done["type"] == "chat.done", done
            await idle(h)
        assert ABIGAIL in turn_text(h)
        assert injected(h)[-1] == {abigail.id: "vectors"}
        # The query was embedded once for the turn, after the background batch.
        assert embedded_texts(h)[-1].startswith(QUESTION)


async def test_a_slow_route_is_skipped_and_the_turn_answers_with_words_alone(
    tmp_path: Path,
) -> None:
    overrides = {**EMBED, "memory.embedding_timeout_ms": 150}
    async with running(tmp_path, overrides=overrides) as h:
        h.store.upsert_event(FARM, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        async with h.adapter() as ws:
            await idle(h)  # vectors formed while the route was fast
            assert len(vector_rows(h)) == 1
            h.fake.embedding_delay = 2.0
            h.fake.enqueue(Reply(text="不知道"))
            with capture_logs() as logs:
                _, done = await chat(ws, QUESTION)
            assert done["type"] == "chat.done", done
            await idle(h)
        # The turn did not wait for the slow route: it decided to skip the vector.
        skipped = [x for x in logs if x["event"] == "memory.embedding_skipped"]
        assert [x["reason"] for x in skipped] == ["timeout"]
        # Only "recent and important" shows it (a one-memory save): not found as relevant.
        assert "【相关记忆】" not in turn_text(h)
        assert "vectors" not in injected(h)[-1].values()


async def test_a_forgotten_memory_loses_its_vector_and_is_never_found_by_one(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=EMBED) as h:
        abigail = h.store.upsert_event(FARM, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        kept = h.store.upsert_event(FARM, NewEvent("event", "鱼", "春天钓到了鲶鱼"), 0)
        async with h.adapter() as ws:
            await idle(h)
            assert [r[0] for r in vector_rows(h)] == [abigail.id, kept.id]
            spec = ForgetSpec(
                kind="item", game_id=FARM.game_id, save_id=FARM.save_id, item_id=abigail.id
            )
            await h.server.memory.execute(Forget(target=spec))
            assert [r[0] for r in vector_rows(h)] == [kept.id]
            h.fake.enqueue(Reply(text="不记得"))
            _, done = await chat(ws, QUESTION)
            assert done["type"] == "chat.done", done
            await idle(h)
        assert ABIGAIL not in turn_text(h)
        assert abigail.id not in injected(h)[-1]
        # Never embedded again either.
        assert embedded_texts(h).count(f"阿比盖尔：{ABIGAIL}") == 1


async def _conversation(
    tmp_path: Path, overrides: dict[str, Any], *, slow: bool = False
) -> tuple[list[bytes], Any]:
    async with running(tmp_path, overrides={**overrides, **NO_GRACE}) as h:
        h.store.upsert_event(FARM, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        h.store.upsert_event(FARM, NewEvent("goal", "鸡舍", "今年秋天前盖好鸡舍"), 0)
        h.store.upsert_event(FARM, NewEvent("event", "鱼", "春天钓到了鲶鱼"), 0)
        async with h.adapter() as ws:
            await idle(h)
            # The save's opening records the game in the profile on the store lane; the
            # first turn must not race it in one run and not in the other.
            with anyio.fail_after(60):  # a hang guard: the store lane is slow when busy
                while not (await h.server.memory.profile()).games:
                    await anyio.sleep(0.01)
            if slow:  # from now on the route answers too late for a turn
                h.fake.embedding_delay = 1.0
            for n, text in enumerate((QUESTION, "鸡舍盖到哪了？", "钓鱼去吗")):
                h.fake.enqueue(Reply(text=f"好{n}"))
                _, done = await chat(ws, text, f"c{n}")
                assert done["type"] == "chat.done", done
                await idle(h)
        bodies = [r.body for r in h.fake.chat_requests]
        return bodies, (injected(h), vector_rows(h), len(h.fake.embedding_requests))


async def test_without_the_route_nothing_changes(tmp_path: Path) -> None:
    plain, (plain_log, plain_rows, plain_embeds) = await _conversation(
        tmp_path / "a", {"memory.glossary": False}
    )
    assert plain_rows == [] and plain_embeds == 0
    # A route that is always too slow at turn time leaves every turn to words alone:
    # the same requests, byte for byte, and the same injected memories.
    slow = {**EMBED, "memory.embedding_timeout_ms": 50}
    routed, (routed_log, routed_rows, routed_embeds) = await _conversation(
        tmp_path / "b", slow, slow=True
    )
    assert routed_embeds > 0 and len(routed_rows) == 3
    assert routed_log == plain_log
    assert routed == plain
