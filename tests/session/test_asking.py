"""Whether the model's reply asks anything: then the server's question lapses (asking.asks_other).

A "好" answers whichever question was asked last; so any question or proposal
of the model's, with or without punctuation, in Chinese or English, and
whatever its words (a deletion word included), lapses the server's own.
"""

from __future__ import annotations

import pytest

from xtyserver.session.asking import AskTexts, asks_other, expected_words

ASKS = [
    "要不要去钓鱼？",
    "明天一起去钓鱼咋样～",
    "明天一起去钓鱼怎么样",
    "明天去钓鱼如何",
    "明天去钓鱼好伐",
    "去钓鱼不",
    "钓鱼不？",
    "去不去钓鱼",
    "钓鱼不钓鱼",
    "钓鱼行不行",
    "明天去矿洞好不好",
    "你吃饭了没",
    "有没有空",
    "明天去矿洞吧",
    "要不咱们先浇水",
    "要不要把鱼塘边的杂草都清除掉？",
    "要不要把鱼塘边的杂草都清除掉",
    "把杂草清除掉吧",
    "要删掉这条记忆吗",
    "how about fishing",
    "How about fishing tomorrow.",
    "what about the mines",
    "fishing tomorrow, ok",
    "fishing tomorrow ok?",
    "shall we clear the weeds",
    "do you want to remove the debris",
    "let's go fishing",
    "wanna go fishing",
    "fishing tomorrow, alright",
    "sounds good",
]

STATEMENTS = [
    "这些都会删掉。",
    "这些会删掉。",
    "好的，以下内容会被删除：社区中心、鸡舍。",
    "共同记忆会清空。",
    "That one goes.",
    "These will be deleted.",
    "好的",
    "我看了一下，一共三条。",
]


@pytest.mark.parametrize("reply", ASKS)
def test_any_question_or_proposal_of_the_model_lapses_the_servers(reply: str) -> None:
    assert asks_other(reply)


@pytest.mark.parametrize("reply", STATEMENTS)
def test_a_statement_keeps_the_servers_question(reply: str) -> None:
    assert not asks_other(reply)


def test_every_broad_target_has_its_own_words_naming_it() -> None:
    texts = AskTexts()
    words = {k: expected_words(k, texts) for k in ("save", "game", "profile", "all")}
    assert expected_words("item", texts) == ()
    assert len({w for pair in words.values() for w in pair}) == 8
