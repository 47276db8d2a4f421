"""The server's own confirmation question and the announcements of deletions, sans-I/O.

A companion's forget preview is answered by a question the **server** writes,
not the model (v1.md "Memory tools"), in the player's language, naming what
goes; it ends the preview turn's reply and goes in ``memory.confirm.request``.
A chat yes counts for it only in the next player turn, and only when the
preview turn's reply asked nothing else (:func:`asks_other`): a "好" to the
model's "要不要去钓鱼？" deletes nothing.

Every deletion and restore is announced with a ``memory.notice`` frame.
"""

from __future__ import annotations

import re
from typing import Final

import msgspec

from xtyserver.memory.manage import ForgetPreview, ForgetResult, RestoreResult
from xtyserver.protocol.memory_frames import MemoryNotice
from xtyserver.protocol.normalize import normalize
from xtyserver.session.consent import BROAD_KINDS
from xtyserver.session.replies import iso_time, wire_name


class AskTexts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The question and the announcements, Chinese and English (``[texts.ask]``).

    Placeholders: ``{save}`` (a save's readable name), ``{subject}`` (an item's
    subject), ``{items}``, ``{saves}``, ``{fields}`` (counts), ``{what}`` (what
    went), ``{hours}`` (how long the trash keeps it).

    Attributes:
        item: The question before one memory item is deleted.
        save: The question before a save's memory is deleted.
        game: The question before a game's memory is deleted.
        profile: The question before the shared profile is cleared.
        all: The question before all memory is deleted.
        hint_one: How to answer a question about one item.
        hint_broad: How to answer a question about more than one item.
        item_en: ``item`` in English.
        save_en: ``save`` in English.
        game_en: ``game`` in English.
        profile_en: ``profile`` in English.
        all_en: ``all`` in English.
        hint_one_en: ``hint_one`` in English.
        hint_broad_en: ``hint_broad`` in English.
        forgotten: The notice after a deletion the trash keeps.
        forgotten_final: The notice after a deletion with the trash off.
        restored: The notice after a restore from the trash.
        forgotten_en: ``forgotten`` in English.
        forgotten_final_en: ``forgotten_final`` in English.
        restored_en: ``restored`` in English.
    """

    item: str = "要删掉存档「{save}」里的这条记忆「{subject}」吗？"
    save: str = "要删掉存档「{save}」的全部记忆（{items} 条）吗？"
    game: str = "要删掉这个游戏的全部记忆（{saves} 个存档、{items} 条）吗？"
    profile: str = "要清空共同记忆（{fields} 项）吗？"
    all: str = "要删掉全部记忆（{saves} 个存档、{items} 条，以及共同记忆）吗？"
    hint_one: str = "（说“好”就删，说“不”就不删）"
    hint_broad: str = "（确定的话请说“确认删除”，说“不”就不删）"
    item_en: str = 'Delete the memory "{subject}" of the save "{save}"?'
    save_en: str = 'Delete all memory of the save "{save}" ({items} items)?'
    game_en: str = "Delete all memory of this game ({saves} saves, {items} items)?"
    profile_en: str = "Clear the shared profile ({fields} fields)?"
    all_en: str = "Delete all memory ({saves} saves, {items} items, and the shared profile)?"
    hint_one_en: str = '(say "yes" to delete it, "no" to keep it)'
    hint_broad_en: str = '(say "delete it" to confirm, "no" to keep it)'
    forgotten: str = (
        "已删除{what}。{hours} 小时内可以恢复：对小汤圆说“恢复”，或在记忆页面的回收站里恢复。"
    )
    forgotten_final: str = "已删除{what}，不能恢复（回收站已关闭）。"
    restored: str = "已从回收站恢复 {items} 条记忆{fields}。"
    forgotten_en: str = (
        "Deleted {what}. It can be restored for {hours} h: tell XiaoTangYuan to restore it, "
        "or use the trash on the memory page."
    )
    forgotten_final_en: str = "Deleted {what}; it cannot be restored (the trash is off)."
    restored_en: str = "Restored {items} items from the trash{fields}."


_WHAT: Final = {
    "item": ("{items} 条记忆", "{items} memory item(s)"),
    "save": ("这个存档的记忆（{items} 条）", "this save's memory ({items} items)"),
    "game": ("这个游戏的记忆（{items} 条）", "this game's memory ({items} items)"),
    "profile": ("共同记忆", "the shared profile"),
    "all": (
        "全部记忆（{items} 条）和共同记忆",
        "all memory ({items} items) and the shared profile",
    ),
}


def is_english(language: str) -> bool:
    """Whether the profile's ``language`` asks for English (else Chinese)."""
    return language.strip().lower().startswith(("en", "english", "英"))


def question(preview: ForgetPreview, texts: AskTexts, language: str) -> str:
    """The server's question for ``preview``, naming what goes, in the player's language."""
    english = is_english(language)
    kind = preview.spec.kind
    first = preview.saves[0] if preview.saves else None
    events = first.events if first is not None else ()
    values = {
        "save": first.label if first is not None else (preview.spec.save_id or ""),
        "subject": events[0].subject if events else "",
        "items": preview.item_count,
        "saves": len(preview.saves),
        "fields": len(preview.profile_fields),
    }
    suffix = "_en" if english else ""
    asked = getattr(texts, kind + suffix).format(**values)
    hint = getattr(texts, ("hint_broad" if kind in BROAD_KINDS else "hint_one") + suffix)
    return f"{asked}{' ' if english else ''}{hint}"


# A question of the model's: a clause ending in ? (full-width folded by the normal
# form), a Chinese question particle, or an A-not-A form (要不要, 好不好, ...).
_QUESTION_BREAK: Final = re.compile(r"(?<=[?])|[。.!\n;]+")
_ASKS: Final = re.compile(r"\?|吗|呢|么|(.)不\1|要不|是否|shall we|do you want|want to|would you")
_ABOUT_DELETION: Final = re.compile(r"删|清空|清除|忘掉|抹掉|delete|erase|wipe|remove|forget")


def asks_other(reply: str) -> bool:
    """Whether the model's ``reply`` asks the player something not about the deletion."""
    for clause in _QUESTION_BREAK.split(normalize(reply).casefold()):
        if _ASKS.search(clause) and not _ABOUT_DELETION.search(clause):
            return True
    return False


class Question(msgspec.Struct, frozen=True):
    """A question the server asked the player about a previewed forget."""

    token: str
    kind: str
    text: str


def forgotten_notice(
    result: ForgetResult,
    target: str,
    texts: AskTexts,
    language: str,
    *,
    now: float,
    chat_id: str | None = None,
    frame_id: str | None = None,
) -> MemoryNotice:
    """The ``memory.notice`` announcing a deletion: what went, how to undo it, until when."""
    english = is_english(language)
    what = _WHAT.get(target, _WHAT["item"])[1 if english else 0].format(items=result.items)
    until = result.expires_at if result.trash_id is not None else None
    if until is not None:
        hours = max(0, round((until - now) / 3600))
        template = texts.forgotten_en if english else texts.forgotten
        text = template.format(what=what, hours=f"{hours:g}")
    else:
        text = (texts.forgotten_final_en if english else texts.forgotten_final).format(what=what)
    return MemoryNotice(
        action="forgotten",
        target=target,
        items=result.items,
        profile_cleared=result.profile_cleared,
        stats_saves=result.stats_saves,
        trash_id=result.trash_id,
        restorable_until=iso_time(until),
        text=text,
        chat_id=chat_id,
        id=frame_id,
    )


def restored_notice(
    result: RestoreResult, texts: AskTexts, language: str, *, chat_id: str | None = None
) -> MemoryNotice:
    """The ``memory.notice`` announcing a restore from the trash."""
    english = is_english(language)
    fields = [wire_name(f) for f in result.profile_fields]
    shown = ""
    if fields:
        shown = (
            f", shared profile: {', '.join(fields)}"
            if english
            else f"，共同记忆：{'、'.join(fields)}"
        )
    template = texts.restored_en if english else texts.restored
    return MemoryNotice(
        action="restored",
        target=result.spec.kind,
        items=result.items,
        profile_fields=fields,
        trash_id=result.trash_id,
        text=template.format(items=result.items, fields=shown),
        chat_id=chat_id,
    )
