"""The layered prompt of one player turn (v1.md "The model call"). Pure code.

Layers, in order: persona (system), remembered things (system, only when there
are any), the current game facts from the newest modelContext (system, marked
stale when old), a few recent turns of this connection (text only), then the
player's turn: redacted text plus the screenshot as an image content part.
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


def build_messages(
    *,
    persona: str,
    memory_text: str,
    facts_text: str,
    history: Sequence[tuple[str, str]],
    text: str,
    image_url: str | None,
) -> list[Message]:
    """Assemble the chat-completions ``messages`` for one turn.

    Args:
        persona: The system prompt (configurable, Chinese by default).
        memory_text: Rendered memories within their budget, or "".
        facts_text: Rendered game facts, or "" when none or dropped.
        history: Recent (player, companion) turns of this connection, oldest first.
        text: The player's text, already redacted.
        image_url: A ``data:`` URL of the prepared screenshot, or None.
    """
    messages: list[Message] = [{"role": "system", "content": persona}]
    if memory_text:
        messages.append({"role": "system", "content": "你记得的事（仅供参考）：\n" + memory_text})
    if facts_text:
        messages.append({"role": "system", "content": facts_text})
    for player, companion in history:
        messages.append({"role": "user", "content": player})
        messages.append({"role": "assistant", "content": companion})
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
