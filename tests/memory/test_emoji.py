"""Emoji said as words (memory/emoji.py): 🐔 finds the memory that says 鸡."""

from __future__ import annotations

from tests.memory.conftest import stored
from xtyserver.memory.emoji import spell_emoji
from xtyserver.memory.retrieval import SaveIndex, select_memories
from xtyserver.memory.types import Scope
from xtyserver.serve.glossary import load_glossary

FARM = Scope("stardew-valley", "farm")


def test_an_emoji_is_its_word_and_the_rest_stays() -> None:
    assert spell_emoji("我家🐔生🥚了吗😂") == "我家 鸡 生 蛋 了吗😂"
    assert spell_emoji("did the 🐟 bite ⛏️") == "did the  鱼  bite  镐 "  # the selector goes
    assert spell_emoji("no emoji here") == "no emoji here"
    assert spell_emoji("没有表情") == "没有表情"


def test_a_question_in_emoji_finds_the_memory_in_words() -> None:
    glossary = load_glossary(None).for_game(FARM.game_id)
    events = [
        stored(FARM, 1, "母鸡第一次下了蛋", importance=1),
        stored(FARM, 2, "钓到了一条金枪鱼", importance=5),
    ]
    index = SaveIndex(FARM, events, glossary=glossary)
    chosen = select_memories(None, index, query_text="我家🐔生🥚是哪天", current_day=None, now=0.0)
    assert [ev.id for ev in chosen.relevant] == [1]
