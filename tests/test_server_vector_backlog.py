"""The vector backlog over the real server: memories brought in by the real
``xtyserver memory import`` (another process, the server stopped) all get their
vectors with no job dropped, a stop half-way resumes at the next start from what
the store lacks, and a chat under way, the player typing and a turn waiting for its
reply hold the backlog back (it resumes after them).

The embedding route is the scripted ``/v1/embeddings`` through the real client."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from tests.conftest import NO_GRACE, chat, running, send
from xtyserver.clock import ManualClock
from xtyserver.memory.backlog_pace import TYPING_HOLD_S
from xtyserver.memory.export import encode_document
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.model.embedding import BATCH
from xtyserver.serve.turn_tasks import CATCH_UP
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
SAVES = [Scope("stardew-valley", f"farm-{n}") for n in range(3)] + [
    Scope("dont-starve-together", "world-1")
]
PER_SAVE = 75  # 300 memories: ten requests of BATCH
EMBED = {"models.embedding.model": "fake-embed", "memory.glossary": False, **NO_GRACE}
ROOT = Path(__file__).resolve().parents[1]


def export_file(tmp_path: Path) -> Path:
    """An export document of PER_SAVE memories in each of SAVES, made by another store."""
    with MemoryStore.open_profile(tmp_path / "elsewhere", "default", clock=ManualClock(0)) as store:
        for save in SAVES:
            for n in range(PER_SAVE):
                event = NewEvent("event", f"第{n}件事", f"{save.save_id}的第{n}件事：去矿洞找铜矿")
                store.upsert_event(save, event, float(n))
        data = encode_document(store.export())
    out = tmp_path / "export.json"
    out.write_bytes(data)
    return out


def cli_import(data_dir: Path, document: Path, count: int = PER_SAVE * len(SAVES)) -> None:
    command = [sys.executable, "-m", "xtyserver", "memory", "import", str(document)]
    done = subprocess.run(
        [*command, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr
    # The console speaks Chinese first.
    assert f"已导入 {count} 条记忆" in done.stdout


def count_vectors(store: MemoryStore) -> int:
    return int(store._db._writer.execute("SELECT count(*) FROM memory_vector").fetchone()[0])


def vectors(h: Any) -> int:
    return count_vectors(h.store)


async def idle(h: Any) -> None:
    with anyio.fail_after(30):
        await h.server.memory.wait_idle()


async def test_an_import_gets_every_vector_and_a_stop_half_way_resumes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    cli_import(data, export_file(tmp_path))
    total = PER_SAVE * len(SAVES)
    with capture_logs() as logs:
        async with running(data, overrides=EMBED) as h:
            h.fake.embedding_delay = 0.05
            with anyio.fail_after(30):
                while vectors(h) < BATCH:  # no save was opened: the backlog came from the store
                    await anyio.sleep(0.02)
        first_run = len(h.fake.embedding_requests)
    with MemoryStore.open_profile(data, "default", clock=ManualClock(0)) as store:
        done_then = count_vectors(store)
    assert BATCH <= done_then < total  # stopped half-way: the stop did not wait for the rest
    assert [x["saves"] for x in logs if x["event"] == "memory.vector_backlog"] == [len(SAVES)]

    async with running(data, overrides=EMBED) as h:
        await idle(h)
        assert vectors(h) == total
        assert h.server.memory.statistics.jobs_dropped == 0
        embedded = sum(len(r.json["input"]) for r in h.fake.embedding_requests)
        assert embedded == total - done_then  # only what the store still lacked
    assert first_run >= 1


async def test_a_chat_under_way_holds_the_backlog_back(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=EMBED) as h:
        async with h.adapter() as ws:
            await idle(h)  # an empty store: nothing to embed
            for n in range(BATCH * 2):
                h.store.upsert_event(SAVES[0], NewEvent("event", f"事{n}", f"第{n}件事"), 0)
            h.fake.enqueue(Reply(text="好的，我们去钓鱼吧", first_delay=0.5))
            async with anyio.create_task_group() as group:
                group.start_soon(chat, ws, "我们今天做什么？")
                with anyio.fail_after(10):  # the chat's model call is under way
                    while not h.fake.chat_requests:
                        await anyio.sleep(0.01)
                h.server.jobs.embed_later(SAVES[0])
                await anyio.sleep(0.2)
                # Only the turn's own query was embedded while its reply streamed.
                assert all(len(r.json["input"]) == 1 for r in h.fake.embedding_requests)
            await idle(h)
        assert vectors(h) == BATCH * 2


async def until(condition: Any) -> None:
    """Until ``condition()`` holds (a hang guard, not a speed bound)."""
    with anyio.fail_after(30):
        while not condition():
            await anyio.sleep(0.01)


async def test_the_player_typing_holds_the_backlog_until_the_hint_is_old(tmp_path: Path) -> None:
    data = tmp_path / "data"
    cli_import(data, export_file(tmp_path))
    async with running(data, overrides=EMBED) as h:
        backlog = h.server.jobs.vectors
        h.fake.embedding_delay = 0.2  # ten requests: still under way when the hint comes
        async with h.adapter(save=SAVES[0].save_id) as ws:
            await until(lambda: backlog.units > 0)
            await send(ws, {"type": "chat.typing", "text": "我们今天做"})
            await until(lambda: backlog.held == "typing")
            units, stored = backlog.units, vectors(h)
            await anyio.sleep(0.1)
            # No unit starts until the hint is TYPING_HOLD_S old (the clock is the test's).
            assert (backlog.units, vectors(h), backlog.held) == (units, stored, "typing")
            assert stored < PER_SAVE * len(SAVES)
            h.fake.embedding_delay = 0.0
            h.clock.advance(TYPING_HOLD_S)  # the player stopped typing, sent nothing
            await idle(h)
            assert backlog.units > units
        assert vectors(h) == PER_SAVE * len(SAVES)
        assert h.server.memory.statistics.jobs_dropped == 0


async def test_a_turn_holds_the_backlog_from_its_send_until_its_reply_ends(tmp_path: Path) -> None:
    data = tmp_path / "data"
    cli_import(data, export_file(tmp_path))
    overrides = {**EMBED, "memory.embedding_timeout_ms": 5000}
    async with running(data, overrides=overrides) as h:
        backlog = h.server.jobs.vectors
        h.fake.embedding_delay = 0.2  # ten requests: still under way when the turn comes
        async with h.adapter(save=SAVES[0].save_id) as ws:
            await until(lambda: backlog.units > 0)
            asked = len(h.fake.embedding_requests)
            h.fake.embedding_delay = 1.0  # the turn's query (and nothing after it) is slow
            h.fake.enqueue(Reply(text="去矿洞吧"))
            async with anyio.create_task_group() as group:
                group.start_soon(chat, ws, "我们今天做什么？")
                # Before the turn's model call (its query is under way): no unit starts.
                await until(lambda: backlog.held == "turn")
                units = backlog.units
                await anyio.sleep(0.1)
                if not h.fake.chat_requests:  # still before the model call (no await since)
                    assert (backlog.units, backlog.held) == (units, "turn")
            h.fake.embedding_delay = 0.0
            # Its reply ended: the backlog goes on with no clock moved.
            await idle(h)
            assert backlog.units > units
        turn_queries = [r for r in h.fake.embedding_requests[asked:] if len(r.json["input"]) == 1]
        assert turn_queries  # the turn's query was the request under way meanwhile
        assert vectors(h) == PER_SAVE * len(SAVES)
        assert h.server.memory.statistics.jobs_dropped == 0


def injections(h: Any) -> list[dict[str, Any]]:
    path = Path(h.settings.data_path) / "profiles" / "default" / "injections.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


async def test_a_question_asked_at_once_after_an_import_is_answered_by_meaning(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=EMBED) as h:
        await idle(h)
        abigail = h.store.upsert_event(
            SAVES[0], NewEvent("relationship", "阿比盖尔", "阿比盖尔最喜欢紫水晶"), 0
        )
        async with h.adapter(save=SAVES[0].save_id) as ws:
            h.fake.enqueue(Reply(text="紫水晶"))
            _, done = await chat(ws, "What does Abigail like?")  # no wait for the backlog
            assert done["type"] == "chat.done", done
        await h.server.working.wait_written()
        [record] = injections(h)
        assert {m["id"]: m["via"] for m in record["memories"]} == {abigail.id: "vectors"}
        assert record["unembedded"] == 0


async def test_the_injection_log_says_how_many_memories_a_turn_could_not_compare(
    tmp_path: Path,
) -> None:
    overrides = {**EMBED, "memory.embedding_timeout_ms": 50}
    async with running(tmp_path, overrides=overrides) as h:
        await idle(h)
        h.fake.embedding_delay = 5.0  # nothing comes back within the turn's 50 ms
        for n in range(CATCH_UP + 10):
            h.store.upsert_event(SAVES[0], NewEvent("event", f"事{n}", f"第{n}件事"), 0)
        async with h.adapter(save=SAVES[0].save_id) as ws:
            _, done = await chat(ws, "我们今天做什么？")
            assert done["type"] == "chat.done", done
            await h.server.working.wait_written()
            [record] = injections(h)
            assert record["unembedded"] == CATCH_UP + 10
            h.fake.embedding_delay = 0.0
        await idle(h)
        assert vectors(h) == CATCH_UP + 10
