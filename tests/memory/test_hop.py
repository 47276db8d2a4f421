"""The second hop through another memory (memory/hop.py) and where it goes in a turn."""

from __future__ import annotations

import msgspec
import pytest

from tests.memory.conftest import stored
from xtyserver.memory.glossary import TERM_PREFIX
from xtyserver.memory.hop import linking_terms, second_hop
from xtyserver.memory.retrieval import MemoryBudget, MemorySelection, SaveIndex, select_memories
from xtyserver.memory.types import MemoryEvent, Scope
from xtyserver.serve.glossary import load_glossary

FARM = Scope("stardew-valley", "farm")
OTHER = Scope("stardew-valley", "other-farm")
GLOSSARY = load_glossary(None).for_game(FARM.game_id)
HAT = "答应那个戴帽子的人的事"
OFF = MemoryBudget(multi_hop=False)


def _farm(scope: Scope = FARM) -> list[MemoryEvent]:
    """The issue's example: the hat says who (1), the promise to him is asked for (2);
    the other promises are more important, so "recent and important" is one of them."""
    return [
        stored(scope, 1, "刘易斯总是戴着一顶帽子", importance=2),
        stored(scope, 2, "答应刘易斯帮他找回紫色短裤", kind="promise", importance=1),
        stored(scope, 3, "答应阿比盖尔给她送五十块木头", kind="promise", importance=5),
        stored(scope, 4, "答应艾米丽帮她找一块布料", kind="promise", importance=5),
        stored(scope, 5, "答应皮埃尔卖给他二十个防风草", kind="promise", importance=5),
        stored(scope, 6, "答应威利去钓一条鲶鱼", kind="promise", importance=5),
        stored(scope, 7, "在海边捡到了一个彩虹贝壳", importance=4),
    ]


def _index(events: list[MemoryEvent], scope: Scope = FARM) -> SaveIndex:
    return SaveIndex(scope, events, glossary=GLOSSARY)


def _turn(
    index: SaveIndex, text: str, budget: MemoryBudget | None = None, **kw: object
) -> MemorySelection:
    return select_memories(
        None, index, query_text=text, current_day=None, now=0.0, budget=budget, **kw
    )  # type: ignore[arg-type]


def _ids(sel: MemorySelection) -> list[int]:
    return sel.used_ids


def test_a_person_named_by_what_another_memory_says_brings_the_memory_about_him() -> None:
    index = _index(_farm())
    without = _turn(index, HAT, OFF)
    assert 2 not in _ids(without)  # words alone: the hat memory, then Robin's promise
    chosen = _turn(index, HAT)
    assert 1 in _ids(chosen) and 2 in _ids(chosen)
    assert dict(chosen.via)[2].endswith("hop")  # the injection log says how it came


def test_the_hop_takes_a_place_of_the_turn_and_never_adds_one() -> None:
    index = _index(_farm())
    for text in (HAT, "帽子", "刘易斯", "彩虹贝壳", "答应阿比盖尔的木头", "鲶鱼钓到了吗"):
        with_hop, without = _turn(index, text), _turn(index, text, OFF)
        assert len(_ids(with_hop)) == len(_ids(without)), text
        # a first-hop match is never pushed out
        assert {ev.id for ev in without.relevant} <= {ev.id for ev in with_hop.relevant}, text


def test_the_relevant_section_never_grows_past_its_bound() -> None:
    events = [stored(FARM, i, f"刘易斯的帽子第{i}次被风吹走了", importance=2) for i in range(1, 6)]
    events.append(stored(FARM, 9, "刘易斯答应送一把新的鱼竿", importance=1))
    budget = MemoryBudget()
    chosen = _turn(_index(events), "帽子被风吹走")
    assert len(chosen.relevant) <= budget.relevant
    assert len(_ids(chosen)) <= budget.relevant + budget.recent


def test_an_entity_the_question_names_itself_links_nothing() -> None:
    index = _index(_farm())
    asked = index.query_terms("刘易斯的帽子")
    assert TERM_PREFIX + "lewis" not in linking_terms(index, _farm()[0], asked)
    assert TERM_PREFIX + "lewis" in linking_terms(index, _farm()[0], index.query_terms(HAT))


def test_what_most_memories_carry_links_nothing() -> None:
    # every memory says 玩家 (家: the farmhouse) and the day: none of it names anyone
    events = [
        stored(FARM, 1, "春季第20天，玩家给第一只鸡取名叫小黄"),
        stored(FARM, 2, "秋季第10天，小黄在鸡舍里下了一个金蛋"),
        stored(FARM, 3, "春季第5天，玩家在矿洞第10层找到了第一块铜矿"),
        stored(FARM, 4, "春季第9天，玩家把第一批防风草卖给了皮埃尔"),
    ]
    index = _index(events)
    links = linking_terms(index, events[0], index.query_terms("我的第一只鸡最近干了啥"))
    assert set(links) == {"小黄"}
    found = second_hop(index, events[:1], index.query_terms("我的第一只鸡"), {2, 3, 4})
    assert found == (1, 2)


def test_a_name_the_glossary_knows_counts_once_as_its_entity() -> None:
    # 复制人 is every duplicant (its kind's own name), and its two words are not a name
    scope = Scope("oxygen-not-included", "colony")
    events = [
        stored(scope, 1, "复制人里只有阿里会做饭"),
        stored(scope, 2, "一个复制人因为压力太大开始乱吐"),
        stored(scope, 3, "阿里因为吃了坏掉的食物生病了"),
        stored(scope, 4, "挖出了第一条通往砂岩区的通道"),
    ]
    index = SaveIndex(scope, events, glossary=load_glossary(None).for_game(scope.game_id))
    assert set(linking_terms(index, events[0], set())) == {"阿里"}
    assert second_hop(index, events[:1], set(), {2, 3, 4}) == (1, 3)


def test_on_a_tie_the_memory_nearest_the_query_by_cosine_goes_first() -> None:
    events = [
        stored(FARM, 1, "给农场的狗取名叫旺财，猫叫咪咪"),
        stored(FARM, 2, "旺财在东边刨出了一个古物"),
        stored(FARM, 3, "咪咪在门口晒太阳"),
        stored(FARM, 4, "在海边捡到了一个彩虹贝壳"),
    ]
    index = _index(events)
    allowed = {2, 3, 4}
    assert second_hop(index, events[:1], set(), allowed, cosine={2: 0.81, 3: 0.83}) == (1, 3)
    assert second_hop(index, events[:1], set(), allowed, cosine={2: 0.83, 3: 0.81}) == (1, 2)


def test_a_short_subject_and_the_search_keys_name_what_a_memory_is_about() -> None:
    bridge = msgspec.structs.replace(
        stored(FARM, 1, "那个总戴帽子的老头是镇上管事的"), subject="老汤", search_keys=("汤师傅",)
    )
    events = [
        bridge,
        stored(FARM, 2, "老汤托我找一只丢了的猫", importance=1),
        stored(FARM, 3, "在海边捡到了一个彩虹贝壳", importance=5),
        stored(FARM, 4, "修好了农场北边的旧栅栏", importance=5),
    ]
    index = _index(events)
    links = linking_terms(index, bridge, index.query_terms("戴帽子的老头"))
    assert links["老汤"] > 1.0  # a name, more than a rare word
    assert 2 not in _ids(_turn(index, "那个总戴帽子的老头最近怎么样", OFF))
    chosen = _turn(index, "那个总戴帽子的老头最近怎么样")
    assert dict(chosen.via).get(2, "").endswith("hop")


def test_small_talk_still_recalls_nothing() -> None:
    index = _index(_farm())
    # no word matches, and nearer everyday chatter than any memory: small talk
    near = [(i, 0.80) for i in range(1, 7)]
    chosen = _turn(index, "今天好累啊", similar=near, chatter=0.90)
    assert _ids(chosen) == []


def test_a_next_step_question_keeps_its_place_for_the_plans() -> None:
    index = _index(_farm())
    text = "答应那个戴帽子的人的事，下一步干嘛"
    assert [v for _, v in _turn(index, text).via if v.endswith("hop")] == []


def test_the_hop_stays_in_its_save() -> None:
    # the other save holds the same person and promises: its index is not this one
    mine = [
        stored(FARM, 1, "刘易斯总是戴着一顶帽子", importance=2),
        stored(FARM, 4, "在矿洞第十层找到了第一块铜矿", importance=4),
        stored(FARM, 5, "在海边捡到了一个彩虹贝壳", importance=4),
    ]
    theirs = _index(_farm(OTHER), OTHER)
    chosen = _turn(_index(mine), HAT)
    assert all(ev.save_id == FARM.save_id for ev in (*chosen.relevant, *chosen.recent))
    assert len(theirs) == len(_farm())


@pytest.mark.parametrize("unused", [True, False])
def test_with_vectors_it_takes_the_place_they_left_unused_or_none(unused: bool) -> None:
    index = _index(_farm())
    # vectors agree with the words (the hat memory nearest): their place is left unused
    near = [(1, 0.90), *((i, 0.80) for i in range(2, 8))]
    if not unused:  # a vector finds a memory of its own
        near = [(1, 0.90), (7, 0.89), *((i, 0.80) for i in range(2, 7))]
    with_hop = _turn(index, HAT, similar=near)
    without = _turn(index, HAT, OFF, similar=near)
    assert {ev.id for ev in without.relevant} <= {ev.id for ev in with_hop.relevant}
    if unused:
        assert _ids(without) == [1]
        assert _ids(with_hop) == [1, 2]
    else:
        # the vectors took the place of "recent and important": nothing is left to take
        assert _ids(with_hop) == _ids(without) == [1, 7]


def test_the_vectors_place_goes_to_the_candidate_the_best_match_links() -> None:
    index = _index(_farm())
    # the words find the hat (1); the vectors' place went to another promise (3), while
    # the promise to Lewis (2) is a vector candidate too, just behind it
    near = [(3, 0.90), (1, 0.89), (2, 0.88), *((i, 0.70) for i in range(4, 8))]
    without = _turn(index, HAT, OFF, similar=near)
    assert _ids(without) == [1, 3]
    chosen = _turn(index, HAT, similar=near)
    assert _ids(chosen) == [1, 2]
    assert dict(chosen.via)[2].endswith("vectors+hop")
    # far below the vectors' margin it is no candidate: their pick stays
    far = [(3, 0.90), (1, 0.89), *((i, 0.70) for i in range(4, 8)), (2, 0.60)]
    assert _ids(_turn(index, HAT, similar=far)) == [1, 3]


def test_when_the_bridges_name_each_other_the_hop_adds_nothing() -> None:
    index = _index(_farm())
    # the question finds both the hat and the promise to Lewis: the hop's best is in already
    text = "帽子和短裤"
    chosen = _turn(index, text)
    assert {1, 2} <= set(_ids(chosen))
    assert _ids(chosen) == _ids(_turn(index, text, OFF))
    assert not [v for _, v in chosen.via if v.endswith("hop")]


def test_ordinary_words_places_and_species_link_nothing_but_names_do() -> None:
    world = Scope("dont-starve-together", "world")
    glossary = load_glossary(None).for_game(world.game_id)
    events = [
        stored(world, 1, "Day 17: the player walked through a marsh full of reeds with Moo"),
        stored(world, 2, "Day 19: the player's bag was full of rocks"),
        stored(world, 3, "Day 24: Moo was killed by a hound pack"),
        stored(world, 4, "第60天，玩家在洞穴里搞定了一个蜘蛛巢，下面全是蛛网"),
        stored(world, 5, "第62天，玩家在洞穴下面打死了一群蜘蛛"),
        stored(world, 6, "第3天，玩家把营地边那只猪人叫做老王"),
        stored(world, 7, "第16天，老王帮玩家打跑了一群蜘蛛"),
        stored(world, 8, "第20天，玩家说Moo很乖"),  # an English name inside Chinese
    ]
    index = SaveIndex(world, events, glossary=glossary)
    assert set(linking_terms(index, events[0], set())) == {"moo"}  # not "full"
    assert linking_terms(index, events[3], set()) == {}  # not 下面, the caves or spiders
    assert set(linking_terms(index, events[5], set())) == {"老王"}
    assert set(linking_terms(index, events[7], set())) == {"moo"}
