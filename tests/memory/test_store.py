"""MemoryStore over real SQLite files (tmp_path) with an injected clock."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xtyserver.clock import ManualClock
from xtyserver.errors import StoreContentError, StoreError, UsageError
from xtyserver.memory.retrieval import SaveIndex, select_memories
from xtyserver.memory.schema import SCHEMA_VERSION
from xtyserver.memory.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope

FARM_A = Scope("stardew", "farm-a")
FARM_B = Scope("stardew", "farm-b")
DST = Scope("dst", "world-1")
TZ = "Asia/Shanghai"


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[MemoryStore]:
    s = MemoryStore.open_profile(tmp_path, "default", clock=clock)
    yield s
    s.close()


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


@pytest.mark.parametrize("bad", ["", "../x", "a b", "x" * 65, "名字"])
def test_open_profile_refuses_ids_outside_the_allowed_pattern(
    tmp_path: Path, clock: ManualClock, bad: str
) -> None:
    with pytest.raises(UsageError):
        MemoryStore.open_profile(tmp_path, bad, clock=clock)


def test_upsert_with_same_kind_and_subject_updates_the_row_in_place(
    store: MemoryStore, clock: ManualClock
) -> None:
    first = store.upsert_event(FARM_A, NewEvent("goal", "社区中心", "先做鱼缸收集包"), 100.0)
    second = store.upsert_event(FARM_A, NewEvent("goal", "社区中心", "改做锅炉房"), 200.0)
    other_kind = store.upsert_event(FARM_A, NewEvent("decision", "社区中心", "不买会员"), 300.0)
    assert second.id == first.id
    assert (second.summary, second.created_at, second.updated_at) == ("改做锅炉房", 100.0, 200.0)
    assert other_kind.id != first.id
    assert [e.summary for e in store.load_scope(FARM_A)] == ["改做锅炉房", "不买会员"]


def test_store_accepts_a_160_char_summary_and_refuses_161(store: MemoryStore) -> None:
    ok = store.upsert_event(FARM_A, NewEvent("event", "长", "长" * 160), 1.0)
    assert len(ok.summary) == 160
    with pytest.raises(StoreError) as info:
        store.upsert_event(FARM_A, NewEvent("event", "更长", "长" * 161), 1.0)
    assert info.value.code == "invalid_memory"
    assert info.value.fields == ("summary",)
    assert len(store.load_scope(FARM_A)) == 1


def test_store_accepts_an_80_char_subject_and_refuses_81(store: MemoryStore) -> None:
    store.upsert_event(FARM_A, NewEvent("event", "s" * 80, "x"), 1.0)
    with pytest.raises(StoreError, match="subject"):
        store.upsert_event(FARM_A, NewEvent("event", "s" * 81, "x"), 1.0)


@pytest.mark.parametrize("importance", [0, 6])
def test_store_refuses_importance_outside_1_to_5(store: MemoryStore, importance: int) -> None:
    with pytest.raises(StoreError) as info:
        store.upsert_event(FARM_A, NewEvent("event", "s", "x", importance=importance), 1.0)
    assert info.value.fields == ("importance",)


@pytest.mark.parametrize("importance", [1, 5])
def test_store_accepts_importance_at_1_and_5(store: MemoryStore, importance: int) -> None:
    assert store.upsert_event(FARM_A, NewEvent("event", "s", "x", importance=importance), 1.0)


@pytest.mark.parametrize(
    ("event", "field"),
    [
        (NewEvent("event", "存档", "存档在 C:\\Users\\bob\\AppData\\Roaming"), "summary"),
        (NewEvent("event", "bob@example.com", "他的邮箱"), "subject"),
        (NewEvent("event", "钥匙", "key sk-abcdefghijklmnopqrstuvwx1234"), "summary"),
        (NewEvent("event", "好友", "steam 76561198000000001 加了好友"), "summary"),
    ],
)
def test_store_refuses_forbidden_content_naming_the_field(
    store: MemoryStore, event: NewEvent, field: str
) -> None:
    with pytest.raises(StoreContentError) as info:
        store.upsert_event(FARM_A, event, 1.0)
    assert info.value.code == "forbidden_content"
    assert info.value.fields == (field,)
    assert field in info.value.message
    assert store.load_scope(FARM_A) == []


def test_store_refuses_a_forbidden_profile_field_and_keeps_the_old_value(
    store: MemoryStore,
) -> None:
    store.set_profile_field("nickname", "小明")
    with pytest.raises(StoreContentError) as info:
        store.set_profile_field("notes", ["住在 /home/bob/"])
    assert info.value.fields == ("notes",)
    with pytest.raises(StoreContentError):
        store.set_profile_field("nickname", "ming@example.com")
    profile = store.get_profile()
    assert (profile.nickname, profile.notes) == ("小明", [])


def test_profile_is_updated_field_by_field_and_cleared(store: MemoryStore) -> None:
    store.set_profile_field("nickname", "小明")
    store.set_profile_field("hobbies", ["钓鱼", "种田"])
    store.set_profile_field("auto_shared", False)
    p = store.get_profile()
    assert (p.nickname, p.hobbies, p.auto_shared) == ("小明", ["钓鱼", "种田"], False)
    with pytest.raises(StoreError) as info:
        store.set_profile_field("nickname", "名" * 33)
    assert info.value.code == "invalid_memory"
    with pytest.raises(UsageError):
        store.set_profile_field("password", "x")
    store.clear_profile()
    assert store.get_profile().nickname == ""


def test_scope_isolation_forget_and_list(store: MemoryStore) -> None:
    a = store.upsert_event(FARM_A, NewEvent("goal", "社区中心", "鱼缸收集包"), 1.0)
    store.upsert_event(FARM_B, NewEvent("goal", "社区中心", "农场B的鱼缸"), 1.0)
    store.upsert_event(DST, NewEvent("event", "鹿角怪", "打败了"), 1.0)
    assert [e.summary for e in store.load_scope(FARM_A)] == ["鱼缸收集包"]
    assert store.forget_event(FARM_B, a.id) is False  # another scope's id is not touched
    assert store.list_scopes() == [DST, FARM_A, FARM_B]
    assert store.forget_event(FARM_A, a.id) is True
    assert store.forget_scope(FARM_B) == 1
    assert store.list_scopes() == [DST]
    store.forget_all()
    assert store.list_scopes() == []


def test_touch_updates_last_used_only_inside_the_scope(store: MemoryStore) -> None:
    a = store.upsert_event(FARM_A, NewEvent("event", "a", "x"), 1.0)
    b = store.upsert_event(FARM_B, NewEvent("event", "b", "y"), 1.0)
    store.touch(FARM_A, [a.id, b.id], 50.0)
    assert store.load_scope(FARM_A)[0].last_used_at == 50.0
    assert store.load_scope(FARM_B)[0].last_used_at == 1.0


_scopes = st.sampled_from(
    [Scope(g, s) for g in ("stardew", "dst", "oni") for s in ("save-1", "save-2")]
)
_writes = st.lists(
    st.tuples(_scopes, st.sampled_from(["鱼缸", "社区中心", "fish tank", "火箭", "猪王"])),
    min_size=1,
    max_size=25,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(writes=_writes, probe=_scopes)
def test_random_interleaved_writes_never_surface_another_scopes_row(
    writes: list[tuple[Scope, str]], probe: Scope
) -> None:
    with (
        tempfile.TemporaryDirectory() as d,
        MemoryStore(Path(d) / "m.sqlite", clock=ManualClock()) as store,
    ):
        for n, (scope, word) in enumerate(writes):
            summary = f"{scope.game_id}/{scope.save_id} {word} {n}"
            store.upsert_event(scope, NewEvent("event", f"{word}{n}", summary), float(n))
        rows = store.load_scope(probe)
        assert all(r.scope == probe for r in rows)
        expected = sum(1 for s, _ in writes if s == probe)
        assert len(rows) == expected
        index = SaveIndex(probe, rows)
        # A query naming every word and every other scope still finds only this scope.
        sel = select_memories(
            None,
            index,
            query_text="鱼缸 社区中心 fish tank 火箭 猪王 stardew dst oni save-1 save-2",
            current_day=None,
            now=100.0,
        )
        chosen = (*sel.goals, *sel.relevant, *sel.recent)
        assert all(ev.scope == probe for ev in chosen)


def test_concurrent_writers_from_many_threads_all_land(store: MemoryStore) -> None:
    def work(t: int) -> None:
        for i in range(20):
            store.upsert_event(FARM_A, NewEvent("event", f"t{t}-{i}", "x"), float(i))
            store.load_scope(FARM_A)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(store.load_scope(FARM_A)) == 80


def test_compaction_merges_ended_low_importance_and_never_drops_pinned_or_active_goals(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=clock, soft_cap=20) as s:
        for i in range(10):
            s.upsert_event(FARM_A, NewEvent("goal", f"目标{i}", "进行中", importance=1), 1.0)
        for i in range(5):
            s.upsert_event(
                FARM_A, NewEvent("event", f"置顶{i}", "要留着", importance=1, pinned=True), 1.0
            )
        for i in range(15):
            s.upsert_event(
                FARM_A, NewEvent("event", f"小事{i}", "结束了", importance=1, status="done"), 1.0
            )
        s.upsert_event(FARM_B, NewEvent("event", "别的存档", "x", importance=1, status="done"), 1.0)
        assert s.compact_scope(FARM_B, 2.0) == 0  # under the cap: nothing happens
        merged = s.compact_scope(FARM_A, 2.0)
        rows = s.load_scope(FARM_A)
        assert merged > 0
        assert len(rows) <= 20
        subjects = {r.subject for r in rows}
        assert {f"目标{i}" for i in range(10)} <= subjects
        assert {f"置顶{i}" for i in range(5)} <= subjects
        digest = [r for r in rows if r.subject.startswith("往事汇总")]
        assert len(digest) == 1 and "小事0" in digest[0].summary
        assert len(s.load_scope(FARM_B)) == 1


def test_compaction_cannot_go_under_the_cap_with_only_goals_and_pinned(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=clock, soft_cap=3) as s:
        for i in range(3):
            s.upsert_event(FARM_A, NewEvent("goal", f"目标{i}", "进行中", importance=1), 1.0)
            s.upsert_event(FARM_A, NewEvent("event", f"置顶{i}", "留", pinned=True), 1.0)
        assert s.compact_scope(FARM_A, 2.0) == 0
        assert len(s.load_scope(FARM_A)) == 6


def test_disk_full_gives_store_full_and_writes_resume_after_raising_the_limit(
    tmp_path: Path, clock: ManualClock
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=clock, max_bytes=64 * 1024) as s:
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


def test_closed_store_refuses_calls_with_store_error(store: MemoryStore) -> None:
    store.close()
    store.close()
    with pytest.raises(StoreError):
        store.load_scope(FARM_A)
    with pytest.raises(StoreError):
        store.upsert_event(FARM_A, NewEvent("event", "a", "b"), 1.0)


def test_backup_copies_a_consistent_database(store: MemoryStore, tmp_path: Path) -> None:
    store.upsert_event(FARM_A, NewEvent("event", "备份", "要在副本里"), 1.0)
    store.backup(tmp_path / "copy.sqlite")
    with MemoryStore(tmp_path / "copy.sqlite", clock=ManualClock()) as copy:
        assert [e.subject for e in copy.load_scope(FARM_A)] == ["备份"]


_CHILD = """
import sys
from xtyserver.clock import ManualClock
from xtyserver.memory.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope
store = MemoryStore(sys.argv[1], clock=ManualClock())
sid = store.open_play_session(Scope("stardew", "farm-a"), 0.0, "UTC")
for i in range(100000):
    ev = store.upsert_event(Scope("stardew", "farm-a"), NewEvent("event", f"e{i}", "x"), 1.0)
    store.record_heartbeat(sid, float(i), "UTC")
    print(ev.id, flush=True)
"""


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL")
def test_store_killed_mid_write_reopens_clean_with_every_committed_row(tmp_path: Path) -> None:
    import signal
    import subprocess

    path = tmp_path / "m.sqlite"
    root = Path(__file__).resolve().parents[2]
    child = subprocess.Popen(
        [sys.executable, "-c", _CHILD, str(path)],
        stdout=subprocess.PIPE,
        text=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert child.stdout is not None
    committed = [int(child.stdout.readline()) for _ in range(200)]
    child.send_signal(signal.SIGKILL)
    child.wait()
    with MemoryStore(path, clock=ManualClock()) as s:
        conn = apsw.Connection(str(path))
        assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
        conn.close()
        ids = {e.id for e in s.load_scope(FARM_A)}
        assert set(committed) <= ids
        assert s.recover_open_sessions() == 1
