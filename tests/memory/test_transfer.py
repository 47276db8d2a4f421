"""Export, import and backup: round trip through JSON, all-or-nothing import, live backup."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from tests.memory.conftest import buried
from xtyserver.clock import ManualClock
from xtyserver.errors import StoreContentError, StoreError
from xtyserver.memory.export import decode_document, encode_document
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope

FARM_A = Scope("stardew", "farm-a")
DST = Scope("dst", "world-1")
T0 = 1_790_000_000.0


def _filled(path: Path) -> MemoryStore:
    s = MemoryStore(path, clock=ManualClock(T0 + 999))
    s.set_profile_field("nickname", "小明")
    s.set_profile_field("hobbies", ["钓鱼"])
    s.upsert_event(FARM_A, NewEvent("goal", "社区中心", "鱼缸收集包", day=3, pinned=True), T0)
    s.upsert_event(DST, NewEvent("milestone", "鹿角怪", "第一次打败", importance=5), T0)
    sid = s.open_play_session(FARM_A, T0, "Asia/Shanghai")
    s.record_heartbeat(sid, T0 + 60, "Asia/Shanghai")
    s.close_play_session(sid, T0 + 90)
    return s


def test_export_then_import_into_an_empty_store_reproduces_everything(tmp_path: Path) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        data = encode_document(src.export())
        stats = src.stats()
    doc = json.loads(data)
    assert (doc["format"], doc["version"], doc["exportedAt"]) == (
        "xtyserver.memory-export",
        3,
        T0 + 999,
    )
    assert doc["events"][0]["gameId"] == "stardew" and doc["profile"]["nickname"] == "小明"
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock()) as dst:
        dst.import_document(decode_document(data))
        dst.import_document(decode_document(data))  # twice changes nothing
        assert dst.get_profile().nickname == "小明"
        assert [e.subject for e in dst.load_scope(FARM_A)] == ["社区中心"]
        assert dst.load_scope(FARM_A)[0].pinned and dst.load_scope(FARM_A)[0].day == 3
        assert dst.stats() == stats
        again = json.loads(encode_document(dst.export()))
    assert again["events"] == doc["events"] and again["days"] == doc["days"]
    assert len(again["sessions"]) == 1


@pytest.mark.parametrize(
    "mutate",
    [
        lambda d: d.update(format="other"),
        lambda d: d.update(version=4),
        lambda d: d.update(
            saveNames=[{"gameId": "stardew", "saveId": "a", "name": "长" * 65, "updatedAt": 1.0}]
        ),
        lambda d: d.update(
            tombstones=[
                {
                    "gameId": "stardew",
                    "saveId": "a",
                    "kind": "nope",
                    "subject": "x",
                    "forgottenAt": 1.0,
                }
            ]
        ),
        lambda d: d["events"][0].update(summary="长" * 161),
        lambda d: d["events"][0].update(importance=0),
        lambda d: d["days"][0].update(date="yesterday"),
        lambda d: d.pop("profile"),
        lambda d: d.update(extra=1),
    ],
)
def test_bad_document_is_refused_and_the_store_is_unchanged(tmp_path: Path, mutate) -> None:  # type: ignore[no-untyped-def]
    with _filled(tmp_path / "a.sqlite") as src:
        doc = json.loads(encode_document(src.export()))
    mutate(doc)
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock()) as dst:
        dst.upsert_event(FARM_A, NewEvent("event", "原有", "不变"), T0)
        before = encode_document(dst.export())
        with pytest.raises(StoreError) as info:
            dst.import_document(decode_document(json.dumps(doc)))
        assert info.value.code == "invalid_import"
        assert encode_document(dst.export()) == before


def test_document_with_forbidden_content_is_refused_whole(tmp_path: Path) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        doc = json.loads(encode_document(src.export()))
    doc["events"][1]["summary"] = "存档在 /home/ming/saves"
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock()) as dst:
        with pytest.raises(StoreContentError):
            dst.import_document(decode_document(json.dumps(doc)))
        assert dst.list_scopes() == [] and dst.get_profile().nickname == ""


def test_imported_texts_are_kept_as_typed_without_invisibles(tmp_path: Path) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        doc = json.loads(encode_document(src.export()))
    doc["profile"]["nickname"] = "小明\u200b！"
    doc["profile"]["hobbies"] = ["ｆｉｓｈｉｎｇ"]
    doc["events"][0]["subject"] = "Ｆｉｓｈ Ｔａｎｋ"
    doc["events"][0]["summary"] = "鱼\u200b缸收集包，先做！"
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock()) as dst:
        dst.import_document(decode_document(json.dumps(doc)))
        profile = dst.get_profile()
        assert (profile.nickname, profile.hobbies) == ("小明！", ["ｆｉｓｈｉｎｇ"])
        texts = {(e.subject, e.summary) for s in dst.list_scopes() for e in dst.load_scope(s)}
    assert ("Ｆｉｓｈ Ｔａｎｋ", "鱼缸收集包，先做！") in texts


@pytest.mark.parametrize(
    "text", ["存档在 Ｃ：＼Ｕｓｅｒｓ＼ｍｉｎｇ", "bob＠example.com", "76561198\u200b000000001"]
)
def test_document_with_look_alike_forbidden_content_is_refused_whole(
    tmp_path: Path, text: str
) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        doc = json.loads(encode_document(src.export()))
    doc["events"][1]["summary"] = text
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock()) as dst:
        with pytest.raises(StoreContentError):
            dst.import_document(decode_document(json.dumps(doc)))
        assert dst.list_scopes() == []


@pytest.mark.parametrize("data", [b"", b"{", b"[]", "不是json".encode()])
def test_undecodable_document_gives_invalid_import(data: bytes) -> None:
    with pytest.raises(StoreError) as info:
        decode_document(data)
    assert info.value.code == "invalid_import"


def test_import_stores_texts_without_invisibles(tmp_path: Path) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        doc = json.loads(encode_document(src.export()))
    doc["events"][0]["subject"] = "ｆｉｓｈ"
    doc["events"][0]["summary"] = "钓\u200b鱼"
    doc["profile"]["hobbies"] = ["种\u00ad田"]
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock()) as dst:
        dst.import_document(decode_document(json.dumps(doc)))
        assert [(e.subject, e.summary) for e in dst.load_scope(FARM_A)] == [("ｆｉｓｈ", "钓鱼")]
        assert dst.get_profile().hobbies == ["种田"]


def test_document_hiding_an_account_id_behind_a_zero_width_space_is_refused_whole(
    tmp_path: Path,
) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        doc = json.loads(encode_document(src.export()))
    doc["events"][1]["summary"] = "好友 76561198\u200b000000001"
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock()) as dst:
        with pytest.raises(StoreContentError) as info:
            dst.import_document(decode_document(json.dumps(doc)))
        assert info.value.fields == ("summary",)
        assert dst.list_scopes() == [] and dst.get_profile().nickname == ""


def test_backup_copies_a_consistent_database(tmp_path: Path) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        src.backup(tmp_path / "copy.sqlite")
        expected = src.export()
    if sys.platform != "win32":
        assert os.stat(tmp_path / "copy.sqlite").st_mode & 0o077 == 0
    with MemoryStore(tmp_path / "copy.sqlite", clock=ManualClock(T0 + 999)) as copy:
        assert copy.export() == expected


def test_backup_to_an_unwritable_place_is_a_store_error(tmp_path: Path) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        with pytest.raises(StoreError):
            src.backup(tmp_path / "no" / "such" / "folder" / "copy.sqlite")
        src.upsert_event(DST, NewEvent("event", "之后", "还能写"), T0)  # the lock was released


def test_save_names_and_tombstones_travel_and_keep_a_forgotten_memory_forgotten(
    tmp_path: Path,
) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        sid = src.open_play_session(DST, T0 + 5, "Asia/Shanghai", save_name="冬天的世界")
        src.close_play_session(sid, T0 + 10)
        src.forget(
            ForgetSpec(
                kind="item",
                game_id=FARM_A.game_id,
                save_id=FARM_A.save_id,
                item_id=src.load_scope(FARM_A)[0].id,
            )
        )
        doc = json.loads(encode_document(src.export()))
    assert doc["saveNames"] == [
        {"gameId": DST.game_id, "saveId": DST.save_id, "name": "冬天的世界", "updatedAt": T0 + 5}
    ]
    [grave] = doc["tombstones"]
    assert (grave["saveId"], grave["kind"], grave["subject"]) == ("farm-a", "goal", "社区中心")
    assert "summary" not in grave
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock(T0)) as dst:
        dst.import_document(decode_document(json.dumps(doc)))
        dst.import_document(decode_document(json.dumps(doc)))  # twice changes nothing
        assert dst.overview().names == {DST: "冬天的世界"}
        assert buried(dst) == [("stardew", "farm-a", "goal", "社区中心")]
        again = NewEvent("goal", "社区中心", "鱼缸收集包")
        assert dst.remember_candidate(FARM_A, again, T0, deliberate=False) is None


def test_a_version_1_document_still_imports(tmp_path: Path) -> None:
    with _filled(tmp_path / "a.sqlite") as src:
        doc = json.loads(encode_document(src.export()))
    doc["version"] = 1
    del doc["saveNames"], doc["tombstones"]
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock(T0)) as dst:
        dst.import_document(decode_document(json.dumps(doc)))
        assert [e.subject for e in dst.load_scope(FARM_A)] == ["社区中心"]
        assert dst.overview().names == {} and buried(dst) == []
