"""``xtyserver replay --check``: compare what a replay got back with the recording (pure).

What is checked is listed in docs/replay.md "Record and replay". Answers are compared per
frame ``id`` (``error`` frames without one in order); those that depend on time or
history (``stats.result`` and ``memory.result`` contents, ``chat.done.context`` and
``usage``) by type only.
"""

from __future__ import annotations

import difflib
from collections import Counter
from typing import Any

import msgspec

from xtyserver.replay.recording import Recording

NO_ID = "(no id)"
_ENDS = frozenset({"chat.done", "chat.error"})


class CheckResult(msgspec.Struct, frozen=True):
    """What ``--check`` found: problems (one line each) and a diff of the answers."""

    problems: list[str]
    diff: str

    @property
    def ok(self) -> bool:
        return not self.problems and not self.diff


def check(recording: Recording, received: list[dict[str, Any]], *, replies: bool) -> CheckResult:
    """Compare the frames a replay received with the recording's (``replies``: texts too)."""
    problems = _streams(received)
    sends = Counter(
        frame["id"]
        for entry in recording.inbound()
        if (frame := entry.parsed()) is not None
        and frame.get("type") == "chat.send"
        and isinstance(frame.get("id"), str)
    )
    ends = Counter(
        str(f.get("id"))
        for f in received
        if f.get("type") in _ENDS or (f.get("type") == "error" and f.get("code") != "unknown_chat")
    )
    for chat_id, count in sends.items():
        if ends[chat_id] != count:
            problems.append(
                f"{chat_id}: {count} chat.send but {ends[chat_id]} chat.done/chat.error/error"
            )
    expected = _answers(recording.outbound(), replies=replies)
    got = _answers(received, replies=replies)
    diff = "\n".join(difflib.unified_diff(expected, got, "recorded", "replayed", lineterm="", n=2))
    return CheckResult(problems, diff)


def _streams(frames: list[dict[str, Any]]) -> list[str]:
    """Each reply's deltas must join to its chat.done text."""
    joined: dict[str, str] = {}
    problems = []
    for f in frames:
        chat_id = str(f.get("id"))
        if f.get("type") == "chat.delta":
            joined[chat_id] = joined.get(chat_id, "") + str(f.get("text", ""))
        elif f.get("type") in _ENDS:
            text = joined.pop(chat_id, "")
            if f.get("type") == "chat.done" and text != f.get("text"):
                problems.append(f"{chat_id}: deltas join to {text!r}, chat.done says {f['text']!r}")
    return problems


def _answers(frames: list[dict[str, Any]], *, replies: bool) -> list[str]:
    """One line per answer, grouped by frame id in order of first appearance."""
    groups: dict[str, list[str]] = {}
    for f in frames:
        kind = f.get("type")
        if kind in ("server.hello", "chat.delta"):
            continue
        line = str(kind)
        if kind in ("chat.error", "error"):
            line += f" {f.get('code')}"
        if kind == "error" and f.get("fields"):
            line += f" fields={f['fields']}"
        if kind == "chat.done" and replies:
            line += f" {f.get('text')!r}"
        groups.setdefault(str(f.get("id", NO_ID)), []).append(line)
    return [f"{key}: {line}" for key, lines in groups.items() for line in lines]
