"""Background memory extraction (pure): build the model messages, parse the answer.

Two jobs, both run by the server after the player's turn is answered:

* **Turn extraction**: at most one shared-profile change (only nickname,
  language, reply style or a hobby, and none when ``auto_shared`` is off) and
  at most two game events, low-risk facts only; what
  :mod:`xtyserver.memory.shared_guard` refuses is dropped and reported.
* **Session summary**: at most two durable events (:data:`SUMMARY_KINDS`) from
  the last turns; fewer than 2 turns make no model call.

Each event comes with 3-8 search keys (bad keys are dropped one by one, never
the event). The model must answer strict JSON; anything else is dropped
silently, so parsing never raises. Texts are normalised before they are
checked and kept in that form, so what is stored is what was judged.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec

from xtyserver.memory import dates, lenient, private_facts, shared_guard
from xtyserver.memory.tokenize import tokenize
from xtyserver.memory.types import (
    SEARCH_KEY_MAX,
    SEARCH_KEYS_MAX,
    SUMMARY_MAX,
    MemoryEvent,
    MemoryKind,
    NewEvent,
    SharedProfile,
    profile_field,
    validated,
)
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.normalize import normalize, visible

MAX_PROFILE_CHANGES = 1
MAX_TURN_EVENTS = 2
MAX_SUMMARY_EVENTS = 2
MAX_SUMMARY_TURNS = 12
MIN_SUMMARY_TURNS = 2
MAX_INPUT_CHARS = 2000  # per text handed to the extractor, so a long reply stays cheap

# Fields a model may propose. notes, personality and the companion's identity
# are the player's alone; games is recorded by the server from the games that
# connect (MemoryService.record_game).
AUTO_PROFILE_FIELDS: tuple[str, ...] = ("nickname", "language", "reply_style", "hobbies")
_LIST_FIELDS = frozenset({"hobbies"})
# What an end-of-session summary may record: durable kinds only, never a plain event.
SUMMARY_KINDS: tuple[MemoryKind, ...] = ("goal", "decision", "promise", "relationship", "milestone")


class ProfileChange(msgspec.Struct, frozen=True):
    """One proposed shared-profile change.

    For the list field (hobbies) ``value`` is ONE item to add; for text fields
    it replaces the value.
    """

    field: str
    value: str


class Extraction(msgspec.Struct, frozen=True):
    """What a turn extraction yields (validated and filtered).

    Attributes:
        refused: Why a proposed shared value was refused by
            :func:`shared_guard.refusal` (for the log line), or None.
        events_refused: Why each proposed event refused by
            :func:`shared_guard.event_refusal` was (for the log line).
    """

    profile: ProfileChange | None = None
    events: tuple[NewEvent, ...] = ()
    refused: shared_guard.Refusal | None = None
    events_refused: tuple[shared_guard.Refusal, ...] = ()


class Turn(msgspec.Struct, frozen=True):
    """One exchange: what the player said and what the companion answered."""

    player: str
    reply: str


class _RawEvent(msgspec.Struct):
    kind: str = ""
    subject: str = ""
    summary: str = ""
    importance: int = 3
    status: str = "active"
    keys: Any = msgspec.field(default_factory=list)  # checked key by key (clean_keys)


class _RawProfile(msgspec.Struct):
    field: str = ""
    value: str = ""


class _RawAnswer(msgspec.Struct):
    profile: _RawProfile | None = None
    events: list[_RawEvent] = msgspec.field(default_factory=list)


_EVENT_SHAPE = (
    '{"kind": "goal|decision|promise|relationship|milestone|event", '
    '"subject": "不超过20字的主题", "summary": "不超过60字的一句话", '
    '"importance": 1到5, "status": "active|done|dropped", '
    '"keys": ["3到8个搜索词"]}'
)
KEYS_RULE = (
    "- keys 是以后找到这条记忆用的 3 到 8 个搜索词，每个不超过 20 字：涉及的人物、地点、物品"
    "的中文名和英文名（游戏里的正式名字）、玩家可能的别称和同义词、这件事的主题"
    "（例如 阿比盖尔、Abigail、紫发女孩、礼物、紫水晶）。不要写整句话。"
)

_SUMMARY_SHAPE = _EVENT_SHAPE.replace("|milestone|event", "|milestone")

# One privacy rule for every background model that reads the player's words: the
# turn's extraction and the session's summary alike.
PRIVACY_RULES = (
    "- 不要推断玩家的性格或为人（无论好坏），不要记录可能是角色扮演的内容，"
    "不要记录健康、信仰、政治、收入、住址、年龄等敏感信息。",
    "- 绝不记录路径、账号、密钥、邮箱、真实姓名、住址、电话等个人信息；"
    "文中的「[…已隐去 … removed]」是已经去掉的隐私，不要猜，也不要记录它。",
)
DATES_RULE = (
    "- 相对的时间（明天、下周二、next spring）按「今天」写成确定的日期，或照原话写，"
    "服务器会补上日期。"
)

EXTRACTION_SYSTEM_PROMPT = "\n".join(
    (
        "你是游戏陪玩伙伴的记忆整理员。根据玩家这一轮说的话和伙伴的回复，"
        "找出值得长期记住的低风险事实。",
        "只输出一个 JSON 对象，不要输出任何其他文字：",
        '{"profile": null 或 {"field": "字段名", "value": "值"}, "events": [最多两个事件]}',
        f"事件格式：{_EVENT_SHAPE}",
        "规则：",
        "- profile 最多一项，字段只能是：nickname（怎么称呼玩家）、language、"
        "reply_style（喜欢的回复风格）、hobbies（一次只加一项简短爱好）。"
        "不要写 notes、personality、games 或伙伴自己的设定。",
        "- profile 是所有游戏、所有存档共享的：绝不把这个存档里的人物、地点、"
        "计划、约定写进 profile，这些只能作为 events 记录。",
        *PRIVACY_RULES,
        "- 只记玩家明确说出的事实、目标、决定、约定、人物关系和里程碑；不要猜测，不要记闲聊。",
        DATES_RULE,
        KEYS_RULE,
        '- 没有值得记的就输出 {"profile": null, "events": []}。',
    )
)

SUMMARY_SYSTEM_PROMPT = "\n".join(
    (
        "你是游戏陪玩伙伴的记忆整理员。下面是这次游戏过程中最近的对话。"
        "请总结出最多两条值得长期记住的内容，只能是：未完成的目标(goal)、明确的决定(decision)、"
        "约定(promise)、人物关系的变化(relationship)、里程碑(milestone)；忽略闲聊和普通经过。",
        "只输出一个 JSON 对象，不要输出任何其他文字：",
        '{"events": [最多两个事件]}',
        f"事件格式：{_SUMMARY_SHAPE}",
        "规则：",
        *PRIVACY_RULES,
        "- 「已经记住的」是这个存档已有的记忆：同一件事（哪怕换了说法）要沿用它原来的 kind 和"
        " subject 来更新，不要换个主题再记一条；已经记住且没有变化的不要再输出。",
        DATES_RULE,
        KEYS_RULE,
        '- 没有值得记的就输出 {"events": []}。',
    )
)
HELD_MAX = 30
"""Memories of the save the summariser is shown (the most important and newest)."""


def _clip(text: str) -> str:
    """What a background model reads of one text: the player's health, address and real
    name blanked out (:mod:`~xtyserver.memory.private_facts`), then cut to size."""
    return private_facts.redact(text)[:MAX_INPUT_CHARS]


def _today(today: dt.date | None, day: int | None) -> str:
    if today is None:
        return ""
    game = f"，游戏第{day}天" if day is not None else ""
    return f"今天：{today.isoformat()}（{_WEEKDAYS[today.weekday()]}{game}）\n\n"


_WEEKDAYS = ("星期一", "星期二", "星期三", "星期四", "星期五", "星期六", "星期日")


def build_extraction_messages(
    player_text: str, reply: str, *, today: dt.date | None = None, day: int | None = None
) -> list[dict[str, str]]:
    """Chat messages for the turn extractor (OpenAI ``messages`` shape)."""
    said = f"玩家说：\n{_clip(player_text)}\n\n伙伴回复：\n{_clip(reply)}"
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM_PROMPT},
        {"role": "user", "content": _today(today, day) + said},
    ]


def build_summary_messages(
    turns: Sequence[Turn],
    held: Sequence[MemoryEvent] = (),
    *,
    today: dt.date | None = None,
    day: int | None = None,
) -> list[dict[str, str]] | None:
    """Chat messages for the end-of-session summary of the last 12 turns (None: under 2).

    ``held``: the save's memories, of which the summariser is shown the
    :data:`HELD_MAX` most important and newest, to update rather than repeat.
    """
    if len(turns) < MIN_SUMMARY_TURNS:
        return None
    lines: list[str] = []
    kept = sorted(held, key=lambda e: (-e.importance, -e.updated_at))[:HELD_MAX]
    if kept:
        lines.append("已经记住的：")
        lines += [f"- [{e.kind}] {e.subject}：{_clip(e.summary)}" for e in kept]
        lines.append("")
    lines.append("这次的对话：")
    for n, turn in enumerate(turns[-MAX_SUMMARY_TURNS:], start=1):
        lines.append(f"第{n}轮 玩家：{_clip(turn.player)}\n第{n}轮 伙伴：{_clip(turn.reply)}")
    return [
        {"role": "system", "content": SUMMARY_SYSTEM_PROMPT},
        {"role": "user", "content": _today(today, day) + "\n".join(lines)},
    ]


def _decode(raw: str) -> _RawAnswer | None:
    """The answer's object, read leniently (fence, prose, trailing commas, BOM)."""
    found = lenient.json_object(raw)
    if found is None:
        return None
    try:
        return msgspec.convert(found, _RawAnswer)
    except msgspec.ValidationError:
        return None


SAME_SUBJECT = 0.5
"""Share of the shorter subject's words another subject of the same kind must share
to be taken as the same memory (reworded: 「鱼缸收集包」 and 「完成鱼缸收集包」)."""


def same_memory(kind: str, subject: str, held: Iterable[MemoryEvent]) -> MemoryEvent | None:
    """The memory of ``held`` that a proposed ``kind`` and ``subject`` restate, if any."""
    mine = normalize(subject).casefold().strip()
    words = set(tokenize(mine))
    for event in held:
        if event.kind != kind:
            continue
        theirs = normalize(event.subject).casefold().strip()
        if not theirs or not mine:
            continue
        inside = theirs in mine or mine in theirs
        if theirs == mine or (min(len(theirs), len(mine)) >= 2 and inside):
            return event
        other = set(tokenize(theirs))
        if words and other and len(words & other) / min(len(words), len(other)) >= SAME_SUBJECT:
            return event
    return None


def _resolved(summary: str, today: dt.date | None, day: int | None) -> str:
    """``summary`` with its relative dates resolved (:mod:`~xtyserver.memory.dates`), as
    long as it still fits a summary; else as said."""
    if today is None:
        return summary
    resolved = dates.resolve(summary, today, day)
    return resolved if len(resolved) <= SUMMARY_MAX else summary


def _clean_events(
    raw: Sequence[_RawEvent],
    day: int | None,
    limit: int,
    kinds: tuple[MemoryKind, ...] | None = None,
    *,
    today: dt.date | None = None,
    held: Sequence[MemoryEvent] = (),
) -> tuple[tuple[NewEvent, ...], tuple[shared_guard.Refusal, ...]]:
    """The valid events (at most ``limit``) and why each refused by the event guard was.

    A relative date in a summary is resolved against ``today`` and the in-game ``day``;
    an event that restates one of ``held`` (same kind, the same subject reworded)
    takes that memory's subject, so storing it updates that memory.
    """
    out: list[NewEvent] = []
    refused: list[shared_guard.Refusal] = []
    for item in raw:
        if len(out) >= limit:
            break
        if kinds is not None and item.kind not in kinds:
            continue
        subject = visible(item.subject).strip()
        same = same_memory(item.kind, subject, held)
        if same is not None:
            subject = same.subject
        try:
            event = msgspec.convert(
                {
                    "kind": item.kind,
                    "subject": subject,
                    "summary": _resolved(visible(item.summary).strip(), today, day),
                    "importance": item.importance,
                    "status": item.status,
                    "day": day,
                    "searchKeys": clean_keys(item.keys) or None,
                },
                NewEvent,
            )
        except msgspec.ValidationError:
            continue
        if find_forbidden(event.subject) or find_forbidden(event.summary):
            continue
        why = shared_guard.event_refusal(event.subject, event.summary)
        if why is not None:
            # A sensitive fact or a judgement of the player: never stored, never injected.
            refused.append(why)
            continue
        out.append(event)
    return tuple(out), tuple(refused)


def clean_keys(raw: object) -> tuple[str, ...]:
    """At most 8 usable search keys of a model's answer: normalised, within limits,
    nothing forbidden or refused by the event guard, no repeats (case-insensitive)."""
    if not isinstance(raw, list):
        return ()
    out: list[str] = []
    seen: set[str] = set()
    for item in raw:
        if not isinstance(item, str):
            continue
        key = normalize(item).strip()
        if not key or len(key) > SEARCH_KEY_MAX or find_forbidden(key):
            continue
        if shared_guard.event_refusal(key) is not None:
            continue  # a key must not carry what the event itself may not
        if key.casefold() in seen:
            continue
        seen.add(key.casefold())
        out.append(key)
        if len(out) >= SEARCH_KEYS_MAX:
            break
    return tuple(out)


def _clean_profile(raw: _RawProfile | None, profile: SharedProfile) -> ProfileChange | None:
    if raw is None or not profile.auto_shared:
        return None
    field, value = raw.field.strip(), visible(raw.value).strip()
    known = profile_field(field)
    field = known.name if known is not None else field
    if field not in AUTO_PROFILE_FIELDS or not value or find_forbidden(value):
        return None
    if field in _LIST_FIELDS and normalize(value) in map(normalize, getattr(profile, field)):
        return None
    change = ProfileChange(field=field, value=value)
    name, new_value = profile_update(profile, change)
    try:
        validated(msgspec.structs.replace(profile, **{name: new_value}))
    except msgspec.ValidationError:
        return None
    return change


def parse_extraction(
    raw: str,
    *,
    profile: SharedProfile,
    day: int | None,
    save_texts: Iterable[str] = (),
    today: dt.date | None = None,
    held: Sequence[MemoryEvent] = (),
) -> Extraction:
    """Validate the turn extractor's answer; never raises.

    Args:
        profile: The current shared profile (for ``auto_shared`` and list limits).
        day: The in-game day to stamp the events with, if known.
        save_texts: What names the current save: its events' subjects and
            summaries and its modelContext names. A shared value naming any of
            them, or the events proposed in this answer, is refused.
        today: The local date the turn was on (relative dates resolved against it).
        held: The save's memories (an event restating one updates it).
    """
    answer = _decode(raw)
    if answer is None:
        return Extraction()
    events, events_refused = _clean_events(
        answer.events, day, MAX_TURN_EVENTS, today=today, held=held
    )
    change = _clean_profile(answer.profile, profile)
    if change is None:
        return Extraction(events=events, events_refused=events_refused)
    proposed = [text for e in events for text in (e.subject, e.summary)]
    why = shared_guard.refusal(change.value, [*save_texts, *proposed])
    if why is not None:
        return Extraction(events=events, refused=why, events_refused=events_refused)
    return Extraction(profile=change, events=events, events_refused=events_refused)


def parse_summary(
    raw: str,
    *,
    day: int | None,
    today: dt.date | None = None,
    held: Sequence[MemoryEvent] = (),
) -> tuple[NewEvent, ...]:
    """Validate the session summarizer's answer (at most 2 events of
    :data:`SUMMARY_KINDS`, as :func:`parse_extraction` does); never raises."""
    answer = _decode(raw)
    if answer is None:
        return ()
    kinds = SUMMARY_KINDS
    return _clean_events(answer.events, day, MAX_SUMMARY_EVENTS, kinds, today=today, held=held)[0]


def profile_update(profile: SharedProfile, change: ProfileChange) -> tuple[str, object]:
    """The ``(name, value)`` to pass to ``MemoryStore.set_profile_field``."""
    current = getattr(profile, change.field)
    if change.field in _LIST_FIELDS:
        return change.field, [*current, change.value]
    return change.field, change.value


_DELIBERATE_RE = re.compile(r"^\s*(?:请|帮我|你)?\s*记住")


def is_deliberate(player_text: str) -> bool:
    """Whether the player asks on purpose to remember ("记住：…", "记住这个", "请记住…").

    A deliberate request lifts the tombstone of a memory the player once had
    forgotten (v1.md "Memory management") and pins what is remembered.
    """
    return _DELIBERATE_RE.match(normalize(player_text)) is not None
