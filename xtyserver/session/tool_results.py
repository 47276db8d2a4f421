"""The tool result texts of the companion's memory tools, sans-I/O (v1.md "Memory tools").

What the store answered, rendered for the model: redacted, saves named by
their readable name, the profile by its wire field names.
"""

from __future__ import annotations

from xtyserver.memory.manage import ForgetPreview, ForgetResult, Overview, RestoreResult
from xtyserver.memory.retrieval import SearchResult
from xtyserver.memory.types import EDITABLE_FIELDS, MemoryEvent, Scope, SharedProfile
from xtyserver.protocol.forbidden import redact
from xtyserver.session.tools import MAX_SEARCH_CHARS, MAX_SEARCH_RESULTS, ToolAnswer, ToolFailure

PROFILE_FIELDS = {f.wire: f.name for f in EDITABLE_FIELDS}
"""Every shared-profile field as a view shows it (wire name -> store name)."""


def _item(event: MemoryEvent) -> str:
    pin = "，已固定" if event.pinned else ""
    return f"  #{event.id} [{event.kind}/{event.status}{pin}] {event.subject}：{event.summary}"


def _profile(profile: SharedProfile) -> list[str]:
    lines = []
    for camel, name in PROFILE_FIELDS.items():
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
            # The player's own names for things on this save (they correct one by saying it).
            lines += [f"  玩家的叫法：{a.alias} = {a.means}" for a in view.aliases]
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


def render(
    answer: ToolAnswer,
    *,
    current: Scope,
    token: str | None = None,
    what: str = "all",
    question: str = "",
) -> str:
    """The tool result text for ``answer`` (redacted; saves by readable name).

    ``what`` narrows a view: ``profile``, ``saves``, ``stats`` or ``all``;
    ``question`` is the server's confirmation question of a preview.
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
                lines.append(
                    f"服务器会在你这次回复的末尾亲自问玩家：「{question}」。请简短告诉玩家将删除什么"
                    "（说明属于哪个存档），不要自己再问玩家任何问题：回复里问了别的，这次确认就作废。"
                    "只有玩家紧接着的下一句明确同意（删除存档、游戏、共同记忆或全部时要一字不差地说出问题里要求的那句话），"
                    "带确认码的调用才会删除。"
                )
        case ForgetResult(trash_id=trash):
            cleared = "，共同记忆已清空" if answer.profile_cleared else ""
            stats = (
                f"，{answer.stats_saves} 个存档的游玩统计"
                if answer.stats_saves
                else "，游玩统计保留"
            )
            undo = "" if trash is None else f"放进了回收站 #{trash}：玩家反悔时可以用恢复工具恢复。"
            lines.append(
                f"已删除 {answer.items} 条记忆{cleared}{stats}。游戏存档文件不受影响。{undo}"
            )
        case RestoreResult():
            fields = (
                f"，共同记忆字段：{'、'.join(answer.profile_fields)}"
                if answer.profile_fields
                else ""
            )
            lines.append(f"已从回收站 #{answer.trash_id} 恢复 {answer.items} 条记忆{fields}。")
    return redact("\n".join(lines))[0]
