"""Scoring the evaluation: what each prompt carried, the figures, the baseline (pure).

A turn is scored from the chat request the model received. Its messages are
split into the prompt's layers (``xtyserver.session.prompt``): the system
message is the persona (with the rules; any later system message is
``other``); the fenced data blocks of user messages are split into sections by
their heads: the companion's name and setting (counted with the persona),
:data:`STYLE_HEAD`, :data:`PROFILE_HEAD`, :data:`MEMORY_HEAD` (the save's
memories), :data:`SUMMARY_HEAD` (the session summary), :data:`FACTS_HEAD` (the
game facts); the fences' tags and the assistant's answer to the early data
block are ``fence``; the rest of the last user message is the player's text,
and the other user/assistant turns are the history. A profile field counts as
injected when it is in the style or profile layer.
Tokens are :func:`~xtyserver.memory.tokenize.approx_tokens` estimates.

Memories are recognised by the text the store holds (after its normalisation):
an event counts as injected when its stored summary is in the memory layer,
and as a leak when a summary of another save's event is anywhere in the prompt.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from xtyeval.evalset import PROFILE_PREFIX, QUESTION_KINDS, EvalSet, Question
from xtyserver.memory.tokenize import approx_tokens
from xtyserver.memory.types import SharedProfile
from xtyserver.session.layers import COMPANION_NAME_HEAD, COMPANION_PERSONA_HEAD
from xtyserver.session.prompt import DATA_TAG, unfence

MEMORY_HEAD = "你记得的事"
FACTS_HEAD = "当前游戏状态"
STYLE_HEAD = "说话方式"
PROFILE_HEAD = "关于玩家"
SUMMARY_HEAD = "本次会话前面聊过的"
COMPANION_HEADS = (COMPANION_NAME_HEAD, COMPANION_PERSONA_HEAD)
_SECTIONS = (
    *((head, "persona") for head in COMPANION_HEADS),
    (STYLE_HEAD, "style"),
    (PROFILE_HEAD, "profile"),
    (MEMORY_HEAD, "memory"),
    (SUMMARY_HEAD, "summary"),
    (FACTS_HEAD, "facts"),
)
LAYERS = (
    "persona",
    "style",
    "profile",
    "memory",
    "summary",
    "facts",
    "history",
    "player",
    "other",
    "fence",
    "tools",
)
"""Prompt layers; ``other`` is any text of no known layer, ``fence`` the fences' tags and the
answer to the early data, ``tools`` the tool schemas."""


class Loaded(msgspec.Struct, frozen=True):
    """What the store holds after loading the set.

    Attributes:
        events: Event key -> (save label, summary as stored).
        profile: The shared profile as stored.
    """

    events: dict[str, tuple[str, str]]
    profile: SharedProfile
    ids: dict[str, int] = msgspec.field(default_factory=dict)


class Turn(msgspec.Struct, frozen=True):
    """One question as the runner saw it.

    Attributes:
        request: The chat request body the model received (None if none came).
        first_ms: Milliseconds from ``chat.send`` to the first ``chat.delta``.
        done_ms: Milliseconds from ``chat.send`` to the final frame.
        error: What went wrong instead of a ``chat.done``, or None.
        via: Injected event id -> how it matched (the injection log's ``via``).
    """

    question: str
    request: dict[str, Any] | None
    first_ms: float
    done_ms: float
    error: str | None = None
    via: dict[int, str] = msgspec.field(default_factory=dict)


class QuestionResult(msgspec.Struct, frozen=True):
    """The score of one question."""

    key: str
    save: str
    expected: list[str]
    recalled: list[str]
    injected: list[str]
    leaked: list[str]
    wrong: list[str]
    tokens: dict[str, int]
    first_ms: float
    done_ms: float
    error: str | None = None
    kind: str = "literal"
    # Recalled event key -> the retrieval paths that found it ("words+vectors"; "" when
    # its section took it without a match: an active goal, "recent and important").
    paths: dict[str, str] = msgspec.field(default_factory=dict)

    @property
    def others(self) -> int:
        """Memories of the same save injected that the question does not expect."""
        return sum(1 for k in self.injected if k not in self.expected)


class Stats(msgspec.Struct, frozen=True):
    mean: float
    p50: float
    p95: float
    max: float


class SaveRow(msgspec.Struct, frozen=True):
    """Totals of one save (or of all, as ``save="all"``, or of one question kind).

    ``others_mean``: same-save memories injected per turn that the question
    does not expect (better recall must not come from injecting more).
    """

    save: str
    questions: int
    expected: int
    recalled: int
    recall: float
    leaks: int
    wrong: int
    injected_mean: float
    errors: int
    others_mean: float = 0.0


class Summary(msgspec.Struct, frozen=True):
    """The figures of one run."""

    set: str
    saves: list[SaveRow]
    total: SaveRow
    tokens: dict[str, Stats]
    latency_ms: dict[str, Stats]
    kinds: list[SaveRow] = msgspec.field(default_factory=list)


class Baseline(msgspec.Struct, frozen=True, rename="camel"):
    """The committed reference a run is compared with."""

    set: str
    recall: float
    leaks: int
    wrong: int
    recalled: dict[str, list[str]]
    tokens_mean: dict[str, float]
    latency_ms: dict[str, float]


class Finding(msgspec.Struct, frozen=True):
    """One line of the comparison; ``fail`` makes the command exit 1."""

    fail: bool
    message: str


def message_text(message: Mapping[str, Any]) -> str:
    """The text of one message (string content or its text parts)."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, Mapping))
    return ""


def _sections(data: str, parts: dict[str, list[str]]) -> None:
    """Add the sections of one fenced data block to their layers (by the head of each line)."""
    layer = "other"
    for line in data.split("\n"):
        layer = next((name for head, name in _SECTIONS if line.startswith(head)), layer)
        parts[layer].append(line)


def layer_texts(request: Mapping[str, Any]) -> dict[str, str]:
    """The request's text per prompt layer (see the module docstring)."""
    messages = [m for m in request.get("messages", []) if isinstance(m, Mapping)]
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    parts: dict[str, list[str]] = {name: [] for name in LAYERS}
    after_data = False
    for i, m in enumerate(messages):
        text = message_text(m)
        role = m.get("role")
        if role == "system":
            parts["persona" if i == 0 else "other"].append(text)
            continue
        data, rest = unfence(text) if role == "user" else ("", text)
        if data:
            parts["fence"].append(f"<{DATA_TAG}></{DATA_TAG}>")
            _sections(data, parts)
        if i == last_user:
            parts["player"].append(rest)
        elif after_data and role == "assistant":
            parts["fence"].append(rest)  # the answer to the early data block
        elif rest:
            parts["history"].append(rest)
        after_data = bool(data) and i != last_user
    tools = request.get("tools")
    if tools:
        parts["tools"].append(msgspec.json.encode(tools).decode())
    return {name: "\n".join(texts) for name, texts in parts.items()}


def _profile_in(field: str, profile: SharedProfile, text: str) -> bool:
    value = getattr(profile, field)
    items = value if isinstance(value, list) else [value]
    wanted = [str(v) for v in items if v not in ("", None)]
    return bool(wanted) and all(v in text for v in wanted)


def score_turn(save: str, question: Question, turn: Turn, loaded: Loaded) -> QuestionResult:
    """Score one question of ``save`` (a save label) from what the model received."""
    texts = layer_texts(turn.request or {})
    memory = texts["memory"]
    shared = texts["style"] + "\n" + texts["profile"]
    prompt = "\n".join(texts.values())

    def injected(key: str) -> bool:
        if key.startswith(PROFILE_PREFIX):
            return _profile_in(key.removeprefix(PROFILE_PREFIX), loaded.profile, shared)
        return loaded.events[key][1] in memory

    own = [k for k, (label, _) in loaded.events.items() if label == save]
    recalled = [k for k in question.expect if injected(k)]
    paths = {
        k: turn.via.get(loaded.ids[k], "")
        for k in recalled
        if k in loaded.ids and loaded.ids[k] in turn.via
    }
    return QuestionResult(
        key=question.key,
        save=save,
        expected=list(question.expect),
        recalled=recalled,
        injected=[k for k in own if injected(k)],
        leaked=[k for k, (label, s) in loaded.events.items() if label != save and s in prompt],
        wrong=[k for k in question.must_not if injected(k)],
        tokens={name: approx_tokens(text) for name, text in texts.items()},
        first_ms=turn.first_ms,
        done_ms=turn.done_ms,
        error=turn.error if turn.request is not None else turn.error or "no model request",
        kind=question.kind,
        paths=paths,
    )


def score(evalset: EvalSet, turns: Sequence[Turn], loaded: Loaded) -> list[QuestionResult]:
    """Score every question; a question without a turn counts as an error."""
    by_key = {t.question: t for t in turns}
    missing = Turn("", None, math.nan, math.nan, "not run")
    return [
        score_turn(save.label, q, by_key.get(q.key, missing), loaded)
        for save, q in evalset.questions()
    ]


PATHS = ("words", "glossary", "keys", "vectors", "hop", "section")
"""How a recalled memory was found: each retrieval path, or its section alone."""


def path_counts(results: Sequence[QuestionResult]) -> dict[str, int]:
    """Recalled memories each path took part in finding (a memory may count for two)."""
    counts = dict.fromkeys(PATHS, 0)
    for result in results:
        for via in result.paths.values():
            for part in via.split("+") if via else ("section",):
                counts[part] = counts.get(part, 0) + 1
    return counts


def stats(values: Sequence[float]) -> Stats:
    """Mean, nearest-rank p50/p95 and max (zeros for no values)."""
    xs = sorted(v for v in values if not math.isnan(v))
    if not xs:
        return Stats(0.0, 0.0, 0.0, 0.0)

    def rank(p: float) -> float:
        return xs[max(0, math.ceil(p * len(xs)) - 1)]

    return Stats(sum(xs) / len(xs), rank(0.5), rank(0.95), xs[-1])


def _row(name: str, results: Sequence[QuestionResult]) -> SaveRow:
    expected = sum(len(r.expected) for r in results)
    recalled = sum(len(r.recalled) for r in results)
    return SaveRow(
        save=name,
        questions=len(results),
        expected=expected,
        recalled=recalled,
        recall=recalled / expected if expected else 1.0,
        leaks=sum(len(r.leaked) for r in results),
        wrong=sum(len(r.wrong) for r in results),
        injected_mean=sum(len(r.injected) for r in results) / len(results) if results else 0.0,
        errors=sum(r.error is not None for r in results),
        others_mean=sum(r.others for r in results) / len(results) if results else 0.0,
    )


def summarize(evalset: EvalSet, results: Sequence[QuestionResult]) -> Summary:
    """The figures of a run: per save, in total, tokens per layer and latency."""
    rows = [_row(s.label, [r for r in results if r.save == s.label]) for s in evalset.saves]
    tokens = {name: stats([r.tokens.get(name, 0) for r in results]) for name in LAYERS}
    tokens["total"] = stats([sum(r.tokens.values()) for r in results])
    latency = {
        "first_delta": stats([r.first_ms for r in results]),
        "done": stats([r.done_ms for r in results]),
    }
    # Per question kind; probes (no expected memory) are left out of the kinds.
    asked = [r for r in results if r.expected]
    kinds = [_row(kind, [r for r in asked if r.kind == kind]) for kind in QUESTION_KINDS]
    paraphrase = [r for r in asked if r.kind != "literal"]
    if paraphrase:
        kinds.append(_row("paraphrase (all but literal)", paraphrase))
    kinds = [row for row in kinds if row.questions]
    return Summary(evalset.name, rows, _row("all", results), tokens, latency, kinds)


def make_baseline(summary: Summary, results: Sequence[QuestionResult]) -> Baseline:
    """The baseline to commit for this run."""
    return Baseline(
        set=summary.set,
        recall=round(summary.total.recall, 4),
        leaks=summary.total.leaks,
        wrong=summary.total.wrong,
        recalled={r.key: r.recalled for r in results},
        tokens_mean={k: round(v.mean, 1) for k, v in summary.tokens.items()},
        latency_ms={
            "p50": round(summary.latency_ms["done"].p50, 2),
            "p95": round(summary.latency_ms["done"].p95, 2),
        },
    )


def compare(
    summary: Summary, results: Sequence[QuestionResult], baseline: Baseline | None
) -> list[Finding]:
    """Compare a run with the baseline: leaks, errors and lower recall fail."""
    total = summary.total
    out: list[Finding] = []
    if total.leaks:
        leaks = [f"{r.key}: {', '.join(r.leaked)}" for r in results if r.leaked]
        out.append(Finding(True, f"{total.leaks} cross-scope leak(s): " + "; ".join(leaks)))
    if total.errors:
        bad = [f"{r.key}: {r.error}" for r in results if r.error is not None]
        out.append(Finding(True, f"{total.errors} turn(s) failed: " + "; ".join(bad)))
    if baseline is None:
        out.append(Finding(False, "no baseline to compare with"))
        return out
    if baseline.set != summary.set:
        out.append(Finding(True, f"the baseline is for set {baseline.set!r}, not {summary.set!r}"))
        return out
    drop = total.recall < baseline.recall - 1e-4
    word = "dropped" if drop else "kept"
    msg = f"recall {word}: {total.recall:.4f} (baseline {baseline.recall:.4f})"
    out.append(Finding(drop, msg))
    lost = [
        f"{r.key} lost {k}"
        for r in results
        for k in baseline.recalled.get(r.key, [])
        if k not in r.recalled
    ]
    if lost:
        out.append(Finding(False, "no longer recalled: " + "; ".join(lost)))
    if total.wrong > baseline.wrong:
        msg = f"wrong same-save memories rose: {total.wrong} (baseline {baseline.wrong})"
        out.append(Finding(True, msg))
    mean_total = summary.tokens["total"].mean
    was = baseline.tokens_mean.get("total", 0.0)
    out.append(Finding(False, f"prompt tokens per turn: {mean_total:.1f} (baseline {was:.1f})"))
    return out
