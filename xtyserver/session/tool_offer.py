"""Which memory tools a turn offers the model, sans-I/O (v1.md "Memory tools").

The five schemas cost about 150 estimated tokens (about 380 in a real
tokenizer: JSON is mostly punctuation) and most turns are about the game, not
about memory. So a turn offers:

* **every tool** when the player's words talk about changing memory
  (remember, forget, delete, correct, restore, how to call them or to talk),
  or in the turn right after the server asked its confirmation question (so a
  bare "好" can confirm one item);
* **the read tools** (view, search) when the words talk about memory or the
  past (记得, 上次, 来着, remember, last time, ...);
* **none** otherwise: the turn's memories are already in the prompt.

The words are judged in their judged form, case-folded; English cues match
whole words. A cue found wrongly costs tokens only; a cue missed costs the model
its tools for that one turn (the player says it again with the cue, or uses the
memory page).
"""

from __future__ import annotations

import re
from typing import Final

from xtyserver.protocol.judged import judged
from xtyserver.session.consent import alternation
from xtyserver.session.tool_schemas import ALL, READ

CHANGE_CUES: Final[tuple[str, ...]] = (
    # remember / forget / delete
    "记住",
    "记下",
    "记一下",
    "别记",
    "不要记",
    "忘掉",
    "忘了吧",
    "忘记",
    "删",
    "清除",
    "清空",
    "抹掉",
    # correct
    "改",
    "更正",
    "纠正",
    "记错",
    "不对",
    "叫我",
    "称呼",
    "昵称",
    "说话",
    "回复",
    "语言",
    "爱好",
    "兴趣",
    "更喜欢",
    "不喜欢",
    # restore
    "恢复",
    "撤销",
    "还原",
    "找回",
)
"""Chinese words about changing memory: every tool is offered."""

CHANGE_CUES_EN: Final[tuple[str, ...]] = (
    "remember",
    "forget",
    "forgot",
    "delete",
    "erase",
    "remove",
    "wipe",
    "correct",
    "change",
    "update",
    "call me",
    "my name",
    "nickname",
    "language",
    "reply",
    "replies",
    "talk",
    "speak",
    "hobby",
    "hobbies",
    "restore",
    "undo",
    "undelete",
    "recover",
)
"""English words about changing memory (whole words)."""

READ_CUES: Final[tuple[str, ...]] = (
    "记得",
    "记忆",
    "回忆",
    "忘",
    "想起",
    "上次",
    "上回",
    "那次",
    "之前",
    "以前",
    "来着",
    "说过",
    "聊过",
    "提过",
    "告诉过",
    "档案",
    "存档",
    "统计",
    "玩了多久",
)
"""Chinese words about memory or the past: the read tools are offered."""

READ_CUES_EN: Final[tuple[str, ...]] = (
    "recall",
    "memory",
    "memories",
    "last time",
    "earlier",
    "before",
    "previously",
    "told you",
    "profile",
    "stats",
    "statistics",
)
"""English words about memory or the past (whole words)."""


def _pattern(cues: tuple[str, ...], english: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile(f"{alternation(cues)}|(?<![a-z])(?:{alternation(english)})(?![a-z])")


_CHANGE: Final = _pattern(CHANGE_CUES, CHANGE_CUES_EN)
_READ: Final = _pattern(READ_CUES, READ_CUES_EN)
_SPACES: Final = re.compile(r"\s+")


def offered_tools(text: str, *, confirming: bool = False) -> tuple[str, ...]:
    """The tools to offer a turn: ``ALL``, ``READ`` or ``()``, so each offer has stable bytes.

    ``confirming``: the turn may answer the server's confirmation question.
    """
    plain = _SPACES.sub(" ", judged(text).casefold())
    if confirming or _CHANGE.search(plain):
        return ALL
    if _READ.search(plain):
        return READ
    return ()
