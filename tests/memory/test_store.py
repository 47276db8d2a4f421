"""The MemoryStore facade over real SQLite files: opening, composition, crash safety.

Each part has its own tests: test_database, test_events, test_shared_profile,
test_play, test_compaction and test_transfer.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import apsw
import pytest

from xtyserver.clock import ManualClock
from xtyserver.errors import StoreError, UsageError
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope, SharedProfile

FARM_A = Scope("stardew", "farm-a")
FARM_B = Scope("stardew", "farm-b")
TZ = "Asia/Shanghai"


@pytest.mark.parametrize("bad", ["", "../x", "a b", "x" * 65, "名字"])
def test_open_profile_refuses_ids_outside_the_allowed_pattern(
    tmp_path: Path, clock: ManualClock, bad: str
) -> None:
    with pytest.raises(UsageError):
        MemoryStore.open_profile(tmp_path, bad, clock=clock)


def test_the_public_api_stays_what_the_server_and_cli_call() -> None:
    api = {
        "get_profile",
        "set_profile_field",
        "load_scope",
        "upsert_event",
        "execute",
        "touch",
        "forget",
        "overview",
        "list_scopes",
        "compact_scope",
        "open_play_session",
        "record_heartbeat",
        "close_play_session",
        "recover_open_sessions",
        "stats",
        "export",
        "import_document",
        "backup",
        "set_size_limit",
        "busy_timeout_ms",
        "open_profile",
        "close",
        "__enter__",
        "__exit__",
    }
    assert api <= set(dir(MemoryStore))


def test_forget_all_forgets_profile_and_every_save_but_keeps_statistics_and_auto_shared(
    store: MemoryStore,
) -> None:
    store.set_profile_field("auto_shared", False)
    store.set_profile_field("nickname", "小明")
    store.upsert_event(FARM_A, NewEvent("goal", "温室", "修好温室"), 1.0)
    store.upsert_event(FARM_B, NewEvent("event", "钓鱼", "钓到鲶鱼"), 1.0)
    store.close_play_session(store.open_play_session(FARM_B, 10.0, TZ), 70.0)
    stats = store.stats()
    store.forget(ForgetSpec(kind="all"))
    assert store.get_profile() == SharedProfile(auto_shared=False)
    assert store.load_scope(FARM_A) == [] and store.load_scope(FARM_B) == []
    assert store.stats() == stats
    assert store.list_scopes() == [FARM_B]


def test_forget_all_is_one_transaction(store: MemoryStore) -> None:
    store.set_profile_field("nickname", "小明")
    store.upsert_event(FARM_A, NewEvent("goal", "温室", "修好温室"), 1.0)
    # Another process's trigger makes deleting events fail after the profile is cleared.
    other = apsw.Connection(str(store.path))
    other.execute(
        "CREATE TRIGGER refuse BEFORE DELETE ON game_memory BEGIN SELECT RAISE(ABORT, 'no'); END"
    )
    with pytest.raises(StoreError):
        store.forget(ForgetSpec(kind="all"))
    assert store.get_profile().nickname == "小明"  # the profile part was rolled back too
    assert [e.subject for e in store.load_scope(FARM_A)] == ["温室"]
    other.execute("DROP TRIGGER refuse")
    other.close()
    store.forget(ForgetSpec(kind="all"))
    assert store.get_profile().nickname == ""


_CHILD = """
import sys
from xtyserver.clock import ManualClock
from xtyserver.memory.sqlite.store import MemoryStore
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


def test_forgetting_an_item_with_a_memory_vector_counts_one_item(tmp_path: Path) -> None:
    from array import array

    from xtyserver.memory.vectors import embedding_text

    scope = Scope("stardew-valley", "farm-a")
    with MemoryStore.open_profile(tmp_path, "default", clock=ManualClock(1_790_000_000)) as store:
        kept = store.upsert_event(scope, NewEvent("goal", "温室", "修好温室"), 1_790_000_000)
        gone = store.upsert_event(scope, NewEvent("goal", "鱼缸", "完成鱼缸收集包"), 1_790_000_000)
        # the vector row goes with its event (a cascade), which is not a second item
        vector = array("f", [1.0, 0.0])
        stored = store.set_vectors(scope, "e5", [(gone.id, embedding_text(gone), vector)])
        assert stored == [gone.id]
        done = store.forget(
            ForgetSpec(kind="item", game_id=scope.game_id, save_id=scope.save_id, item_id=gone.id)
        )
        assert done.items == 1
        assert [e.id for e in store.load_scope(scope)] == [kept.id]
        assert store.load_vectors(scope, "e5") == {}
