"""Planning one turn: facts, memories, prompt and what to mark as used (v1.md "The model call").

A pure function of plain data: :func:`plan_turn` takes what the session knows
when a turn's inputs are all there (the player's redacted text, the newest
modelContext, the save's memory, the recent turns, the prepared screenshot)
and returns the model request and the memory ids it used. No I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import msgspec

from xtyserver.memory.retrieval import MemoryBudget, SaveIndex, select_memories
from xtyserver.memory.types import Scope
from xtyserver.model.prompt import build_messages, render_facts
from xtyserver.protocol.budget import freshness
from xtyserver.protocol.frames import ContextUse, ModelContext
from xtyserver.protocol.images import PreparedImage
from xtyserver.session.events import SaveMemory


class TurnPlan(msgspec.Struct, frozen=True):
    """What one turn sends to the model.

    Attributes:
        messages: The chat-completions ``messages``.
        context_use: How the newest modelContext was used (``chat.done.context``).
        used_ids: Memory ids injected into the prompt (to mark as used).
        image_sent: Whether the screenshot is part of ``messages``.
    """

    messages: list[dict[str, Any]]
    context_use: ContextUse
    used_ids: tuple[int, ...]
    image_sent: bool


def focus_terms(context: ModelContext | None) -> list[str]:
    """Names the player is looking at or near, to steer memory retrieval."""
    if context is None:
        return []
    terms: list[str] = []
    if context.focus is not None:
        terms += [t for t in (context.focus.name, context.focus.kind) if t]
    for entity in context.nearby or ():
        if entity.name:
            terms.append(entity.name)
    if context.world is not None and context.world.location:
        terms.append(context.world.location)
    return terms


def plan_turn(
    *,
    save: Scope,
    text: str,
    context: ModelContext | None,
    day: int | None,
    memory: SaveMemory | None,
    captured: float | None = None,
    history: Sequence[tuple[str, str]],
    image: PreparedImage | None,
    now: float,
    persona: str,
    budget: MemoryBudget,
    stale_after: float,
    drop_after: float,
) -> TurnPlan:
    """Plan the model call of one turn.

    Args:
        save: The save the turn is asked in (only its memory is searched).
        text: The player's text, already redacted.
        context: The newest modelContext of this save, or None.
        captured: When ``context`` was captured (its ``capturedAt``, else when it
            was received); None reads ``capturedAt`` (or takes ``now``).
        day: The save's in-game day, when known (later-day memories are left out).
        memory: The profile and the save's memory index, or None without memory.
        history: Recent (player, companion) turns to include, oldest first.
        image: The prepared screenshot, or None.
        now: The time of the turn (freshness and recency).
        persona: The companion's system prompt.
        budget: The memory budget.
        stale_after: Seconds after which the context is marked stale.
        drop_after: Seconds after which the context is left out.
    """
    use: ContextUse = "none"
    facts = ""
    if context is not None:
        if captured is None:
            captured = context.captured_at.timestamp() if context.captured_at else now
        age = now - captured
        use = freshness(age, stale_after=stale_after, drop_after=drop_after)
        if use != "dropped":
            facts = render_facts(context, use, age)
    memory_text = ""
    used: tuple[int, ...] = ()
    if memory is not None and (memory.profile is not None or memory.index is not None):
        selection = select_memories(
            memory.profile,
            memory.index if memory.index is not None else SaveIndex(save),
            query_text=text,
            focus_terms=focus_terms(context),
            current_day=day,
            now=now,
            budget=budget,
        )
        memory_text = selection.render()
        used = tuple(selection.used_ids)
    messages = build_messages(
        persona=persona,
        memory_text=memory_text,
        facts_text=facts,
        history=history,
        text=text,
        image_url=image.data_url() if image is not None else None,
    )
    return TurnPlan(messages, use, used, image is not None)
