"""Reading a model's JSON answer leniently. Pure.

A model asked for "only a JSON object" may still answer with a BOM, a
```json fence and a sentence before it, the object in the middle of prose, or
trailing commas. :func:`json_object` finds the object in each of those shapes;
anything else is no answer (None), so a malformed answer changes nothing.
"""

from __future__ import annotations

import json
import re
from typing import Any

MAX_ANSWER_CHARS = 32_000
"""Longer answers are read only this far (a background answer is ~300 tokens)."""

_FENCE = re.compile(r"```[ \t]*(?:json|JSON|json5)?[ \t]*\r?\n?(.*?)```", re.DOTALL)
# A JSON string (kept whole) or a comma before a closing bracket (group 1: what follows it).
_STRING_OR_TRAILING_COMMA = re.compile(r'"(?:\\.|[^"\\])*"|,(\s*[}\]])', re.DOTALL)


def json_object(answer: str) -> dict[str, Any] | None:
    """The JSON object in ``answer``, or None when there is none to read.

    Tried in order: the whole answer; each fenced block; the first balanced
    ``{...}`` in the text (then the next ones). Each candidate is read as is,
    then with trailing commas removed (outside strings).
    """
    text = answer[:MAX_ANSWER_CHARS].lstrip("\ufeff").strip()
    if not text:
        return None
    candidates = [text]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    candidates += balanced_objects(text)
    for candidate in candidates:
        found = _load(candidate)
        if found is not None:
            return found
    return None


def looks_like_json(answer: str) -> bool:
    """Whether ``answer`` tries to be JSON (a brace, a fence, a leading bracket): prose does not."""
    return "{" in answer or "```" in answer or answer.lstrip("\ufeff \t\r\n").startswith("[")


def balanced_objects(text: str, limit: int = 8) -> list[str]:
    """Up to ``limit`` top-level balanced ``{...}`` spans of ``text``, first first.

    Braces inside JSON strings do not count; an unclosed object ends the scan.
    """
    out: list[str] = []
    start = text.find("{")
    while start >= 0 and len(out) < limit:
        end = _object_end(text, start)
        if end is None:
            break
        out.append(text[start : end + 1])
        start = text.find("{", end + 1)
    return out


def _object_end(text: str, start: int) -> int | None:
    depth = 0
    in_string = False
    escaped = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth == 0:
                return i
    return None


def _load(candidate: str) -> dict[str, Any] | None:
    for attempt in (candidate, _without_trailing_commas(candidate)):
        try:
            value = json.loads(attempt)
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict):
            return value
    return None


def _without_trailing_commas(text: str) -> str:
    """``text`` with each comma before a closing bracket removed, outside strings."""
    return _STRING_OR_TRAILING_COMMA.sub(
        lambda m: m.group(0) if m.group(1) is None else m.group(1), text
    )
