"""The companion's memory tools, sans-I/O (v1.md "Memory tools").

Offered to the model in the game chat turns that may need them
(:mod:`~xtyserver.session.tool_offer`) through the OpenAI tool-calling
interface (schemas and argument Structs in :mod:`~xtyserver.session.tool_schemas`,
result texts in :mod:`~xtyserver.session.tool_results`). Pure: this module
parses a call's arguments into a typed operation the shell runs against the
memory service and checks what the player's words allow.

A forget is never done on the model's word alone: the first call returns a
preview and a single-use token (``memory.manage.TOKEN_TTL``); only a second call with it,
in a later turn whose player text is an explicit yes
(:mod:`~xtyserver.session.consent`), deletes. A shared-profile correction is
written only when the player said the new value and it passes the guard.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import msgspec
from msgspec import UNSET

from xtyserver.memory import shared_guard
from xtyserver.memory.commands import Forget, Restore, Search
from xtyserver.memory.manage import (
    ForgetKind,
    ForgetPreview,
    ForgetResult,
    ForgetSpec,
    Overview,
    Refusal,
    RestoreResult,
)
from xtyserver.memory.retrieval import SearchResult
from xtyserver.memory.types import Scope, SharedProfile
from xtyserver.protocol.normalize import normalize
from xtyserver.session.consent import unsaid
from xtyserver.session.tool_schemas import (
    ARGUMENTS,
    CORRECT_FIELDS,
    CorrectArgs,
    ForgetArgs,
    RestoreArgs,
    SearchArgs,
    ViewArgs,
)

MAX_CALLS_PER_TURN = 4
MAX_SEARCH_RESULTS = 5
MAX_SEARCH_CHARS = 600


class ToolCall(msgspec.Struct, frozen=True):
    """One tool call the model made: its id, the function name and the raw JSON arguments."""

    id: str
    name: str
    arguments: str


# -- what the shell runs (answered by ToolAnswered) -----------------------------------------


class ViewOp(msgspec.Struct, frozen=True):
    """Read the overview of ``game_id`` (or only the save named ``save``)."""

    game_id: str
    save: str | None = None
    what: str = "all"


class CorrectOp(msgspec.Struct, frozen=True):
    """Replace the profile field ``field`` (snake_case); the shell calls guard_correction first."""

    field: str
    value: str | list[str]
    save: Scope
    context_names: tuple[str, ...] = ()


class PreviewOp(msgspec.Struct, frozen=True):
    """Resolve ``save`` among ``current``'s game's saves and preview the forget."""

    current: Scope
    kind: str
    save: str | None
    item: int | None


ToolOp = ViewOp | Search | CorrectOp | PreviewOp | Forget | Restore
"""What the shell runs: a command of the vocabulary, or a tool's own step that names a
save by its readable name (a view, a preview) or guards a correction first."""


class Confirming(msgspec.Struct, frozen=True):
    """A forget call carrying a ``confirmToken``: the tool loop redeems it or refuses."""

    token: str
    args: ForgetArgs


class ToolFailure(msgspec.Struct, frozen=True):
    """The store refused or failed; ``message`` is safe to show."""

    code: str
    message: str


ToolAnswer = (
    Overview
    | SearchResult
    | SharedProfile
    | ForgetPreview
    | ForgetResult
    | RestoreResult
    | ToolFailure
)


def _arguments(call: ToolCall) -> Any:
    """The call's arguments as a JSON object; ``null`` values count as absent."""
    value = msgspec.json.decode(call.arguments or "{}")
    if not isinstance(value, dict):
        raise msgspec.ValidationError("the arguments must be a JSON object")
    # includeStats is refused in any form, null included (it is not the model's).
    return {k: v for k, v in value.items() if v is not None or k == "includeStats"}


def parse_call(
    call: ToolCall,
    current: Scope,
    day: int | None = None,
    *,
    player_text: str = "",
    context_names: tuple[str, ...] = (),
    offered: tuple[str, ...] | None = None,
) -> ToolOp | Confirming | str:
    """The operation a call asks for, or the error text to return as its result.

    ``player_text`` (this turn's words) must hold a correction's value; ``offered``
    (None: every tool) is all that runs, whatever the model was talked into.
    """
    kind = ARGUMENTS.get(call.name)
    if kind is None:
        return f"错误：没有工具 {call.name[:60]!r}"
    if offered is not None and call.name not in offered:
        return f"错误：这一轮没有提供工具 {call.name[:60]!r}"
    try:
        args = msgspec.convert(_arguments(call), type=kind)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        return f"错误：参数不对（{str(exc)[:120]}），什么都没做"
    match args:
        case ViewArgs(what=what, save=save):
            return ViewOp(current.game_id, None if save is UNSET else save, what)
        case SearchArgs(query=query, kind=wanted):
            text = normalize(query).strip()
            if not text:
                return "错误：搜索需要 query"
            only = None if wanted is UNSET else wanted
            return Search(scope=current, query=text, kind=only, day=day, limit=MAX_SEARCH_RESULTS)
        case CorrectArgs(field=field, value=value):
            missing = unsaid(value, player_text, field)
            if missing is not None:
                return (
                    f"没有改：玩家这句话没有把「{missing[:40]}」说成这个字段的值。只能用玩家这一轮"
                    "原话里作为值说出的词整体替换共同记忆字段（如“叫我小明”里的“小明”；列表的每一项"
                    "都要是玩家说过的）。"
                )
            return CorrectOp(CORRECT_FIELDS[field], value, current, context_names)
        case RestoreArgs(trash=trash):
            return Restore(trash_id=None if trash is UNSET else trash, game_id=current.game_id)
        case ForgetArgs(confirm_token=str() as token):
            return Confirming(token, args)
        case ForgetArgs(target=target, save=save, item=item):
            if target == "item" and item is UNSET:
                return "错误：删除一条记忆需要条目编号 item"
            return PreviewOp(
                current,
                target,
                None if save is UNSET else save,
                None if item is UNSET else item,
            )
    return f"错误：没有工具 {call.name[:60]!r}"  # pragma: no cover - every Struct is matched


# -- what the player's words allow ---------------------------------------------------------


def guard_correction(op: CorrectOp, save_texts: Iterable[str]) -> str | None:
    """Why ``op`` may not be written, as the model's result text, or None when it may.

    The extraction's rules (:func:`~xtyserver.memory.shared_guard.refusal`), with the
    current save's memory texts (``save_texts``) and modelContext names.
    """
    texts = [*save_texts, *op.context_names]
    items = op.value if isinstance(op.value, list) else [op.value]
    for item in items:
        why = shared_guard.refusal(item, texts)
        if why is not None:
            return f"没有改：共同记忆会出现在每个游戏里，不能写入这类内容（{GUARD_REASONS[why]}）。"
    return None


GUARD_REASONS: dict[shared_guard.Refusal, str] = {
    "save_specific": "这个存档里的人物、地点或计划",
    "character": "对玩家性格的评价",
    "inference": "猜测",
    "roleplay": "可能是角色扮演",
    "sensitive": "敏感的个人信息",
}


# -- confirmation tokens (memory.manage.Confirmations) -------------------------------------

REFUSED: dict[Refusal, str] = {
    "unknown": "确认码无效或已经用过，什么都没删。需要的话重新预览。",
    "expired": "确认码已过期（超过 2 分钟），什么都没删。需要的话重新预览。",
    "other_target": "确认码属于另一个删除目标，什么都没删。",
    "too_soon": "还没有得到玩家的确认：先把预览告诉玩家，等玩家同意后再用确认码。",
    "not_agreed": "玩家没有明确同意，什么都没删。",
    "declined": "玩家拒绝了，什么都没删，这个确认码已作废。",
    "needs_person": "这种删除要玩家本人回答，什么都没删。",
    "too_many": "最近删得太多了，什么都没删。",
    "unquoted": "确认时没有原样引用预览的目标，什么都没删。",
    "not_asked": "玩家没有要求恢复，什么都没恢复。",
}
"""Default result texts of refused tokens (``not_agreed`` comes from the session's texts)."""

DIALOG_DECIDED: dict[str, str] = {
    "yes": "玩家已经在确认框里同意了，那次删除已经完成，不用再确认。",
    "no": "玩家在确认框里拒绝了，什么都没删，这个确认码已作废。",
}
"""Results of a confirming call whose token the player already answered in a dialog."""


def names_target(args: ForgetArgs, current: Scope, preview: ForgetPreview) -> bool:
    """Whether a confirming forget call's ``args`` name the same target as ``preview``."""
    spec = preview.spec
    if args.target != spec.kind or spec.include_stats:
        return False
    item = None if args.item is UNSET else args.item
    if spec.kind == "item" and item != spec.item_id:
        return False
    if spec.kind in ("item", "save"):
        labels = {spec.save_id} | {v.name for v in preview.saves if v.name}
        named = None if args.save is UNSET else args.save
        wanted = named if named is not None else current.save_id
        return wanted in labels or (named is None and spec.scope == current)
    return True


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
    """The forget target ``op`` names (its save found in ``overview``), or the error text."""
    game = op.current.game_id
    if op.kind == "profile":
        return ForgetSpec(kind="profile")
    if op.kind == "all":
        return ForgetSpec(kind="all")
    if op.kind == "game":
        return ForgetSpec(kind="game", game_id=game)
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
    )


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
