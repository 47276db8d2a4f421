"""``xtyserver memory view|forget`` as a real subprocess over a real store file."""

from __future__ import annotations

import json
import re
from pathlib import Path

from tests.cli.test_main import START, xty
from xtyserver.clock import ManualClock
from xtyserver.memory.sqlite.store import MemoryStore
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
    # the shapes of the page, MCP and the frames: saves by readable name, RFC 3339 times
    [save] = doc["saves"]
    assert (save["saveName"], save["events"][0]["subject"]) == ("阳光农场", "社区中心")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", save["events"][0]["updatedAt"])
    assert doc["stats"]["saves"][0]["lastPlayed"].endswith("Z")
    assert doc["profile"]["hobbies"] == ["钓鱼"]
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


FARM_B = Scope("stardew-valley", "farm-b")


def _store(data: Path, profile: str = "default") -> MemoryStore:
    return MemoryStore.open_profile(data, profile, clock=ManualClock(START))


def test_memory_view_of_one_save_by_game_and_save(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _seed(data)
    with _store(data) as store:
        store.upsert_event(FARM_B, NewEvent("goal", "温室", "修好温室"), START)
    args = ("memory", "view", "--game", "stardew-valley", "--save", "farm-b")
    table = xty(data, *args)
    assert table.returncode == 0, table.stderr
    assert "温室" in table.stdout and "社区中心" not in table.stdout
    doc = json.loads(xty(data, *args, "--json").stdout)
    assert [s["saveId"] for s in doc["saves"]] == ["farm-b"]
    assert "--game" in xty(data, "memory", "view", "--save", "farm-b").stderr


def test_memory_correct_replaces_a_shared_field_whole(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _seed(data)
    done = xty(data, "memory", "correct", "hobbies", "自动化", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["profile"]["hobbies"] == ["自动化"]
    table = xty(data, "memory", "correct", "replyStyle", "简短")
    assert table.returncode == 0 and "简短" in table.stdout
    refused = xty(data, "memory", "correct", "nickname", "a@b.example")
    assert refused.returncode == 2
    with _store(data) as store:
        profile = store.get_profile()
        assert (profile.hobbies, profile.reply_style, profile.nickname) == (["自动化"], "简短", "")


def test_memory_pin_unpin_and_set_auto_shared(tmp_path: Path) -> None:
    data = tmp_path / "data"
    item = _seed(data)
    where = ("--game", "stardew-valley", "--save", "farm-a", "--item")
    pinned = xty(data, "memory", "pin", *where, str(item), "--json")
    assert pinned.returncode == 0, pinned.stderr
    assert json.loads(pinned.stdout)["saves"][0]["events"][0]["pinned"] is True
    assert "阳光农场" in xty(data, "memory", "pin", *where, str(item), "--unpin").stdout
    assert xty(data, "memory", "pin", *where, "999").returncode == 1
    off = xty(data, "memory", "set-auto-shared", "off", "--json")
    assert json.loads(off.stdout)["profile"]["autoShared"] is False
    with _store(data) as store:
        assert not store.load_scope(FARM_A)[0].pinned
        assert store.get_profile().auto_shared is False


def test_memory_forget_keeps_statistics_unless_included_and_touches_only_the_store(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    _seed(data)
    game_save = tmp_path / "Saves" / "farm-a.xml"
    game_save.parent.mkdir()
    game_save.write_text("<SaveGame/>", encoding="utf-8")
    others = sorted(p.name for p in data.rglob("*") if "memory-v1.sqlite" not in p.name)
    kept = xty(data, "memory", "forget", "game", "--game", "stardew-valley", "--yes", "--json")
    assert kept.returncode == 0, kept.stderr
    assert json.loads(kept.stdout) == {
        "type": "memory.forgotten",
        "target": "game",
        "items": 1,
        "profileCleared": False,
        "statsSaves": 0,
        "trashId": 1,
    }
    assert "play statistics: kept" in kept.stderr
    with _store(data) as store:
        assert store.stats().saves[0].sessions == 1
    gone = xty(data, "memory", "forget", "all", "--include-stats", "--yes")
    assert gone.returncode == 0, gone.stderr
    assert "stardew-valley / 阳光农场" in gone.stderr
    with _store(data) as store:
        assert store.stats().saves == [] and store.get_profile().hobbies == []
    assert game_save.read_text(encoding="utf-8") == "<SaveGame/>"
    assert sorted(p.name for p in data.rglob("*") if "memory-v1.sqlite" not in p.name) == others


def test_memory_commands_act_on_the_profile_given(tmp_path: Path) -> None:
    data = tmp_path / "data"
    _seed(data)
    done = xty(data, "memory", "correct", "hobbies", "潜水", "--profile", "kid")
    assert done.returncode == 0, done.stderr
    with _store(data) as store, _store(data, "kid") as kid:
        assert (store.get_profile().hobbies, kid.get_profile().hobbies) == (["钓鱼"], ["潜水"])
