"""Search keys: written with a memory, stored beside it, indexed lower, enriched."""

from __future__ import annotations

import json
from pathlib import Path

import apsw
import pytest

from xtyserver.clock import ManualClock
from xtyserver.errors import StoreContentError
from xtyserver.memory import enrichment, extraction
from xtyserver.memory.retrieval import SaveIndex, search_memories
from xtyserver.memory.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import MemoryEvent, NewEvent, Scope, SharedProfile

FARM = Scope("stardew-valley", "farm-a")
NOW = 1_790_000_000.0


def test_extraction_answers_carry_cleaned_search_keys() -> None:
    long = "很长" * 30
    answer = {
        "events": [
            {
                "kind": "relationship",
                "subject": "阿比盖尔",
                "summary": "阿比盖尔最喜欢紫水晶",
                "keys": [
                    "阿比盖尔",
                    "Abigail",
                    "abigail",
                    "确诊抑郁",
                    " 紫水晶 ",
                    long,
                    "a@b.example.com",
                    "",
                    3,
                    "礼物",
                    "Amethyst",
                    "gift",
                    "紫发女孩",
                    "好感",
                    "九",
                ],
            },
            {"kind": "goal", "subject": "鸡舍", "summary": "盖鸡舍"},
        ]
    }
    result = extraction.parse_extraction(
        json.dumps(answer, ensure_ascii=False), profile=SharedProfile(), day=3
    )
    first, second = result.events
    # repeats (case-insensitive), over-long, forbidden, sensitive and non-string keys dropped;
    # at most 8
    assert first.search_keys == (
        "阿比盖尔",
        "Abigail",
        "紫水晶",
        "礼物",
        "Amethyst",
        "gift",
        "紫发女孩",
        "好感",
    )
    assert second.search_keys is None  # none given: the enrichment job will ask
    assert "keys" in extraction.EXTRACTION_SYSTEM_PROMPT
    assert "keys" in extraction.SUMMARY_SYSTEM_PROMPT
    (summary,) = extraction.parse_summary(
        json.dumps({"events": [{**answer["events"][0], "kind": "decision"}]}), day=None
    )
    assert summary.search_keys is not None and "Abigail" in summary.search_keys


def _v4_database(path: Path) -> None:
    conn = apsw.Connection(str(path))
    for step in MIGRATIONS[:4]:
        for statement in step:
            conn.execute(statement)
    conn.execute(
        "INSERT INTO game_memory(game_id, save_id, kind, subject, summary, importance, status,"
        " pinned, day, created_at, updated_at, last_used_at) VALUES"
        " ('stardew-valley', 'farm-a', 'goal', '鸡舍', '秋天前盖好鸡舍', 3, 'active', 0, NULL,"
        " 1, 1, 1)"
    )
    conn.execute("PRAGMA user_version=4")
    conn.close()


def test_the_migration_adds_the_column_and_old_rows_have_no_keys(tmp_path: Path) -> None:
    path = tmp_path / "memory-v1.sqlite"
    _v4_database(path)
    assert SCHEMA_VERSION == 9  # 5 keys, 6 trash, 7 vectors, 8 stats in the trash, 9 names
    with MemoryStore(path, clock=ManualClock(NOW)) as store:
        (old,) = store.load_scope(FARM)
        assert old.search_keys is None
        assert store.without_search_keys(FARM, 8) == [old]
        (changed,) = store.set_search_keys(FARM, {old.id: ["鸡窝", "Coop", "coop", "鸡窝"]})
        assert changed.search_keys == ("鸡窝", "Coop")
        assert store.without_search_keys(FARM, 8) == []
        # Another save's id is left alone.
        assert store.set_search_keys(Scope("stardew-valley", "farm-b"), {old.id: ["x"]}) == []
        # Remembering the fact again without keys keeps them; with keys replaces them.
        again = store.upsert_event(FARM, NewEvent("goal", "鸡舍", "秋天前盖好大鸡舍"), NOW)
        assert again.search_keys == ("鸡窝", "Coop")
        keyed = NewEvent("goal", "鸡舍", "秋天前盖好大鸡舍", search_keys=("Big Coop",))
        assert store.upsert_event(FARM, keyed, NOW).search_keys == ("Big Coop",)
        with pytest.raises(StoreContentError):
            store.set_search_keys(FARM, {old.id: ["C:\\Users\\me\\save.txt"]})
    version = apsw.Connection(str(path)).execute("PRAGMA user_version").fetchall()[0][0]
    assert version == SCHEMA_VERSION


def _ev(i: int, summary: str, keys: tuple[str, ...] | None = None) -> MemoryEvent:
    return MemoryEvent(
        i,
        FARM.game_id,
        FARM.save_id,
        "event",
        f"s{i}",
        summary,
        3,
        "active",
        False,
        None,
        NOW,
        NOW,
        NOW,
        search_keys=keys,
    )


def test_keys_are_indexed_with_a_lower_weight_and_explained() -> None:
    events = [
        _ev(1, "第一次钓到了河豚", keys=("鲶鱼", "catfish")),
        _ev(2, "夏威夷宴会上往汤里放了鲶鱼"),
        _ev(3, "周末 Jun 来玩", keys=("朋友", "weekend")),
    ]
    index = SaveIndex(FARM, events)
    # the summary's word outranks the same word in another memory's keys
    # (the memory search tool's order: BM25 alone)
    assert [e.id for e in search_memories(None, index, "鲶鱼").events] == [2, 1]
    assert [e.id for e in search_memories(None, index, "weekend").events] == [3]
    assert index.explain(events[2], index.query_terms("who comes on the weekend?")) == ("keys",)
    assert index.explain(events[1], index.query_terms("鲶鱼")) == ("words",)
    ignored = SaveIndex(FARM, events, key_weight=0.0)
    assert search_memories(None, ignored, "weekend").events == ()


def test_enrichment_messages_and_answers() -> None:
    events = [_ev(i, f"第{i}件事") for i in range(1, 12)]
    messages = enrichment.build_enrichment_messages("stardew-valley", events)
    assert messages[0]["content"] == enrichment.ENRICHMENT_SYSTEM_PROMPT
    assert messages[1]["content"].count("\n#") == enrichment.BATCH
    answer = json.dumps({"keys": {"1": ["甲", "A"], "#2": ["乙"], "99": ["not asked"]}})
    assert enrichment.parse_enrichment(answer, [1, 2, 3]) == {1: ("甲", "A"), 2: ("乙",), 3: ()}
    assert enrichment.parse_enrichment("sorry, no JSON", [1]) == {}
    fenced = "```json\n" + answer + "\n```"
    assert enrichment.parse_enrichment(fenced, [1])[1] == ("甲", "A")


def test_keys_travel_with_an_export_and_an_old_export_has_none(tmp_path: Path) -> None:
    import msgspec

    from xtyserver.memory.export import ExportDocument

    with MemoryStore(tmp_path / "a.sqlite", clock=ManualClock(NOW)) as store:
        keyed = NewEvent("goal", "鸡舍", "盖好鸡舍", search_keys=("鸡窝", "Coop"))
        store.upsert_event(FARM, keyed, NOW)
        store.upsert_event(FARM, NewEvent("goal", "温室", "修好温室"), NOW)
        doc = store.export()
    data = msgspec.json.encode(doc)
    assert b'"searchKeys":["\xe9\xb8\xa1\xe7\xaa\x9d","Coop"]' in data
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock(NOW)) as other:
        other.import_document(msgspec.json.decode(data, type=ExportDocument))
        keys = {e.subject: e.search_keys for e in other.load_scope(FARM)}
    assert keys == {"鸡舍": ("鸡窝", "Coop"), "温室": None}
    # An export written before search keys existed reads as "never asked".
    raw = msgspec.json.decode(data)
    for event in raw["events"]:
        event.pop("searchKeys", None)
    old = msgspec.convert(raw, ExportDocument)
    assert all(e.search_keys is None for e in old.events)
