"""Whether the player's own words of a turn are an explicit yes, sans-I/O (issue 17 §1).

A confirming forget call of the companion's tools deletes only when the
player's text of that very turn agrees (v1.md "Memory tools"). The model's
word never counts, nor does anything a mod or the game put in front of the
model. :func:`verdict` is the one judge, a pure function of the text:

* the text is judged on its normal form (:func:`~xtyserver.protocol.normalize.normalize`:
  NFKC, invisible characters removed), case-folded;
* any negation or hesitation anywhere in it (不, 别, 算了, 等等, 先别, no,
  don't, wait, cancel, a question, ...) refuses: ``"no"``;
* otherwise it is ``"yes"`` only when one of its clauses (split at punctuation)
  is made of nothing but yes words (是, 是的, 对, 好的, 确认, 删吧, 可以, 嗯, yes,
  ok, sure, confirm, do it, ...) and a few fillers (吧, 啊, 小汤圆, please,
  ...). "今天天气很好" is not a yes: its clause says something else;
* anything else is ``"unclear"`` (it counts as no).

Typed and voice-sourced text count the same. Refusing too often costs the
player one more sentence; agreeing wrongly costs their memory.
"""

from __future__ import annotations

import re
from typing import Final, Literal

from xtyserver.protocol.normalize import normalize

Verdict = Literal["yes", "no", "unclear"]

YES_WORDS: Final[tuple[str, ...]] = (
    # Chinese
    "是",
    "是的",
    "是啊",
    "对",
    "对的",
    "对啊",
    "好",
    "好的",
    "好啊",
    "好吧",
    "行",
    "可以",
    "嗯",
    "确认",
    "确定",
    "同意",
    "没问题",
    "删",
    "删吧",
    "删掉",
    "删掉吧",
    "删了",
    "删了吧",
    "删除",
    "清空",
    "去掉",
    "就这样",
    "没错",
    # English (spaces are removed inside a clause before matching)
    "yes",
    "yeah",
    "yep",
    "yup",
    "ok",
    "okay",
    "sure",
    "confirm",
    "confirmed",
    "doit",
    "goahead",
    "deleteit",
    "forgetit",
    "right",
    "correct",
    "noproblem",
    "ofcourse",
)
"""Words that say yes on their own (a clause of only these and fillers agrees)."""

FILLERS: Final[tuple[str, ...]] = (
    "吧",
    "啊",
    "呀",
    "啦",
    "哈",
    "呗",
    "嘛",
    "哦",
    "噢",
    "喔",
    "的",
    "就",
    "请",
    "帮我",
    "给我",
    "直接",
    "都",
    "全",
    "全部",
    "它",
    "这个",
    "那个",
    "这些",
    "小汤圆",
    "please",
    "pls",
    "just",
    "it",
    "all",
    "thing",
    "thanks",
    "xiaotangyuan",
)
"""Words that neither agree nor refuse (politeness, particles, the companion's name)."""

NO_WORDS: Final[tuple[str, ...]] = (
    "不",
    "别",
    "没",
    "否",
    "算了",
    "等等",
    "等一下",
    "等下",
    "先别",
    "取消",
    "停",
    "慢着",
    "想想",
    "想一想",
    "等会",
    "再说",
    "考虑",
    "犹豫",
    "也许",
    "或许",
    "可能",
    "吗",
    "?",
    "¿",
)
"""Negation, hesitation and questions, Chinese (found anywhere in the text: refuse)."""

NO_WORDS_EN: Final[tuple[str, ...]] = (
    "no",
    "not",
    "nope",
    "nah",
    "never",
    "don't",
    "dont",
    "do not",
    "wait",
    "cancel",
    "stop",
    "hold on",
    "hold off",
    "later",
    "maybe",
    "perhaps",
    "hmm",
    "unsure",
    "not sure",
)
"""Negation and hesitation, English (whole words anywhere in the text: refuse)."""

# Phrases that contain a negation character but agree ("没问题", "no problem").
_AGREEING_NEGATIONS: Final = re.compile(r"没问题|没错|no problem|of course")


def _alternation(words: tuple[str, ...]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


_NO: Final = re.compile(
    f"{_alternation(NO_WORDS)}|(?<![a-z'])(?:{_alternation(NO_WORDS_EN)})(?![a-z'])"
)
_YES_CLAUSE: Final = re.compile(f"(?:{_alternation(YES_WORDS)}|{_alternation(FILLERS)})+")
_YES: Final = re.compile(_alternation(YES_WORDS))
# Everything that separates clauses: punctuation, symbols and line breaks (the
# normal form has ASCII punctuation for full-width ，。！ but not for 、…).
_CLAUSE_BREAK: Final = re.compile(r"[^\w\s']+|\n")
_SPACE: Final = re.compile(r"\s+")


def verdict(text: str) -> Verdict:
    """Whether ``text`` (the player's own words of one turn) is an explicit yes.

    Returns:
        ``"yes"``: a clause is only yes words and fillers, and nothing refuses;
        ``"no"``: a negation, hesitation or question is in the text;
        ``"unclear"``: neither (counts as no).
    """
    plain = normalize(text).casefold().replace("\u2019", "'")
    if _NO.search(_AGREEING_NEGATIONS.sub(" ", plain)):
        return "no"
    for clause in _CLAUSE_BREAK.split(plain):
        word = _SPACE.sub("", clause)
        if word and _YES_CLAUSE.fullmatch(word) and _YES.search(word):
            return "yes"
    return "unclear"


def agrees(text: str) -> bool:
    """``verdict(text) == "yes"``."""
    return verdict(text) == "yes"


def said(value: str, text: str) -> bool:
    """Whether the player's ``text`` contains ``value`` (normalised, case-folded, spaces ignored).

    An empty ``value`` is never said.
    """
    wanted = _SPACE.sub("", normalize(value).casefold())
    return bool(wanted) and wanted in _SPACE.sub("", normalize(text).casefold())
