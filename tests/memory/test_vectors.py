"""Memory vectors in the pure core: blobs, cosine, rank fusion, and how
select_memories fuses them without injecting more; the memory_vector table."""

from __future__ import annotations

from array import array

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from xtyserver.clock import ManualClock
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.retrieval import MemoryBudget, SaveIndex, select_memories
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import MemoryEvent, NewEvent, Scope
from xtyserver.memory.vectors import (
    centered,
    centroid,
    embedding_text,
    from_blob,
    fuse,
    normalized,
    similarities,
    to_blob,
    unseen_first,
    vector_candidates,
)
from xtyserver.serve.glossary import load_glossary

FARM = Scope("stardew-valley", "farm-a")
NOW = 1_790_000_000.0


def _event(i: int, subject: str, summary: str, **kw: object) -> MemoryEvent:
    values: dict[str, object] = {
        "id": i,
        "game_id": FARM.game_id,
        "save_id": FARM.save_id,
        "kind": "event",
        "subject": subject,
        "summary": summary,
        "importance": 3,
        "status": "active",
        "pinned": False,
        "day": None,
        "created_at": NOW,
        "updated_at": NOW,
        "last_used_at": NOW,
    }
    values.update(kw)
    return MemoryEvent(**values)  # type: ignore[arg-type]


@given(st.lists(st.floats(-1e6, 1e6, allow_nan=False), min_size=1, max_size=64))
def test_a_blob_round_trips_and_vectors_are_unit(values: list[float]) -> None:
    vec = normalized(values)
    assert from_blob(to_blob(vec)) == vec
    norm = sum(x * x for x in vec)
    assert norm == 0 or abs(norm - 1) < 1e-4


def test_similarities_skip_other_sizes_and_rank_best_first() -> None:
    q = normalized([1, 0, 0])
    found = similarities(
        q,
        [
            (1, normalized([0, 1, 0])),
            (2, normalized([1, 1, 0])),
            (3, normalized([1, 0])),
            (4, normalized([1, 0, 0])),
        ],
    )
    assert [i for i, _ in found] == [4, 2, 1]
    assert abs(found[0][1] - 1) < 1e-6


def test_fusion_is_reciprocal_rank_fusion() -> None:
    fused = fuse([[1, 2, 3], [3, 4]])
    assert fused[3] == 1 / 63 + 1 / 61
    assert fused[1] == 1 / 61 and fused[2] == fused[4] == 1 / 62


def test_vector_candidates_need_the_floor_and_the_margin() -> None:
    similar = [(1, 0.9), (2, 0.85), (3, 0.7), (4, 0.4)]
    assert vector_candidates(similar, min_similarity=0.45, margin=0.08, limit=4) == [1, 2]
    assert vector_candidates(similar, min_similarity=0.95, margin=0.08, limit=4) == []
    assert vector_candidates(similar, min_similarity=0.0, margin=1.0, limit=3) == [1, 2, 3]


def _index() -> SaveIndex:
    events = [
        _event(1, "阿比盖尔", "阿比盖尔最喜欢紫水晶", kind="relationship"),
        _event(2, "鸡舍", "今年秋天前盖好鸡舍", kind="goal"),
        _event(3, "鱼", "春天钓到了鲶鱼"),
        _event(4, "矿洞", "矿洞打到了四十层"),
        _event(5, "温室", "修好了温室"),
    ]
    return SaveIndex(FARM, events)


def test_without_similarities_nothing_changes() -> None:
    index = _index()
    for text in ("What does Abigail like?", "鲶鱼", "矿洞几层了"):
        plain = select_memories(None, index, query_text=text, current_day=None, now=NOW)
        for similar in (None, ()):
            same = select_memories(
                None, index, query_text=text, current_day=None, now=NOW, similar=similar
            )
            assert same == plain


def test_a_vector_match_takes_a_place_of_recent_and_important_never_one_more() -> None:
    index = _index()
    text = "What does Abigail like?"  # no word of any memory
    plain = select_memories(None, index, query_text=text, current_day=None, now=NOW)
    assert plain.relevant == ()
    fused = select_memories(
        None,
        index,
        query_text=text,
        current_day=None,
        now=NOW,
        similar=[(1, 0.8), (3, 0.2), (4, 0.1)],
    )
    assert [ev.id for ev in fused.relevant] == [1]
    assert dict(fused.via)[1] == "vectors"
    assert len(fused.used_ids) == len(plain.used_ids)


def test_vectors_reorder_and_add_one_place_taken_from_recent_and_important() -> None:
    index = _index()
    budget = MemoryBudget(min_relevance=0.0)
    text = "鲶鱼 矿洞"
    plain = select_memories(None, index, query_text=text, current_day=None, now=NOW, budget=budget)
    assert {ev.id for ev in plain.relevant} == {3, 4}
    fused = select_memories(
        None,
        index,
        query_text=text,
        current_day=None,
        now=NOW,
        budget=budget,
        similar=[(1, 0.9), (4, 0.88), (3, 0.1)],
    )
    # 4 is in both rankings: first; 1 comes by vector alone, before 3 (words alone),
    # in the one place "recent and important" gives up.
    assert [ev.id for ev in fused.relevant] == [4, 1, 3]
    assert dict(fused.via)[4] == "words+vectors"
    assert plain.recent and not fused.recent
    assert len(fused.used_ids) == len(plain.used_ids)
    none_recent = MemoryBudget(min_relevance=0.0, recent=0)
    kept = select_memories(
        None,
        index,
        query_text=text,
        current_day=None,
        now=NOW,
        budget=none_recent,
        similar=[(1, 0.9), (4, 0.88), (3, 0.1)],
    )
    assert [ev.id for ev in kept.relevant] == [4, 1]  # no place to give: 1 takes 3's


def test_unseen_ids_are_reordered_by_discounted_cosine_and_the_words_picks_keep_their_places() -> (
    None
):
    cosine = {1: 0.90, 2: 0.89, 3: 0.885, 4: 0.87}
    share = {1: 1.0, 2: 0.5, 3: 0.0, 4: 0.0}
    # 1 is the words' pick: it stays first; 2 loses 0.0225 and falls behind 3 and 4.
    assert unseen_first([1, 2, 3, 4], cosine, share, seen={1}, discount=0.045) == [1, 3, 4, 2]
    assert unseen_first([1, 2, 3, 4], cosine, share, seen={1}, discount=0.0) == [1, 2, 3, 4]
    # 2 is nearer by more than its share explains: it keeps the lead.
    assert unseen_first([2, 3], {2: 0.91, 3: 0.885}, share, seen=set(), discount=0.045) == [2, 3]
    # A pick of the words keeps its rank even with a share that would sink it.
    assert unseen_first([2, 3, 1], cosine, share, seen={2}, discount=1.0) == [2, 3, 1]


def test_the_vectors_place_goes_to_what_the_words_missed_unless_the_decoy_is_clearly_nearer() -> (
    None
):
    events = [
        _event(1, "鱼", "春天在河边钓到了鲶鱼"),
        _event(2, "贝壳", "在河边捡了贝壳"),  # shares 河边 with the question, below the floor
        _event(3, "温室", "修好了温室"),  # what the question describes, no word of it
        _event(4, "矿洞", "矿洞打到了四十层"),
    ]
    index = SaveIndex(FARM, events)
    text = "钓鲶鱼的河边后来弄出来的那间玻璃房"
    share = index.scores(text)[2] / index.scores(text)[1]
    assert 0.3 < share < MemoryBudget().min_relevance  # 2 is no lexical pick of its own

    def relevant(decoy: float, discount: float | None = None) -> list[int]:
        # one vector place (no near ties' places): which memory it goes to
        budget = MemoryBudget(close_places=0)
        if discount is not None:
            budget = msgspec.structs.replace(budget, lexical_discount=discount)
        similar = [(2, decoy), (3, 0.88), (1, 0.85), (4, 0.7)]
        sel = select_memories(
            None, index, query_text=text, current_day=None, now=NOW, budget=budget, similar=similar
        )
        assert len(sel.used_ids) == 2  # the vectors' place is recent-and-important's
        return [ev.id for ev in sel.relevant]

    # A decoy 0.01 nearer by cosine, its nearness partly its shared word: the place is 3's.
    assert relevant(0.89) == [1, 3]
    assert relevant(0.89, discount=0.0) == [1, 2]  # cosine alone: the decoy's
    # Nearer by more than its word's share explains (discount * share): still the decoy's.
    discount = MemoryBudget().lexical_discount
    assert relevant(0.88 + discount * share + 0.002) == [1, 2]
    assert relevant(0.88 + discount * share - 0.002) == [1, 3]


def test_a_glossary_match_is_meaning_not_surface_and_keeps_its_nearness() -> None:
    events = [
        _event(1, "鱼", "春天钓到了鲶鱼"),
        _event(2, "阿比盖尔", "阿比盖尔最喜欢紫水晶"),  # meets the question through @abigail only
        _event(3, "温室", "修好了温室"),
        _event(4, "矿洞", "矿洞打到了四十层"),
    ]
    index = SaveIndex(FARM, events, glossary=load_glossary(None).for_game(FARM.game_id))
    text = "钓到鲶鱼那天 Abigail 说了啥"
    scores = index.scores(text)
    assert 0.2 < scores[2] / scores[1] < MemoryBudget().min_relevance
    sel = select_memories(
        None,
        index,
        query_text=text,
        current_day=None,
        now=NOW,
        budget=MemoryBudget(close_places=0),  # one vector place: whose it is
        similar=[(2, 0.88), (3, 0.875), (1, 0.85), (4, 0.7)],
    )
    # 2 is nearer than 3 and its match is no shared word: the place is 2's.
    assert [ev.id for ev in sel.relevant] == [1, 2]


def test_a_vector_is_kept_while_the_text_stays_and_dropped_when_it_changes() -> None:
    index = _index()
    index.set_vector(3, normalized([1, 0]))
    index.set_vector(99, normalized([1, 0]))  # unknown: ignored
    ev = index.get(3)
    assert ev is not None
    index.upsert(_event(3, "鱼", "春天钓到了鲶鱼", importance=5))
    assert [i for i, _ in index.vectors()] == [3]
    index.upsert(_event(3, "鱼", "夏天钓到了鲶鱼"))
    assert index.vectors() == []
    index.set_vector(3, normalized([1, 0]))
    index.remove(3)
    assert index.vectors() == []


def test_the_table_keeps_vectors_per_model_and_drops_them_with_the_event(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with MemoryStore.open_profile(tmp_path, "default", clock=ManualClock(NOW)) as store:
        a = store.upsert_event(FARM, NewEvent("event", "鱼", "春天钓到了鲶鱼"), NOW)
        b = store.upsert_event(FARM, NewEvent("event", "矿", "矿洞四十层"), NOW)
        other = store.upsert_event(
            Scope("stardew-valley", "farm-b"), NewEvent("event", "x", "y"), NOW
        )
        vec = normalized([0.6, 0.8])
        stale = "not the text any more"
        stored = store.set_vectors(
            FARM,
            "m1",
            [
                (a.id, embedding_text(a), vec),
                (b.id, stale, vec),
                (other.id, embedding_text(other), vec),
            ],
        )
        assert stored == [a.id]  # a rewritten memory and another save's get none
        assert store.load_vectors(FARM, "m1") == {a.id: array("f", vec)}
        assert store.load_vectors(FARM, "m2") == {}
        assert [e.id for e in store.without_vectors(FARM, "m1", 10)] == [b.id]
        # Rewriting the text drops the vector; a new importance alone keeps it.
        store.upsert_event(FARM, NewEvent("event", "鱼", "春天钓到了鲶鱼", importance=5), NOW)
        assert a.id in store.load_vectors(FARM, "m1")
        store.set_search_keys(FARM, {a.id: ["catfish"]})
        assert store.load_vectors(FARM, "m1") == {}
        a2 = store.load_scope(FARM)[0]
        assert store.set_vectors(FARM, "m1", [(a.id, embedding_text(a2), vec)]) == [a.id]
        store.forget(
            ForgetSpec(kind="item", game_id=FARM.game_id, save_id=FARM.save_id, item_id=a.id)
        )
        assert store.load_vectors(FARM, "m1") == {}
        rows = store._db.read(lambda c: c.execute("SELECT count(*) FROM memory_vector").fetchall())
        assert rows == [(0,)]


def test_the_migration_adds_the_table_and_old_memories_have_no_vector(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import apsw

    from xtyserver.memory.sqlite.schema import MIGRATIONS, SCHEMA_VERSION

    path = tmp_path / "memory-v1.sqlite"
    conn = apsw.Connection(str(path))
    for step in MIGRATIONS[:6]:
        for statement in step:
            conn.execute(statement)
    conn.execute(
        "INSERT INTO game_memory(game_id, save_id, kind, subject, summary, importance, status,"
        " pinned, day, created_at, updated_at, last_used_at) VALUES"
        " ('stardew-valley', 'farm-a', 'goal', '鸡舍', '秋天前盖好鸡舍', 3, 'active', 0, NULL,"
        " 1, 1, 1)"
    )
    conn.execute("PRAGMA user_version=6")
    conn.close()
    assert SCHEMA_VERSION == 9
    with MemoryStore(path, clock=ManualClock(NOW)) as store:
        (old,) = store.load_scope(FARM)
        assert store.without_vectors(FARM, "m1", 10) == [old]
        assert store.load_vectors(FARM, "m1") == {}


def test_near_ties_by_cosine_each_get_a_place_and_no_more_than_close_places() -> None:
    events = [
        _event(i, f"s{i}", text)
        for i, text in enumerate(
            (
                "春天钓到了鲶鱼",
                "修好了温室",
                "矿洞打到了四十层",
                "买了一头奶牛",
                "盖好了鸡舍",
                "种了草莓",
            ),
            1,
        )
    ]
    index = SaveIndex(FARM, events)
    budget = MemoryBudget()
    gap = budget.close_similarity

    def chosen(similar: list[tuple[int, float]]) -> list[int]:
        sel = select_memories(
            None, index, query_text="那个东西", current_day=None, now=NOW, similar=similar
        )
        return [ev.id for ev in sel.relevant]

    # no word matches: the first vector place, and the next within close_similarity
    assert chosen([(2, 0.90), (3, 0.90 - gap + 0.001), (4, 0.90 - gap - 0.001)]) == [2, 3]
    assert chosen([(2, 0.90), (3, 0.85), (4, 0.84)]) == [2]
    # four near ties: the first place and close_places more
    ties = [(i, 0.90 - 0.001 * i) for i in (2, 3, 4, 5, 6)]
    assert len(chosen(ties)) == budget.vector_places + budget.close_places


def test_the_centroid_s_dot_product_is_the_mean_cosine() -> None:
    chatter = [normalized([1.0, 0.0, 0.0]), normalized([0.0, 1.0, 0.0])]
    middle = centroid(chatter)
    memory = normalized([1.0, 1.0, 0.0])
    mean = sum(c for _, c in similarities(memory, enumerate(chatter))) / 2
    assert abs(similarities(middle, [(1, memory)])[0][1] - mean) < 1e-6
    assert centroid([]) == array("f")


def test_centering_costs_what_a_memory_is_more_generic_than_the_mean() -> None:
    similar = [(1, 0.88), (2, 0.87), (3, 0.80)]
    generic = {1: 0.85, 2: 0.81, 3: 0.83}  # mean 0.83: 1 is generic, 2 is specific
    out = dict(centered(similar, generic, weight=1.0))
    assert [i for i, _ in centered(similar, generic, weight=1.0)] == [2, 1, 3]
    assert abs(out[1] - 0.86) < 1e-9 and abs(out[2] - 0.89) < 1e-9 and abs(out[3] - 0.80) < 1e-9
    # the scale kept: the mean cosine is what it was
    assert abs(sum(out.values()) - sum(c for _, c in similar)) < 1e-9
    assert centered(similar, generic, weight=0.0) == similar
    assert centered(similar, {}, weight=1.0) == similar
    # a memory without a value loses nothing beyond the mean
    assert dict(centered(similar, {1: 0.9, 2: 0.8}, weight=1.0))[3] == 0.80


def test_the_vectors_place_goes_to_the_specific_memory_and_small_talk_keeps_raw_cosines() -> None:
    index = SaveIndex(FARM)
    index.upsert(_event(1, "矿井", "玩家去矿井下了前五层"))
    index.upsert(_event(2, "沙漠", "玩家第一次坐巴士去了沙漠"))
    index.upsert(_event(3, "贝壳", "玩家在海滩捡了几个贝壳"))
    similar = [(1, 0.879), (2, 0.870), (3, 0.862)]
    generic = {1: 0.840, 2: 0.820, 3: 0.836}

    def chosen(**kw: object) -> list[int]:
        sel = select_memories(
            None, index, query_text="那片遍地黄沙的地方", current_day=None, now=NOW,
            similar=similar, chatter=0.80, **kw,  # type: ignore[arg-type]
        )  # fmt: skip
        return [ev.id for ev in sel.relevant]

    assert chosen() == [1]  # raw: the plain memory wins by 0.009
    assert chosen(generic=generic) == [2]
    assert chosen(generic=generic, budget=MemoryBudget(generic_weight=0.0)) == [1]
    # Small talk is judged on the raw cosines: chatter 0.011 nearer than every memory
    # (raw best 0.879) recalls nothing, although the centred best (0.882) is nearer.
    quiet = select_memories(
        None, index, query_text="今天好累啊", current_day=None, now=NOW,
        similar=similar, chatter=0.890, generic=generic,
    )  # fmt: skip
    assert not quiet.relevant and not quiet.recent
