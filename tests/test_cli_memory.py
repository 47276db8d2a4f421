"""``xtyserver memory view|forget`` as a real subprocess over a real store file."""

from __future__ import annotations

import json
from pathlib import Path

from tests.test_cli import START, xty
from xtyserver.clock import ManualClock
from xtyserver.memory.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope

FARM_A = Scope("stardew-valley", "farm-a")


def _seed(data_dir: Path) -> int:
    with MemoryStore.open_profile(data_dir, "default", clock=ManualClock(START)) as store:
        store.set_profile_field("hobbies", ["钓鱼"])
        sid = store.open_play_session(FARM_A, START, "Asia/Shanghai", save_name="阳光农场")
        store.close_play_session(sid, START + 60)
        return store.upsert_event(FARM_A, NewEvent("goal", "社区中心", "完成社区中心"), START).id


def test_memory_view_shows_readable_save_names_as_a_table_and_json(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _seed(data)
    table = xty(data, "memory", "view")
    assert table.returncode == 0, table.stderr
    assert "阳光农场" in table.stdout and "社区中心" in table.stdout and "钓鱼" in table.stdout
    doc = json.loads(xty(data, "memory", "view", "--json").stdout)
    assert doc["saves"][0]["saveName"] == "阳光农场"
    assert "阳光农场" in xty(data, "stats").stdout


def test_memory_forget_refuses_without_a_terminal_and_deletes_with_yes(tmp_path: Path) -> None:
    data = tmp_path / "data"
    item = _seed(data)
    args = ("memory", "forget", "item", "--game", "stardew-valley", "--save", "farm-a")
    refused = xty(data, *args, "--item", str(item))
    assert refused.returncode == 2 and "--yes" in refused.stderr
    assert "社区中心" in xty(data, "memory", "view").stdout
    done = xty(data, *args, "--item", str(item), "--yes")
    assert done.returncode == 0, done.stderr
    with MemoryStore.open_profile(data, "default", clock=ManualClock(START)) as store:
        assert store.load_scope(FARM_A) == []
        assert store.stats().saves[0].sessions == 1  # statistics kept
