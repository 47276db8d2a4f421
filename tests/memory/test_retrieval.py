"""Per-turn memory selection: relevance, sections, reload safety, budget."""

from __future__ import annotations

import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.memory.conftest import relevant
from xtyserver.clock import ManualClock
from xtyserver.errors import UsageError
from xtyserver.memory.retrieval import (
    MemoryBudget,
    SaveIndex,
    render_event,
    search_memories,
    select_memories,
)
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import MemoryEvent, NewEvent, Scope, SharedProfile
from xtyserver.protocol.normalize import normalize

sys.path.insert(0, str(Path(__file__).parent))
from recall_cases import CASES  # type: ignore[import-not-found,unused-ignore]

FARM_A = Scope("stardew", "farm-a")
NOW = 1_790_000_000.0


def _event(i: int, subject: str, summary: str, **kw: object) -> MemoryEvent:
    base: dict[str, object] = {
        "id": i,
        "game_id": FARM_A.game_id,
        "save_id": FARM_A.save_id,
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
    base.update(kw)
    return MemoryEvent(**base)  # type: ignore[arg-type]


def _corpus_index() -> SaveIndex:
    return SaveIndex(FARM_A, [_event(i + 1, s, m) for i, (s, m, _) in enumerate(CASES)])


def _recall(queries: list[tuple[int, str]]) -> float:
    index = _corpus_index()
    hits = sum(1 for doc_id, q in queries if doc_id in relevant(index, q))
    return hits / len(queries)


def test_recall_set_is_mixed_and_large_enough() -> None:
    chinese = [q for _, _, q in CASES if any("\u4e00" <= c <= "\u9fff" for c in q)]
    assert len(CASES) >= 40
    assert 15 <= len(chinese) <= len(CASES) - 15


def test_bm25_recall_on_the_chinese_queries_is_at_least_0_95() -> None:
    queries = [(i + 1, q) for i, (_, _, q) in enumerate(CASES) if not q.isascii()]
    assert _recall(queries) >= 0.95


def test_bm25_recall_on_the_english_queries_is_at_least_0_95() -> None:
    queries = [(i + 1, q) for i, (_, _, q) in enumerate(CASES) if q.isascii()]
    assert _recall(queries) >= 0.95


@pytest.mark.parametrize("query", ["社区中心", "鱼缸", "我想做鱼缸", "fish tank", "Fish Tanks"])
def test_player_query_finds_the_community_center_plan(query: str) -> None:
    index = SaveIndex(
        FARM_A,
        [
            _event(1, "社区中心", "计划先完成社区中心的鱼缸收集包"),
            _event(2, "Community Center", "Plan to finish the fish tank bundle first"),
            _event(3, "矿洞", "在矿洞第40层被史莱姆打晕"),
        ],
    )
    found = relevant(index, query)
    assert found and found[0] in (1, 2)
    assert 3 not in found


@pytest.mark.parametrize(
    ("query", "want"),
    [
        ("Ｆｉｓｈ Ｔａｎｋ", 2),  # full-width, as a Chinese input method types it
        ("ｆｉｓｈ\u200b ｔａｎｋｓ", 2),
        ("fi\u00adsh tank", 2),  # a soft hyphen inside the word
        ("鱼\u200b缸", 1),  # a zero-width space must not split the bigram
        ("鱼\ufeff缸", 1),
        ("\u202e鱼缸\u202c", 1),
        ("社区\u2060中心", 1),
    ],
)
def test_a_look_alike_query_finds_what_its_plain_form_finds(query: str, want: int) -> None:
    index = SaveIndex(
        FARM_A,
        [
            _event(1, "鱼缸", "计划先完成社区中心的鱼缸收集包"),
            _event(2, "Community Center", "Plan to finish the fish tank bundle first"),
            _event(3, "矿洞", "在矿洞第40层被史莱姆打晕"),
        ],
    )
    assert relevant(index, query) == [want]
    assert index.scores(query) == index.scores(normalize(query))


def test_an_event_stored_with_look_alikes_is_found_by_its_plain_words() -> None:
    index = SaveIndex(FARM_A, [_event(1, "Ｆｉｓｈ Ｔａｎｋ", "鱼\u200b缸收集包")])
    assert relevant(index, "fish tank") == [1]
    assert relevant(index, "鱼缸") == [1]


def test_index_refuses_an_event_of_another_save() -> None:
    index = SaveIndex(FARM_A)
    with pytest.raises(UsageError):
        index.upsert(msgspec.structs.replace(_event(1, "a", "b"), save_id="farm-b"))


def test_index_upsert_and_remove_keep_search_current() -> None:
    index = SaveIndex(FARM_A, [_event(1, "鱼缸", "鱼缸收集包")])
    index.upsert(_event(1, "锅炉房", "改做锅炉房"))
    assert relevant(index, "鱼缸") == []
    assert relevant(index, "锅炉房") == [1]
    assert [e.id for e in search_memories(None, index, "锅炉房").events] == [1]
    index.remove(1)
    index.remove(1)
    assert relevant(index, "锅炉房") == [] and len(index) == 0
    assert search_memories(None, index, "锅炉房").events == ()


def test_selection_fills_each_section_and_never_repeats_an_event() -> None:
    events = [
        _event(1, "社区中心", "完成鱼缸收集包", kind="goal", importance=4),
        _event(2, "温室", "修好温室", kind="goal", importance=3),
        _event(3, "矿洞", "想下到矿洞第80层", kind="goal", importance=1),
        *[_event(10 + i, f"鱼缸{i}", f"鱼缸里的第{i}条鱼") for i in range(6)],
        _event(30, "婚礼", "和谢恩结婚", importance=5),
        _event(31, "钓竿", "换了铱金钓竿", importance=2, updated_at=NOW - 86400 * 30),
    ]
    sel = select_memories(
        SharedProfile(nickname="小明"),
        SaveIndex(FARM_A, events),
        query_text="鱼缸",
        current_day=None,
        now=NOW,
        budget=MemoryBudget(recent=2),
    )
    assert [e.id for e in sel.goals] == [1, 2]
    assert len(sel.relevant) == 4 and all(e.subject.startswith("鱼缸") for e in sel.relevant)
    assert [e.id for e in sel.recent] == [30, 14]  # importance 5, then the next freshest
    assert 31 not in sel.used_ids  # a month unused and unimportant
    assert len(sel.used_ids) == len(set(sel.used_ids)) == 8
    text = sel.render()
    # A goal's kind is its section's; a subject the summary names is not said twice.
    assert text.startswith(
        "【玩家档案】\n称呼：小明\n【目标】\n- 社区中心：完成鱼缸收集包\n- 修好温室\n"
    )
    assert (
        "【相关】\n- [经历] 鱼缸0：鱼缸里的第0条鱼" in text
        and "【近期要事】\n- [经历] 婚礼：和谢恩结婚" in text
    )


def test_one_recent_memory_by_default() -> None:
    events = [_event(30, "婚礼", "和谢恩结婚", importance=5), _event(31, "钓竿", "换了钓竿")]
    sel = select_memories(
        None, SaveIndex(FARM_A, events), query_text="你好", current_day=None, now=NOW
    )
    assert [e.id for e in sel.recent] == [30]


def test_focus_and_nearby_names_count_as_query_terms() -> None:
    index = SaveIndex(FARM_A, [_event(1, "阿比盖尔", "答应送她紫水晶"), _event(2, "矿洞", "下矿")])
    sel = select_memories(
        None, index, query_text="你好", focus_terms=["阿比盖尔"], current_day=None, now=NOW
    )
    assert [e.id for e in sel.relevant] == [1]


def test_reloaded_older_save_hides_future_memories_until_that_day_returns(
    tmp_path: Path,
) -> None:
    with MemoryStore(tmp_path / "m.sqlite", clock=ManualClock()) as store:
        store.upsert_event(FARM_A, NewEvent("event", "鱼缸", "第5天买了鱼缸", day=5), NOW)
        store.upsert_event(
            FARM_A, NewEvent("milestone", "鱼缸收集包", "完成鱼缸收集包", day=10), NOW
        )
        store.upsert_event(FARM_A, NewEvent("event", "鱼缸备注", "不知道哪天说的鱼缸"), NOW)

        def visible(day: int) -> set[str]:
            index = SaveIndex(FARM_A, store.load_scope(FARM_A))
            sel = select_memories(None, index, query_text="鱼缸", current_day=day, now=NOW)
            return {e.subject for e in (*sel.goals, *sel.relevant, *sel.recent)}

        assert visible(10) == {"鱼缸", "鱼缸收集包", "鱼缸备注"}
        assert visible(8) == {"鱼缸", "鱼缸备注"}  # the player reloaded day 8
        assert len(store.load_scope(FARM_A)) == 3  # hidden, never deleted
        assert visible(10) == {"鱼缸", "鱼缸收集包", "鱼缸备注"}
        assert visible(4) == {"鱼缸备注"}


def test_unknown_current_day_makes_every_event_eligible() -> None:
    index = SaveIndex(FARM_A, [_event(1, "鱼缸", "鱼缸", day=99)])
    sel = select_memories(None, index, query_text="鱼缸", current_day=None, now=NOW)
    assert sel.used_ids == [1]


def _budget_case(total_chars: int) -> tuple[str, list[int]]:
    events = [_event(i, f"事件{i}", "鱼缸" + "长" * 100) for i in range(1, 5)]
    sel = select_memories(
        None,
        SaveIndex(FARM_A, events),
        query_text="鱼缸",
        current_day=None,
        now=NOW,
        budget=MemoryBudget(total_chars=total_chars, recent=0),
    )
    return sel.render(), sel.used_ids


def test_budget_keeps_everything_when_it_fits_exactly_and_drops_a_whole_item_one_under() -> None:
    full, ids = _budget_case(10_000)
    assert len(ids) == 4
    exact, exact_ids = _budget_case(len(full))
    assert (exact, exact_ids) == (full, ids)
    cut, cut_ids = _budget_case(len(full) - 1)
    assert cut_ids == ids[:3]
    assert full.startswith(cut) and len(cut) < len(full) - 100


def test_default_budget_keeps_the_render_within_1200_chars() -> None:
    events = [
        _event(i, f"{'主题' * 40}"[:80], "鱼缸" + "长" * 158, kind="goal" if i < 3 else "event")
        for i in range(1, 12)
    ]
    profile = SharedProfile(nickname="小明", companion_persona="设" * 200, notes=["记" * 80] * 10)
    sel = select_memories(
        profile, SaveIndex(FARM_A, events), query_text="鱼缸", current_day=None, now=NOW
    )
    text = sel.render()
    assert len(text) <= 1200
    for line in text.splitlines():  # only whole lines: each event line is complete
        if line.startswith("- "):
            assert line.endswith("长")


def test_profile_lines_stay_within_about_300_tokens() -> None:
    profile = SharedProfile(
        nickname="小明", companion_persona="设" * 200, notes=["记" * 80] * 10, hobbies=["钓鱼"]
    )
    sel = select_memories(profile, SaveIndex(FARM_A), query_text="", current_day=None, now=NOW)
    assert sel.profile[0] == "称呼：小明"
    assert any(line.startswith("爱好") for line in sel.profile)
    assert not any(line.startswith("备注") for line in sel.profile)  # 800 chars > budget


_texts = st.text(alphabet="鱼缸社区中心长 abc", min_size=1, max_size=160)


@settings(max_examples=60, deadline=None)
@given(
    summaries=st.lists(_texts, min_size=0, max_size=12),
    limit=st.integers(0, 1500),
)
def test_render_never_exceeds_the_char_budget_and_only_drops_whole_items(
    summaries: list[str], limit: int
) -> None:
    events = [_event(i + 1, f"s{i}", s.strip() or "x") for i, s in enumerate(summaries)]
    sel = select_memories(
        SharedProfile(nickname="小明"),
        SaveIndex(FARM_A, events),
        query_text="鱼缸 abc",
        current_day=None,
        now=NOW,
        budget=MemoryBudget(total_chars=limit),
    )
    text = sel.render()
    assert len(text) <= limit
    lines = set(text.splitlines())
    for ev in (*sel.goals, *sel.relevant, *sel.recent):
        assert render_event(ev, kind=ev not in sel.goals) in lines


def test_scores_after_changes_are_those_of_an_index_built_afresh() -> None:
    """The BM25 length norms are kept between turns: every change of the index renews them."""
    index = _corpus_index()
    query = "社区中心 鱼缸 fish tank"
    assert index.scores(query)  # the norms are made here...
    longer = _event(3, "鱼缸", "社区中心的鱼缸收集包 " * 12)  # ...and an event grows
    index.upsert(longer)
    index.remove(5)
    index.upsert(_event(999, "fish tank", "the fish tank bundle"))
    kept = [e for e in _corpus_index().events() if e.id not in (3, 5)]
    fresh = SaveIndex(FARM_A, [*kept, longer, _event(999, "fish tank", "the fish tank bundle")])
    assert index.scores(query) == fresh.scores(query)
    assert index.scores(query, "鱼缸", context_weight=0.4) == fresh.scores(
        query, "鱼缸", context_weight=0.4
    )


def test_a_goal_in_the_prompt_does_not_set_the_relevance_floor() -> None:
    # The goal shares two common words with the question and scores far above the event
    # the question is about; it is injected as a goal anyway, so the floor is the event's.
    goal = _event(1, "矿洞", "今天去矿洞门口挖矿，矿洞门口第二十层", kind="goal")
    match = _event(2, "铜锭", "熔炉里炼出了五块铜锭，放在箱子里")
    other = _event(3, "鱼", "春天钓到了鲶鱼")
    index = SaveIndex(FARM_A, [goal, match, other])
    sel = select_memories(None, index, query_text="矿洞门口那几块铜锭呢", current_day=None, now=NOW)
    # Over every memory the goal's score set the floor and the event fell below it.
    assert index.scores("矿洞门口那几块铜锭呢")[2] < 0.6 * index.scores("矿洞门口那几块铜锭呢")[1]
    assert [e.id for e in sel.goals] == [1]
    assert [e.id for e in sel.relevant] == [2]


def _chosen(events: list[MemoryEvent], text: str, day: int | None) -> list[int]:
    index = SaveIndex(Scope("stardew-valley", "farm-a"), events)
    sel = select_memories(None, index, query_text=text, current_day=day, now=NOW)
    return sel.used_ids


def _sv(i: int, subject: str, summary: str, **kw: object) -> MemoryEvent:
    return msgspec.structs.replace(_event(i, subject, summary, **kw), game_id="stardew-valley")


def test_a_next_step_question_gets_an_active_plan_in_the_place_of_recent_and_important() -> None:
    events = [
        _sv(1, "鱼", "春天钓到了一条大鲶鱼", importance=5),  # the most important lately
        _sv(2, "约定", "答应帮刘易斯找回他的短裤", kind="promise", importance=3),
        _sv(3, "约定", "答应过的事已经办完", kind="promise", status="done", importance=3),
    ]
    assert _chosen(events, "今天天气不错", None) == [1]
    assert _chosen(events, "下一步干嘛？", None) == [2]  # shares no word with it
    assert _chosen(events, "what should I do next?", None) == [2]


def test_last_season_means_the_days_of_the_season_before_the_current_one() -> None:
    # Stardew's seasons are 28 days: day 40 is in the second season (29-56).
    events = [
        _sv(1, "鱼", "钓到了一条大鲶鱼", importance=5, day=39),
        _sv(2, "草莓", "在复活节买了草莓种子", importance=2, day=13),
        _sv(3, "矿洞", "第一次下到矿洞四十层", importance=2, day=30),
    ]
    assert _chosen(events, "聊点别的", 40) == [1]
    assert _chosen(events, "上个季节我干了啥", 40) == [2]
    assert _chosen(events, "这个季节有什么进展", 40) == [1]  # 29-40: the most important of both
    assert _chosen(events, "上个季节我干了啥", None) == [1]  # no day known: no window


def test_read_cues_finds_next_steps_and_windows_of_days() -> None:
    from xtyserver.memory.cues import read_cues

    assert read_cues("接下来做什么好", game_id="x", current_day=None).next_step
    assert not read_cues("我们去钓鱼", game_id="x", current_day=5)
    assert read_cues("昨天下雨了吗", game_id="x", current_day=5).days == (4, 4)
    assert read_cues("LAST SEASON", game_id="stardew-valley", current_day=28).days == (-27, 0)
    assert read_cues("上个季节", game_id="stardew-valley", current_day=29).days == (1, 28)
    assert read_cues("上个季节", game_id="oxygen-not-included", current_day=29).days is None


@pytest.mark.parametrize(
    ("text", "game", "day", "days"),
    [
        # named seasons, the latest one; with last/上个/去年 the latest before this season
        ("what fish did i hook last winter", "stardew-valley", 125, (85, 112)),
        ("去年冬天钓了啥", "stardew-valley", 125, (85, 112)),
        ("冬天钓了啥", "stardew-valley", 100, (85, 100)),
        ("上个冬天", "stardew-valley", 100, None),  # no winter before this one
        # DST's seasons are 20, 15, 20 and 15 days: winter is 21-35, spring 36-55
        ("last winter what did i grab", "dont-starve-together", 75, (21, 35)),
        ("the start of the rainy season", "dont-starve-together", 50, (36, 40)),
        ("上个季节最后那几天我囤了些啥", "dont-starve-together", 30, (14, 20)),
        ("上个季节", "dont-starve-together", 40, (21, 35)),
        # a third of the season
        ("上个季节中旬我摘的野果", "stardew-valley", 40, (10, 19)),
        ("上个季节中旬", "stardew-valley", 29, (10, 19)),
        # the early game, by game
        ("开荒头几天我屯了啥", "stardew-valley", 20, (1, 7)),
        ("back in the early game", "oxygen-not-included", 60, (1, 15)),
        ("开局头两天", "dont-starve-together", 40, (1, 5)),
        ("earlier this week", "stardew-valley", 63, (56, 62)),
        ("冬天怎么准备", "oxygen-not-included", 40, None),  # ONI has no seasons
    ],
)
def test_time_references_name_windows_of_in_game_days(
    text: str, game: str, day: int, days: tuple[int, int] | None
) -> None:
    from xtyserver.memory.cues import read_cues

    assert read_cues(text, game_id=game, current_day=day).days == days


def test_of_the_memories_of_a_window_the_one_the_words_name_wins() -> None:
    events = [
        _sv(1, "鱼", "钓到了一条大鲶鱼", importance=5, day=20),
        _sv(2, "种子", "在皮埃尔的店买了草莓种子", importance=2, day=13),
        _sv(3, "矿洞", "第一次下到矿洞四十层", importance=2, day=30),
    ]
    index = SaveIndex(Scope("stardew-valley", "farm-a"), events)

    def window(text: str, similar: list[tuple[int, float]] | None = None) -> list[int]:
        # no relevant places: the window's one place alone shows what it prefers
        budget = MemoryBudget(relevant=0)
        return select_memories(
            None, index, query_text=text, current_day=40, now=NOW, budget=budget, similar=similar
        ).used_ids

    assert window("上个季节我干了啥") == [1]  # the most important of the season
    assert window("上个季节我买的种子呢") == [2]  # the words name it
    assert window("上个季节我干了啥", [(1, 0.80), (2, 0.86), (3, 0.95)]) == [2]  # the vector


def test_session_references_name_the_last_ended_session_or_its_last_minutes() -> None:
    from xtyserver.memory.cues import LAST_MINUTES, read_cues

    sessions = [(NOW - 50 * 3600, NOW - 48 * 3600), (NOW - 26 * 3600, NOW - 24 * 3600)]
    last = read_cues("上次玩的时候我们约好干嘛", game_id="x", current_day=9, sessions=sessions)
    assert last.times == sessions[-1] and last.days is None
    end = read_cues(
        "what did I say before I logged off?", game_id="x", current_day=None, sessions=sessions
    )
    assert end.times == (NOW - 24 * 3600 - LAST_MINUTES * 60, NOW - 24 * 3600)
    assert read_cues("上次玩的时候", game_id="x", current_day=9).times is None  # none ended
    assert not read_cues("我们去钓鱼", game_id="x", current_day=9, sessions=sessions)


def test_a_session_reference_prefers_what_was_said_in_that_session() -> None:
    ended = NOW - 20 * 3600
    events = [
        _sv(1, "鱼", "钓到了一条大鲶鱼", importance=5, created_at=NOW - 3600),  # today's
        _sv(2, "洒水器", "决定把钱全拿去买洒水器", importance=2, created_at=ended - 120),
        _sv(3, "鱼塘", "说下次要先挖鱼塘", importance=4, created_at=ended - 3000),
        _sv(4, "蛋", "鸡蛋节没抢到蛋", importance=2, created_at=ended - 90000),
    ]
    index = SaveIndex(Scope("stardew-valley", "farm-a"), events)
    index.sessions = ((ended - 7200, ended),)
    budget = MemoryBudget(relevant=0)  # the window's one place alone shows what it prefers

    def window(text: str) -> list[int]:
        return select_memories(
            None, index, query_text=text, current_day=None, now=NOW, budget=budget
        ).used_ids

    assert window("聊点别的") == [1]
    assert window("我下线前最后说了啥") == [2]
    assert window("上次玩的时候说了啥") == [3]  # the most important of that session


def test_small_talk_nearer_chatter_than_any_memory_carries_the_goals_alone() -> None:
    events = [
        _sv(1, "鸡舍", "打算秋天前盖好鸡舍", kind="goal"),
        _sv(2, "鱼", "钓到了一条大鲶鱼", importance=5),
        _sv(3, "矿洞", "第一次下到矿洞四十层", importance=2),
    ]
    index = SaveIndex(Scope("stardew-valley", "farm-a"), events)
    near = [(2, 0.84), (3, 0.83), (1, 0.90)]  # the goal's cosine does not count

    budget = MemoryBudget(close_places=0)  # 2 and 3 are near ties: one vector place

    def chosen(text: str, chatter: float | None) -> list[int]:
        return select_memories(
            None,
            index,
            query_text=text,
            current_day=None,
            now=NOW,
            similar=near,
            chatter=chatter,
            budget=budget,
        ).used_ids

    margin = budget.small_talk_margin
    assert chosen("下班回来好困", 0.84 + margin) == [1]  # the margin reached: the goal alone
    assert chosen("下班回来好困", 0.84 + margin - 0.001) == [1, 2]  # not quite: as before
    assert chosen("下班回来好困", None) == [1, 2]  # no chatter vectors: as before
    assert 2 in chosen("下班回来好困，那条鲶鱼呢", 0.99)  # a word matches
    assert chosen("下一步干嘛", 0.99) == [1, 2]  # a cue: never small talk
