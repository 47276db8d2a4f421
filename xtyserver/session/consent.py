"""Consent, sans-I/O: the one door that admits a memory command, and the judges of the
player's own words (v1.md "Memory tools").

:func:`admit` is where every surface's command is admitted or refused, with
how its person answered (:data:`~xtyserver.memory.commands.Answer`).

A confirming forget call of the companion's tools deletes only when the
player's text of the turn right after the server's question agrees
(:mod:`~xtyserver.session.asking` binds the yes to that question). The
model's word never counts, nor does anything a mod or the game put in front
of the model. :func:`verdict` is the one judge of a yes, a pure function of
the text:

* the text is judged on its normal form, case-folded;
* any negation, hesitation or question anywhere in it (:data:`NO_WORDS`,
  :data:`NO_WORDS_EN`) refuses: ``"no"``;
* otherwise it is ``"yes"`` only when **every** clause (split at punctuation)
  is made of nothing but :data:`YES_WORDS` and :data:`FILLERS`: a yes inside
  another statement ("好的，谢谢", "嗯，今天去矿洞") is no yes to a deletion;
* anything else is ``"unclear"`` (it counts as no).

:func:`consents` adds the rule of broad targets: a save, a game, the profile
or everything is confirmed in chat only by the exact words the server's
question asked for, naming the target (``asking.expected_words``: 「确认删除全部记忆」),
an answer that answers nothing else; a yes, even one naming a deletion
(「好，清除吧」 may answer 「要不要把杂草清除掉」), is enough for one item only.
:func:`asks_restore` judges a restore the same way: the player's own words
must ask for it.

Typed and voice-sourced text count the same. Refusing too often costs the
player one more sentence; agreeing wrongly costs their memory.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final, Literal

from xtyserver.memory.commands import (
    BROAD_KINDS,
    Answer,
    Dialog,
    Elicited,
    Forget,
    MemoryCommand,
    Preview,
    Restore,
    Unasked,
    Words,
    quote,
)
from xtyserver.memory.manage import Confirmations, ForgetSpec, Refusal
from xtyserver.protocol.normalize import normalize
from xtyserver.session.said import said_as_value

Verdict = Literal["yes", "no", "unclear"]

DELETE_WORDS: Final[tuple[str, ...]] = (
    "删",
    "清空",
    "清除",
    "忘掉",
    "抹掉",
    "去掉",
    "delete",
    "erase",
    "wipe",
    "remove",
)
"""Words that name the deletion itself (each a yes to one item on its own)."""

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
    "删吧",
    "删掉",
    "删掉吧",
    "删了",
    "删了吧",
    "删除",
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
    "right",
    "correct",
    "noproblem",
    "ofcourse",
    *DELETE_WORDS,
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

RESTORE_WORDS: Final[tuple[str, ...]] = (
    "恢复",
    "撤销",
    "撤回",
    "还原",
    "找回",
    "拿回来",
    "放回",
    "删错",
    "restore",
    "undo",
    "undelete",
    "recover",
    "bringback",
    "bringitback",
    "putback",
    "putitback",
)
"""Words that ask for a restore (found anywhere in the player's words, spaces removed)."""

# Phrases that contain a negation character but agree ("没问题", "no problem").
_AGREEING_NEGATIONS: Final = re.compile(r"没问题|没错|no problem|of course")


def alternation(words: tuple[str, ...]) -> str:
    """One regular-expression alternative per word, longest first."""
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


# Words with a negation character that ask for a restore all the same ("不小心删了").
_RESTORE_NOT_REFUSING: Final = re.compile(r"不小心|不是故意|没了")
_NO: Final = re.compile(
    f"{alternation(NO_WORDS)}|(?<![a-z'])(?:{alternation(NO_WORDS_EN)})(?![a-z'])"
)
_YES_CLAUSE: Final = re.compile(f"(?:{alternation(YES_WORDS)}|{alternation(FILLERS)})+")
_YES: Final = re.compile(alternation(YES_WORDS))
_RESTORE: Final = re.compile(alternation(RESTORE_WORDS))
# Everything that separates clauses: punctuation, symbols and line breaks (the
# normal form has ASCII punctuation for full-width ，。！ but not for 、…).
_CLAUSE_BREAK: Final = re.compile(r"[^\w\s']+|\n")
_SPACE: Final = re.compile(r"\s+")


def _plain(text: str) -> str:
    return normalize(text).casefold().replace("\u2019", "'")


def _clauses(plain: str) -> list[str]:
    """The non-empty clauses of ``plain``, spaces removed."""
    return [w for w in (_SPACE.sub("", c) for c in _CLAUSE_BREAK.split(plain)) if w]


def verdict(text: str) -> Verdict:
    """Whether ``text`` (the player's own words of one turn) is an explicit yes (see the module)."""
    plain = _plain(text)
    if _NO.search(_AGREEING_NEGATIONS.sub(" ", plain)):
        return "no"
    clauses = _clauses(plain)
    whole = clauses and all(_YES_CLAUSE.fullmatch(w) for w in clauses)
    if whole and any(_YES.search(w) for w in clauses):
        return "yes"
    return "unclear"


def _bare(text: str) -> str:
    """``text``'s words alone: normal form, case-folded, without spaces or punctuation."""
    return _SPACE.sub("", _CLAUSE_BREAK.sub("", _plain(text)))


def consents(text: str, kind: str, expected: tuple[str, ...] = ()) -> bool:
    """Whether ``text`` agrees to forgetting ``kind``.

    One item: an explicit yes (:func:`verdict`). A broad target: ``text`` is,
    but for spaces, punctuation and case, one of the ``expected`` words the
    server asked for (none given: nothing confirms it in chat).
    """
    if kind in BROAD_KINDS:
        if "?" in _plain(text):
            return False  # 「确认删除全部记忆？」 asks back
        said = _bare(text)
        return bool(said) and any(said == _bare(words) for words in expected)
    return verdict(text) == "yes"


def asks_restore(text: str) -> bool:
    """Whether ``text`` asks for a restore: a restore word, and no negation (a question counts)."""
    plain = _RESTORE_NOT_REFUSING.sub(" ", _AGREEING_NEGATIONS.sub(" ", _plain(text)))
    refusing = _NO.search(plain.replace("?", " ").replace("吗", " "))
    return bool(_RESTORE.search(_SPACE.sub("", plain))) and refusing is None


def unsaid(value: str | list[str], player_text: str, field: str) -> str | None:
    """The first part of a correction's ``value`` the player did not say as a value, or None.

    Each item must pass :func:`~xtyserver.session.said.said_as_value`; an empty value
    (clearing the field) is never something the player said: it is returned as "".
    """
    items = value if isinstance(value, list) else [value]
    if not items:
        return ""
    for item in items:
        if not said_as_value(field, item, player_text):
            return item
    return None


# -- the one door: whether a command is admitted --------------------------------------------

UNASKED_DELAY: Final = 5.0
"""Seconds between a preview and an unasked confirm (an MCP client that cannot ask)."""
UNASKED_PER_HOUR: Final = 3
"""Single items an unasked surface may delete in any hour (every surface's trash counts)."""


def admit(
    command: MemoryCommand,
    answer: Answer | None,
    tokens: Confirmations,
    now: float,
    *,
    asker: str = "",
    turn: int | None = None,
    trash_on: bool = True,
    recent: Sequence[float] = (),
) -> MemoryCommand | Refusal:
    """The one place a memory command is admitted: the command to execute, or why not.

    Every surface translates its input into ``command`` and says how its person
    answered (``answer``). A forget without an answer becomes its
    :class:`~xtyserver.memory.commands.Preview` (the caller issues the token);
    with one, the token (from ``tokens``, ``asker``'s, unexpired, for this very
    target) must be answered:

    * the player's chat words (:class:`Words`) agree only as the answer to the
      server's question (``asked``) in a later tool turn than the preview's
      (``turn``), by :func:`consents` (a broad target: the exact ``expected`` words);
    * a no in the mod's dialog voids the token (one in an elicitation refuses this call);
    * an unasked echo (:class:`Unasked`, MCP without elicitation) deletes one
      item only, into the trash, :data:`UNASKED_DELAY` s after its preview, with
      the preview's quote, and at most :data:`UNASKED_PER_HOUR` items an hour
      (``recent``: when the trash's entries were made);
    * a yes in the mod's dialog, the mod's menu, the page, an elicitation and a
      terminal each asked their person about this preview alone.

    A restore asked in chat needs words that ask for it (:func:`asks_restore`);
    every other command is the person's own act on their surface.
    """
    match command:
        case Forget(target=spec) if answer is None:
            return Preview(target=spec)
        case Forget(target=spec) if answer is not None:
            return _forget(spec, answer, tokens, now, asker, turn, trash_on, recent)
        case Restore() if isinstance(answer, Words) and not asks_restore(answer.text):
            return "not_asked"
    return command


def _forget(
    spec: ForgetSpec,
    answer: Answer,
    tokens: Confirmations,
    now: float,
    asker: str,
    turn: int | None,
    trash_on: bool,
    recent: Sequence[float],
) -> Forget | Refusal:
    pending = tokens.peek(answer.token, now, asker=asker)
    if isinstance(pending, str):
        return pending
    if pending.preview.spec != spec:
        return "other_target"
    match answer:
        case Words(text=text, asked=asked, expected=expected):
            if turn is not None and pending.turn is not None and turn <= pending.turn:
                return "too_soon"
            if asked is None or not consents(text, spec.kind, expected):
                return "not_agreed"  # the token stays valid
        case Dialog(yes=False):
            tokens.spend(answer.token)  # the dialog is gone: its token with it
            return "declined"
        case Elicited(accepted=False):
            return "declined"  # asked again on the next call
        case Unasked(quote=said):
            refused = unasked_refusal(spec, trash_on, recent, now)
            if refused is not None:
                return refused
            if now - pending.issued < UNASKED_DELAY:
                return "too_soon"
            if _bare(said) != _bare(quote(spec)):
                return "unquoted"
    tokens.spend(answer.token)
    return Forget(target=spec)


def unasked_refusal(
    spec: ForgetSpec, trash_on: bool, recent: Sequence[float], now: float
) -> Refusal | None:
    """Why nobody's answer cannot forget ``spec`` (MCP without elicitation), or None.

    One item, into the trash, and at most :data:`UNASKED_PER_HOUR` in any hour
    (``recent``: when the trash's entries were made, by any surface).
    """
    if spec.kind in BROAD_KINDS or spec.include_stats or not trash_on:
        return "needs_person"
    if sum(1 for at in recent if now - at < 3600) >= UNASKED_PER_HOUR:
        return "too_many"
    return None
