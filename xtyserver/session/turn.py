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

from xtyserver.memory.aliases import used
from xtyserver.memory.retrieval import MemoryBudget, MemorySelection, select_memories
from xtyserver.memory.shown_names import alias_terms
from xtyserver.memory.types import Scope
from xtyserver.protocol.budget import freshness
from xtyserver.protocol.frames import ContextUse, ModelContext
from xtyserver.protocol.images import PreparedImage
from xtyserver.session.events import SaveMemory
from xtyserver.session.layers import (
    InjectionRecord,
    LayerBudget,
    cost,
    identity_parts,
    injected,
    profile_text,
    style_text,
)
from xtyserver.session.prompt import (
    MEMORY_HEAD,
    PromptTexts,
    build_messages,
    render_facts,
)

NAMES_HEAD = "【玩家的叫法】"
MAX_NAMES_NOTED = 3
"""The player's own names one turn's memory block spells out (those its text says)."""


class TurnPlan(msgspec.Struct, frozen=True):
    """What one turn sends to the model, and the memory ids it used (to mark as used)."""

    messages: list[dict[str, Any]]
    context_use: ContextUse
    used_ids: tuple[int, ...]
    image_sent: bool
    injection: InjectionRecord


def focus_terms(context: ModelContext | None) -> list[str]:
    """Names the player is looking at or near, to steer memory retrieval."""
    if context is None:
        return []
    terms: list[str] = []
    if context.focus is not None:
        terms += [t for t in (context.focus.name, context.focus.kind) if t]
    if context.player is not None:
        # What the player holds is what they ask about, by its id and as the game shows it.
        terms += [t for t in (context.player.held_item, context.player.held_item_name) if t]
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
    summary: str = "",
    image: PreparedImage | None,
    now: float,
    persona: str,
    texts: PromptTexts | None = None,
    budget: MemoryBudget,
    layers: LayerBudget | None = None,
    stale_after: float,
    drop_after: float,
    shown: Sequence[tuple[str, str]] = (),
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
        summary: The rendered session summary (working memory), or "".
        now: The time of the turn (freshness and recency).
        persona: The companion's system prompt.
        texts: The rules after the persona, the answer to the early data, the fence's name.
        layers: The budgets of the identity, style and profile layers.
        stale_after: Seconds after which the context is marked stale.
        drop_after: Seconds after which the context is left out.
        shown: ``(id, name as the game shows it)`` pairs seen on this save, aliases of
            the glossary entries the ids name (:mod:`xtyserver.memory.shown_names`).
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
    layers = layers or LayerBudget()
    profile = memory.profile if memory is not None else None
    shared = profile_text(profile, layers)
    selection = MemorySelection()
    names_note = ""
    if memory is not None and memory.index is not None:
        index = memory.index
        # The player's own names the text says, so the model reads 小暖 as 暖石 too.
        said = used(index.aliases, text)[:MAX_NAMES_NOTED] if index.aliases else []
        if said:
            names_note = NAMES_HEAD + "；".join(f"{a.alias} = {a.means}" for a in said)
        # The profile has its own layer; the memory layer holds this save's events (and
        # the names), in what the cap on all long-term memory (total_chars) leaves after it.
        left = budget.total_chars - len(shared) - (len(names_note) + 1 if names_note else 0)
        budget = msgspec.structs.replace(budget, total_chars=max(left, 0))
        aliases = (
            alias_terms(index.glossary, text, index.query_terms(text), shown) if shown else set()
        )
        selection = select_memories(
            None,
            index,
            query_text=text,
            also_asked=aliases,
            focus_terms=focus_terms(context),
            current_day=day,
            now=now,
            budget=budget,
            similar=memory.similar,
            chatter=memory.chatter,
            generic=dict(memory.generic) if memory.generic else None,
        )
    memory_text = "\n".join(part for part in (names_note, selection.render()) if part)
    texts = texts or PromptTexts()
    identity, companion = identity_parts(persona, profile, layers)
    style = style_text(profile, layers)
    image_url = image.data_url() if image is not None else None
    messages = build_messages(
        identity=identity,
        companion=companion,
        style=style,
        profile=shared,
        memory_text=memory_text,
        summary_text=summary,
        history=history,
        facts_text=facts,
        text=text,
        image_url=image_url,
        texts=texts,
    )
    memory_layer = [MEMORY_HEAD + memory_text] if memory_text else []
    rounds = [part for pair in history for part in pair]
    system = messages[0]["content"]
    fences = sum(
        1 for part in ((companion, style, shared, summary), (*memory_layer, facts)) if any(part)
    )
    # The fences' own tags and the answer to the early data (the rest is counted by layer).
    tags = [f"<{texts.tag}>", f"</{texts.tag}>"] * fences
    if any((companion, style, shared, summary)):
        tags.append(texts.ack)
    record = InjectionRecord(
        at=now,
        game_id=save.game_id,
        save_id=save.save_id,
        layers=(
            cost("identity", [system, companion]),
            cost("style", [style]),
            cost("profile", [shared]),
            cost("memory", [*memory_layer, summary]),
            cost("window", rounds),
            cost("current", [facts, text]),
            cost("fence", tags),
        ),
        memories=injected(selection),
        context=use,
        window_rounds=len(history),
        summary=bool(summary),
        image=image is not None,
        unembedded=memory.unembedded if memory is not None else 0,
    )
    return TurnPlan(messages, use, tuple(selection.used_ids), image is not None, record)
