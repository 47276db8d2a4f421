"""The layered prompt of one player turn (v1.md "The model call"). Pure code.

The layers are listed in :mod:`xtyserver.session.layers`. Only the project's own
text (persona, rules) is a system message; whatever a mod, the player, extraction
or the model wrote is data in a fenced block of a user message (:func:`build_messages`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import Any

import msgspec

from xtyserver.protocol.budget import Freshness
from xtyserver.protocol.frames import ModelContext
from xtyserver.protocol.judged import look_alikes

Message = dict[str, Any]

_WORLD_LABELS = (
    ("location", "地点"),
    ("time", "时间"),
    ("season", "季节"),
    ("weather", "天气"),
)
_PLAYER_LABELS = (
    ("health", "生命"),
    ("stamina", "体力"),
    ("status", "状态"),
    ("held_item", "手持"),
)


def render_facts(context: ModelContext, freshness: Freshness, age_seconds: float) -> str:
    """Render a modelContext as a few short Chinese fact lines, each string on its line.

    A mod's string with a line break cannot start a fact line of its own (:func:`one_line`).
    """
    lines: list[str] = []
    for obj, labels in ((context.world, _WORLD_LABELS), (context.player, _PLAYER_LABELS)):
        parts = [
            f"{label}：{_fmt(_value(obj, name))}"
            for name, label in labels
            if obj is not None and _value(obj, name) is not None
        ]
        if obj is context.world and obj is not None and obj.day is not None:
            parts.append(f"第{_fmt(obj.day)}天")  # the in-game day, as memories say it
        if parts:
            lines.append("；".join(parts))
    focus = context.focus
    if focus is not None and (focus.name or focus.kind):
        reach = (
            "" if focus.reachable is None else ("（够得着）" if focus.reachable else "（够不着）")
        )
        lines.append(f"焦点：{_join_kind(focus.kind, focus.name)}{reach}")
    if context.nearby:
        items = []
        for entity in context.nearby:
            distance = "" if entity.distance is None else f"，距离 {_fmt(entity.distance)}"
            items.append(_join_kind(entity.kind, entity.name) + distance)
        lines.append("附近：" + "；".join(items))
    if context.relevant_items:
        items = [
            one_line(item.name) if item.count is None else f"{one_line(item.name)} ×{item.count}"
            for item in context.relevant_items
        ]
        lines.append("相关物品：" + "；".join(items))
    if context.ui is not None and (context.ui.busy is not None or context.ui.menu):
        ui = []
        if context.ui.menu:
            ui.append(f"打开的菜单：{one_line(context.ui.menu)}")
        if context.ui.busy is not None:
            ui.append("玩家正忙" if context.ui.busy else "玩家空闲")
        lines.append("界面：" + "；".join(ui))
    if not lines:
        return ""
    head = "当前游戏状态"
    if freshness == "stale":
        head += f"（{int(age_seconds)} 秒前采集，可能已过时）"
    return head + "：\n" + "\n".join(f"- {line}" for line in lines)


MEMORY_HEAD = "你记得的事：\n"

DATA_TAG = "资料"
"""The default name of the fence around data (``Texts.data_tag``)."""


# Every bracket that looks like the fence's own inside data becomes a plain
# parenthesis, so no data can open or close a fence or seem to. The look-alikes
# are TR39's (protocol/confusables.txt: ‹ ❮ ˂ ᐸ ⟨ 〈 ...), with the forms NFKC
# makes "<" and ">" and the double and quotation brackets TR39 does not list.
@functools.cache
def _brackets() -> tuple[dict[int, str], re.Pattern[str]]:
    """The translation of every fence-like bracket, and one search for any of them."""
    opening = look_alikes("<") | frozenset("<＜﹤《«⧼⦉⦑⫷≺⊰")
    closing = look_alikes(">") | frozenset(">＞﹥》»⧽⦊⦒⫸≻⊱")
    neutral = str.maketrans({**dict.fromkeys(opening, "("), **dict.fromkeys(closing, ")")})
    return neutral, re.compile("[" + re.escape("".join(sorted(opening | closing))) + "]")


# Every line boundary str.splitlines knows: a mod's string stays on its fact line.
_LINE_BREAK = re.compile("[\n\r\v\f\x1c-\x1e\x85\u2028\u2029]+")


def _neutral(section: str) -> str:
    # translate() looks up every character of a CJK text (tens of us a turn); most
    # sections hold no bracket at all, which one search of a set tells at once.
    neutral, bracket = _brackets()
    return section.translate(neutral) if bracket.search(section) else section


def one_line(text: str) -> str:
    """``text`` with every line break (``\n``, ``\r``, U+2028, U+0085, ...) as a space."""
    return _LINE_BREAK.sub(" ", text)


def fence(sections: Sequence[str], tag: str = DATA_TAG) -> str:
    """The non-empty ``sections`` as one ``<tag>`` data block, or "" when all are empty.

    Every bracket that looks like the fence's own is neutralised (see
    ``_brackets``): a hostile NPC name or memory cannot close the fence early.
    """
    body = "\n".join(_neutral(s) for s in sections if s)
    return f"<{tag}>\n{body}\n</{tag}>" if body else ""


def unfence(content: str, tag: str = DATA_TAG) -> tuple[str, str]:
    """Split a user message built by :func:`build_messages` into (leading fenced data, the rest)."""
    head, tail = f"<{tag}>\n", f"\n</{tag}>"
    if not content.startswith(head):
        return "", content
    end = content.find(tail, len(head))
    if end < 0:
        return "", content
    rest = content[end + len(tail) :]
    return content[len(head) : end], rest.removeprefix("\n")


class PromptTexts(msgspec.Struct, frozen=True, kw_only=True):
    """The project's own model-facing texts around the data (``Texts.data_*``)."""

    rules: str = ""
    ack: str = "好的。"
    tag: str = DATA_TAG


def build_messages(
    *,
    identity: str,
    companion: str = "",
    style: str = "",
    profile: str = "",
    memory_text: str = "",
    summary_text: str = "",
    history: Sequence[tuple[str, str]] = (),
    facts_text: str = "",
    text: str,
    image_url: str | None = None,
    texts: PromptTexts | None = None,
) -> list[Message]:
    """Assemble the chat-completions ``messages`` of one turn, layer by layer.

    The system message (persona and rules), then the data that changes rarely
    fenced in an early user message answered by ``texts.ack`` (so the prefix up to
    the window stays byte-identical), the window's rounds, and this turn's data
    fenced before the player's text in the final user message. Roles alternate.

    Args:
        identity: Layer 1, the companion's persona (always sent, system).
        companion: Layer 1, the companion's name and setting from the profile, or "".
        style: Layer 2, language and reply style from the profile, or "".
        profile: Layer 3, the shared profile, or "".
        memory_text: Layer 4, this save's rendered memories within their budget, or "".
        summary_text: Layer 4, the rendered session summary, or "".
        history: Layer 5, the recent (player, companion) rounds, oldest first.
        facts_text: Layer 6, rendered game facts, or "" when none or dropped.
        text: Layer 6, the player's text, already redacted.
        image_url: Layer 6, a ``data:`` URL of the prepared screenshot, or None.
        texts: The rules, the answer to the early data and the fence's name.
    """
    texts = texts or PromptTexts()
    rules = texts.rules.replace("{tag}", texts.tag)
    system = f"{identity}\n{rules}" if rules else identity
    messages: list[Message] = [{"role": "system", "content": system}]
    stable = fence((companion, style, profile, summary_text), texts.tag)
    if stable:
        messages.append({"role": "user", "content": stable})
        messages.append({"role": "assistant", "content": texts.ack})
    for player, reply in history:
        messages.append({"role": "user", "content": player})
        messages.append({"role": "assistant", "content": reply})
    memory = MEMORY_HEAD + memory_text if memory_text else ""
    data = fence((memory, facts_text), texts.tag)
    final = f"{data}\n{text}" if data else text
    if image_url is None:
        messages.append({"role": "user", "content": final})
    else:
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": final},
                    {"type": "image_url", "image_url": {"url": image_url}},
                ],
            }
        )
    return messages


def _value(obj: object, name: str) -> object:
    """A fact's value; the held item as the game shows it, its id beside it when they differ."""
    value = getattr(obj, name)
    if name != "held_item":
        return value
    shown = getattr(obj, "held_item_name", None)
    if not shown:
        return value
    return shown if value is None or value == shown else f"{shown}（{value}）"


def _fmt(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return one_line("、".join(str(v) for v in value))
    return one_line(str(value))


def _join_kind(kind: str | None, name: str | None) -> str:
    if kind and name:
        return one_line(f"{name}（{kind}）")
    return one_line(name or kind or "")
