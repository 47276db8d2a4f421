"""The command line as a user runs it: real ``python -m xtyserver`` processes, temporary dirs.

Every process gets its own ``XTY_DATA_DIR`` and ``HOME`` (and ``--data-dir``)
so nothing touches the user's real data folder.
"""

from __future__ import annotations

import json
import os
import re
import signal
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import apsw
import msgspec
import pytest
from websockets.sync.client import connect

from tests.conftest import TOKEN, hello_frame
from xtyserver.clock import ManualClock
from xtyserver.memory.sqlite.store import DB_FILE_NAME, MemoryStore
from xtyserver.memory.types import NewEvent, Scope

ROOT = Path(__file__).resolve().parents[2]
START = 1_790_000_000.0
SEEDED = [
    (Scope("stardew-valley", "farm-a"), NewEvent("goal", "鱼缸", "计划先完成社区中心的鱼缸收集包")),
    (Scope("stardew-valley", "farm-b"), NewEvent("promise", "矿洞", "和阿比盖尔约好一起去矿洞")),
    (Scope("dont-starve-together", "world-a"), NewEvent("decision", "基地", "基地建在猪王旁边")),
]


def env_for(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XTY_")}
    env.update(
        PYTHONPATH=str(ROOT),
        # A Chinese Windows console, redirected: every command must cope.
        PYTHONIOENCODING="gbk",
        XTY_DATA_DIR=str(data_dir),
        HOME=str(data_dir.parent / "home"),
        XDG_DATA_HOME=str(data_dir.parent / "home" / "xdg"),
        **extra,
    )
    return env


def xty(
    data_dir: Path, *args: str, timeout: float = 30, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m xtyserver ARGS --data-dir DATA_DIR`` to completion (``env`` added)."""
    return subprocess.run(
        [sys.executable, "-m", "xtyserver", *args, "--data-dir", str(data_dir)],
        capture_output=True,
        encoding="gbk",
        timeout=timeout,
        cwd=ROOT,
        env=env_for(data_dir, **env),
    )


def seed(data_dir: Path) -> None:
    """A profile, three saves of two games with memories, sessions and days."""
    clock = ManualClock(START)
    with MemoryStore.open_profile(data_dir, "default", clock=clock) as store:
        store.set_profile_field("nickname", "小满")
        for n, (scope, event) in enumerate(SEEDED):
            store.upsert_event(scope, event, START + n)
            sid = store.open_play_session(scope, START + n * 86400, "Asia/Shanghai")
            store.record_heartbeat(sid, START + n * 86400 + 60, "Asia/Shanghai")
            store.close_play_session(sid, START + n * 86400 + 120)


def export(data_dir: Path) -> dict[str, Any]:
    done = xty(data_dir, "memory", "export", "--json")
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert isinstance(doc, dict)
    return doc


def snapshot(data_dir: Path) -> dict[str, Any]:
    """The store's export read in-process (cheaper than a CLI run), without its time stamp."""
    with MemoryStore.open_profile(data_dir, "default", clock=ManualClock(START)) as store:
        doc = msgspec.to_builtins(store.export())
    assert isinstance(doc, dict)
    return _comparable(doc)


def integrity(path: Path) -> list[tuple[Any, ...]]:
    conn = apsw.Connection(str(path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        return conn.execute("PRAGMA integrity_check").fetchall()
    finally:
        conn.close()


# --- backup while the server runs and writes ------------------------------------------------


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """``python -m xtyserver serve --port 0`` on a seeded data dir; yields (url, data dir)."""
    data = tmp_path / "live"
    seed(data)
    log = (tmp_path / "server.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "xtyserver", "serve", "--port", "0", "--data-dir", str(data)],
        stdout=subprocess.PIPE,
        stderr=log,
        encoding="gbk",
        cwd=ROOT,
        env=env_for(data, XTY_TOKEN=TOKEN),
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first.startswith("listening ws://"), first
        yield first.removeprefix("listening "), data
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM if sys.platform != "win32" else signal.SIGINT)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        log.close()


def test_memory_backup_while_the_server_writes_copies_a_sound_restorable_store(
    server: tuple[str, Path], tmp_path: Path
) -> None:
    url, data = server
    copy = tmp_path / "backup.sqlite"
    beats = 0
    stop = threading.Event()
    failure: list[BaseException] = []

    with connect(url, max_size=None) as ws:
        ws.send(json.dumps(hello_frame("stardew-valley", "farm-a"), ensure_ascii=False))
        assert json.loads(ws.recv(timeout=10))["type"] == "server.hello"

        def play() -> None:
            # Heartbeats are play-time writes; stats.get answers once they were stored.
            nonlocal beats
            try:
                while not stop.is_set():
                    ws.send(json.dumps({"type": "heartbeat"}))
                    ws.send(json.dumps({"type": "stats.get", "id": f"s{beats}"}))
                    assert json.loads(ws.recv(timeout=10))["type"] == "stats.result"
                    beats += 1
                    stop.wait(0.05)  # pace under the per-connection frame rate limit
            except BaseException as exc:
                failure.append(exc)

        player = threading.Thread(target=play)
        player.start()
        try:
            while beats < 3 and not failure:  # writes are flowing before the backup starts
                stop.wait(0.01)
            before = beats
            done = xty(data, "memory", "backup", str(copy))
            during = beats - before
        finally:
            stop.set()
            player.join()
    assert not failure, failure
    assert done.returncode == 0, done.stderr
    assert during > 0  # the server stored heartbeats while the backup ran
    assert integrity(copy) == [("ok",)]

    # Restore: the copy opens as a store and holds every row, the live session included.
    with MemoryStore(copy, clock=ManualClock(START)) as restored:
        for scope, event in SEEDED:
            assert [e.summary for e in restored.load_scope(scope)] == [event.summary]
        assert restored.get_profile().nickname == "小满"
        saves = {(s.game_id, s.save_id): s for s in restored.stats().saves}
        assert saves[("stardew-valley", "farm-a")].sessions == 2
    # ... and as the store of a new data dir that the CLI reads.
    home = tmp_path / "restored"
    (home / "profiles" / "default").mkdir(parents=True)
    (home / "profiles" / "default" / DB_FILE_NAME).write_bytes(copy.read_bytes())
    doc = export(home)
    assert sorted(e["summary"] for e in doc["events"]) == sorted(e.summary for _, e in SEEDED)


# --- export / import -------------------------------------------------------------------------


def _comparable(doc: dict[str, Any]) -> dict[str, Any]:
    doc = dict(doc)
    doc.pop("exportedAt")
    return doc


def test_memory_export_then_import_into_another_data_dir_round_trips(tmp_path: Path) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    seed(source)
    out = tmp_path / "export.json"
    done = xty(source, "memory", "export", "--out", str(out))
    assert done.returncode == 0, done.stderr
    written = json.loads(out.read_text(encoding="utf-8"))
    assert written["format"] == "xtyserver.memory-export" and written["version"] == 3

    done = xty(target, "memory", "import", str(out), XTY_LANG="zh")
    assert done.returncode == 0, done.stderr
    assert "已导入 3 条记忆。" in done.stdout
    assert _comparable(export(target)) == _comparable(written)

    # Importing the same document again changes nothing.
    assert xty(target, "memory", "import", str(out)).returncode == 0
    assert snapshot(target) == _comparable(written)


def _bad_documents(good: dict[str, Any]) -> dict[str, bytes]:
    def variant(change: Any) -> bytes:
        doc = json.loads(json.dumps(good))
        change(doc)
        return json.dumps(doc, ensure_ascii=False).encode()

    return {
        "not-json": b"{this is not json",
        "other-format": variant(lambda d: d.update(format="something-else")),
        "summary-over-160": variant(lambda d: d["events"][-1].update(summary="长" * 161)),
        "path-in-summary": variant(
            lambda d: d["events"][-1].update(summary=r"存档在 C:\Users\CanaryUser\AppData")
        ),
        "active-ms-past-int64": variant(lambda d: d["sessions"][-1].update(activeMs=2**63)),
        "unknown-timezone": variant(lambda d: d["sessions"][-1].update(tz="Mars/Olympus")),
    }


def test_importing_a_bad_document_changes_nothing_and_exits_nonzero_with_a_message(
    tmp_path: Path,
) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    seed(source)
    good = export(source)
    # The target holds other data; a bad import must leave it exactly as it is.
    with MemoryStore.open_profile(target, "default", clock=ManualClock(START)) as store:
        store.upsert_event(
            Scope("oxygen-not-included", "colony-a"),
            NewEvent("goal", "氧气", "先做电解水制氧"),
            START,
        )
    before = snapshot(target)
    for name, data in _bad_documents(good).items():
        path = tmp_path / f"{name}.json"
        path.write_bytes(data)
        done = xty(target, "memory", "import", str(path))
        assert done.returncode != 0, name
        assert done.stderr.startswith("xtyserver: "), (name, done.stderr)
        assert "Traceback" not in done.stderr, (name, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1, (name, done.stderr)
        assert snapshot(target) == before, name


# --- stats -------------------------------------------------------------------------------------


def test_stats_json_prints_per_save_and_per_game_rows(tmp_path: Path) -> None:
    data = tmp_path / "d"
    seed(data)
    done = xty(data, "stats", "--json")
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    games = {g["gameId"]: g for g in stats["games"]}
    saves = {(s["gameId"], s["saveId"]): s for s in stats["saves"]}
    assert set(games) == {"stardew-valley", "dont-starve-together"}
    assert games["stardew-valley"]["days"] == 2 and games["stardew-valley"]["sessions"] == 2
    assert games["dont-starve-together"]["days"] == 1
    assert set(saves) == {(s.game_id, s.save_id) for s, _ in SEEDED}
    farm_a = saves[("stardew-valley", "farm-a")]
    assert farm_a["days"] == 1 and farm_a["sessions"] == 1 and farm_a["activeMs"] == 120_000

    table = xty(data, "stats", XTY_LANG="en")
    assert table.returncode == 0, table.stderr
    assert "Stardew Valley / Unnamed save · farm-b" in table.stdout


def test_stats_table_names_games_and_saves_and_aligns_chinese_by_display_width(
    tmp_path: Path,
) -> None:
    from xtyserver.cli.say import cells

    data = tmp_path / "d"
    with MemoryStore.open_profile(data, "default", clock=ManualClock(START)) as store:
        for n, (save, name) in enumerate([("k3J9xQ2mPa", "阳光农场 ·二号"), ("farm-b", None)]):
            scope = Scope("stardew-valley", save)
            sid = store.open_play_session(scope, START + n, "Asia/Shanghai", save_name=name)
            store.close_play_session(sid, START + n + 600)
            store.record_usage("2026-05-03", scope, "chat", 100, 20)
    done = xty(data, "stats", XTY_LANG="zh")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "k3J9xQ2mPa" not in out  # the player's name for the save, not its id
    assert "星露谷物语 / 阳光农场 ·二号" in out and "星露谷物语 / 未命名存档 · farm-b" in out
    assert "天数" in out and "上次游玩" in out
    plays, saves, bill = (b.splitlines() for b in out.strip().split("\n\n"))
    for rows in (plays, saves):  # the right-aligned days column ends in one terminal cell
        assert (
            len({cells(line[: list(re.finditer(r"\S+(?: \S+)*", line))[1].end()]) for line in rows})
            == 1
        ), rows
    assert len({cells(line) for line in bill}) == 1, bill  # tokens, right-aligned, last


def test_stats_shows_the_token_bill_per_day_save_and_purpose(tmp_path: Path) -> None:
    data = tmp_path / "d"
    seed(data)
    farm_a = Scope("stardew-valley", "farm-a")
    with MemoryStore.open_profile(data, "default", clock=ManualClock(START)) as store:
        store.record_usage("2026-05-03", farm_a, "chat", 100, 20)
        store.record_usage("2026-05-03", farm_a, "chat", 50, 5)
        store.record_usage("2026-05-03", farm_a, "extraction", 30, 10)
        store.record_usage("2026-05-04", farm_a, "summary", 7, 3)
    done = xty(data, "stats", "--json")
    assert done.returncode == 0, done.stderr
    tokens = json.loads(done.stdout)["tokens"]
    assert [(t["date"], t["purpose"], t["calls"], t["totalTokens"]) for t in tokens] == [
        ("2026-05-04", "summary", 1, 10),
        ("2026-05-03", "chat", 2, 175),
        ("2026-05-03", "extraction", 1, 40),
    ]
    table = xty(data, "stats", XTY_LANG="zh")
    out = table.stdout
    assert "2026-05-03  星露谷物语 / 未命名存档 · farm-a  聊天" in out and " 175" in out
    assert (
        "整理记忆" in out and "总结对话" in out and "extraction" not in out and "summary" not in out
    )


# --- token -------------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX file modes")
def test_token_show_prints_a_256_bit_token_in_an_owner_only_file_and_rotate_changes_it(
    tmp_path: Path,
) -> None:
    data = tmp_path / "d"
    shown = xty(data, "token", "show")
    assert shown.returncode == 0, shown.stderr
    token = shown.stdout.strip()
    assert len(token) >= 43  # 32 random bytes, urlsafe base64
    assert set(token) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
    path = data / "token"
    assert path.read_text(encoding="ascii").strip() == token
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert xty(data, "token", "show").stdout.strip() == token  # stable until rotated

    rotated = xty(data, "token", "rotate")
    assert rotated.returncode == 0, rotated.stderr
    assert token not in rotated.stdout  # never echoed
    new = xty(data, "token", "show").stdout.strip()
    assert new != token and len(new) >= 43
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
