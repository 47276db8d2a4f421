"""Misspelt, same-sounding and pinyin words find the save's own words; small talk finds none."""

from __future__ import annotations

from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.memory.conftest import relevant
from xtyserver.memory.lexicon import EMPTY, FrozenLexicon, Lexicon, entries
from xtyserver.memory.pinyin import READINGS, splits
from xtyserver.memory.retrieval import QUERY_CACHE, SaveIndex
from xtyserver.memory.spelling import FUNCTION_CHARS, edit_distance, respell
from xtyserver.memory.tokenize import tokenize
from xtyserver.memory.types import MemoryEvent, Scope
from xtyserver.serve.glossary import load_glossary

SV = "stardew-valley"
GLOSSARY = load_glossary(None).for_game(SV)
MEMORIES = [
    "春季第20天，玩家在社区中心完成了茶水间的收集包",
    "玩家做了火腿三明治送给阿比盖尔",
    "玩家把卧室扩建成了两层",
    "Day 45: the player received Forest Magic from the Wizard",
    "The player sold blueberries at the Stardrop Saloon on summer 12",
    "约好冬天之前给猪舍装上加热器",
    "玩家死了，在试金石那里复活",
]
LEXICON = Lexicon(Counter(t for m in MEMORIES for t in set(tokenize(m))))
BOTH = (LEXICON, GLOSSARY.lexicon)


def found(text: str) -> set[str]:
    return {t for span in respell(text, BOTH) for t in span}


@pytest.mark.parametrize(
    ("question", "means"),
    [
        ("火推三明治给谁了", {"火腿"}),  # one character of the same sound picked wrong
        ("社去中心还差啥", {"社区", "区中"}),
        ("四金石在哪", {"试金"}),  # fuzzy pinyin: si for shi
        ("huotui给谁了", {"火腿"}),  # full pinyin
        ("huo tui 给谁了", {"火腿"}),  # syllables apart
        ("sqzx 还差什么", {"社区", "区中", "中心"}),  # initials
        ("SQZX 还差什么", {"社区", "区中", "中心"}),
        ("what did I sell at the Stardorp saloon", {"stardrop"}),  # a swap
        ("the wizzard gave me what", {"wizard"}),  # one letter more
        ("blueberies", {"blueberry"}),
        ("grenhuose", {"greenhouse"}),  # two edits of a word of 10 letters
        ("strawbery", {"strawberry"}),
    ],
)
def test_a_misspelt_or_pinyin_word_stands_for_the_vocabulary_word(
    question: str, means: set[str]
) -> None:
    assert means <= found(question)


@pytest.mark.parametrize(
    "small_talk",
    [
        "今天天气怎么样",
        "我是谁呀",  # 我是 sounds like 卧室, a word of the save: no character in common
        "你好呀，最近好吗",
        "哈哈哈哈哈",
        "晚安，明天见",
        "谢谢你陪我玩",
        "hello how are you doing today",
        "thanks, good night",
        "what do you think about that",
        "lol ok",
        "women and men",
        "the game is fun",
    ],
)
def test_small_talk_stands_for_nothing(small_talk: str) -> None:
    assert found(small_talk) == set()


def test_a_typo_never_stands_for_a_particle_s_bigram() -> None:
    # 哪 and 了 sound alike under the IME's n/l: 哪一轮 is not 了一 (in half a save's
    # memories: 放了一台, 铺了一排), nor 哪个 那个 or 了个.
    said = ["玩家在水池上放了一台液体泵", "玩家铺了一排梯子", "玩家在走廊里摆了一盆花"]
    lexicon = Lexicon(Counter(t for m in said for t in set(tokenize(m))))
    assert "了一" in lexicon.counts
    spans = respell("抽水泵是哪一轮装好的", (lexicon, GLOSSARY.lexicon))
    assert not any("了一" in span for span in spans)
    # while a content word typed with a wrong character is still found
    assert any("液体" in span for span in respell("业体泵是哪天装的", (lexicon, GLOSSARY.lexicon)))


def test_known_words_are_never_respelt() -> None:
    for memory in MEMORIES:
        assert respell(memory, BOTH) == []


def test_a_word_under_ten_letters_is_never_two_edits_off() -> None:
    assert found("wandering") == set()  # two edits from watering (8 letters)
    assert found("bleuberys") == set()  # two edits from blueberry (9 letters)
    assert found("bleuberry") == {"blueberry"}  # one edit is
    assert found("grenhouse") == {"greenhouse"}  # 10 letters: one edit
    assert found("grenhuose") == {"greenhouse"}  # and two


def test_short_english_words_and_two_letter_initials_are_left_alone() -> None:
    assert found("wzird") == set()  # five letters, but two edits from wizard
    assert found("magc") == set()  # under five letters
    assert found("sq") == set()  # initials need three letters


def test_glossary_names_are_found_through_their_sound() -> None:
    index = SaveIndex(Scope(SV, "s1"), glossary=GLOSSARY)
    assert "@abigail" in index.query_terms("abigaier喜欢什么")  # 阿比盖尔, full pinyin
    assert "@abigail" in index.query_terms("阿比该尔喜欢什么")  # 该 for 盖


def _event(i: int, summary: str, game: str = SV) -> MemoryEvent:
    return MemoryEvent(
        i, game, "s1", "event", summary[:20], summary, 3, "active", False, None, 0.0, 0.0, 0.0
    )


@pytest.mark.parametrize("spelling", [True, False])
def test_the_index_finds_a_memory_by_pinyin_only_with_spelling_on(spelling: bool) -> None:
    events = [_event(i + 1, m) for i, m in enumerate(MEMORIES)]
    index = SaveIndex(Scope(SV, "s1"), events, glossary=GLOSSARY, spelling=spelling)
    hits = relevant(index, "huotui sanmingzhi 给谁了")
    assert (hits[:1] == [2]) is spelling
    hits = relevant(index, "what did I sell at the Stardorp")
    assert (hits[:1] == [5]) is spelling


def test_the_index_learns_new_words_when_a_memory_arrives() -> None:
    index = SaveIndex(Scope(SV, "s1"), [_event(1, MEMORIES[0])], glossary=GLOSSARY)
    assert not relevant(index, "huotui")
    index.upsert(_event(2, MEMORIES[1]))
    assert relevant(index, "huotui") == [2]
    index.remove(2)
    assert not relevant(index, "huotui")


def test_the_table_knows_common_characters_and_their_second_reading() -> None:
    assert len(READINGS) >= 6000
    assert READINGS["火"] == ("huo",)
    assert set(READINGS["长"]) == {"chang", "zhang"}
    assert READINGS["绿"][0] == "lv"
    assert splits("xian") == [("xian",), ("xi", "an")]
    assert splits("stardrop") == []


BIGRAMS = sorted(
    w
    for w in LEXICON.counts.keys() | GLOSSARY.lexicon.counts.keys()
    if len(w) == 2 and all(c in READINGS for c in w)
)
SAME_SOUND: dict[str, list[str]] = {}
for _char, _readings in READINGS.items():
    SAME_SOUND.setdefault(_readings[0], []).append(_char)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(BIGRAMS), st.integers(0, 1), st.data())
def test_any_one_character_of_the_same_sound_is_respelt(
    word: str, at: int, data: st.DataObject
) -> None:
    pool = [c for c in SAME_SOUND[READINGS[word[at]][0]] if c != word[at]]
    if not pool or word[1 - at] in FUNCTION_CHARS or word[at] in FUNCTION_CHARS:
        return  # a particle kept shows nothing (卖了 is not 买了), nor one put in (了一)
    wrong = data.draw(st.sampled_from(pool))
    typed = word[:at] + wrong + word[at + 1 :]
    if typed in LEXICON.counts.keys() | GLOSSARY.lexicon.counts.keys():
        return  # the typo is itself a word the save or the glossary knows
    spans = respell(typed, BOTH)
    # Many words may share one sound: the meant one is among the few most used.
    same = {
        w
        for w in BIGRAMS
        if w != typed
        and set(READINGS[w[0]]) & set(READINGS[typed[0]])
        and set(READINGS[w[1]]) & set(READINGS[typed[1]])
        and (w[0] == typed[0] or w[1] == typed[1])
    }
    if len(same) <= 6:
        assert any(word in span for span in spans)


WORDS = sorted(
    w
    for w in LEXICON.counts.keys() | GLOSSARY.lexicon.counts.keys()
    if len(w) >= 5 and w.isascii() and w.isalpha()
)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(WORDS), st.data())
def test_one_edit_of_a_long_word_finds_it(word: str, data: st.DataObject) -> None:
    at = data.draw(st.integers(0, len(word) - 2))
    kind = data.draw(st.sampled_from(["swap", "drop", "double", "other"]))
    if kind == "swap":
        typed = word[:at] + word[at + 1] + word[at] + word[at + 2 :]
    elif kind == "drop":
        typed = word[:at] + word[at + 1 :]
    elif kind == "double":
        typed = word[:at] + word[at] + word[at:]
    else:
        typed = word[:at] + ("q" if word[at] != "q" else "z") + word[at + 1 :]
    # A word the tokenizer stems (a typo ending in s) is looked up as its stem.
    if typed == word or len(typed) < 5 or typed in WORDS or splits(typed):
        return
    if tokenize(typed) != [typed]:
        return
    assert word in {t for span in respell(typed, BOTH) for t in span}


@given(st.text("abcdefg", max_size=8), st.text("abcdefg", max_size=8))
def test_edit_distance_is_a_distance(a: str, b: str) -> None:
    assert edit_distance(a, b) == edit_distance(b, a)
    assert (edit_distance(a, b) == 0) is (a == b)
    assert edit_distance(a, b) <= max(len(a), len(b))
    assert abs(len(a) - len(b)) <= edit_distance(a, b)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 6), st.sampled_from(MEMORIES)), max_size=12))
def test_the_index_keeps_its_words_as_memories_come_and_go(
    changes: list[tuple[int, str]],
) -> None:
    index = SaveIndex(Scope(SV, "s1"), glossary=GLOSSARY)
    held: dict[int, str] = {}
    for i, text in changes:
        if i in held and held[i] == text:
            index.remove(i)
            del held[i]
        else:
            index.upsert(_event(i, text))
            held[i] = text
    fresh = SaveIndex(Scope(SV, "s1"), [_event(i, t) for i, t in held.items()], glossary=GLOSSARY)
    mine, theirs = index.lexicon(), fresh.lexicon()
    assert mine.counts == theirs.counts
    assert (mine.sound, mine.heard, mine.initials, mine.near) == (
        theirs.sound,
        theirs.heard,
        theirs.initials,
        theirs.near,
    )


def test_a_long_word_of_syllables_that_never_splits_is_read_in_linear_time() -> None:
    # "an", "a", "na" and "nan" split a run of "an" in many ways; the final "q" ends none.
    # Without remembering the dead ends this took some 10**8 steps.
    assert splits("an" * 19 + "q") == []
    assert len(splits("an" * 20)) == 8
    # past 40 letters a word is no pinyin at all (and never deep recursion)
    assert splits("an" * 21) == []
    assert respell("an" * 5000, BOTH) == []
    assert respell("blueberry" * 1000, BOTH) == []  # nor matched within two edits


def test_a_query_read_again_gives_the_same_terms_and_follows_the_saves_words() -> None:
    index = SaveIndex(Scope(SV, "s1"), [_event(1, MEMORIES[0])], glossary=GLOSSARY)
    first = index.query_terms("huotui 给谁了")
    assert "火腿" not in first
    first.add("changed by the caller")
    assert "changed by the caller" not in index.query_terms("huotui 给谁了")
    index.upsert(_event(2, MEMORIES[1]))
    assert "火腿" in index.query_terms("huotui 给谁了")
    index.remove(2)
    assert "火腿" not in index.query_terms("huotui 给谁了")


def test_many_texts_read_in_turn_each_keep_their_own_terms() -> None:
    index = SaveIndex(Scope(SV, "s1"), [_event(i + 1, m) for i, m in enumerate(MEMORIES)])
    texts = [f"huotui {n}" for n in range(QUERY_CACHE + 5)]
    for _ in range(2):
        for n, text in enumerate(texts):
            terms = index.query_terms(text)
            assert "火腿" in terms and str(n) in terms


def test_a_word_said_twice_is_respelt_as_once() -> None:
    assert respell("sqzx sqzx", BOTH) == respell("sqzx", BOTH) * 2


def test_the_glossarys_compact_lexicon_finds_what_a_plain_one_finds() -> None:
    counts = GLOSSARY.lexicon.counts
    plain = Lexicon(counts)
    frozen = FrozenLexicon(counts)
    assert frozen.counts == plain.counts
    for word in counts:
        for table, key in entries(word):
            assert sorted(frozen.words_at(table, key)) == sorted(plain.words_at(table, key))
    assert not frozen.words_at("sound", ("no", "such"))
    assert not frozen.words_at("near", "qqqqqqq")
    assert not EMPTY.words_at("near", "wizard")


def test_the_readings_table_answers_as_a_mapping() -> None:
    assert "火" in READINGS and "a" not in READINGS and "火腿" not in READINGS
    assert "😀" not in READINGS and READINGS.get("\u4dff") is None
    assert READINGS.get("腿") == ("tui",)
    assert len(list(READINGS)) == len(READINGS) == len(dict(READINGS.items()))
    with pytest.raises(KeyError):
        READINGS["x"]
