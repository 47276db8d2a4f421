"""The Database under the store: file, pragmas, migrations, error codes, writer lock, readers.

Real SQLite files only; threads are real threads.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from xtyserver.clock import ManualClock
from xtyserver.errors import StoreError, UsageError
from xtyserver.memory.sqlite import events
from xtyserver.memory.sqlite.database import Database, migrate
from xtyserver.memory.sqlite.schema import SCHEMA_VERSION
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope

FARM_A = Scope("stardew", "farm-a")
WAIT = 10.0  # a generous bound for what happens at once; never waited for in a pass


@pytest.fixture
def db(tmp_path: Path) -> Iterator[Database]:
    d = Database(tmp_path / "m.sqlite")
    yield d
    d.close()


def _remember(conn: apsw.Connection, subject: str) -> None:
    events.upsert(conn, FARM_A, NewEvent("event", subject, "x"), 1.0)


def _subjects(db: Database) -> list[str]:
    return [e.subject for e in db.read(lambda conn: events.load(conn, FARM_A))]


# --- the file, pragmas and migrations ------------------------------------------------------


def test_store_creates_schema_in_an_empty_profile_and_reopens_without_migrating_again(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MemoryStore.open_profile(tmp_path, "p1", clock=clock) as s:
        s.upsert_event(FARM_A, NewEvent("goal", "温室", "修好温室"), clock.now())
    path = tmp_path / "profiles" / "p1" / "memory-v1.sqlite"
    conn = apsw.Connection(str(path))
    assert conn.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchall()[0][0] == "wal"
    conn.close()
    with MemoryStore.open_profile(tmp_path, "p1", clock=clock) as s:
        assert [e.subject for e in s.load_scope(FARM_A)] == ["温室"]


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX mode bits")
def test_store_file_is_readable_by_its_owner_only(store: MemoryStore) -> None:
    assert os.stat(store.path).st_mode & 0o077 == 0


def test_store_refuses_a_database_from_a_newer_version(tmp_path: Path, clock: ManualClock) -> None:
    path = tmp_path / "m.sqlite"
    conn = apsw.Connection(str(path))
    conn.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    conn.close()
    with pytest.raises(StoreError) as info:
        MemoryStore(path, clock=clock)
    assert info.value.code == "store_error"


def test_migrate_takes_an_empty_file_to_the_current_version_once(tmp_path: Path) -> None:
    conn = apsw.Connection(str(tmp_path / "m.sqlite"))
    migrate(conn)
    migrate(conn)  # already current: nothing to do, nothing fails
    assert conn.execute("PRAGMA user_version").fetchall()[0][0] == SCHEMA_VERSION
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_schema WHERE type = 'table'")}
    assert {"shared_profile", "game_memory", "play_session", "play_day"} <= tables
    conn.close()


def test_writer_and_readers_get_the_same_pragmas(tmp_path: Path) -> None:
    def pragmas(conn: apsw.Connection) -> list[object]:
        names = ("synchronous", "foreign_keys", "busy_timeout", "journal_mode")
        return [conn.execute(f"PRAGMA {name}").fetchall()[0][0] for name in names]

    with Database(tmp_path / "m.sqlite", busy_timeout_ms=1234) as db:
        expected = [1, 1, 1234, "wal"]  # synchronous=NORMAL is 1
        assert db.write(pragmas) == expected
        assert db.read(pragmas) == expected
        assert db.busy_timeout_ms == 1234


# --- error codes -----------------------------------------------------------------------------


def test_disk_full_gives_store_full_and_writes_resume_after_raising_the_limit(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=clock, max_bytes=128 * 1024) as s:
        with pytest.raises(StoreError) as info:
            for i in range(2000):
                s.upsert_event(FARM_A, NewEvent("event", f"事件{i}", "很长的摘要" * 30), 1.0)
        assert info.value.code == "store_full"
        before = len(s.load_scope(FARM_A))
        assert before > 0
        s.set_size_limit(None)
        s.upsert_event(FARM_A, NewEvent("event", "之后", "又能写了"), 2.0)
        assert len(s.load_scope(FARM_A)) == before + 1


def test_locked_database_gives_store_busy_after_the_timeout(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=clock, busy_timeout_ms=50) as s:
        other = apsw.Connection(str(s.path))
        other.execute("BEGIN IMMEDIATE")
        with pytest.raises(StoreError) as info:
            s.upsert_event(FARM_A, NewEvent("event", "a", "b"), 1.0)
        assert info.value.code == "store_busy"
        other.execute("ROLLBACK")
        other.close()
        s.upsert_event(FARM_A, NewEvent("event", "a", "b"), 1.0)


def test_a_constraint_failure_is_store_error_and_rolls_the_whole_write_back(db: Database) -> None:
    def write(conn: apsw.Connection) -> None:
        _remember(conn, "先写的")
        conn.execute(  # importance 9 breaks the table's CHECK
            "UPDATE game_memory SET importance = ? WHERE subject = ?", (9, "先写的")
        )

    with pytest.raises(StoreError) as info:
        db.write(write)
    assert info.value.code == "store_error"
    assert "ConstraintError" in info.value.message
    assert _subjects(db) == []


def test_a_number_past_64_bits_is_invalid_memory_not_a_crash(db: Database) -> None:
    with pytest.raises(StoreError) as info:
        db.read(lambda conn: conn.execute("SELECT ?", (2**70,)).fetchall())
    assert info.value.code == "invalid_memory"


def test_any_other_exception_passes_through_and_rolls_back(db: Database) -> None:
    def write(conn: apsw.Connection) -> None:
        _remember(conn, "不会留下")
        raise ValueError("boom")

    with pytest.raises(ValueError, match="boom"):
        db.write(write)
    db.write(lambda conn: _remember(conn, "之后"))  # the lock was released
    assert _subjects(db) == ["之后"]


# --- the writer: one lock, the calling thread ----------------------------------------------


def test_a_write_runs_on_the_calling_thread(db: Database) -> None:
    ran_on = db.write(lambda conn: threading.get_ident())
    assert ran_on == threading.get_ident()


def test_a_write_from_inside_a_write_raises_usage_error_and_nothing_is_written(
    db: Database,
) -> None:
    def outer(conn: apsw.Connection) -> None:
        _remember(conn, "外层")
        db.write(lambda inner: _remember(inner, "内层"))

    with pytest.raises(UsageError, match="nested"):
        db.write(outer)
    assert _subjects(db) == []
    db.write(lambda conn: _remember(conn, "之后"))  # not deadlocked
    assert _subjects(db) == ["之后"]


def test_writes_from_8_threads_all_land_one_at_a_time_each_on_its_own_thread(
    db: Database,
) -> None:
    threads_n, writes_n = 8, 25
    start = threading.Barrier(threads_n)
    inside = 0
    most_inside = 0
    ran_on: dict[int, set[int]] = {}
    guard = threading.Lock()

    def write(conn: apsw.Connection, *, t: int, i: int) -> None:
        nonlocal inside, most_inside
        with guard:
            inside += 1
            most_inside = max(most_inside, inside)
            ran_on.setdefault(t, set()).add(threading.get_ident())
        _remember(conn, f"t{t}-{i}")
        with guard:
            inside -= 1

    def work(t: int) -> None:
        start.wait(timeout=WAIT)
        for i in range(writes_n):
            db.write(functools.partial(write, t=t, i=i))
            db.read(lambda conn: events.load(conn, FARM_A))

    threads = [threading.Thread(target=work, args=(t,)) for t in range(threads_n)]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=WAIT * 3)
    assert not any(th.is_alive() for th in threads)
    assert len(_subjects(db)) == threads_n * writes_n
    assert most_inside == 1  # serialized
    idents = {t: {th.ident} for t, th in enumerate(threads)}
    assert ran_on == idents  # every write ran on the thread that asked for it


def test_concurrent_writers_from_many_threads_all_land(store: MemoryStore) -> None:
    def work(t: int) -> None:
        for i in range(20):
            store.upsert_event(FARM_A, NewEvent("event", f"t{t}-{i}", "x"), float(i))
            store.load_scope(FARM_A)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(store.load_scope(FARM_A)) == 160


def test_a_read_does_not_wait_for_a_running_write(db: Database) -> None:
    db.write(lambda conn: _remember(conn, "已提交"))
    in_write, release = threading.Event(), threading.Event()

    def slow(conn: apsw.Connection) -> None:
        _remember(conn, "未提交")
        in_write.set()
        assert release.wait(WAIT)

    writer = threading.Thread(target=db.write, args=(slow,))
    writer.start()
    try:
        assert in_write.wait(WAIT)
        assert _subjects(db) == ["已提交"]  # WAL: the snapshot before the open write
    finally:
        release.set()
        writer.join(WAIT)
    assert _subjects(db) == ["已提交", "未提交"]


# --- closing ---------------------------------------------------------------------------------


def test_closed_store_refuses_calls_with_store_error(store: MemoryStore) -> None:
    store.close()
    store.close()
    with pytest.raises(StoreError, match="closed"):
        store.load_scope(FARM_A)
    with pytest.raises(StoreError, match="the memory store is closed"):
        store.upsert_event(FARM_A, NewEvent("event", "a", "b"), 1.0)
    with pytest.raises(StoreError, match="closed"):
        store.set_size_limit(None)


def test_close_waits_for_the_running_write_which_commits(tmp_path: Path) -> None:
    db = Database(tmp_path / "m.sqlite")
    db.read(lambda conn: None)  # this thread has a reader to close too
    in_write, release = threading.Event(), threading.Event()

    def slow(conn: apsw.Connection) -> None:
        _remember(conn, "关闭前")
        in_write.set()
        assert release.wait(WAIT)

    writer = threading.Thread(target=db.write, args=(slow,))
    writer.start()
    assert in_write.wait(WAIT)
    closer = threading.Thread(target=db.close)
    closer.start()
    closer.join(0.2)
    assert closer.is_alive()  # still waiting for the write
    release.set()
    writer.join(WAIT)
    closer.join(WAIT)
    assert not closer.is_alive()
    with pytest.raises(StoreError, match="closed"):
        db.read(lambda conn: None)
    with Database(tmp_path / "m.sqlite") as again:
        assert _subjects(again) == ["关闭前"]


def test_a_read_from_inside_a_read_raises_usage_error(db: Database) -> None:
    with pytest.raises(UsageError, match="nested"):
        db.read(lambda conn: db.read(lambda inner: None))
    assert db.read(lambda conn: "still usable") == "still usable"


def test_close_from_inside_a_write_or_read_is_a_usage_error(db: Database) -> None:
    with pytest.raises(UsageError):
        db.write(lambda conn: db.close())
    with pytest.raises(UsageError):
        db.read(lambda conn: db.close())
    db.write(lambda conn: _remember(conn, "还开着"))
    assert _subjects(db) == ["还开着"]


def test_closing_beside_reads_on_other_threads_is_safe(tmp_path: Path) -> None:
    db = Database(tmp_path / "m.sqlite")
    db.write(lambda conn: _remember(conn, "x"))
    stop = threading.Event()
    outcomes: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                db.read(lambda conn: events.load(conn, FARM_A))
            except StoreError as exc:
                outcomes.append(exc.message)
                return
        outcomes.append("stopped")

    threads = [threading.Thread(target=reader) for _ in range(4)]
    for th in threads:
        th.start()
    db.close()
    stop.set()
    for th in threads:
        th.join(WAIT)
    assert outcomes and all(o in ("the memory store is closed", "stopped") for o in outcomes)


def test_a_read_that_must_not_wait_uses_its_own_connection_with_no_busy_wait(
    tmp_path: Path, clock: ManualClock
) -> None:
    def pragmas(conn: apsw.Connection) -> list[object]:
        names = ("synchronous", "foreign_keys", "busy_timeout", "journal_mode")
        return [conn.execute(f"PRAGMA {name}").fetchall()[0][0] for name in names]

    with Database(tmp_path / "m.sqlite", busy_timeout_ms=1234) as db:
        assert db.read(pragmas, wait=False) == [1, 1, 0, "wal"]
        assert db.read(pragmas) == [1, 1, 1234, "wal"]  # the waiting reader is another one
        assert db.read(pragmas, wait=False) == [1, 1, 0, "wal"]
    with MemoryStore(tmp_path / "s.sqlite", clock=clock) as s:
        assert s.generation(wait=False) == s.generation() == 0
        s.set_profile_field("nickname", "豆豆")  # a management change bumps it
        assert s.generation(wait=False) == s.generation() == 1


def _open_handles(path: Path) -> int:
    """File descriptors of this process open on the database file or its WAL."""
    names = {str(path), f"{path}-wal"}
    fds = Path("/proc/self/fd")
    return sum(1 for fd in fds.iterdir() if os.path.realpath(fd) in names)


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="reads /proc/self/fd")
def test_a_threads_read_connection_closes_when_the_thread_ends(tmp_path: Path) -> None:
    # anyio retires a worker thread after 10 s idle, so a long session with turns
    # further apart reads from a new thread each time: 50 of them must not keep
    # 50 connections (each with its file handles and page cache).
    path = (tmp_path / "m.sqlite").resolve()
    db = Database(path)
    try:
        db.write(lambda conn: _remember(conn, "the greenhouse"))
        seen: list[int] = []

        def read() -> None:
            seen.append(db.read(lambda conn: events.count(conn, FARM_A)))
            seen.append(db.read(lambda conn: 0, wait=False))  # the no-wait reader too

        def in_a_new_thread() -> None:
            thread = threading.Thread(target=read)
            thread.start()
            thread.join()

        in_a_new_thread()
        # SQLite keeps a closed connection's descriptors for reuse while another
        # connection of the process holds a lock on the file: a fixed few, not one
        # pair per thread.
        base = _open_handles(path)
        for _ in range(49):
            in_a_new_thread()
        assert seen == [1, 0] * 50
        assert _open_handles(path) <= base
        # A thread that is still alive keeps its reader, and close() still closes it.
        started, release = threading.Event(), threading.Event()

        def hold() -> None:
            db.read(lambda conn: None)
            started.set()
            release.wait(WAIT)

        holder = threading.Thread(target=hold)
        holder.start()
        assert started.wait(WAIT)
        assert _open_handles(path) > base
        db.close()
        assert _open_handles(path) == 0
        release.set()
        holder.join()
    finally:
        db.close()
