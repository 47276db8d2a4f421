"""The memory evaluation set: its types and its consistency checks (pure).

One JSON document (``eval/memory-v1.json``) holds a shared profile and, per
save, a readable name, a base modelContext, the events to load and the
questions to ask. A question names the memories that should be injected
(``expect``: event keys of its own save or ``profile:<field>``), same-save
events that must not be (``mustNot``, e.g. formed on a later in-game day), and
for a probe, the other save's events it asks about (``about``). Every question
is also checked for text of any other save's events (a cross-scope leak).
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from xtyserver.errors import UsageError
from xtyserver.memory.tokenize import tokenize
from xtyserver.memory.types import (
    PROFILE_FIELDS,
    GameDay,
    GameIdText,
    Importance,
    MemoryKind,
    MemoryStatus,
    NewEvent,
    SaveIdText,
    Scope,
    SharedProfile,
    Subject,
    Summary,
)

PROFILE_PREFIX = "profile:"

QuestionKind = Literal["literal", "cross-language", "synonym", "context", "indirect"]
QUESTION_KINDS: tuple[QuestionKind, ...] = (
    "literal",
    "cross-language",
    "synonym",
    "context",
    "indirect",
)
"""``literal`` questions may share words with their memories; the other kinds
(the paraphrase part) share no token with them, modelContext names included."""


class _Part(msgspec.Struct, frozen=True, kw_only=True, rename="camel", forbid_unknown_fields=True):
    """A part of the set as written in JSON (camelCase keys, unknown keys refused)."""


class EvalEvent(_Part, frozen=True):
    """One memory to load; ``age_hours`` before the set's start it was last updated."""

    key: str
    kind: MemoryKind
    subject: Subject
    summary: Summary
    importance: Importance = 3
    status: MemoryStatus = "active"
    day: GameDay | None = None
    age_hours: float = 24.0
    # What an extraction call returns with this memory (names in both languages,
    # aliases, synonyms, the topic): the scripted model's answer to the enrichment job.
    keys: list[str] = msgspec.field(default_factory=list)

    def new_event(self) -> NewEvent:
        """The event as the store takes it."""
        return NewEvent(
            kind=self.kind,
            subject=self.subject,
            summary=self.summary,
            importance=self.importance,
            status=self.status,
            day=self.day,
        )


class Question(_Part, frozen=True):
    """One player turn and what its prompt should (not) carry.

    Attributes:
        key: Unique id.
        text: What the player says.
        expect: Keys that should be injected (own events or ``profile:<field>``).
        must_not: Own-save event keys that must not be injected.
        about: Other saves' event keys a probe asks about (documentation; every
            question is checked against every other save anyway).
        context: Top-level modelContext parts replacing the save's base ones.
        kind: ``literal``, or how a paraphrase question names its memory:
            ``cross-language``, ``synonym``, ``context`` (only the modelContext
            relates to it) or ``indirect`` (a description instead of the name).
    """

    key: str
    text: str
    kind: QuestionKind = "literal"
    expect: list[str] = msgspec.field(default_factory=list)
    must_not: list[str] = msgspec.field(default_factory=list)
    about: list[str] = msgspec.field(default_factory=list)
    context: dict[str, Any] = msgspec.field(default_factory=dict)


class EvalSave(_Part, frozen=True):
    """One save: its memories, its usual game state and its questions."""

    game: GameIdText
    save: SaveIdText
    name: str
    context: dict[str, Any]
    events: list[EvalEvent]
    questions: list[Question]
    # Ended play sessions before the set's start, (started, ended) in hours before it:
    # what 上次玩的时候 and 下线前 refer to.
    plays: list[tuple[float, float]] = msgspec.field(default_factory=list)

    @property
    def scope(self) -> Scope:
        return Scope(self.game, self.save)

    @property
    def label(self) -> str:
        return f"{self.game}/{self.save}"


class EvalSet(_Part, frozen=True):
    """The whole set; ``start`` is the epoch second the run's clock starts at."""

    name: str
    start: float
    profile: dict[str, Any]
    saves: list[EvalSave]
    notes: str = ""

    def shared_profile(self) -> SharedProfile:
        """The profile, validated as the store's type."""
        return msgspec.convert(self.profile, SharedProfile)

    def questions(self) -> list[tuple[EvalSave, Question]]:
        return [(save, q) for save in self.saves for q in save.questions]


def question_context(save: EvalSave, question: Question) -> dict[str, Any]:
    """The question's modelContext without ``capturedAt``: the save's, parts replaced."""
    return {"schemaVersion": 1, **save.context, **question.context}


def parse_set(data: bytes) -> EvalSet:
    """Decode and check an evaluation set.

    Raises:
        UsageError: Not a valid set (the message says what is wrong).
    """
    try:
        evalset = msgspec.json.decode(data, type=EvalSet)
        evalset.shared_profile()
    except msgspec.ValidationError as exc:
        raise UsageError(f"evaluation set: {exc}") from None
    problems = check_set(evalset)
    if problems:
        raise UsageError("evaluation set: " + "; ".join(problems))
    return evalset


def check_set(evalset: EvalSet) -> list[str]:
    """What makes the set unusable (empty when it is fine)."""
    problems: list[str] = []
    owner: dict[str, str] = {}
    scopes = set()
    for save in evalset.saves:
        if save.scope in scopes:
            problems.append(f"save {save.label} appears twice")
        scopes.add(save.scope)
        seen: set[tuple[str, str]] = set()
        for ev in save.events:
            if ev.key in owner:
                problems.append(f"event key {ev.key} appears twice")
            owner[ev.key] = save.label
            if (ev.kind, ev.subject) in seen:
                problems.append(f"{ev.key}: kind and subject repeat in {save.label} (would merge)")
            seen.add((ev.kind, ev.subject))
    problems += _check_questions(evalset, owner)
    problems += _check_texts(evalset)
    problems += _check_paraphrases(evalset)
    return problems


def context_names(context: dict[str, Any]) -> list[str]:
    """The names a turn's retrieval reads from a modelContext (``session.turn.focus_terms``)."""
    names: list[str] = []
    focus = context.get("focus") or {}
    names += [str(focus[k]) for k in ("name", "kind") if focus.get(k)]
    names += [str(e["name"]) for e in context.get("nearby") or () if e.get("name")]
    world = context.get("world") or {}
    if world.get("location"):
        names.append(str(world["location"]))
    return names


def shared_tokens(save: EvalSave, question: Question, event: EvalEvent) -> set[str]:
    """Tokens a question (its text and modelContext names) shares with an event."""
    asked = " ".join((question.text, *context_names(question_context(save, question))))
    return set(tokenize(asked)) & set(tokenize(f"{event.subject} {event.summary}"))


def _check_paraphrases(evalset: EvalSet) -> list[str]:
    """A paraphrase question shares no token with the memories it expects."""
    problems = []
    for save in evalset.saves:
        events = {ev.key: ev for ev in save.events}
        for q in save.questions:
            if q.kind == "literal":
                continue
            for ref in q.expect:
                if ref not in events:
                    continue
                shared = shared_tokens(save, q, events[ref])
                if shared:
                    words = ", ".join(sorted(shared))
                    problems.append(f"{q.key}: a {q.kind} question shares {words} with {ref}")
    return problems


def _check_questions(evalset: EvalSet, owner: dict[str, str]) -> list[str]:
    problems: list[str] = []
    keys: set[str] = set()
    for save, q in evalset.questions():
        if q.key in keys:
            problems.append(f"question key {q.key} appears twice")
        keys.add(q.key)
        for ref in q.expect:
            if ref.startswith(PROFILE_PREFIX):
                if ref.removeprefix(PROFILE_PREFIX) not in PROFILE_FIELDS:
                    problems.append(f"{q.key}: unknown profile field in {ref}")
            elif owner.get(ref) != save.label:
                problems.append(f"{q.key}: expect {ref} is not an event of {save.label}")
        for ref in q.must_not:
            if owner.get(ref) != save.label:
                problems.append(f"{q.key}: mustNot {ref} is not an event of {save.label}")
        for ref in q.about:
            if ref not in owner or owner[ref] == save.label:
                problems.append(f"{q.key}: about {ref} is not an event of another save")
    return problems


def _check_texts(evalset: EvalSet) -> list[str]:
    """Leaks are found by summary text: no summary may occur in another summary or a question."""
    summaries = {ev.key: ev.summary for save in evalset.saves for ev in save.events}
    others = [q.text for _, q in evalset.questions()]
    problems = []
    for key, summary in summaries.items():
        inside = [k for k, s in summaries.items() if k != key and summary in s]
        if inside or any(summary in text for text in others):
            problems.append(f"{key}: its summary occurs inside another text")
    return problems
