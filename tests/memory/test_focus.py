"""The question inside a long, chatty message (memory/focus.py)."""

from __future__ import annotations

import pytest

from tests.memory.conftest import stored
from xtyserver.memory.focus import LONG_TEXT, asks_several, negated_part, question_part, width
from xtyserver.memory.retrieval import SaveIndex, select_memories
from xtyserver.memory.types import Scope

DAY = "今天上班真的累死了，老板又临时加了两个需求，午饭都没吃上，回家路上还堵车堵了一个小时。"


@pytest.mark.parametrize(
    ("text", "question"),
    [
        (DAY + "对了，镇上那个小车现在能坐了吗", "对了，镇上那个小车现在能坐了吗"),
        (
            "my flatmate moved out and I spent all Sunday cleaning the kitchen, found three "
            "mugs of mold, gross. "
            "anyway, where did all that gold come from?",
            "anyway, where did all that gold come from?",
        ),
        (
            DAY + "我上回在矿洞里被蝙蝠咬得快不行了是第几层？",
            "我上回在矿洞里被蝙蝠咬得快不行了是第几层？",
        ),
        # a short question points back at the sentence before it
        (
            "remember the little glowing sprite that magically finished my field one night? "
            "when was that",
            "remember the little glowing sprite that magically finished my field one night? "
            "when was that",
        ),
        ("镇上那个小车现在能坐了吗", "镇上那个小车现在能坐了吗"),  # short: itself
        (DAY * 2, DAY * 2),  # asks nothing: all of it
    ],
)
def test_a_long_message_is_read_for_its_question(text: str, question: str) -> None:
    assert question_part(text) == question


def test_the_edge_of_a_long_message() -> None:
    short = "x" * (LONG_TEXT - 1 - width("对了，where?")) + "对了，where?"
    assert width(short) == LONG_TEXT - 1 and question_part(short) == short
    assert question_part("x" + short) == "对了，where?"
    assert width("对了，where?") == 3 + 3 + 1 + 6


def test_the_chatters_words_do_not_pick_memories() -> None:
    scope = Scope("stardew-valley", "farm")

    index = SaveIndex(scope, [stored(scope, 1, "老板的鸡舍需求"), stored(scope, 2, "把矿车修好了")])
    text = DAY + "对了，镇上那个矿车现在能坐了吗"
    chosen = select_memories(None, index, query_text=text, current_day=None, now=0.0)
    assert [ev.id for ev in chosen.relevant] == [2]
    # no word of the question matches: the whole message's words are read
    chosen = select_memories(
        None, index, query_text=DAY + "对了，那个呢？", current_day=None, now=0.0
    )
    assert [ev.id for ev in chosen.relevant] == [1]


@pytest.mark.parametrize(
    ("text", "ruled"),
    [
        ("不是冬天温室那个计划，是另一个，我说要弄啥来着", "冬天温室那个计划"),
        ("除了鸡舍以外我还计划了啥", "鸡舍"),
        ("not the first base, the other one, where did I put it again?", "first base"),
        ("other than the chicken coop what did I plan", "chicken coop"),
        ("是不是该去钓鱼了", ""),  # a question, not a negation
        ("我不是说过要盖鸡舍吗", ""),
        ("I am not sure, what did I plan", ""),
    ],
)
def test_what_a_question_rules_out(text: str, ruled: str) -> None:
    assert negated_part(text)[0] == ruled


def test_the_ruled_out_memory_gives_its_place_to_the_other_one() -> None:
    scope = Scope("stardew-valley", "farm")

    goals = [stored(scope, 1, "冬天在温室里种满杨桃", kind="goal", importance=5)]
    goals.append(stored(scope, 2, "明年扩建鸡舍", kind="goal", importance=2))
    index = SaveIndex(scope, goals)
    text = "不是冬天温室那个计划，是另一个"
    chosen = select_memories(None, index, query_text=text, current_day=None, now=0.0)
    assert chosen.used_ids == [2]
    chosen = select_memories(None, index, query_text="冬天温室那个计划", current_day=None, now=0.0)
    assert chosen.used_ids[0] == 1


@pytest.mark.parametrize(
    ("text", "several"),
    [
        ("我挂掉的那两回都是咋回事？", True),
        ("我都给那个红发姑娘送过些啥", True),
        ("木匠给我盖的两栋房子分别是哪天", True),
        ("What did the carpenter build for me, both of them?", True),
        ("which bosses have I taken down so far?", True),
        ("how many times did I die in the caves", True),
        ("我哪天死的", False),
        ("一百轮的时候我手底下有几个小人？", False),  # a count, one memory
        ("why do mondays feel twice as long", False),
        ("what did I give Penny", False),
    ],
)
def test_a_question_about_several_memories(text: str, several: bool) -> None:
    assert asks_several(text) is several


def test_a_question_about_several_gets_the_next_vector_candidate_too() -> None:
    scope = Scope("dont-starve-together", "world")
    index = SaveIndex(scope)
    for i, text in enumerate(
        ("玩家在沼泽被青蛙围攻死了一次", "玩家在洞穴里被蜘蛛咬死了", "玩家在草原上割了干草"),
        start=1,
    ):
        index.upsert(stored(scope, i, text))
    similar = [(1, 0.90), (2, 0.88), (3, 0.87)]

    def chosen(text: str) -> list[int]:
        sel = select_memories(
            None, index, query_text=text, current_day=None, now=0.0, similar=similar
        )
        return [ev.id for ev in sel.relevant]

    assert chosen("我挂掉的那两回都是咋回事") == [1, 2]
    assert chosen("我挂掉那回是咋回事") == [1]
