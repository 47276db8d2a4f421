"""Search keys for memories that have none (pure): build the call, parse the answer.

A background job (:mod:`xtyserver.serve.jobs`) asks the quick model for the
keys of memories formed before search keys existed, or imported, :data:`BATCH`
of one save per call; the stored keys are its progress, and a memory given no
usable keys gets ``()``. The answer must be strict JSON
``{"keys": {"<id>": ["key", ...]}}``; anything else yields nothing.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from xtyserver.memory.extraction import KEYS_RULE, clean_keys
from xtyserver.memory.types import MemoryEvent

BATCH = 8

ENRICHMENT_SYSTEM_PROMPT = "\n".join(
    (
        "你是游戏陪玩伙伴的记忆整理员。下面是同一个游戏存档里的几条记忆，每行一条，以 #编号 开头。"
        "为每条记忆写搜索词，让玩家换个说法、换种语言也能找到它。",
        "只输出一个 JSON 对象，不要输出任何其他文字：",
        '{"keys": {"编号": ["搜索词", ...], ...}}',
        KEYS_RULE,
        "不要改写记忆本身，不要编造记忆里没有的事。",
    )
)

LINE_PREFIX = "#"


def memory_line(event: MemoryEvent) -> str:
    """One memory as the enrichment call shows it: ``#id [kind] subject：summary``."""
    return f"{LINE_PREFIX}{event.id} [{event.kind}] {event.subject}：{event.summary}"


def build_enrichment_messages(game_id: str, events: Sequence[MemoryEvent]) -> list[dict[str, str]]:
    """Chat messages asking for the search keys of ``events`` (one save's, at most BATCH)."""
    lines = [f"游戏：{game_id}", *(memory_line(e) for e in events[:BATCH])]
    return [
        {"role": "system", "content": ENRICHMENT_SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


class _Answer(msgspec.Struct):
    keys: dict[str, list[object]] = msgspec.field(default_factory=dict)


_FENCE = "```"


def parse_enrichment(raw: str, asked: Sequence[int]) -> dict[int, tuple[str, ...]]:
    """The keys per asked id (``()`` for an asked id the answer gave none); never raises.

    An unreadable answer yields ``{}`` (nothing is marked, the memories are
    asked again next time).
    """
    body = raw.strip()
    if body.startswith(_FENCE):
        body = body.strip("`").removeprefix("json").strip()
    try:
        answer = msgspec.json.decode(body, type=_Answer)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return {}
    found: dict[int, tuple[str, ...]] = {}
    for key, value in answer.keys.items():
        ident = key.strip().removeprefix(LINE_PREFIX)
        if ident.isdigit() and int(ident) in asked:
            found[int(ident)] = clean_keys(value)
    return {i: found.get(i, ()) for i in asked}
