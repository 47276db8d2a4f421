"""The layered prompt of one player turn (v1.md "The model call"). Pure code.

Layers, in order (:mod:`xtyserver.session.layers`): the companion's identity,
style and language, the shared profile (system messages that stay byte-identical
from turn to turn), this save's memories and the session summary (system), the
recent window (user/assistant messages), then the current turn: the game facts
from the newest modelContext (system, marked stale when old), the player's
redacted text plus the screenshot as an image content part.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from xtyserver.protocol.budget import Freshness
from xtyserver.protocol.frames import ModelContext

Message = dict[str, Any]

_WORLD_LABELS = (
    ("location", "地点"),
    ("time", "时间"),
    ("season", "季节"),
    ("weather", "天气"),
    ("day", "游戏第几天"),
)
_PLAYER_LABELS = (
    ("health", "生命"),
    ("stamina", "体力"),
    ("status", "状态"),
    ("held_item", "手持"),
)


def render_facts(context: ModelContext, freshness: Freshness, age_seconds: float) -> str:
    """Render a modelContext as a few short Chinese fact lines.

    Only whitelisted fields exist on the Struct, so nothing else can leak in.
    """
    lines: list[str] = []
    for head, obj, labels in (
        ("世界", context.world, _WORLD_LABELS),
        ("玩家", context.player, _PLAYER_LABELS),
    ):
        parts = [
            f"{label}：{_fmt(getattr(obj, name))}"
            for name, label in labels
            if obj is not None and getattr(obj, name) is not None
        ]
        if parts:
            lines.append(f"{head}：" + "；".join(parts))
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
            item.name if item.count is None else f"{item.name} ×{item.count}"
            for item in context.relevant_items
        ]
        lines.append("相关物品：" + "；".join(items))
    if context.ui is not None and (context.ui.busy is not None or context.ui.menu):
        ui = []
        if context.ui.menu:
            ui.append(f"打开的菜单：{context.ui.menu}")
        if context.ui.busy is not None:
            ui.append("玩家正忙" if context.ui.busy else "玩家空闲")
        lines.append("界面：" + "；".join(ui))
    if not lines:
        return ""
    head = "当前游戏状态"
    if freshness == "stale":
        head += f"（{int(age_seconds)} 秒前采集，可能已过时）"
    return head + "：\n" + "\n".join(f"- {line}" for line in lines)


MEMORY_HEAD = "你记得的事（仅供参考）：\n"


def build_messages(
    *,
    identity: str,
    style: str = "",
    profile: str = "",
    memory_text: str = "",
    summary_text: str = "",
    history: Sequence[tuple[str, str]] = (),
    facts_text: str = "",
    text: str,
    image_url: str | None = None,
) -> list[Message]:
    """Assemble the chat-completions ``messages`` of one turn, layer by layer.

    Args:
        identity: Layer 1, the companion's persona (always sent).
        style: Layer 2, language and reply style from the profile, or "".
        profile: Layer 3, the shared profile, or "".
        memory_text: Layer 4, this save's rendered memories within their budget, or "".
        summary_text: Layer 4, the rendered session summary, or "".
        history: Layer 5, the recent (player, companion) rounds, oldest first.
        facts_text: Layer 6, rendered game facts, or "" when none or dropped.
        text: Layer 6, the player's text, already redacted.
        image_url: Layer 6, a ``data:`` URL of the prepared screenshot, or None.
    """
    messages: list[Message] = [{"role": "system", "content": identity}]
    for block in (style, profile):
        if block:
            messages.append({"role": "system", "content": block})
    if memory_text:
        messages.append({"role": "system", "content": MEMORY_HEAD + memory_text})
    if summary_text:
        messages.append({"role": "system", "content": summary_text})
    for player, companion in history:
        messages.append({"role": "user", "content": player})
        messages.append({"role": "assistant", "content": companion})
    if facts_text:
        messages.append({"role": "system", "content": facts_text})
    if image_url is None:
        messages.append({"role": "user", "content": text})
    else:
        messages.append(
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": text},
                    {"type": "image_url", "image_url": {"url": image_url}},
                ],
            }
        )
    return messages


def _fmt(value: object) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, list):
        return "、".join(str(v) for v in value)
    if isinstance(value, msgspec.Struct):
        return str(msgspec.to_builtins(value))
    return str(value)


def _join_kind(kind: str | None, name: str | None) -> str:
    if kind and name:
        return f"{name}（{kind}）"
    return name or kind or ""
