"""Which tools a turn offers: words about changing memory, about memory, or none."""

from __future__ import annotations

import pytest

from xtyserver.memory.tokenize import approx_tokens
from xtyserver.session.tool_offer import offered_tools
from xtyserver.session.tool_schemas import ALL, OFFER_TEXTS, READ


@pytest.mark.parametrize(
    "text",
    [
        "删掉社区中心计划",
        "把所有东西都删了吧",
        "我其实更喜欢自动化，把共同爱好改一下",
        "以后叫我豆豆",
        "说话简短点就行",
        "刚才删错了，恢复一下",
        "记住：我怕蜘蛛",
        "忘掉这件事",
        "Forget what I said about Abigail",
        "please call me Dou",
        "ＤＥＬＥＴＥ the plan",  # full-width: judged in the normal form
        "Ｕｎｄｏ that",
        "undo   that",
    ],
)
def test_words_about_changing_memory_offer_every_tool(text: str) -> None:
    assert offered_tools(text) == ALL


@pytest.mark.parametrize(
    "text",
    [
        "你还记得我叫什么吗？",
        "杂货店老板那儿我上次把钱都用在哪了？",
        "阿比盖尔喜欢什么礼物来着？",
        "你记得我什么",
        "What did we do last time?",
        "Do you recall the coop?",
        "ＬＡＳＴ  ＴＩＭＥ we fished",
    ],
)
def test_words_about_memory_or_the_past_offer_the_read_tools(text: str) -> None:
    assert offered_tools(text) == READ


@pytest.mark.parametrize(
    "text",
    [
        "今天适合钓鱼吗？",
        "鸡舍还差什么材料？",
        "What gift does Abigail like?",
        "Is the boat ready for the moon island?",
        "好",
        "",
        "lasttime",  # whole English words only
        "beforehand we fish",
        "undone crops",
        "rememberable",
    ],
)
def test_a_question_about_the_game_offers_no_tool(text: str) -> None:
    assert offered_tools(text) == ()


def test_a_waiting_preview_offers_every_tool_to_any_words() -> None:
    assert offered_tools("好", confirming=True) == ALL
    assert offered_tools("今天天气不错", confirming=True) == ALL


def test_the_largest_offer_keeps_to_150_tokens() -> None:
    assert approx_tokens(OFFER_TEXTS[ALL]) <= 150
    assert approx_tokens(OFFER_TEXTS[READ]) < approx_tokens(OFFER_TEXTS[ALL])
