"""Game memories through the store: upsert in place, limits, content checks, scopes, touch."""

from __future__ import annotations

import tempfile
from pathlib import Path

import apsw
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xtyserver.clock import ManualClock
from xtyserver.errors import StoreContentError, StoreError
from xtyserver.memory.commands import Pin
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.retrieval import SaveIndex, select_memories
from xtyserver.memory.sqlite import events
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope

FARM_A = Scope("stardew", "farm-a")
FARM_B = Scope("stardew", "farm-b")
DST = Scope("dst", "world-1")


def test_the_one_column_list_is_the_tables(store: MemoryStore) -> None:
    conn = apsw.Connection(str(store.path))
    table = tuple(r[1] for r in conn.execute("PRAGMA table_info(game_memory)"))
    conn.close()
    assert table == events.COLUMNS


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


def test_a_pinned_fact_stays_pinned_when_remembered_again(store: MemoryStore) -> None:
    ev = store.upsert_event(FARM_A, NewEvent("promise", "钓鱼", "一起钓鱼", pinned=True), 1.0)
    again = store.upsert_event(FARM_A, NewEvent("promise", "钓鱼", "周末一起钓鱼"), 2.0)
    assert again.id == ev.id and again.pinned
    assert store.execute(Pin(scope=FARM_A, event_id=ev.id, pinned=False)) is True
    assert store.load_scope(FARM_A)[0].pinned is False
    assert (
        store.execute(Pin(scope=FARM_B, event_id=ev.id, pinned=True)) is False
    )  # another save's id


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
        # Hidden characters do not hide an id: the normalised text is what is checked.
        (NewEvent("event", "好友", "steam 76561198\u200b000000001 加了好友"), "summary"),
        (NewEvent("event", "好友", "steam ７６５６１１９８００００００００１"), "summary"),
        (NewEvent("event", "bob@exam\u00adple.com", "他的邮箱"), "subject"),
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


def test_texts_are_stored_as_typed_without_invisibles(store: MemoryStore) -> None:
    stored = store.upsert_event(
        FARM_A, NewEvent("goal", "ｆｉｓｈ！", "钓\u200b鱼\u202e大赛！"), 1.0
    )
    assert (stored.subject, stored.summary) == ("ｆｉｓｈ！", "钓鱼大赛！")
    # The normal form of the subject is the fact's identity: the same fact
    # written plainly updates it, under the subject first stored.
    again = store.upsert_event(FARM_A, NewEvent("goal", "fish!", "钓鱼大赛决赛"), 2.0)
    assert again.id == stored.id
    assert [(e.subject, e.summary) for e in store.load_scope(FARM_A)] == [
        ("ｆｉｓｈ！", "钓鱼大赛决赛")
    ]
    # A subject stored in normal form (an older store) is found from a full-width one.
    old = store.upsert_event(FARM_A, NewEvent("goal", "社区中心计划!", "先做鱼缸"), 3.0)
    new = store.upsert_event(FARM_A, NewEvent("goal", "社区中心计划！", "再钓鱼"), 4.0)
    assert (new.id, new.subject, new.summary) == (old.id, "社区中心计划!", "再钓鱼")


def test_limits_count_the_normalised_text(store: MemoryStore) -> None:
    # 160 visible characters plus zero-width joiners fit once the joiners are gone.
    stored = store.upsert_event(FARM_A, NewEvent("event", "长", "长\u200d" * 80 + "长" * 80), 1.0)
    assert stored.summary == "长" * 160
    with pytest.raises(StoreError) as info:  # a subject of only format characters is empty
        store.upsert_event(FARM_A, NewEvent("event", "\u200b\u200b", "x"), 1.0)
    assert info.value.fields == ("subject",)


def test_scope_isolation_forget_and_list(store: MemoryStore) -> None:
    a = store.upsert_event(FARM_A, NewEvent("goal", "社区中心", "鱼缸收集包"), 1.0)
    store.upsert_event(FARM_B, NewEvent("goal", "社区中心", "农场B的鱼缸"), 1.0)
    store.upsert_event(DST, NewEvent("event", "鹿角怪", "打败了"), 1.0)
    assert [e.summary for e in store.load_scope(FARM_A)] == ["鱼缸收集包"]
    assert (
        store.forget(
            ForgetSpec(kind="item", game_id=FARM_B.game_id, save_id=FARM_B.save_id, item_id=a.id)
        ).items
        == 0
    )  # another scope's id is not touched
    assert store.list_scopes() == [DST, FARM_A, FARM_B]
    assert (
        store.forget(
            ForgetSpec(kind="item", game_id=FARM_A.game_id, save_id=FARM_A.save_id, item_id=a.id)
        ).items
        == 1
    )
    assert (
        store.forget(ForgetSpec(kind="save", game_id=FARM_B.game_id, save_id=FARM_B.save_id)).items
        == 1
    )
    assert store.list_scopes() == [DST]
    store.forget(ForgetSpec(kind="all"))
    assert store.list_scopes() == []


def test_touch_updates_last_used_only_inside_the_scope(store: MemoryStore) -> None:
    a = store.upsert_event(FARM_A, NewEvent("event", "a", "x"), 1.0)
    b = store.upsert_event(FARM_B, NewEvent("event", "b", "y"), 1.0)
    store.touch(FARM_A, [a.id, b.id], 50.0)
    store.touch(FARM_A, [a.id], 40.0)  # an older touch never moves time back
    store.touch(FARM_A, [], 60.0)
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
