"""The question inside a long, chatty message (pure).

A player often says 100-300 characters of their day before the question ("今天上班
累死了……对了，镇上那个小车现在能坐了吗"). Every word of the chatter is a term that
may match some memory, and the query's one vector is the average of it all. For a
long message, :func:`question_part` keeps what comes after the last turn back to the
game (对了, 话说, 扯远了, "anyway", "by the way"), else the last sentence that asks, else
(one long sentence) its last asking clause and the one before; short messages are
themselves.
"""

from __future__ import annotations

import functools
import re

LONG_TEXT = 120
"""Width (:func:`width`) from which a message is long enough to hold chatter around its
question: 40 Chinese characters, 120 letters."""

SHORT_QUESTION = 30
"""Width under which an asking sentence is read with the one before it ("when was that")."""

LONG_SENTENCE = 200
"""Width from which one long sentence is cut to its last asking clauses."""

TURNS = (
    "对了",
    "话说",
    "说起来",
    "扯远了",
    "不说这些了",
    "不说这个了",
    "说正事",
    "言归正传",
    "回到游戏",
    "游戏里",
    "anyway",
    "by the way",
    "btw",
    "back to the game",
    "in the game",
    "speaking of",
    "oh and",
)
"""Where a player turns from their day back to the game (the question follows)."""


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    sentences = re.compile(r"(?<=[。！？!?；;\n…])|(?<=[.])\s+")
    clauses = re.compile(r"(?<=[，,、：:])")
    asks = re.compile(
        r"[？?]|吗|呢|啥|什么|哪|怎么|咋|多少|几[个天次回]|谁|为什么|为啥|来着|没有|"
        r"\b(?:what|when|where|who|whom|which|why|how|did|do|does|is|are|was|were|"
        r"can|could|have|has)\b",
        re.IGNORECASE,
    )
    return sentences, clauses, asks


def width(text: str) -> int:
    """Length with a Chinese character as three letters (about what it says)."""
    return sum(3 if "\u4e00" <= ch <= "\u9fff" else 1 for ch in text)


def question_part(text: str) -> str:
    """What a long message asks (the whole of a short one, or of one that asks nothing)."""
    if width(text) < LONG_TEXT:
        return text
    low = text.lower()
    at = max(low.rfind(turn) for turn in TURNS)
    if at >= 0 and len(text) - at > 4:
        return text[at:].strip()
    sentences, clauses, asks = _patterns()
    parts = [p.strip() for p in sentences.split(text) if p.strip()]
    asking = [n for n, p in enumerate(parts) if asks.search(p)]
    if asking and len(parts) > 1:
        # "…that sprite that finished my field? when was that": a short question
        # points back at the sentence before it.
        last = asking[-1]
        first = last - 1 if last > 0 and width(parts[last]) < SHORT_QUESTION else last
        return " ".join(parts[first : last + 1])
    if width(text) < LONG_SENTENCE:
        return text
    pieces = [p.strip() for p in clauses.split(text) if p.strip()]
    for n in range(len(pieces) - 1, 0, -1):
        if asks.search(pieces[n]):
            return " ".join(pieces[n - 1 : n + 1])
    return text


@functools.cache
def _negations() -> re.Pattern[str]:
    thing = r"([^，,。？?！!；;]{1,16}?的?那[个次只件回条头座场位把张台块][^，,。？?！!；;是]{0,6})"
    stop = r"(?=\s+(?:one|but|what|when|where|who|how|did|do|does|was|is|i)\b|[,.;?!]|\s+-|$)"
    return re.compile(
        r"(?:不是|并非|不要说|别说)"
        + thing
        + r"|除了([^，,。？?！!；;]{1,16}?)(?:以外|之外|那[个次只件回])"
        + r"|\bnot (?:the|that|about the|about that) ([^,.;?!]{1,40}?)"
        + stop
        + r"|\b(?:other than|besides|apart from|except(?: for)?) (?:the|that) ([^,.;?!]{1,40}?)"
        + stop,
        re.IGNORECASE,
    )


def negated_part(text: str) -> tuple[str, str]:
    """What the player rules out ("不是冬天那个计划，是另一个", "not the first base, the
    other one") and the rest of ``text``; ("", text) when nothing is ruled out."""
    spans = [m for m in _negations().finditer(text)]
    if not spans:
        return "", text
    ruled = " ".join(next(g for g in m.groups() if g) for m in spans)
    rest = text
    for m in reversed(spans):
        rest = rest[: m.start()] + " " + rest[m.end() :]
    return ruled, rest.strip()


@functools.cache
def _several() -> re.Pattern[str]:
    return re.compile(
        r"[两俩][回次]|几[回次]|哪些|分别|各自|些[啥什]|都有[啥什哪]|"
        r"\b(?:both|all the|each of|every time|so far|two times|how many times)\b",
        re.IGNORECASE,
    )


def asks_several(text: str) -> bool:
    """Whether ``text`` asks about several memories at once (「我挂掉的那两回」, 「都送过些
    啥」, 分别, "both of them", "which bosses so far"): one place is not enough for it."""
    return bool(_several().search(question_part(text)))
