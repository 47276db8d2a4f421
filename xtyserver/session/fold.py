"""The stateless call that folds rounds into the session summary: its prompt and its answer.

Pure code. The call sees only the previous summary and the rounds to fold in
(no persona, no memory, no game facts) and answers one JSON object; anything
else is a failed fold (the rounds wait for the next one).
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from xtyserver.session.working import Round, SessionSummary

FOLD_MARKER = "【会话摘要整理】"
"""Starts the fold call's system prompt (scripted models match on it)."""

FOLD_PROMPT = (
    FOLD_MARKER + "你在帮一个游戏陪玩 AI 整理本次游戏会话的工作记忆。"
    "输入是之前的会话摘要（JSON，可能为空）和接下来几轮对话。"
    "输出一个合并后的新摘要，只输出一个 JSON 对象，字段："
    '"requests"（玩家提出的请求）、"decisions"（双方确认的决定）、'
    '"preferences"（玩家这次表达的偏好）、"open_questions"（还没解决的问题），'
    '都是短字符串数组，每项不超过 40 个字；"mood"（玩家现在的心情，一个短词）。'
    "保留之前摘要里仍然重要的内容（名字、地点、计划），删去已经过时的；"
    "不要推测玩家的性格，不要记录敏感信息，不要编造对话里没有的事。"
)


class _Answer(msgspec.Struct, frozen=True):
    requests: list[str] = []
    decisions: list[str] = []
    preferences: list[str] = []
    open_questions: list[str] = []
    mood: str = ""


def build_fold_messages(
    previous: SessionSummary, rounds: tuple[Round, ...]
) -> list[dict[str, Any]]:
    """The chat-completions ``messages`` of one fold call."""
    before = msgspec.json.encode(previous).decode()
    lines = [f"之前的摘要：{before}", "要并入的对话："]
    for player, reply in rounds:
        lines.append(f"玩家：{player}")
        lines.append(f"小汤圆：{reply}")
    return [
        {"role": "system", "content": FOLD_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def parse_fold(answer: str) -> SessionSummary | None:
    """The summary in the model's answer, or None when it is not the JSON asked for."""
    text = answer.strip()
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        raw = json.loads(text[start : end + 1])
        parsed = msgspec.convert(raw, _Answer)
    except (ValueError, msgspec.ValidationError):
        return None

    def items(values: list[str]) -> tuple[str, ...]:
        return tuple(v.strip() for v in values if v.strip())

    return SessionSummary(
        requests=items(parsed.requests),
        decisions=items(parsed.decisions),
        preferences=items(parsed.preferences),
        open_questions=items(parsed.open_questions),
        mood=parsed.mood.strip(),
    )
