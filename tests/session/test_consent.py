"""The player's explicit yes, table-tested (xtyserver/session/consent.py).

A yes counts only when every clause of the player's words is a yes; a broad
target needs the exact words the server asked for; a restore needs words that ask for it.
"""

from __future__ import annotations

import pytest

from xtyserver.session.asking import AskTexts, expected_words
from xtyserver.session.consent import asks_restore, consents, verdict

YES = [
    "是",
    "是的",
    "是的，删掉",
    "对",
    "对，删掉吧",
    "好",
    "好的",
    "好的！",
    "好吧",
    "确认",
    "确认删除",
    "删吧",
    "删掉吧",
    "都删了吧",
    "全部删掉",
    "可以",
    "可以的",
    "嗯",
    "嗯嗯",
    "嗯，删吧",
    "行吧",
    "没问题",
    "小汤圆，删吧",
    "ｙｅｓ",  # full-width: judged on the normal form
    "确\u200b认",  # an invisible character inside
    "yes",
    "Yes!",
    "yeah",
    "OK",
    "okay",
    "sure",
    "Sure thing",
    "confirm",
    "do it",
    "Yes, do it.",
    "yes please",
    "go ahead",
    "ok delete it",
    "yes delete",
    "no problem",
]

NO = [
    "不",
    "不要",
    "不要！千万别删",
    "别删",
    "算了",
    "算了吧",
    "等等",
    "等一下，我再想想",
    "先别删",
    "好，不过先等等",
    "好的……算了",
    "是吗？",
    "删吗",
    "今天适合钓鱼吗？",
    "今天天气不错",
    "可以，但是不要删统计",
    "也许吧",
    "可能要删吧",
    "取消",
    "嗯…让我想想",
    "no",
    "No!",
    "nope",
    "don't",
    "Don’t delete it",
    "do not",
    "wait",
    "Wait, yes",
    "cancel",
    "yes? no",
    "ok?",
    "maybe",
    "not sure",
    "hold on",
    "stop",
    "never mind",
]

UNCLEAR = [
    "",
    "   ",
    "今天天气很好",
    "你好",
    "对了，明天去矿洞",
    "删掉 farm-a 的社区中心计划",
    "记得帮我浇水",
    "hello",
    "it is raining",
    "yesterday",
    "okra is tasty",
    "I like fishing",
    "🎣",
    # A yes inside another statement is no yes to a deletion.
    "好的。今天天气真好",
    "好的，谢谢",
    "嗯，今天去矿洞",
    "是的，我在农场",
    "好，去钓鱼",
    "ok, let's go fishing",
    "yes, I am at the farm",
    "好的\u200b，谢谢",
    "forget it",  # "never mind" as often as "delete it"
]


@pytest.mark.parametrize("text", YES)
def test_explicit_yes(text: str) -> None:
    assert verdict(text) == "yes"


@pytest.mark.parametrize("text", NO)
def test_negation_or_hesitation_refuses_even_beside_a_yes(text: str) -> None:
    assert verdict(text) == "no"


@pytest.mark.parametrize("text", UNCLEAR)
def test_anything_else_is_not_a_yes(text: str) -> None:
    assert verdict(text) == "unclear"


# (the player's words, yes to one item, yes to a broad target)
TARGETS = [
    ("好", True, False),
    ("好的", True, False),
    ("嗯", True, False),
    ("嗯嗯", True, False),
    ("是的", True, False),
    ("ok", True, False),
    ("OK!", True, False),
    ("yes", True, False),
    ("sure", True, False),
    ("确认", True, False),
    ("可以", True, False),
    # Words naming a deletion may answer the model's own question (「清除杂草」): one item only.
    ("确认删除", True, False),
    ("删吧", True, False),
    ("好，清除吧", True, False),
    ("全部删掉", True, False),
    ("delete it", True, False),
    ("Yes, delete it.", True, False),
    # The exact words the server asked for, naming the target; spaces, punctuation, case aside.
    ("确认删除全部记忆", False, True),
    ("确认删除全部记忆。", False, True),
    ("确认 删除 全部记忆！", False, True),
    ("ｄｅｌｅｔｅ ａｌｌ ｍｅｍｏｒｙ", False, True),  # full-width: the normal form
    ("确认删除\u200b全部记忆", False, True),  # an invisible character inside
    ("Delete all memory.", False, True),
    ("好，确认删除全部记忆", False, False),
    ("确认删除全部记忆吧", False, False),
    ("确认删除全部记忆？", False, False),
    ("不要确认删除全部记忆", False, False),
    ("好的，谢谢", False, False),
    ("不要删", False, False),
    ("don't delete it", False, False),
    ("删吗？", False, False),
]


@pytest.mark.parametrize(("text", "one", "broad"), TARGETS)
def test_a_broad_target_needs_the_exact_words_the_server_asked_for(
    text: str, one: bool, broad: bool
) -> None:
    texts = AskTexts()
    assert consents(text, "item") is one
    assert consents(text, "all", expected_words("all", texts)) is broad
    # Another target's words, or none, never confirm it.
    assert not consents(text, "save", expected_words("save", texts))
    assert not consents(text, "all")


RESTORE = [
    ("恢复一下", True),
    ("刚才删错了，恢复一下", True),
    ("能帮我恢复吗？", True),
    ("不小心删了，找回来", True),
    ("撤销刚才的删除", True),
    ("还原", True),
    ("restore it", True),
    ("undo that please", True),
    ("bring it back", True),
    ("不要恢复", False),
    ("别恢复了", False),
    ("算了，不用恢复", False),
    ("don't restore it", False),
    ("今天去钓鱼", False),
    ("好", False),
    ("嗯，今天去矿洞", False),
    ("", False),
]


@pytest.mark.parametrize(("text", "asks"), RESTORE)
def test_a_restore_needs_words_that_ask_for_it(text: str, asks: bool) -> None:
    assert asks_restore(text) is asks
