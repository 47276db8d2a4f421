"""A number is one term however it is written: 二十五, 25, twenty-five; 一打 and a dozen, 12."""

from __future__ import annotations

import pytest

from tests.memory.conftest import relevant, stored
from xtyserver.memory.numerals import chinese_value, number_terms
from xtyserver.memory.retrieval import SaveIndex
from xtyserver.memory.types import Scope
from xtyserver.serve.glossary import load_glossary

SV = Scope("stardew-valley", "farm")


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("我打到四十层了", ["#40"]),
        ("矿井第40层", ["#40"]),  # a floor's ordinal is its number
        ("晾了二十块干肉", ["#20"]),
        ("一打鸡蛋", ["#12"]),
        ("半打", ["#6"]),
        ("三个小桶", ["#3"]),  # a lone numeral before a measure word
        ("一百五十个", ["#150"]),
        ("一百五", ["#150"]),  # colloquial: 150
        ("两千三", ["#2300"]),
        ("一万二", ["#12000"]),
        ("half a dozen eggs", ["#6"]),
        ("two dozen blocks", ["#24"]),
        ("sold for two hundred and fifty", ["#250"]),
        ("twenty-five floors", ["#25"]),
        ("a hundred K", ["#100000"]),
        ("100,000g", ["#100000"]),
        ("250g", ["#250"]),
        ("100k", ["#100000"]),
        ("eight sprinklers", ["#8"]),
        ("造了3个", ["#3"]),
        # no number: words that hold a numeral, pronouns, dates, small ordinals
        ("一下子就好了", []),
        ("十分好看", []),
        ("一起去吧", []),
        ("three of one kind", ["#3"]),
        ("第25天，玩家", []),
        ("第3周期，玩家", []),
        ("Day 14: Cycle 3: Spring 8: Year 2", []),
        ("第二年春季第8天", []),
        ("建了第二个厨房", []),
        ("第一次下矿", []),
        ("三五个", []),  # a few
        # a time, how long or how long ago (memory/cues.py), is no count
        ("三天前", []),
        ("五十来轮那会儿", []),
        ("两个月以后", []),
        ("two days back", []),
        ("20 cycles ago", []),
    ],
)
def test_number_terms(text: str, terms: list[str]) -> None:
    assert number_terms(text) == terms


@pytest.mark.parametrize(
    ("run", "value"),
    [
        ("二十五", 25),
        ("十五", 15),
        ("一百", 100),
        ("一百零五", 105),
        ("两千", 2000),
        ("十万", 100_000),
    ],
)
def test_chinese_value(run: str, value: int) -> None:
    assert chinese_value(run) == value


@pytest.mark.parametrize("run", ["二五", "十百", "百百"])
def test_a_run_that_is_no_number_has_no_value(run: str) -> None:
    assert chinese_value(run) is None


FLOORS = [
    "春季第20天，玩家在矿井第30层挖到了紫水晶",
    "夏季第3天，玩家在矿井第50层找到了一把剑",
    "夏季第10天，玩家在矿井第60层找到了一块金矿",
    "Summer 14: The player shipped 15 melons",
    "Summer 20: The player shipped 30 melons",
    "冬季第8天，玩家买了一打鸡蛋",
]


@pytest.mark.parametrize(
    ("question", "want"),
    [
        ("我打到六十层那回找到了啥", 3),
        ("矿井三十层挖到的是什么", 1),
        ("the day I shipped thirty of those", 5),
        ("when did I buy twelve eggs", 6),
    ],
)
def test_a_number_in_other_words_finds_its_memory_first(question: str, want: int) -> None:
    index = SaveIndex(SV, glossary=load_glossary(None).for_game(SV.game_id))
    for i, text in enumerate(FLOORS, start=1):
        index.upsert(stored(SV, i, text))
    assert relevant(index, question)[0] == want


def test_a_date_is_no_number_of_the_question() -> None:
    # 二十 is no day: the memory of day 20 is not found by "twenty" alone.
    index = SaveIndex(SV)
    index.upsert(stored(SV, 1, "Day 20: the player fished"))
    index.upsert(stored(SV, 2, "Day 3: the player bought 20 seeds"))
    assert relevant(index, "what did I buy twenty of") == [2]
