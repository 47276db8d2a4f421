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

from xtyserver.memory.commands import BROAD_KINDS
from xtyserver.memory.manage import ForgetPreview, ForgetResult, RestoreResult
from xtyserver.protocol.memory_frames import MemoryNotice
from xtyserver.protocol.normalize import normalize
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
        confirm_save: The exact words that confirm forgetting a save (``{words}`` of the hint).
        confirm_game: The exact words that confirm forgetting a game.
        confirm_profile: The exact words that confirm clearing the shared profile.
        confirm_all: The exact words that confirm forgetting everything.
        confirm_save_en: ``confirm_save`` in English (either language's words confirm).
        confirm_game_en: ``confirm_game`` in English.
        confirm_profile_en: ``confirm_profile`` in English.
        confirm_all_en: ``confirm_all`` in English.
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
    hint_broad: str = "（确定的话请一字不差地说“{words}”，说别的都不删）"
    item_en: str = 'Delete the memory "{subject}" of the save "{save}"?'
    save_en: str = 'Delete all memory of the save "{save}" ({items} items)?'
    game_en: str = "Delete all memory of this game ({saves} saves, {items} items)?"
    profile_en: str = "Clear the shared profile ({fields} fields)?"
    all_en: str = "Delete all memory ({saves} saves, {items} items, and the shared profile)?"
    hint_one_en: str = '(say "yes" to delete it, "no" to keep it)'
    hint_broad_en: str = '(to confirm, say exactly "{words}"; anything else keeps it)'
    confirm_save: str = "确认删除存档记忆"
    confirm_game: str = "确认删除游戏记忆"
    confirm_profile: str = "确认清空共同记忆"
    confirm_all: str = "确认删除全部记忆"
    confirm_save_en: str = "delete save memory"
    confirm_game_en: str = "delete game memory"
    confirm_profile_en: str = "clear shared profile"
    confirm_all_en: str = "delete all memory"
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


class Question(msgspec.Struct, frozen=True):
    """A question the server asked the player about a previewed forget."""

    token: str
    kind: str
    text: str
    # The exact words that confirm a broad target (either language); none for an item.
    expected: tuple[str, ...] = ()


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


def expected_words(kind: str, texts: AskTexts) -> tuple[str, ...]:
    """The exact words that confirm forgetting ``kind`` (Chinese, English); none for an item."""
    if kind not in BROAD_KINDS:
        return ()
    return (getattr(texts, f"confirm_{kind}"), getattr(texts, f"confirm_{kind}_en"))


def question(preview: ForgetPreview, texts: AskTexts, language: str) -> Question:
    """The server's question for ``preview``, naming what goes, in the player's language.

    A broad target's question asks for its own exact words, naming the target;
    an item's for a plain yes. The token is filled in by the caller.
    """
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
    expected = expected_words(kind, texts)
    hint = getattr(texts, ("hint_broad" if expected else "hint_one") + suffix)
    hint = hint.format(words=expected[1 if english else 0]) if expected else hint
    return Question("", kind, f"{asked}{' ' if english else ''}{hint}", expected)


# Anything the model's reply asks or proposes, with or without a question mark:
# a ? anywhere (full-width folded by the normal form); a Chinese question or
# proposal word anywhere (吗, 呢, 咋样, 如何, 好伐, 要不要, 是否...); A-not-A
# (去不去, 钓鱼不钓鱼, 行不行); a clause ending in a tag (…不, …没, …吧, …伐, ok,
# right, alright); an English asking phrase (how about, shall we, do you...).
# The words of the question do not matter: 「要不要把杂草清除掉」 asks about weeds.
_ASKS: Final = re.compile(
    r"\?|吗|呢|么|嘛|咋样|咋办|咋说|怎样|如何|好伐|行伐|可好|成不|中不|要不|是否|是不是|有没有"
    r"|可不可以|能不能|愿不愿|你觉得|你看|你说|来一|走起|咱们|我们一起|一起去"
    r"|(..?)不\1|(.)没\2"
    r"|(?<![a-z'])(?:how about|what about|shall we|should we|shall i|should i|do you|did you"
    r"|would you|will you|could you|can you|can we|want to|wanna|why not|let's|lets|sound good"
    r"|sounds good|how's that|how does|what do you|yes or no|are you|ready to)(?![a-z'])"
)
_TAG_END: Final = re.compile(
    r"(?:不|没|没有|吧|伐|否|么|哈|呗|不咯|不啦|(?<![a-z'])(?:ok|okay|right|alright|yeah|eh|huh"
    r"|yes|no|ya|k))$"
)
_CLAUSE: Final = re.compile(r"[^\w\s']+|\n")
_TRAIL: Final = re.compile(r"[\s~～〜…]+$")


def asks_other(reply: str) -> bool:
    """Whether the model's ``reply`` asks or proposes anything at all.

    The server asks its own question; one from the model, whatever its
    words (a deletion word included), would be answered by the same "好", so
    the server's question lapses and the companion asks again later.
    """
    plain = normalize(reply).casefold()
    if _ASKS.search(plain):
        return True
    clauses = (_TRAIL.sub("", c).strip() for c in _CLAUSE.split(plain))
    return any(_TAG_END.search(c) for c in clauses if c)


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
