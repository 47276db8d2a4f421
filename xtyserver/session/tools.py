"""The companion's four memory tools, sans-I/O (v1.md "Memory tools").

Offered to the model in every game chat turn through the OpenAI tool-calling
interface. Pure: this module holds the tool schemas, parses a call's
arguments into a typed operation the shell runs against the memory service,
keeps the confirmation tokens of two-step forgets, and renders what the
store answered as the tool result text. Results obey the prompt's privacy
rules: they are redacted and name saves by their readable name.

A forget is never done on the model's word alone: the first call returns a
preview and a token; only a second call with that token, in a later turn,
deletes. A token is single-use, bound to this connection and this target, and
expires after :data:`TOKEN_TTL` seconds.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

from xtyserver.memory.manage import TOKEN_TTL as TOKEN_TTL
from xtyserver.memory.manage import Confirmations as Confirmations
from xtyserver.memory.manage import (
    ForgetKind,
    ForgetPreview,
    ForgetResult,
    ForgetSpec,
    Overview,
    Refusal,
)
from xtyserver.memory.retrieval import SearchResult
from xtyserver.memory.types import (
    EDITABLE_FIELDS,
    KINDS,
    MemoryEvent,
    MemoryKind,
    Scope,
    SharedProfile,
)
from xtyserver.protocol.forbidden import redact
from xtyserver.protocol.normalize import normalize

VIEW = "xiaotangyuan_memory_view"
SEARCH = "xiaotangyuan_memory_search"
CORRECT = "xiaotangyuan_memory_correct_shared"
FORGET = "xiaotangyuan_memory_forget"
MAX_CALLS_PER_TURN = 4
MAX_SEARCH_RESULTS = 5
MAX_SEARCH_CHARS = 600

_CAMEL_FIELDS = {f.wire: f.name for f in EDITABLE_FIELDS}

TOOL_SPECS: list[dict[str, Any]] = [
    {
        "type": "function",
        "function": {
            "name": VIEW,
            "description": (
                "只读查看玩家的记忆：共同记忆（按字段）、这个游戏各存档（可读名称）的记忆条目、"
                "游玩统计。玩家问“你记得我什么”“我玩了几天”时使用。"
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "what": {"type": "string", "enum": ["all", "profile", "saves", "stats"]},
                    "save": {"type": "string", "description": "只看这个存档（名称）"},
                },
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": SEARCH,
            "description": (
                "只读搜索当前存档的记忆和共同记忆（可以换个说法、用中文或英文名字）。"
                "当上面“你记得的事”没有回答玩家的问题时使用；最多返回 5 条。"
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "query": {"type": "string", "maxLength": 200, "description": "要找什么"},
                    "kind": {"type": "string", "enum": list(KINDS)},
                },
                "required": ["query"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": CORRECT,
            "description": (
                "整体替换共同记忆的一个字段（不是追加）。只在玩家明确纠正时使用，"
                '例如“我其实更喜欢自动化，把共同爱好改一下”→ field=hobbies, value=["自动化"]。'
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "field": {"type": "string", "enum": list(_CAMEL_FIELDS)},
                    "value": {
                        "anyOf": [
                            {"type": "string", "maxLength": 200},
                            {"type": "array", "items": {"type": "string"}, "maxItems": 8},
                        ]
                    },
                },
                "required": ["field", "value"],
                "additionalProperties": False,
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": FORGET,
            "description": (
                "删除记忆：一条(item)、一个存档(save)、一个游戏(game)、共同记忆(profile)或全部(all)。"
                "第一次调用（不带 confirmToken）只返回将被删除的内容和确认码，什么都不删；"
                "把预览告诉玩家并请玩家确认。只有玩家在之后的一句话里明确同意后，"
                "才用同样的目标和确认码再调用一次。默认不删除游玩统计（includeStats）。"
            ),
            "parameters": {
                "type": "object",
                "properties": {
                    "target": {
                        "type": "string",
                        "enum": ["item", "save", "game", "profile", "all"],
                    },
                    "save": {"type": "string", "description": "存档名称；默认当前存档"},
                    "item": {"type": "integer", "minimum": 1, "description": "条目编号 #"},
                    "includeStats": {"type": "boolean"},
                    "confirmToken": {"type": "string"},
                },
                "required": ["target"],
                "additionalProperties": False,
            },
        },
    },
]


class ToolCall(msgspec.Struct, frozen=True):
    """One tool call the model made: its id, the function name and the raw JSON arguments."""

    id: str
    name: str
    arguments: str


# -- arguments ------------------------------------------------------------------------------


class _ViewArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    what: Literal["all", "profile", "saves", "stats"] = "all"
    save: str | None = None


class _SearchArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    query: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    kind: MemoryKind | None = None


class _CorrectArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    field: str
    value: str | list[str]


class _ForgetArgs(msgspec.Struct, forbid_unknown_fields=True, rename="camel"):
    target: Literal["item", "save", "game", "profile", "all"]
    save: str | None = None
    item: int | None = None
    include_stats: bool = False
    confirm_token: str | None = None


# -- what the shell runs (answered by ToolAnswered) -----------------------------------------


class ViewOp(msgspec.Struct, frozen=True):
    """Read the overview of ``game_id`` (or only the save named ``save``)."""

    game_id: str
    save: str | None = None
    what: str = "all"


class SearchOp(msgspec.Struct, frozen=True):
    """Search ``scope``'s memories and the shared profile for ``query`` (never another save).

    ``day``: the save's in-game day, when known (later-day memories stay out).
    """

    scope: Scope
    query: str
    kind: str | None = None
    day: int | None = None


class CorrectOp(msgspec.Struct, frozen=True):
    """Replace the shared-profile field ``field`` (snake_case) with ``value``."""

    field: str
    value: str | list[str]


class PreviewOp(msgspec.Struct, frozen=True):
    """Resolve ``save`` among ``current``'s game's saves and preview the forget."""

    current: Scope
    kind: str
    save: str | None
    item: int | None
    include_stats: bool


class ApplyOp(msgspec.Struct, frozen=True):
    """Delete what ``spec`` names (a token was redeemed for it)."""

    spec: ForgetSpec


ToolOp = ViewOp | SearchOp | CorrectOp | PreviewOp | ApplyOp


class ToolFailure(msgspec.Struct, frozen=True):
    """The store refused or failed; ``message`` is safe to show."""

    code: str
    message: str


ToolAnswer = Overview | SearchResult | SharedProfile | ForgetPreview | ForgetResult | ToolFailure


def parse_call(call: ToolCall, current: Scope, day: int | None = None) -> ToolOp | str:
    """The operation a call asks for, or the error text to return as its result.

    ``day`` is the current save's in-game day, when known (for a search).

    Confirmed forgets (with a token) come back as the raw :class:`_ForgetArgs`
    wrapped by :func:`confirming`; see :class:`Confirmations`.
    """
    try:
        if call.name == VIEW:
            view = msgspec.json.decode(call.arguments or "{}", type=_ViewArgs)
            return ViewOp(current.game_id, view.save, view.what)
        if call.name == SEARCH:
            search = msgspec.json.decode(call.arguments or "{}", type=_SearchArgs)
            query = normalize(search.query).strip()
            if not query:
                return "错误：搜索需要 query"
            return SearchOp(current, query, search.kind, day)
        if call.name == CORRECT:
            correct = msgspec.json.decode(call.arguments or "{}", type=_CorrectArgs)
            field = _CAMEL_FIELDS.get(correct.field)
            if field is None:
                return f"错误：没有共同记忆字段 {correct.field[:40]!r}"
            return CorrectOp(field, correct.value)
        if call.name == FORGET:
            forget = msgspec.json.decode(call.arguments or "{}", type=_ForgetArgs)
            if forget.target == "item" and forget.item is None:
                return "错误：删除一条记忆需要条目编号 item"
            return PreviewOp(current, forget.target, forget.save, forget.item, forget.include_stats)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"错误：参数不对（{str(exc)[:120]}）"
    return f"错误：没有工具 {call.name[:60]!r}"


def confirm_token(call: ToolCall) -> str | None:
    """The ``confirmToken`` of a forget call, if it carries one."""
    if call.name != FORGET:
        return None
    try:
        return msgspec.json.decode(call.arguments or "{}", type=_ForgetArgs).confirm_token
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


# -- confirmation tokens (memory.manage.Confirmations) -------------------------------------

REFUSED: dict[Refusal, str] = {
    "unknown": "确认码无效或已经用过，什么都没删。需要的话重新预览。",
    "expired": "确认码已过期（超过 2 分钟），什么都没删。需要的话重新预览。",
    "other_target": "确认码属于另一个删除目标，什么都没删。",
    "too_soon": "还没有得到玩家的确认：先把预览告诉玩家，等玩家同意后再用确认码。",
}


def names_target(call: ToolCall, current: Scope, preview: ForgetPreview) -> bool:
    """Whether a confirming forget call names the same target as ``preview``."""
    try:
        args = msgspec.json.decode(call.arguments or "{}", type=_ForgetArgs)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False
    spec = preview.spec
    if (args.target, args.include_stats) != (spec.kind, spec.include_stats):
        return False
    if spec.kind == "item" and args.item != spec.item_id:
        return False
    if spec.kind in ("item", "save"):
        labels = {spec.save_id} | {v.name for v in preview.saves if v.name}
        wanted = args.save if args.save is not None else current.save_id
        return wanted in labels or (args.save is None and spec.scope == current)
    return True


# -- rendering results ----------------------------------------------------------------------


def _item(event: MemoryEvent) -> str:
    pin = "，已固定" if event.pinned else ""
    return f"  #{event.id} [{event.kind}/{event.status}{pin}] {event.subject}：{event.summary}"


def _profile(profile: SharedProfile) -> list[str]:
    lines = []
    for camel, name in _CAMEL_FIELDS.items():
        value = getattr(profile, name)
        if value:
            shown = "、".join(value) if isinstance(value, list) else value
            lines.append(f"  {camel}: {shown}")
    lines.append(f"  autoShared（自动形成共同记忆）: {'开' if profile.auto_shared else '关'}")
    return lines


def _overview(answer: Overview, current: Scope, what: str) -> list[str]:
    lines: list[str] = []
    if what in ("all", "profile"):
        lines += ["共同记忆：", *_profile(answer.profile)]
    if what in ("all", "saves"):
        for view in answer.saves:
            mark = "（当前存档）" if view.scope == current else ""
            lines.append(f"存档「{view.label}」{mark}，{view.scope.game_id}：")
            lines += [_item(e) for e in view.events] or ["  （没有记忆）"]
    if what in ("all", "stats"):
        for s in answer.stats.saves:
            if s.game_id == current.game_id:
                label = s.save_name or s.save_id
                minutes = s.active_ms // 60_000
                lines.append(f"统计「{label}」：{s.days} 天，{s.sessions} 次，{minutes} 分钟")
        for g in answer.stats.games:
            lines.append(f"统计 {g.game_id}：共 {g.days} 天")
    return lines


def _search(answer: SearchResult) -> list[str]:
    """At most :data:`MAX_SEARCH_RESULTS` whole lines within :data:`MAX_SEARCH_CHARS`."""
    head = "搜索结果（只含当前存档和共同记忆）："
    found = [_item(e) for e in answer.events] + [f"  共同记忆 {line}" for line in answer.profile]
    if not found:
        return ["没有找到相关的记忆（只搜索了当前存档和共同记忆）。"]
    lines, used = [head], len(head)
    for line in found[:MAX_SEARCH_RESULTS]:
        if used + 1 + len(line) > MAX_SEARCH_CHARS:
            break
        lines.append(line)
        used += 1 + len(line)
    return lines


def find_save(name: str, overview: Overview) -> Scope | None:
    """The save of ``overview`` named ``name`` (readable name or id, compared normalised)."""
    wanted = normalize(name).strip().casefold()
    for view in overview.saves:
        if wanted in (normalize(view.label).strip().casefold(), view.scope.save_id.casefold()):
            return view.scope
    return None


def _no_such_save(name: str) -> str:
    return f"错误：这个游戏没有叫「{name[:40]}」的存档"


def narrow(op: ViewOp, overview: Overview) -> Overview | ToolFailure:
    """``overview`` of this game narrowed to the save ``op.save`` names (all saves without one)."""
    if op.save is None:
        return overview
    found = find_save(op.save, overview)
    if found is None:
        return ToolFailure("not_found", _no_such_save(op.save))
    saves = tuple(v for v in overview.saves if v.scope == found)
    return msgspec.structs.replace(overview, saves=saves)


def resolve(op: PreviewOp, overview: Overview) -> ForgetSpec | str:
    """The forget target ``op`` names, with its save found among this game's saves.

    ``overview`` holds the saves of ``op.current``'s game; a save is named by its
    readable name or its id (compared after normalising). Returns the spec or
    the error text for the model.
    """
    game = op.current.game_id
    if op.kind == "profile":
        return ForgetSpec(kind="profile")
    if op.kind == "all":
        return ForgetSpec(kind="all", include_stats=op.include_stats)
    if op.kind == "game":
        return ForgetSpec(kind="game", game_id=game, include_stats=op.include_stats)
    scope = op.current
    if op.save is not None:
        found = find_save(op.save, overview)
        if found is None:
            return _no_such_save(op.save)
        scope = found
    kind: ForgetKind = "item" if op.kind == "item" else "save"
    return ForgetSpec(
        kind=kind,
        game_id=scope.game_id,
        save_id=scope.save_id,
        item_id=op.item if kind == "item" else None,
        include_stats=op.include_stats and kind == "save",
    )


def render(
    answer: ToolAnswer, *, current: Scope, token: str | None = None, what: str = "all"
) -> str:
    """The tool result text for ``answer`` (redacted; saves by readable name).

    ``what`` narrows a view: ``profile``, ``saves``, ``stats`` or ``all``.
    """
    lines: list[str] = []
    match answer:
        case ToolFailure(message=message):
            lines.append(f"失败：{message}")
        case SharedProfile():
            lines += ["已整体替换。现在的共同记忆：", *_profile(answer)]
        case Overview():
            lines += _overview(answer, current, what)
        case SearchResult():
            lines += _search(answer)
        case ForgetPreview():
            if not answer.found:
                lines.append("没有找到这条记忆，什么都不会删。")
            else:
                lines.append("将要删除（还没有删）：")
                for view in answer.saves:
                    lines.append(f"存档「{view.label}」（{view.scope.game_id}）：")
                    lines += [_item(e) for e in view.events]
                if answer.profile_fields:
                    lines.append("共同记忆字段：" + "、".join(answer.profile_fields))
                stats = "、".join(answer.names.get(s, s.save_id) for s in answer.stats_saves)
                lines.append(f"游玩统计：{'也会删除 ' + stats if stats else '保留'}")
                lines.append(f"确认码：{token}（2 分钟内有效，只能用一次）")
                lines.append("请先告诉玩家将删除什么（说明属于哪个存档），玩家同意后再确认。")
        case ForgetResult():
            lines.append(
                f"已删除 {answer.items} 条记忆"
                + ("，共同记忆已清空" if answer.profile_cleared else "")
                + (
                    f"，{answer.stats_saves} 个存档的游玩统计"
                    if answer.stats_saves
                    else "，游玩统计保留"
                )
                + "。游戏存档文件不受影响。"
            )
    return redact("\n".join(lines))[0]


def assistant_message(text: str, calls: tuple[ToolCall, ...]) -> dict[str, Any]:
    """The assistant message that carried ``calls``, to send back with their results."""
    return {
        "role": "assistant",
        "content": text or None,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ],
    }


def tool_message(call_id: str, content: str) -> dict[str, Any]:
    return {"role": "tool", "tool_call_id": call_id, "content": content}
