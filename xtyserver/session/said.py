"""Whether the player said a value *as a value*, sans-I/O (v1.md "Memory tools").

A shared-profile correction of the companion's is written only with a value the
player gave as the field's value, not with any piece of their text ("叫我小明吧"
gives the nickname 小明, never 我; "这个NPC说话好奇怪" gives no language at all).
The rule, judged on the normal form (NFKC, invisible characters removed),
case-folded, spaces ignored:

* the value is the **whole message** (fillers and punctuation aside: "小明吧。"
  answers "what should I call you?"), or
* the value is a **whole item of a value span**: the text after a cue of the
  field (:data:`CUES`, or any field's 改成, change to, ...) up to the end of its
  clause, split into items at 和, 、, and, or, ..., with connecting words and
  particles trimmed from its ends.
"""

from __future__ import annotations

import re
from typing import Final

from xtyserver.protocol.normalize import normalize

_ANY: Final = (
    r"改成|改为|换成|换为|设成|设为|设置成|设置为|变成|改叫"
    r"|change it to|change to|set it to|set to|switch to|make it"
)
CUES: Final[dict[str, str]] = {
    "nickname": (
        r"叫我|我叫|喊我|称呼我|管我叫|我的名字是|我的名字叫|名字叫|名字是|我的昵称是|昵称是|昵称"
        r"|call me|my name is|my name's|i'm called|i am called|name me|nickname"
    ),
    "language": (
        r"用(?P<inner>.+?)(?:回复|回答|说话|说|聊天|聊|交流|和我说|跟我说)|语言|说|讲|改用"
        r"|reply in|answer in|respond in|speak|talk in|language"
    ),
    "replyStyle": (
        r"回复风格|说话风格|风格|语气|说话|回复|回答|reply style|style|keep it|be more|be"
    ),
    "hobbies": (
        r"更喜欢|喜欢|爱好是|爱好|兴趣是|兴趣|爱玩|我爱|i like|i love|i enjoy|my hobby is"
        r"|my hobbies are|hobbies|hobby|i'm into"
    ),
}
"""Per field (wire name): the cues after which the player gives its value (a space: any)."""


def _cues(field: str) -> re.Pattern[str]:
    words = f"{CUES.get(field, '(?!)')}|{_ANY}".replace(" ", r"\s*")
    # English cues stand as whole words; Chinese ones anywhere.
    return re.compile(f"(?<![a-z])(?:{words})")


_CLAUSE_END: Final = re.compile(r"[,.!?;:\n。…]")
_ITEM_BREAK: Final = re.compile(r"和|跟|与|以及|还有|、|/|&|(?<![a-z])(?:and|or)(?![a-z])")
_LEAD: Final = re.compile(
    r"^(?:改成|换成|设成|改为|是|为|成|作|做|叫|用|:|to(?![a-z])|is(?![a-z])|are(?![a-z])|as(?![a-z])|in(?![a-z]))+"
)
_TRAIL: Final = re.compile(
    r"(?:吧|啊|呀|啦|了|的|哦|呢|嘛|哈|就行|就好|好了|一下|(?<![a-z])(?:please|pls|thanks|now))+$"
)
_SPACE: Final = re.compile(r"\s+")
_PUNCT: Final = re.compile(r"[^\w']+")


def _plain(text: str) -> str:
    return normalize(text).casefold()


def _trim(piece: str) -> str:
    piece = _SPACE.sub(" ", piece).strip()
    for _ in range(3):
        piece = _TRAIL.sub("", _LEAD.sub("", piece).strip()).strip()
    return _SPACE.sub("", piece)


def value_spans(field: str, text: str) -> set[str]:
    """Every value the player's ``text`` gives ``field`` (normal form, no spaces)."""
    found: set[str] = set()
    whole = _trim(_PUNCT.sub(" ", _plain(text)))
    if whole:
        found.add(whole)
    cues = _cues(field)
    for clause in _CLAUSE_END.split(_plain(text)):
        for match in cues.finditer(clause):
            inner = match.groupdict().get("inner")
            span = inner if inner is not None else clause[match.end() :]
            for item in _ITEM_BREAK.split(span):
                trimmed = _trim(item)
                if trimmed:
                    found.add(trimmed)
    return found


def said_as_value(field: str, value: str, text: str) -> bool:
    """Whether the player's ``text`` gives ``value`` as the value of ``field`` (wire name).

    An empty ``value`` is never said.
    """
    wanted = _SPACE.sub("", _plain(value))
    return bool(wanted) and wanted in value_spans(field, text)
