"""The stateless call that folds rounds into the session summary: its prompt and its answer.

Pure code. The call sees only the previous summary and the rounds to fold in
and is asked for one JSON object, read leniently (:mod:`xtyserver.memory.lenient`);
a plain-text answer becomes the summary's free text, and an answer that tries to
be JSON and cannot be read, or has fields of the wrong shape, is a failed fold.
"""

from __future__ import annotations

from typing import Any

import msgspec

from xtyserver.memory import lenient, private_facts
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


_LIST_FIELDS = ("requests", "decisions", "preferences", "open_questions")


def build_fold_messages(
    previous: SessionSummary, rounds: tuple[Round, ...]
) -> list[dict[str, Any]]:
    """The chat-completions ``messages`` of one fold call."""
    before = msgspec.json.encode(previous).decode()
    lines = [f"之前的摘要：{before}", "要并入的对话："]
    for player, reply in rounds:  # the player's health, address and real name blanked out
        lines.append(f"玩家：{private_facts.redact(player)}")
        lines.append(f"小汤圆：{private_facts.redact(reply)}")
    return [
        {"role": "system", "content": FOLD_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def parse_fold(answer: str, previous: SessionSummary | None = None) -> SessionSummary | None:
    """The summary in the model's answer, or None when it cannot be read.

    Args:
        answer: The model's answer text.
        previous: The summary the call was given; a plain-text answer keeps its
            structured parts and replaces its free text.
    """
    found = lenient.json_object(answer)
    if found is None:
        prose = " ".join(answer.lstrip("\ufeff").split())
        if not prose or lenient.looks_like_json(answer):
            return None
        return msgspec.structs.replace(previous or SessionSummary(), text=prose)
    fields: dict[str, Any] = {}
    for name in _LIST_FIELDS:
        value = found.get(name, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            return None
        fields[name] = tuple(v.strip() for v in value if v.strip())
    mood = found.get("mood", "")
    free = found.get("summary", found.get("text", ""))
    if not isinstance(mood, str) or not isinstance(free, str):
        return None
    return SessionSummary(**fields, mood=mood.strip(), text=" ".join(free.split()))
