"""The player's explicit yes, table-tested (issue 17 §1; xtyserver/session/consent.py)."""

from __future__ import annotations

import pytest

from xtyserver.session.consent import verdict

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
    "好的。今天天气真好",  # one clause agrees, nothing refuses
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
