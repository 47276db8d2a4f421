"""The prompt of a line the companion speaks up with (docs/speakup.md). Pure code.

A proactive line is small by construction: the persona and the rules, the
companion's name and the reply style, what just happened (the event's kind and
facts), a few lines of the game state and at most two memories of this save,
each part clipped to its share of :data:`LINE_PROMPT_TOKENS`, counted the way
:func:`prompt_tokens` counts (a CJK character a token, three other characters
a token: more than a real tokenizer counts for either).
"""

from __future__ import annotations

import math

from xtyserver.memory.retrieval import MemoryBudget, MemorySelection, select_memories
from xtyserver.memory.types import Scope
from xtyserver.protocol.budget import freshness
from xtyserver.protocol.event_frames import GameEvent
from xtyserver.protocol.frames import ContextUse, ModelContext
from xtyserver.session.events import SaveMemory
from xtyserver.session.layers import (
    InjectionRecord,
    LayerBudget,
    cost,
    identity_parts,
    injected,
    style_text,
)
from xtyserver.session.prompt import MEMORY_HEAD, PromptTexts, fence, one_line, render_facts
from xtyserver.session.turn import TurnPlan, focus_terms

LINE_PROMPT_TOKENS = 600
"""The most a proactive line's whole prompt may take (issue 38: ≤ 600 tokens)."""

# Each part's share (counted by prompt_tokens); with the fences, the instruction
# and 4 tokens of each message's framing they stay under LINE_PROMPT_TOKENS.
SYSTEM_TOKENS = 270
PROFILE_TOKENS = 50
EVENT_TOKENS = 60
FACTS_TOKENS = 100
MEMORY_TOKENS = 80
CUE_TOKENS = 12
MESSAGE_OVERHEAD = 4

# What each kind means, as the model reads it (Chinese: the prompt's language).
EVENT_LABELS: dict[str, str] = {
    "health_low": "玩家生命值很低",
    "stamina_low": "玩家体力快用完了",
    "night_falling": "天快黑了（黄昏）",
    "danger_near": "附近有危险",
    "festival_tomorrow": "明天有节日",
    "birthday_tomorrow": "明天是一位村民的生日",
    "quest_done": "玩家刚完成了一个任务",
    "milestone_done": "玩家刚达成了一个里程碑",
    "player_died": "玩家刚刚死了",
    "season_changed": "季节刚换了",
    "day_ended": "这一天结束了",
    "sanity_low": "玩家理智值很低",
    "boss_near": "附近出现了首领（Boss）",
    "oxygen_low": "殖民地的氧气不足",
    "food_low": "殖民地的食物不足",
    "new_duplicant": "殖民地来了一个新复制人",
}

# The memories a line may bring: few and short.
LINE_MEMORY = MemoryBudget(goals=1, relevant=2, recent=0, total_chars=400)


def prompt_tokens(text: str) -> int:
    """A generous count of a text's tokens: each non-ASCII character one, three ASCII ones one."""
    wide = sum(1 for ch in text if ord(ch) > 0x7F)
    return wide + math.ceil((len(text) - wide) / 3)


def clip_tokens(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` tokens (:func:`prompt_tokens`), ``…`` marking a cut."""
    if prompt_tokens(text) <= limit:
        return text
    wide = narrow = 0
    for i, ch in enumerate(text):
        if ord(ch) > 0x7F:
            wide += 1
        else:
            narrow += 1
        if wide + math.ceil(narrow / 3) > limit - 1:  # room for the ellipsis
            return text[:i] + "…"
    return text


def event_text(event: GameEvent) -> str:
    """What happened, as one short data line: the kind's meaning and the facts."""
    parts = [EVENT_LABELS.get(event.kind, event.kind)]
    facts = event.facts
    if facts is not None:
        # The numbers first: a long name is what a clip cuts.
        if facts.value is not None:
            full = "" if facts.max_value is None else f"/{_number(facts.max_value)}"
            parts.append(f"数值：{_number(facts.value)}{full}")
        if facts.count is not None:
            parts.append(f"数量：{facts.count}")
        if facts.subject:
            parts.append(f"对象：{one_line(facts.subject)}")
        if facts.place:
            parts.append(f"地点：{one_line(facts.place)}")
    return "游戏里刚发生：" + "；".join(parts)


def _number(value: float) -> str:
    return str(int(value)) if value.is_integer() else f"{value:g}"


def event_query(event: GameEvent) -> str:
    """What the line's memories are searched by: the kind's meaning and the named things."""
    facts = event.facts
    names = [t for t in ((facts.subject, facts.place) if facts is not None else ()) if t]
    return " ".join([EVENT_LABELS.get(event.kind, event.kind), *names])


def plan_line(
    *,
    save: Scope,
    event: GameEvent,
    context: ModelContext | None,
    captured: float | None,
    day: int | None,
    memory: SaveMemory | None,
    now: float,
    persona: str,
    rules: str,
    cue: str,
    texts: PromptTexts,
    layers: LayerBudget,
    stale_after: float,
    drop_after: float,
) -> TurnPlan:
    """The model call of one proactive line about ``event`` (see the module docstring).

    ``rules``: what the model is asked to do (``Texts.speakup_rules``), after the persona;
    ``cue``: the words after the data that ask for the line (``Texts.speakup_cue``).
    """
    facts = ""
    use: ContextUse = "none"
    if context is not None:
        captured = captured if captured is not None else now
        age = now - captured
        use = freshness(age, stale_after=stale_after, drop_after=drop_after)
        if use != "dropped":
            facts = clip_tokens(render_facts(context, use, age), FACTS_TOKENS)
    profile = memory.profile if memory is not None else None
    own, companion = identity_parts(persona, profile, layers)
    data_rules = texts.rules.replace("{tag}", texts.tag)
    # A long persona is what gives way: the rules of a line come whole.
    told = "\n".join(p for p in (data_rules, rules) if p)
    room = SYSTEM_TOKENS - prompt_tokens(told) - 1
    own = clip_tokens(own, room) if room > 0 else ""
    system = clip_tokens("\n".join(p for p in (own, told) if p), SYSTEM_TOKENS)
    cue = clip_tokens(cue, CUE_TOKENS)
    stable = clip_tokens(
        "\n".join(p for p in (companion, style_text(profile, layers)) if p), PROFILE_TOKENS
    )
    selection = MemorySelection()
    if memory is not None and memory.index is not None:
        query = event_query(event)
        selection = select_memories(
            None,
            memory.index,
            query_text=query,
            focus_terms=focus_terms(context),
            current_day=day,
            now=now,
            budget=LINE_MEMORY,
            similar=memory.similar,
            chatter=memory.chatter,
            generic=dict(memory.generic) if memory.generic else None,
        )
    remembered = selection.render()
    memory_text = clip_tokens(MEMORY_HEAD + remembered, MEMORY_TOKENS) if remembered else ""
    what = clip_tokens(event_text(event), EVENT_TOKENS)
    data = fence((stable, memory_text, facts, what), texts.tag)
    messages = [
        {"role": "system", "content": system},
        {"role": "user", "content": f"{data}\n{cue}"},
    ]
    record = InjectionRecord(
        at=now,
        game_id=save.game_id,
        save_id=save.save_id,
        layers=(
            cost("identity", [system]),
            cost("style", [stable]),
            cost("memory", [memory_text]),
            cost("current", [facts, what, cue]),
        ),
        memories=injected(selection),
        context=use,
        window_rounds=0,
        summary=False,
        image=False,
    )
    return TurnPlan(messages, use, tuple(selection.used_ids), False, record)


def messages_tokens(messages: list[dict[str, object]]) -> int:
    """The tokens of a text-only request's messages with their framing (:func:`prompt_tokens`)."""
    return sum(MESSAGE_OVERHEAD + prompt_tokens(str(m["content"])) for m in messages)
