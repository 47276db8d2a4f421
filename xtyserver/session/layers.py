"""The prompt's layers, their budgets and the injection log record (v1.md "The model call").

Pure code. The layers, in their fixed order:

1. ``identity``: the companion's persona (plus its name and setting from the profile);
2. ``style``: language and reply style from the profile;
3. ``profile``: the rest of the shared profile (nickname, hobbies, games, ...);
4. ``memory``: this save's retrieved memories and the session summary;
5. ``window``: the recent rounds as chat messages;
6. ``current``: the newest modelContext as facts, the player's text, the screenshot.

Which of them is a system message and which fenced data is said in
:mod:`xtyserver.session.prompt`. The injection log record of a turn holds
sizes, memory ids and scores, never any text.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from xtyserver.memory.retrieval import MemorySelection
from xtyserver.memory.tokenize import approx_tokens
from xtyserver.memory.types import SharedProfile
from xtyserver.protocol.frames import ContextUse

STYLE_HEAD = "说话方式："
PROFILE_HEAD = "关于玩家："
COMPANION_NAME_HEAD = "你的名字："
COMPANION_PERSONA_HEAD = "你的设定："
LAYERS = ("identity", "style", "profile", "memory", "window", "current", "fence", "tools")
"""The injection log's layers; ``fence``: the fences' tags and the answer to the early data;
``tools``: the schemas of the tools the turn offered (JSON)."""


class LayerBudget(msgspec.Struct, frozen=True, kw_only=True):
    """Per-layer limits in characters (the memory layer has its own ``MemoryBudget``).

    ``identity_chars`` holds the persona with the companion's name and setting.
    """

    identity_chars: int = 1500
    style_chars: int = 200
    profile_chars: int = 400


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(limit, 0)]


def identity_parts(
    persona: str, profile: SharedProfile | None, budget: LayerBudget
) -> tuple[str, str]:
    """Layer 1 as (the persona, the companion's name and setting), within ``identity_chars``.

    The persona goes into the system message; the name and setting, which the
    player wrote, are data (v1.md "The model call").
    """
    own = _clip(persona, budget.identity_chars)
    lines = []
    if profile is not None and profile.companion_name:
        lines.append(f"{COMPANION_NAME_HEAD}{profile.companion_name}")
    if profile is not None and profile.companion_persona:
        lines.append(f"{COMPANION_PERSONA_HEAD}{profile.companion_persona}")
    room = budget.identity_chars - len(own) - 1  # the newline between them
    data = _clip("\n".join(lines), room) if lines and room > 0 else ""
    return own, data


def style_text(profile: SharedProfile | None, budget: LayerBudget) -> str:
    """Layer 2: language and reply style, or "" when the profile names neither."""
    if profile is None:
        return ""
    values = [v for v in (profile.language, profile.reply_style) if v]
    return _clip(STYLE_HEAD + "；".join(values), budget.style_chars) if values else ""


def profile_text(profile: SharedProfile | None, budget: LayerBudget) -> str:
    """Layer 3: the rest of the shared profile, whole lines within ``profile_chars``."""
    if profile is None:
        return ""
    candidates = (
        ("称呼", profile.nickname),
        ("性格", "、".join(profile.personality)),
        ("爱好", "、".join(profile.hobbies)),
        ("一起玩过", "、".join(profile.games)),
        ("备注", "；".join(profile.notes)),
    )
    text = PROFILE_HEAD
    for label, value in candidates:
        line = f"\n- {label}：{value}"
        if value and len(text) + len(line) <= budget.profile_chars:
            text += line
    return "" if text == PROFILE_HEAD else text


class LayerCost(msgspec.Struct, frozen=True):
    """What one layer cost: characters and estimated tokens (``approx_tokens``)."""

    name: str
    chars: int
    tokens: int


class InjectedMemory(msgspec.Struct, frozen=True):
    """One memory that went into the prompt, why (its section) and its retrieval score.

    ``via``: how it matched the turn's text and modelContext names — ``words``,
    ``glossary`` (the game glossary's entities), ``keys`` (its search keys),
    joined by ``+`` — or "" when its section took it without a match.
    """

    id: int
    why: str
    score: float
    via: str = ""


class InjectionRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One turn in the injection log: sizes, ids and scores, never text.

    Attributes:
        at: When the turn was planned (epoch seconds).
        layers: The cost of each layer, in order.
        memories: The memories injected, with why and their score.
        context: Whether the newest modelContext was fresh, stale, dropped (or none).
        window_rounds: Rounds sent as chat messages.
        summary: Whether the session summary went in.
        image: Whether the screenshot went in.
        model: The model the request was sent to (filled in by the shell).
        unembedded: Memories of the save that had no vector yet for this turn
            (vectors on): what the turn could not compare by meaning.
    """

    at: float
    game_id: str
    save_id: str
    layers: tuple[LayerCost, ...]
    memories: tuple[InjectedMemory, ...]
    context: ContextUse
    window_rounds: int
    summary: bool
    image: bool
    model: str = ""
    unembedded: int = 0


def cost(name: str, texts: Sequence[str]) -> LayerCost:
    """The cost of a layer made of ``texts``."""
    return LayerCost(name, sum(map(len, texts)), sum(approx_tokens(t) for t in texts))


def injected(selection: MemorySelection) -> tuple[InjectedMemory, ...]:
    """The injected memories of ``selection`` with their section and score."""
    scores = dict(selection.scores)
    via = dict(selection.via)
    return tuple(
        InjectedMemory(ev.id, why, round(scores.get(ev.id, 0.0), 4), via.get(ev.id, ""))
        for why, events in (
            ("goal", selection.goals),
            ("relevant", selection.relevant),
            ("recent", selection.recent),
        )
        for ev in events
    )
