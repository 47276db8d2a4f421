"""The player's own names for things: reading them from a message, finding by them, storing them."""

from __future__ import annotations

from pathlib import Path

import apsw
import msgspec
import pytest

from xtyserver.clock import ManualClock
from xtyserver.errors import StoreContentError, StoreError
from xtyserver.memory.aliases import (
    MAX_ALIASES,
    Naming,
    PlayerAlias,
    Unnaming,
    read_naming,
    unnamed,
)
from xtyserver.memory.commands import ForgetName, Preview
from xtyserver.memory.glossary import Entry, build
from xtyserver.memory.manage import ForgetPreview, ForgetSpec
from xtyserver.memory.retrieval import SaveIndex, select_memories
from xtyserver.memory.sqlite.schema import MIGRATIONS, SCHEMA_VERSION
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import MemoryEvent, NewEvent, Scope

NOW = 1_800_000_000.0
WORLD = Scope("dont-starve-together", "world-a")
OTHER = Scope("dont-starve-together", "world-b")

NAMINGS = [
    ("我管暖石叫小暖", "小暖", "暖石"),
    ("以后我管暖石叫小暖，记住了", "小暖", "暖石"),
    ("小黄是我的狗", "小黄", "狗"),
    ("以后说'大锅'就是烹饪锅", "大锅", "烹饪锅"),
    ("以后说“大锅”就是烹饪锅！", "大锅", "烹饪锅"),
    ("我把烹饪锅叫做大锅吧", "大锅", "烹饪锅"),
    ("烹饪锅我叫它大锅", "大锅", "烹饪锅"),
    ("我的狗叫小黄", "小黄", "狗"),
    ("给暖石起名叫小暖", "小暖", "暖石"),
    ("暖石的外号是小暖", "小暖", "暖石"),
    ("I call the crock pot 'big pot'", "big pot", "crock pot"),
    ("when I say big pot I mean the crock pot", "big pot", "crock pot"),
    ('"big pot" means the crock pot', "big pot", "crock pot"),
    ("my dog is called Rex", "Rex", "dog"),
    ("Rex is my dog", "Rex", "dog"),
    # Judged on the normal form, kept as typed: full-width letters, a zero-width space.
    ("我管暖\u200b石叫ｘｉａｏ暖", "ｘｉａｏ暖", "暖\u200b石"),
]

NOT_NAMINGS = [
    "我管暖石叫什么来着？",
    "小暖放哪了？",
    "把他叫来",
    "我想把箱子叫过来",
    "今天是我的生日",
    "钻石是我的最爱",
    "这就是我的家",
    "问题就是没有食物",
    "我说的是真的",
    "我叫小明",
    "叫我老王",
    "Winter is my enemy",
    "what do I call the crock pot?",
    "我管它叫猫",
]


@pytest.mark.parametrize(("text", "alias", "means"), NAMINGS)
def test_a_naming_is_read_with_its_parts_as_typed(text: str, alias: str, means: str) -> None:
    assert read_naming(text) == Naming(alias, means)


@pytest.mark.parametrize("text", NOT_NAMINGS)
def test_questions_pronouns_and_ordinary_sentences_name_nothing(text: str) -> None:
    assert not isinstance(read_naming(text), Naming)


@pytest.mark.parametrize(
    ("text", "alias"),
    [
        ("别再把暖石叫小暖了", "小暖"),
        ("不要再叫小暖了", "小暖"),
        ("忘掉小暖这个叫法", "小暖"),
        ("stop calling the crock pot 'big pot'", "big pot"),
        ("forget the name big pot", "big pot"),
    ],
)
def test_a_name_taken_back_is_read(text: str, alias: str) -> None:
    assert read_naming(text) == Unnaming(alias)


def _alias(alias: str, means: str, alias_id: int = 1) -> PlayerAlias:
    return PlayerAlias(alias_id, WORLD.game_id, WORLD.save_id, alias, means, NOW)


def test_unnaming_finds_the_name_its_words_end_with() -> None:
    names = [_alias("big pot", "crock pot", 1), _alias("小暖", "暖石", 2), _alias("pot", "x", 3)]
    found = unnamed(names, Unnaming("the crock pot big pot"))
    assert [a.id for a in found] == [1]
    assert [a.id for a in unnamed(names, Unnaming("小暖"))] == [2]
    assert unnamed(names, Unnaming("小火")) == []


def _event(event_id: int, subject: str, summary: str, importance: int = 3) -> MemoryEvent:
    return MemoryEvent(
        id=event_id,
        game_id=WORLD.game_id,
        save_id=WORLD.save_id,
        kind="event",
        subject=subject,
        summary=summary,
        importance=importance,
        status="active",
        pinned=False,
        day=None,
        created_at=NOW,
        updated_at=NOW,
        last_used_at=NOW,
    )


def _index() -> SaveIndex:
    stone = Entry("thermal_stone", "item", "Thermal Stone", "暖石", ids=("heatrock",))
    glossary = build({WORLD.game_id: [stone]}).for_game(WORLD.game_id)
    events = [
        _event(1, "heatrock", "Thermal Stone left in the chest"),
        _event(2, "猪王", "和猪王换了金块"),
        _event(3, "小暖", "小暖快没热了"),
    ]
    return SaveIndex(WORLD, events, glossary=glossary)


def test_a_question_with_the_name_asks_for_the_thing_and_the_thing_for_the_name() -> None:
    index = _index()
    assert set(index.scores("小暖呢")) == {3}  # without the name: only its own words
    index.aliases = (_alias("小暖", "暖石"),)
    # The name asks for the thing (through the glossary: the English memory too)...
    assert set(index.scores("小暖呢")) == {1, 3}
    # ... and the thing asks for the name's words.
    assert set(index.scores("暖石呢")) == {1, 3}
    selection = select_memories(None, index, query_text="小暖呢", current_day=None, now=NOW)
    assert {e.id for e in selection.relevant} == {1, 3}


def test_the_store_keeps_names_per_save_replaces_a_name_and_caps_them(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=ManualClock(NOW)) as store:
        store.learn_alias(WORLD, "小暖", "暖石", NOW)
        assert store.aliases(OTHER) == []
        again = store.learn_alias(WORLD, "小暖", "烹饪锅", NOW + 1)  # said again: the new thing
        assert [(a.alias, a.means) for a in store.aliases(WORLD)] == [("小暖", "烹饪锅")]
        assert again.means == "烹饪锅"
        for n in range(MAX_ALIASES):
            store.learn_alias(WORLD, f"名{n}", f"物{n}", NOW + 10 + n)
        kept = store.aliases(WORLD)
        # The 33rd name pushed out the one said longest ago (小暖).
        assert len(kept) == MAX_ALIASES and "小暖" not in {a.alias for a in kept}
        # Another save's id: left.
        assert store.execute(ForgetName(scope=OTHER, ids=(kept[0].id,))) == 0
        assert store.execute(ForgetName(scope=WORLD, ids=(kept[0].id,))) == 1
        with pytest.raises(StoreError) as too_long:
            store.learn_alias(WORLD, "名" * 17, "物", NOW)
        assert too_long.value.fields == ("alias",)
        with pytest.raises(StoreContentError) as secret:
            store.learn_alias(WORLD, "小邮", "player@example.com", NOW)
        assert secret.value.fields == ("means",)
        assert len(store.aliases(WORLD)) == MAX_ALIASES - 1
        overview = store.overview(scope=WORLD)
        assert len(overview.saves[0].aliases) == MAX_ALIASES - 1


def test_forgetting_a_game_takes_its_names_to_the_trash(tmp_path: Path) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=ManualClock(NOW)) as store:
        store.learn_alias(WORLD, "小暖", "暖石", NOW)
        store.learn_alias(Scope("stardew-valley", "farm-a"), "小鸡", "鸡舍", NOW)
        spec = ForgetSpec(kind="game", game_id=WORLD.game_id)
        preview = store.execute(Preview(target=spec))
        assert isinstance(preview, ForgetPreview)
        assert [a.alias for v in preview.saves for a in v.aliases] == ["小暖"]
        done = store.forget(spec)
        assert store.aliases(WORLD) == []
        assert [a.alias for a in store.aliases(Scope("stardew-valley", "farm-a"))] == ["小鸡"]
        [entry] = store.trash_entries()
        assert [a.alias for v in entry.saves for a in v.aliases] == ["小暖"]
        assert done.trash_id is not None
        store.restore(done.trash_id)
        assert [a.alias for a in store.aliases(WORLD)] == ["小暖"]


def test_the_migration_adds_the_names_table_to_an_older_store(tmp_path: Path) -> None:
    path = tmp_path / "memory-v1.sqlite"
    conn = apsw.Connection(str(path))
    for step in MIGRATIONS[:8]:
        for statement in step:
            conn.execute(statement)
    conn.execute("PRAGMA user_version=8")
    conn.close()
    assert SCHEMA_VERSION == 9
    with MemoryStore(path, clock=ManualClock(NOW)) as store:
        assert store.aliases(WORLD) == []
        store.upsert_event(WORLD, NewEvent("event", "暖石", "暖石在箱子里"), NOW)
        store.learn_alias(WORLD, "小暖", "暖石", NOW)
        assert [a.alias for a in store.aliases(WORLD)] == ["小暖"]
    check = apsw.Connection(str(path))
    assert check.execute("PRAGMA user_version").fetchall() == [(9,)]
    check.close()


def test_the_companions_memory_view_shows_the_names_of_each_save(tmp_path: Path) -> None:
    from xtyserver.session import tool_results

    with MemoryStore(tmp_path / "m.sqlite", clock=ManualClock(NOW)) as store:
        store.learn_alias(WORLD, "小暖", "暖石", NOW)
        store.learn_alias(OTHER, "大锅", "烹饪锅", NOW)
        shown = tool_results.render(store.overview(scope=WORLD), current=WORLD, what="saves")
    assert "玩家的叫法：小暖 = 暖石" in shown and "大锅" not in shown


def test_names_go_into_the_export_and_back_in_one_save_or_all(tmp_path: Path) -> None:
    from xtyserver.memory.export import decode_document, encode_document, save_document

    with MemoryStore(tmp_path / "a.sqlite", clock=ManualClock(NOW)) as store:
        store.learn_alias(WORLD, "小暖", "暖石", NOW)
        store.learn_alias(OTHER, "大锅", "烹饪锅", NOW)
        doc = decode_document(encode_document(store.export()))
    assert doc.version == 3 and {n.alias for n in doc.names} == {"小暖", "大锅"}
    one = save_document(doc, WORLD.game_id, WORLD.save_id)
    assert [n.alias for n in one.names] == ["小暖"]
    with MemoryStore(tmp_path / "b.sqlite", clock=ManualClock(NOW)) as store:
        store.learn_alias(WORLD, "小暖", "暖炉", NOW + 5)  # said later here: it stays
        store.import_document(doc)
        store.import_document(doc)  # twice changes nothing
        assert [(a.alias, a.means) for a in store.aliases(WORLD)] == [("小暖", "暖炉")]
        assert [a.alias for a in store.aliases(OTHER)] == ["大锅"]
        bad = msgspec.structs.replace(doc, names=[_alias("小邮", "player@example.com")])
        with pytest.raises(StoreContentError):
            store.import_document(bad)


def test_no_question_or_memory_of_the_eval_sets_reads_as_a_naming() -> None:
    """3,000-odd texts players and memories say: none of them names a thing."""
    import json

    def texts(node: object) -> list[str]:
        if isinstance(node, str):
            return [node]
        if isinstance(node, dict):
            return [t for v in node.values() for t in texts(v)]
        if isinstance(node, list):
            return [t for v in node for t in texts(v)]
        return []

    root = Path(__file__).resolve().parents[2] / "eval"
    files = ["memory-v1.json", "memory-v2.json", "dev/players_words_dev.json"]
    every = {t for f in files for t in texts(json.loads((root / f).read_text("utf-8")))}
    assert len(every) > 1500
    assert [t for t in every if read_naming(t) is not None] == []
