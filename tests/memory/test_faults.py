"""Faults of the memory store: SIGKILL, disk full, another process's lock.

Real parts only: real SQLite files, real child processes, the real server
(``tests.conftest.running``) with the scripted model over loopback.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import apsw
import pytest
from structlog.testing import capture_logs

from tests.conftest import NO_GRACE, chat, running
from xtyserver.clock import ManualClock
from xtyserver.errors import StoreError
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import MemoryEvent, NewEvent, Scope

ROOT = Path(__file__).resolve().parents[2]
FARM_A = Scope("stardew-valley", "farm-a")
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and fcntl locks")


def _load_sigkill_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("sigkill_script", ROOT / "scripts" / "sigkill.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


# --- SIGKILL ------------------------------------------------------------------------------


@POSIX_ONLY
def test_sigkill_rounds_keep_every_acknowledged_commit(tmp_path: Path) -> None:
    sigkill = _load_sigkill_script()
    report = sigkill.run(8, seed=20260921, workdir=tmp_path, max_delay=0.15)
    assert report.failures == []
    assert report.rounds == 8
    assert report.acknowledged > 100  # the kills landed among many committed writes
    assert report.verified > 0


# --- disk full, over the real server --------------------------------------------------------


def extraction_reply(player: str, subject: str, summary: str) -> Any:
    """What the scripted model answers to the background extraction of one chat."""
    from xtyserver.testing import Reply

    answer = {
        "profile": None,
        "events": [{"kind": "goal", "subject": subject, "summary": summary, "importance": 4}],
    }
    return Reply(text=json.dumps(answer, ensure_ascii=False), match=f"玩家说：\n{player}")


async def until(predicate: Callable[[], bool], timeout: float = 60.0) -> None:
    """Wait for the real server's background job (not for time to pass); ``timeout`` guards
    against a hang and bounds no speed (10 s once ran out on a loaded 2-core CI machine)."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.01)


def fill_until_full(store: MemoryStore, probe: NewEvent) -> int:
    """Cap the store at its current size, then use up the free space.

    Fills with rows shaped like ``probe`` (same scope and kind, subjects sorting
    right after it), then with ever smaller ones, until ``probe`` itself no
    longer fits.

    Returns:
        How many filler rows were written.
    """
    store.set_size_limit(1)  # SQLite never goes below the current size: "full as it is"
    written = 0
    for length in (160, 80, 40, 10, 1):
        for _ in range(10_000):
            filler = NewEvent("goal", f"{probe.subject}#{written:05d}", "满" * length, importance=1)
            try:
                store.upsert_event(FARM_A, filler, 1.0)
            except StoreError as exc:
                assert exc.code == "store_full"
                break
            written += 1
    with pytest.raises(StoreError) as info:
        store.upsert_event(FARM_A, probe, 1.0)
    assert info.value.code == "store_full"
    return written


def _stable(events: list[MemoryEvent]) -> list[tuple[Any, ...]]:
    # last_used_at moves on every retrieval (a touch); everything else must not.
    return [
        (
            e.id,
            e.kind,
            e.subject,
            e.summary,
            e.importance,
            e.status,
            e.pinned,
            e.day,
            e.created_at,
            e.updated_at,
        )
        for e in events
    ]


def _integrity(path: Path) -> list[tuple[Any, ...]]:
    conn = apsw.Connection(str(path))
    try:
        return conn.execute("PRAGMA integrity_check").fetchall()
    finally:
        conn.close()


@pytest.mark.anyio
async def test_disk_full_refuses_the_memory_write_but_the_chat_answers_and_writes_resume(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=NO_GRACE) as h:  # each turn's job is awaited
        store: MemoryStore = h.store
        async with h.adapter() as ws:
            h.fake.enqueue(extraction_reply("我要先修温室", "修温室", "计划先修好温室"))
            _, done = await chat(ws, "我要先修温室", "c1")
            assert done["type"] == "chat.done", done
            with anyio.fail_after(10):
                await h.server.memory.wait_idle()
            before = store.load_scope(FARM_A)
            assert [e.summary for e in before] == ["计划先修好温室"]

            fish = NewEvent("goal", "钓鲶鱼", "约好一起去钓鲶鱼", importance=4)
            fillers = await anyio.to_thread.run_sync(fill_until_full, store, fish)
            stored_before = _stable(store.load_scope(FARM_A))

            h.fake.enqueue(extraction_reply("我们去钓鲶鱼吧", fish.subject, fish.summary))
            with capture_logs() as logs:
                _, done = await chat(ws, "我们去钓鲶鱼吧", "c2")
                assert done["type"] == "chat.done", done  # the player still gets the answer
                await until(lambda: any(x["event"] == "memory.job_failed" for x in logs))
            failed = [x for x in logs if x["event"] == "memory.job_failed"]
            assert [x.get("code") for x in failed] == ["store_full"]
            assert fish.summary not in [e.summary for e in store.load_scope(FARM_A)]

        # A new adapter connecting while the disk is full still says hello and chats.
        async with h.adapter(save="farm-b") as ws:
            _, done = await chat(ws, "磁盘满了还能聊天吗", "c3")
            assert done["type"] == "chat.done", done

        # Nothing already stored is damaged.
        assert _integrity(store.path) == [("ok",)]
        assert _stable(store.load_scope(FARM_A)) == stored_before
        assert len(stored_before) == 1 + fillers

        # Space returns: the same memory is formed by the next chat.
        store.set_size_limit(None)
        async with h.adapter() as ws:
            h.fake.enqueue(extraction_reply("再说一次钓鲶鱼", fish.subject, fish.summary))
            _, done = await chat(ws, "再说一次钓鲶鱼", "c4")
            assert done["type"] == "chat.done", done
            await until(lambda: fish.summary in [e.summary for e in store.load_scope(FARM_A)])
        assert _integrity(store.path) == [("ok",)]


# --- locking: another process holds the write lock ------------------------------------------

_HOLDER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
conn.execute("CREATE TABLE IF NOT EXISTS holder_marker(x)")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))
conn.execute("COMMIT")
print("released", flush=True)
"""


@pytest.fixture
def hold_lock(tmp_path: Path) -> Iterator[Callable[[Path, float], subprocess.Popen[str]]]:
    """Start ``python -c`` processes that take the write lock of a file for some seconds."""
    procs: list[subprocess.Popen[str]] = []

    def start(path: Path, seconds: float) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            [sys.executable, "-c", _HOLDER, str(path), str(seconds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(proc)
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "locked"
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


def test_store_default_busy_timeout_is_five_seconds_under_thirty(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=ManualClock()) as store:
        assert store.busy_timeout_ms == 5000


def test_store_waits_for_a_write_lock_held_2s_by_another_process(
    tmp_path: Path, hold_lock: Callable[[Path, float], subprocess.Popen[str]]
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=ManualClock()) as store:  # default timeout
        store.upsert_event(FARM_A, NewEvent("event", "之前", "锁之前写的"), 1.0)
        holder = hold_lock(store.path, 2.0)
        # Readers are not blocked by the writer lock (WAL).
        assert [e.subject for e in store.load_scope(FARM_A)] == ["之前"]
        # It waits for the holder (within its 5 s busy timeout) instead of failing.
        store.upsert_event(FARM_A, NewEvent("event", "等锁", "等到了锁再写"), 2.0)
        assert holder.wait(timeout=10) == 0
        assert [e.subject for e in store.load_scope(FARM_A)] == ["之前", "等锁"]


def test_store_gives_store_busy_when_the_lock_outlasts_its_busy_timeout_then_recovers(
    tmp_path: Path, hold_lock: Callable[[Path, float], subprocess.Popen[str]]
) -> None:
    # The "held for 30 s" case, scaled: busy timeout 1 s, lock held 3 s.
    with MemoryStore(tmp_path / "m.sqlite", clock=ManualClock(), busy_timeout_ms=1000) as store:
        store.upsert_event(FARM_A, NewEvent("event", "之前", "锁之前写的"), 1.0)
        holder = hold_lock(store.path, 3.0)
        with pytest.raises(StoreError) as info:
            store.upsert_event(FARM_A, NewEvent("event", "被挡", "写不进去"), 2.0)
        assert info.value.code == "store_busy"
        assert holder.poll() is None  # it gave up at its own timeout, while the lock was held
        assert [e.subject for e in store.load_scope(FARM_A)] == ["之前"]
        assert holder.wait(timeout=10) == 0
        store.upsert_event(FARM_A, NewEvent("event", "之后", "锁放开后能写"), 3.0)
        assert [e.subject for e in store.load_scope(FARM_A)] == ["之前", "之后"]
    assert _integrity(tmp_path / "m.sqlite") == [("ok",)]


@pytest.mark.slow
def test_store_with_default_timeout_gives_store_busy_when_a_lock_is_held_30_s(
    tmp_path: Path, hold_lock: Callable[[Path, float], subprocess.Popen[str]]
) -> None:
    # The case as written: another process holds the write lock for 30 s.
    with MemoryStore(tmp_path / "m.sqlite", clock=ManualClock()) as store:
        store.upsert_event(FARM_A, NewEvent("event", "之前", "锁之前写的"), 1.0)
        holder = hold_lock(store.path, 30.0)
        try:
            with pytest.raises(StoreError) as info:
                store.upsert_event(FARM_A, NewEvent("event", "被挡", "写不进去"), 2.0)
            assert info.value.code == "store_busy"
            assert holder.poll() is None  # the 5 s default busy timeout, not the 30 s hold
            assert [e.subject for e in store.load_scope(FARM_A)] == ["之前"]
        finally:
            holder.kill()
            holder.wait(timeout=10)
        store.upsert_event(FARM_A, NewEvent("event", "之后", "锁放开后能写"), 3.0)
        assert [e.subject for e in store.load_scope(FARM_A)] == ["之前", "之后"]
    assert _integrity(tmp_path / "m.sqlite") == [("ok",)]
