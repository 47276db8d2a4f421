"""Per-turn memory selection under a hard budget (pure).

Relevance is Okapi BM25 (``k1 = 1.2``, ``b = 0.75``, IDF never negative) over
:func:`~xtyserver.memory.tokenize.tokenize` tokens, a memory's search keys
counting :data:`KEY_WEIGHT` per occurrence. :class:`SaveIndex` holds the events
of ONE save (``MemoryStore.load_scope``, kept current by ``upsert``/``remove``),
so every search is confined to the current save; the shared profile never
takes part in one. Ranking follows Generative Agents (Park et al., 2023)::

    score = w_rel * bm25 / max_bm25 + w_rec * decay ** hours_since_used + w_imp * importance / 5

A memory unused for a day keeps 0.89 of its recency, for a week 0.43; relevance
weighs double so that what the player just said wins over what merely happened
lately. With a game glossary the index also holds the entities each memory
names (``@abigail``), so names meet across languages, ids and aliases; terms
found only in the modelContext's names count ``context_weight``.
An event is relevant when its score reaches ``min_relevance`` of the best one
among the events not injected already: better recall must not come from
injecting more, and a goal sharing a common word does not push real matches out.

With memory vectors (similarities computed by the shell), the candidates are
the lexical ones and the events near the query's cosine
(:func:`~xtyserver.memory.vectors.vector_candidates`), ordered by
:func:`~xtyserver.memory.vectors.unseen_first` and fused by reciprocal rank
(:func:`~xtyserver.memory.vectors.fuse`). Vectors reorder and replace (taking a
place of "recent and important"), they never make a turn inject more. A
question about what to do next or naming a time (:mod:`xtyserver.memory.cues`)
puts the active plans or the memories of those days in that place instead.

Sections, in priority order: profile lines > active goals > relevant events >
recent and important; no event appears twice. Events of an in-game day later
than the current one (an older save was loaded) are left out, never deleted.
Past ``total_chars`` whole items are dropped, lowest priority first.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from collections.abc import Set as AbstractSet

import msgspec

from xtyserver.errors import UsageError
from xtyserver.memory.aliases import PlayerAlias, alias_terms
from xtyserver.memory.cues import fits, read_cues
from xtyserver.memory.emoji import spell_emoji
from xtyserver.memory.focus import asks_several, negated_part, question_part
from xtyserver.memory.glossary import EMPTY_GAME, TERM_PREFIX, GameGlossary
from xtyserver.memory.hop import HOP_BRIDGES, second_hop
from xtyserver.memory.lexicon import Lexicon
from xtyserver.memory.numerals import NUMBER_PREFIX, number_terms
from xtyserver.memory.smalltalk import SMALL_TALK_MARGIN, asks_memory, is_small_talk
from xtyserver.memory.spelling import respell
from xtyserver.memory.tokenize import approx_tokens, tokenize
from xtyserver.memory.types import MemoryEvent, Scope, SharedProfile
from xtyserver.memory.vectors import (
    GENERIC_WEIGHT,
    centered,
    embedding_text,
    fuse,
    unseen_first,
    vector_candidates,
)

KIND_LABELS = {
    "goal": "目标",
    "decision": "决定",
    "promise": "约定",
    "relationship": "关系",
    "milestone": "里程碑",
    "event": "经历",
}
STATUS_LABELS = {"active": "", "done": "已完成", "dropped": "已放弃"}
SECTION_LABELS = {
    "profile": "【玩家档案】",
    "goals": "【目标】",
    "relevant": "【相关】",
    "recent": "【近期要事】",
}


KEY_WEIGHT = 0.5
"""What one occurrence of a term in a memory's search keys counts (a summary's: 1)."""
MEANINGS = (TERM_PREFIX, NUMBER_PREFIX)
"""The prefixes of the terms that stand for a meaning (a glossary entity, a number), not a word."""
QUERY_CACHE = 32
"""Texts whose query terms a :class:`SaveIndex` keeps (the context's names recur each turn)."""
K1 = 1.2
"""BM25 term-frequency saturation."""
B = 0.75
"""BM25 length normalization."""


CLOSE_SIMILARITY = 0.007
"""How near the first vector candidate's cosine a next one must be to take a near tie's
place: set on the development sets (docs/evaluation.md "Round four"): from 0.005,
clean paraphrases 0.883 -> 0.892 and players' words 0.963 -> 0.970 for 0.06-0.12 more
memories a question; memory-v2 (`dev.py eval`) 546.1 -> 548.9 prompt tokens a turn (of
550) and 3.37 -> 3.49 other memories a literal question (of 3.5). 0.008 gave the clean
paraphrases 0.900 but 3.51 others a literal question."""

SEVERAL_PLACES = 1
"""Places beyond the vectors' one that a question about several memories (那两回, "both of
them") gives the next vector candidates: set on round four's development set
(eval/dev/round4_styles_dev.json, two_memories: see docs/evaluation.md "Round five")."""

NAMING_SHARE = 0.5
"""A term carried by more than this share of a save's memories names nothing of the game
when a turn asks what to do ("should I play one more day?" and every "Day 8: …"):
set on the small-talk development set (eval/dev/smalltalk_dev.json), where "day" was
the only such case; a real name is carried by a few memories at most."""


class MemoryBudget(msgspec.Struct, frozen=True):
    """Limits and ranking knobs of one turn's memory injection (see module docstring).

    Attributes:
        profile_tokens: Estimated tokens of the shared profile's lines.
        goals: Active goals injected.
        relevant: Memories relevant to what the player said and what is near.
        recent: Recent and important memories.
        total_chars: Characters of the whole memory block; past it whole items
            go, lowest priority first (a small context window lowers it).
        w_relevance: Weight of relevance (BM25, or fused with the vectors) in the rank.
        w_recency: Weight of recency in the rank.
        w_importance: Weight of importance in the rank.
        recency_decay: Recency kept per hour unused.
        min_relevance: Share of the best match's score a memory needs to be relevant.
        context_weight: What a word found only in the modelContext's names counts
            (the player's own words count 1).
        min_similarity: Memory vectors: the least cosine a memory needs to be proposed.
        similarity_margin: Memory vectors: how far below the best cosine it may be.
        vector_places: Relevant places vector candidates may take beyond the
            words' (each one from "recent and important", so never more
            memories in all).
        lexical_discount: Memory vectors: what the cosine of a memory the words did
            not pick loses per unit of its shared words' BM25 score over the
            best score, when the vectors order those.
        close_places: Memory vectors: more relevant places (beyond ``vector_places``)
            for the next candidates the words did not pick when their cosine is within
            ``close_similarity`` of the first one's: one place cannot choose between
            near ties.
        close_similarity: Memory vectors: how near that is.
        multi_hop: A second hop through another memory (memory/hop.py): when the
            best matches name a person, creature or place the question does not,
            the memory found through it may take one of the turn's places (it never
            adds one).
        small_talk_margin: How much nearer everyday chatter than any memory (cosine)
            a turn without a word match or cue must be to count as small talk, which
            carries the goals alone (memory/smalltalk.py).
        several_places: Memory vectors: more relevant places for the next candidates the
            words did not pick when the question asks about several memories at once
            (memory/focus.py :func:`~xtyserver.memory.focus.asks_several`).
        generic_weight: Memory vectors: what a memory's cosine with everyday chatter's
            centroid, beyond the save's mean, costs its cosine in the vectors' ranking
            (:func:`~xtyserver.memory.vectors.centered`; 0: raw cosines).
    """

    profile_tokens: int = 300
    goals: int = 2
    relevant: int = 4
    recent: int = 1
    total_chars: int = 1200
    w_relevance: float = 1.0
    w_recency: float = 0.5
    w_importance: float = 0.5
    recency_decay: float = 0.995
    min_relevance: float = 0.8
    context_weight: float = 0.3
    min_similarity: float = 0.45
    similarity_margin: float = 0.08
    vector_places: int = 1
    lexical_discount: float = 0.08
    small_talk_margin: float = SMALL_TALK_MARGIN
    close_places: int = 1
    close_similarity: float = CLOSE_SIMILARITY
    multi_hop: bool = True
    generic_weight: float = GENERIC_WEIGHT
    several_places: int = SEVERAL_PLACES


class SaveIndex:
    """In-memory BM25 index over the events of one save.

    Args:
        scope: The save this index serves; events of any other scope are refused.
        events: Initial events (``MemoryStore.load_scope(scope)``).
        glossary: The save's game glossary, so ``Abigail``, ``阿比盖尔`` and
            ``紫发女孩`` meet. None: words alone.
        key_weight: What a term of a memory's search keys counts (0: keys unused).
        spelling: Whether a query's misspelt, same-sounding and pinyin words are
            matched to the save's and the glossary's words (:mod:`~xtyserver.memory.spelling`).
    """

    def __init__(
        self,
        scope: Scope,
        events: Iterable[MemoryEvent] = (),
        *,
        glossary: GameGlossary | None = None,
        key_weight: float = KEY_WEIGHT,
        spelling: bool = True,
    ) -> None:
        self.scope = scope
        self.glossary = glossary or EMPTY_GAME
        self.key_weight = key_weight
        self.spelling = spelling
        # The save's words by sound and spelling, kept current with the index.
        self._lexicon = Lexicon()
        # Query terms by text, valid while the save's words stay as they were.
        self._queries: dict[str, frozenset[str]] = {}
        self._queries_of = 0
        self._events: dict[int, MemoryEvent] = {}
        self._tf: dict[int, dict[str, float]] = {}
        # Terms an event has only through its search keys (for explain()).
        self._key_only: dict[int, frozenset[str]] = {}
        self._len: dict[int, float] = {}
        self._postings: dict[str, dict[int, float]] = {}
        self._total_len = 0.0
        # Each event's BM25 length norm, made once per change of the index.
        self._norm: dict[int, float] | None = None
        # Unit vectors by event id, dropped with the event or when its text changes.
        self._vectors: dict[int, array[float]] = {}
        # The player's own names for things on this save (memory/aliases.py).
        self.aliases: tuple[PlayerAlias, ...] = ()
        # The save's latest ended play sessions, (started, ended) epoch seconds, oldest
        # first: what "上次玩的时候" and "下线前" refer to (cues.read_cues).
        self.sessions: tuple[tuple[float, float], ...] = ()
        for ev in events:
            self.upsert(ev)

    def __len__(self) -> int:
        return len(self._events)

    def events(self) -> list[MemoryEvent]:
        """All events, by id."""
        return [self._events[i] for i in sorted(self._events)]

    def get(self, event_id: int) -> MemoryEvent | None:
        return self._events.get(event_id)

    def upsert(self, event: MemoryEvent) -> None:
        """Add or replace one event (by id).

        Raises:
            UsageError: The event belongs to another save.
        """
        if event.game_id != self.scope.game_id or event.save_id != self.scope.save_id:
            raise UsageError("event of another scope offered to a SaveIndex")
        old = self._events.get(event.id)
        vector = self._vectors.get(event.id)
        self.remove(event.id)
        if vector is not None and old is not None and embedding_text(old) == embedding_text(event):
            self._vectors[event.id] = vector
        words, keys = self._terms(event)
        tf: dict[str, float] = dict(Counter(words))
        if keys:
            self._key_only[event.id] = frozenset(keys).difference(tf)
        for term in keys if self.key_weight > 0 else ():
            tf[term] = tf.get(term, 0.0) + self.key_weight
        self._events[event.id] = event
        self._norm = None
        self._tf[event.id] = tf
        self._len[event.id] = sum(tf.values())
        self._total_len += self._len[event.id]
        for term, n in tf.items():
            self._postings.setdefault(term, {})[event.id] = n
            if self.spelling and not term.startswith(MEANINGS):
                self._lexicon.add(term)

    def _terms(self, event: MemoryEvent) -> tuple[list[str], list[str]]:
        """The terms of an event's subject and summary, and those of its search keys."""
        text = f"{event.subject} {event.summary}"
        words = tokenize(text)
        if self.glossary.entries:
            words += [TERM_PREFIX + key for key in self.glossary.entities(words, related=True)]
        words += number_terms(text)  # 二十五 and 25, 250g and 250 (memory/numerals.py)
        keys: list[str] = []
        for key in event.search_keys if self.key_weight > 0 and event.search_keys else ():
            tokens = tokenize(key)
            keys += tokens
            if self.glossary.entries:
                keys += [TERM_PREFIX + k for k in self.glossary.entities(tokens)]
        return words, keys

    def remove(self, event_id: int) -> None:
        """Forget one event (and its vector); unknown ids are ignored."""
        self._vectors.pop(event_id, None)
        if self._events.pop(event_id, None) is None:
            return
        tf = self._tf.pop(event_id)
        self._norm = None
        self._key_only.pop(event_id, None)
        self._total_len -= self._len.pop(event_id)
        for term in tf:
            if self.spelling and not term.startswith(MEANINGS):
                self._lexicon.discard(term)
            posting = self._postings[term]
            del posting[event_id]
            if not posting:
                del self._postings[term]

    def set_vector(self, event_id: int, vector: array[float]) -> None:
        """Hold the vector of one indexed event (unknown ids are ignored)."""
        if event_id in self._events:
            self._vectors[event_id] = vector

    def vectors(self) -> list[tuple[int, array[float]]]:
        """A snapshot of ``(event id, vector)`` of the events that have one."""
        return list(self._vectors.items())

    def has_vectors(self) -> bool:
        return bool(self._vectors)

    def without_vector(self) -> list[MemoryEvent]:
        """The events with no vector yet, pinned and most important first, then newest."""
        waiting = [ev for ev in self._events.values() if ev.id not in self._vectors]
        waiting.sort(key=lambda ev: (not ev.pinned, -ev.importance, -ev.updated_at))
        return waiting

    def touch(self, ids: Iterable[int], now: float) -> None:
        """Mirror ``MemoryStore.touch`` in memory (last-used time)."""
        for i in ids:
            ev = self._events.get(i)
            if ev is not None and ev.last_used_at < now:
                self._events[i] = msgspec.structs.replace(ev, last_used_at=now)

    def query_terms(self, text: str) -> set[str]:
        """The terms ``text`` is searched by: its words, the glossary entities it names,
        the known words its unknown ones stand for, and what the player's own names mean."""
        terms = self._own_terms(text)
        if self.aliases:
            terms |= alias_terms(self.aliases, tokenize(text), terms, self._own_terms)
        return terms

    def _own_terms(self, text: str) -> set[str]:
        """The terms of ``text``'s own words, cached while the save's words are unchanged."""
        if self._queries_of != self._lexicon.version:
            self._queries.clear()
            self._queries_of = self._lexicon.version
        terms = self._queries.get(text)
        if terms is None:
            if len(self._queries) >= QUERY_CACHE:
                del self._queries[next(iter(self._queries))]
            terms = self._queries[text] = frozenset(self._read_query(text))
        return set(terms)

    def _read_query(self, text: str) -> set[str]:
        text = spell_emoji(text)  # 🐔 is 鸡 (memory/emoji.py)
        words = tokenize(text)
        terms = set(words).union(number_terms(text))
        glossary = self.glossary
        if glossary.entries:
            terms.update(TERM_PREFIX + key for key in glossary.entities(words))
        if self.spelling:
            for span in respell(text, (self.lexicon(), glossary.lexicon)):
                terms.update(span)
                if glossary.entries:
                    terms.update(TERM_PREFIX + key for key in glossary.entities(span))
        return terms

    def term_frequencies(self, event_id: int) -> Mapping[str, float]:
        """The indexed terms of one event (summary and subject 1 each, keys ``key_weight``)."""
        return self._tf.get(event_id, {})

    def carriers(self, term: str) -> AbstractSet[int]:
        """The ids of the events that carry ``term``."""
        return self._postings.get(term, {}).keys()

    def lexicon(self) -> Lexicon:
        """The words of the save's memories (and keys) by sound and spelling."""
        return self._lexicon

    def scores(
        self, text: str, context: str = "", *, context_weight: float = 1.0
    ) -> dict[int, float]:
        """BM25 score of every event matching ``text``; terms found only in ``context``
        count ``context_weight`` times."""
        asked = self.query_terms(text)
        around = self.query_terms(context) if context else set()
        return self.term_scores(asked, around, context_weight=context_weight)

    def term_scores(
        self,
        asked: AbstractSet[str],
        around: AbstractSet[str] = frozenset(),
        *,
        context_weight: float = 1.0,
    ) -> dict[int, float]:
        """:meth:`scores` of terms already made."""
        n_docs = len(self._events)
        if not n_docs:
            return {}
        norm = self._norms()
        weights = dict.fromkeys(around, context_weight)
        weights.update(dict.fromkeys(asked, 1.0))
        out: dict[int, float] = {}
        for term, weight in weights.items():
            posting = self._postings.get(term)
            if not posting:
                continue
            df = len(posting)
            idf = weight * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            for doc_id, tf in posting.items():
                out[doc_id] = out.get(doc_id, 0.0) + idf * tf * (K1 + 1.0) / (tf + norm[doc_id])
        return out

    def names_any(self, terms: AbstractSet[str], *, share: float) -> bool:
        """Whether one of ``terms`` is carried by some memory but by at most ``share`` of
        them: a term in every memory ("day" of "Day 8: …", 玩家) names nothing."""
        most = max(1.0, share * len(self._events))
        return any(0 < len(self._postings.get(t, ())) <= most for t in terms)

    def _norms(self) -> dict[int, float]:
        if self._norm is None:
            avg_len = self._total_len / len(self._events) or 1.0
            self._norm = {i: K1 * (1.0 - B + B * n / avg_len) for i, n in self._len.items()}
        return self._norm

    def explain(self, event: MemoryEvent, asked: set[str]) -> tuple[str, ...]:
        """How ``event`` matched terms ``asked``: ``words``, ``glossary``, ``keys``, or ()."""
        tf = self._tf.get(event.id, {})
        key_only = self._key_only.get(event.id, frozenset())
        found = asked.intersection(tf)
        own = found - key_only
        via: list[str] = []
        if any(not t.startswith(TERM_PREFIX) for t in own):
            via.append("words")
        if any(t.startswith(TERM_PREFIX) for t in own):
            via.append("glossary")
        if found & key_only:
            via.append("keys")
        return tuple(via)


def is_eligible(event: MemoryEvent, current_day: int | None) -> bool:
    """False for an event formed on an in-game day the loaded save has not reached."""
    return current_day is None or event.day is None or event.day <= current_day


def profile_lines(profile: SharedProfile, max_tokens: int) -> list[str]:
    """Chinese-labelled profile lines, most useful first, within ``max_tokens``."""
    candidates = [
        ("称呼", profile.nickname),
        ("伙伴名字", profile.companion_name),
        ("伙伴设定", profile.companion_persona),
        ("语言", profile.language),
        ("回复风格", profile.reply_style),
        ("性格", "、".join(profile.personality)),
        ("爱好", "、".join(profile.hobbies)),
        ("一起玩过", "、".join(profile.games)),
        ("备注", "；".join(profile.notes)),
    ]
    lines: list[str] = []
    used = 0
    for label, value in candidates:
        if not value:
            continue
        line = f"{label}：{value}"
        cost = approx_tokens(line)
        if used + cost > max_tokens:
            continue
        used += cost
        lines.append(line)
    return lines


def render_event(event: MemoryEvent, *, kind: bool = True) -> str:
    """One memory as a short Chinese-labelled line.

    The subject is left out when the summary already names it (it nearly
    always does), the kind when the section says it (``kind=False``).
    """
    notes = [s for s in (STATUS_LABELS[event.status],) if s]
    if event.day is not None:
        notes.append(f"第{event.day}天")
    suffix = f"（{'，'.join(notes)}）" if notes else ""
    label = f"[{KIND_LABELS[event.kind]}] " if kind else ""
    subject = "" if event.subject in event.summary else f"{event.subject}："
    return f"- {label}{subject}{event.summary}{suffix}"


class MemorySelection(msgspec.Struct, frozen=True):
    """What one turn injects: profile lines and up to 8 events, within the budget."""

    profile: tuple[str, ...] = ()
    goals: tuple[MemoryEvent, ...] = ()
    relevant: tuple[MemoryEvent, ...] = ()
    recent: tuple[MemoryEvent, ...] = ()
    # (id, score) of every injected event, for the injection log.
    scores: tuple[tuple[int, float], ...] = ()
    # (id, how it matched the query: "words", "glossary", "keys", "vectors" joined by "+",
    # or "" for an event chosen without a match), for the injection log.
    via: tuple[tuple[int, str], ...] = ()

    @property
    def used_ids(self) -> list[int]:
        """Ids to pass to ``MemoryStore.touch`` (and ``SaveIndex.touch``)."""
        return [ev.id for ev in (*self.goals, *self.relevant, *self.recent)]

    def render(self) -> str:
        """The prompt text; empty when nothing is selected."""
        blocks: list[str] = []
        if self.profile:
            blocks.append("\n".join((SECTION_LABELS["profile"], *self.profile)))
        for name, events in (
            ("goals", self.goals),
            ("relevant", self.relevant),
            ("recent", self.recent),
        ):
            if events:
                # Every goal is a goal: its section says so.
                lines = (render_event(ev, kind=name != "goals") for ev in events)
                blocks.append("\n".join((SECTION_LABELS[name], *lines)))
        return "\n".join(blocks)


def _cut(selection: MemorySelection, max_chars: int) -> MemorySelection:
    """Drop whole items, lowest priority first, until the render fits."""
    sel = selection
    while len(sel.render()) > max_chars:
        name = next((n for n in ("recent", "relevant", "goals", "profile") if getattr(sel, n)), "")
        if not name:  # pragma: no cover - an empty selection renders as ""
            break
        sel = msgspec.structs.replace(sel, **{name: getattr(sel, name)[:-1]})
    return sel


def _ruled_out(index: SaveIndex, ruled: str, rest: str, asked: AbstractSet[str]) -> frozenset[int]:
    """The memory a question rules out (``ruled``, of memory/focus.py
    :func:`negated_part`): the one its ruled-out words match best, when they match it
    more than its other words do. Its words still count ("not the first base, the other
    one": base names what is asked for too)."""
    if not ruled:
        return frozenset()
    terms = index.query_terms(ruled) - index.query_terms(rest)
    named = index.term_scores(terms, set(), context_weight=0.0)
    best = max(named.values(), default=0.0)
    if best <= 0.0:
        return frozenset()
    other = index.term_scores(set(asked) - terms, set(), context_weight=0.0)
    return frozenset(i for i, v in named.items() if v >= best and v > other.get(i, 0.0))


def select_memories(
    profile: SharedProfile | None,
    index: SaveIndex,
    *,
    query_text: str,
    focus_terms: Sequence[str] = (),
    current_day: int | None,
    now: float,
    budget: MemoryBudget | None = None,
    similar: Sequence[tuple[int, float]] | None = None,
    also_asked: AbstractSet[str] = frozenset(),
    chatter: float | None = None,
    generic: Mapping[int, float] | None = None,
) -> MemorySelection:
    """Choose this turn's memories from one save (see the module docstring).

    Args:
        profile: The shared profile, or None to inject none.
        index: The current save's index (nothing else is searched).
        query_text: The player's text of this turn.
        focus_terms: The modelContext focus and nearby entity names.
        current_day: ``world.day`` of the current modelContext, or None if unknown.
        now: Epoch seconds, for recency.
        budget: Limits and weights; defaults to :class:`MemoryBudget()`.
        similar: ``(event id, cosine with the query)`` from memory vectors
            (:func:`~xtyserver.memory.vectors.similarities`), or None: lexical alone.
        also_asked: More terms the player's text counts as asking for (the game's shown
            names as aliases: :func:`~xtyserver.memory.shown_names.alias_terms`).
        chatter: The query's best cosine with everyday chatter
            (:data:`~xtyserver.memory.smalltalk.CHATTER`), or None: unknown.
        generic: Each memory's cosine with everyday chatter's centroid
            (:func:`~xtyserver.memory.vectors.centroid`): the vectors rank by
            :func:`~xtyserver.memory.vectors.centered` cosines; None: by raw ones. The
            small-talk judgement keeps the raw ones.
    """
    budget = budget or MemoryBudget()
    lines = tuple(profile_lines(profile, budget.profile_tokens)) if profile else ()
    events = index.events()
    eligible = (
        events  # no day known: every event is eligible (is_eligible, inlined)
        if current_day is None
        else [ev for ev in events if ev.day is None or ev.day <= current_day]
    )
    around = index.query_terms(" ".join(focus_terms)) if focus_terms else set()
    # A long message's words are its question's (memory/focus.py), unless those match nothing.
    asked = index.query_terms(question_part(query_text)) | also_asked
    raw = index.term_scores(asked, around, context_weight=budget.context_weight)
    if not raw and question_part(query_text) != query_text:
        asked = index.query_terms(query_text) | also_asked
        raw = index.term_scores(asked, around, context_weight=budget.context_weight)
    # "不是冬天那个计划，是另一个": what the player rules out is left out of this turn.
    ruled, rest = negated_part(query_text)
    ruled_out = _ruled_out(index, ruled, rest, asked)
    if ruled_out:
        eligible = [ev for ev in eligible if ev.id not in ruled_out]
    w_relevance, w_recency, w_importance = budget.w_relevance, budget.w_recency, budget.w_importance
    decay = budget.recency_decay
    # What "recent and important" ranks by (recency and importance alone), per event once.
    standing: dict[int, float] = {}
    for ev in eligible:
        hours = max(0.0, now - max(ev.last_used_at, ev.updated_at)) / 3600.0
        standing[ev.id] = w_recency * float(decay**hours) + w_importance * ev.importance / 5.0
    top_all = max((raw.get(ev.id, 0.0) for ev in eligible), default=0.0)

    def ranked(top: float) -> dict[int, float]:
        return {
            ev.id: w_relevance * (raw.get(ev.id, 0.0) / top if top > 0 else 0.0) + standing[ev.id]
            for ev in eligible
        }

    ranked_all = ranked(top_all)
    goals = sorted(
        (ev for ev in eligible if ev.kind == "goal" and ev.status == "active"),
        key=lambda ev: (not ev.pinned, -ranked_all[ev.id], ev.id),
    )[: max(0, budget.goals)]
    taken = {ev.id for ev in goals}
    # The floor is the best match among what is not in the prompt already: a goal that
    # shares a common word with the question must not push the real matches out.
    top = max((raw.get(ev.id, 0.0) for ev in eligible if ev.id not in taken), default=0.0)
    floor = budget.min_relevance * top
    scored = ranked(top) if top != top_all else ranked_all
    lexical = sorted(
        (ev for ev in eligible if ev.id not in taken and raw.get(ev.id, 0.0) > max(0.0, floor)),
        key=lambda ev: (-scored[ev.id], ev.id),
    )
    # "What next?" and "last season" name nothing: the memories they ask for (active
    # plans, the days referred to) take the place of "recent and important".
    cues = read_cues(
        query_text,
        game_id=index.scope.game_id,
        current_day=current_day,
        sessions=index.sessions,
    )
    cued = [ev for ev in eligible if ev.id not in taken and fits(cues, ev)] if cues else []
    # Small talk (asking nothing of the game or the past, nearer everyday chatter than
    # any memory) recalls nothing: only the always-on goals go in, whatever its words
    # share with a memory (炸鸡 and the coop) or name as a time (周末).
    quiet = (
        not ruled  # "not that one, the other": about the memories
        and is_small_talk(
            chatter,
            max((cos for i, cos in similar or () if i not in taken), default=None),
            margin=budget.small_talk_margin,
        )
        and not asks_memory(
            query_text,
            names_game=cues.next_step or index.names_any(asked | around, share=NAMING_SHARE),
        )
    )
    if quiet:
        similar = None
        lexical = []
        cued = []
    elif similar and generic:
        # Ranked less what every question is near (memory/vectors.py centered).
        similar = centered(similar, generic, weight=budget.generic_weight)
    from_vectors: set[int] = set()
    near_enough: set[int] = set()  # every vector candidate, placed or not
    words_picked = {ev.id for ev in lexical}
    room = len(lexical)
    added = 0  # relevant places the vectors added: "recent and important" gives them up
    if similar:
        allowed = {ev.id: ev for ev in eligible if ev.id not in taken}
        # A shared word is surface (it raises the cosine too); a glossary entity or a
        # number (二十五 for 25) is meaning.
        surface = index.term_scores(
            {t for t in asked if not t.startswith(MEANINGS)},
            {t for t in around if not t.startswith(MEANINGS)},
            context_weight=budget.context_weight,
        )
        nearest = vector_candidates(
            [(i, cos) for i, cos in similar if i in allowed],
            min_similarity=budget.min_similarity,
            margin=budget.similarity_margin,
            limit=len(allowed),
        )
        near_enough.update(nearest)
        nearest = unseen_first(
            nearest,
            dict(similar),
            {i: surface.get(i, 0.0) / top if top > 0 else 0.0 for i in nearest},
            seen={ev.id for ev in lexical},
            discount=budget.lexical_discount,
        )[: max(0, budget.relevant)]
        from_vectors.update(nearest)
        fused = fuse([[ev.id for ev in lexical], nearest])
        pool = {ev.id: ev for ev in lexical} | {i: allowed[i] for i in nearest}
        # The section holds what words alone would have put in it and, with vector
        # candidates, up to ``vector_places`` more, each taken from "recent and
        # important": vectors reorder and replace. Only near ties (``close_places``
        # within ``close_similarity`` of the first) add to the turn's memories.
        extra = min(budget.vector_places, max(budget.recent, 0)) if nearest and not cued else 0
        seen = {ev.id for ev in lexical}
        unseen = [i for i in nearest if i not in seen]
        # Near ties add places where the words found one memory at most.
        if extra and len(unseen) > 1 and len(seen) <= 1:
            cosine = dict(similar)
            first = cosine[unseen[0]] - budget.close_similarity
            ties = sum(1 for i in unseen[1:] if cosine[i] >= first)
            extra += min(ties, max(budget.close_places, 0))
        # A question about several (那两回, "both of them") gets its next candidate too.
        if extra and len(unseen) > extra and asks_several(query_text):
            extra += max(budget.several_places, 0)
        room = min(len(lexical) + extra, max(budget.relevant, len(lexical)))
        added = room - len(lexical)
        lexical = sorted(pool.values(), key=lambda ev: (-fused[ev.id], -scored[ev.id], ev.id))
        lexical = lexical[:room]
    relevant = lexical[: max(0, budget.relevant)]
    taken.update(ev.id for ev in relevant)
    recent_places = 0 if quiet else max(0, budget.recent - added)
    # A second hop (memory/hop.py): the entity the best matches name and the question
    # does not finds one more memory, which takes a place of this turn, never a new one.
    hop = None
    if budget.multi_hop and relevant and not quiet and not cues:
        hop = second_hop(
            index,
            relevant[:HOP_BRIDGES],
            asked | around,
            {ev.id for ev in eligible},
            cosine=dict(similar) if similar else None,
        )
    # What the entity finds best may be in the turn already: then the hop adds nothing.
    hopped = index.get(hop[1]) if hop and hop[1] not in taken else None
    if hop and hopped is not None:
        # Its place: the one of "recent and important", or the one the vectors gave up
        # for it and left unused. A first-hop match is never pushed out (a vector pick
        # given up for the hop cost the clean paraphrases 0.05 of their recall: there
        # the words' best match is a decoy as often as a bridge), nor a place added.
        if bool(similar) and room > len(relevant):
            relevant.append(hopped)
        elif recent_places:
            recent_places -= 1
            if len(relevant) < budget.relevant:
                relevant.append(hopped)
        elif (
            hopped.id in near_enough
            and relevant[-1].id in from_vectors
            and relevant[-1].id not in words_picked
            and relevant[-1].id != hop[0]
            and len(relevant) > 1
        ):
            # the vectors' pick the words did not make, for a vector candidate the best
            # match links to
            from_vectors.discard(relevant[-1].id)
            taken.discard(relevant[-1].id)
            relevant[-1] = hopped
        else:
            hopped = None
    if hopped is not None:
        taken.add(hopped.id)
    # "Recent and important" ignores relevance: it surfaces what matters lately
    # even when the player's text does not mention it.
    # Of the memories that fit a cue, the one the words or the vector point at.
    fitting = {ev.id for ev in cued}
    near = dict(similar or ())
    recent = sorted(
        (ev for ev in eligible if ev.id not in taken),
        key=lambda ev: (
            ev.id not in fitting,
            -(raw.get(ev.id, 0.0) / top_all if top_all > 0 and ev.id in fitting else 0.0)
            - (near.get(ev.id, 0.0) if ev.id in fitting else 0.0),
            -standing[ev.id],
            ev.id,
        ),
    )[: max(0, recent_places)]
    if hopped is not None and hopped not in relevant:
        recent = [hopped, *recent]
    selection = MemorySelection(
        profile=lines, goals=tuple(goals), relevant=tuple(relevant), recent=tuple(recent)
    )
    cut = _cut(selection, budget.total_chars)
    from_vectors.intersection_update(ev.id for ev in cut.relevant)
    kept = tuple((i, scored[i]) for i in cut.used_ids)

    def how(ev: MemoryEvent) -> str:
        found = index.explain(ev, asked | around) if ev.id in raw else ()
        found = (*found, "vectors") if ev.id in from_vectors else found
        return "+".join((*found, "hop") if hopped is not None and ev.id == hopped.id else found)

    via = tuple((ev.id, how(ev)) for ev in (*cut.goals, *cut.relevant, *cut.recent))
    return msgspec.structs.replace(cut, scores=kept, via=via)


class SearchResult(msgspec.Struct, frozen=True):
    """What the memory search tool found: events of the current save, profile lines."""

    events: tuple[MemoryEvent, ...] = ()
    profile: tuple[str, ...] = ()


def search_memories(
    profile: SharedProfile | None,
    index: SaveIndex,
    query: str,
    *,
    kind: str | None = None,
    current_day: int | None = None,
    limit: int = 5,
) -> SearchResult:
    """The best matches for ``query`` in ONE save's index and the shared profile.

    Events rank by BM25 (words and glossary entities, as a turn's retrieval);
    ``kind`` keeps one kind of event only. Profile lines match when they share a
    term with the query. At most ``limit`` results in all, events first.
    """
    terms = index.query_terms(query)
    scored = index.scores(query)
    found = (index.get(doc_id) for doc_id in scored)
    ranked = sorted(
        (
            ev
            for ev in found
            if ev is not None and is_eligible(ev, current_day) and (kind is None or ev.kind == kind)
        ),
        key=lambda ev: (-scored[ev.id], ev.id),
    )[:limit]
    lines: list[str] = []
    if profile is not None and len(ranked) < limit:
        for line in profile_lines(profile, 10_000):
            if terms & index.query_terms(line.split("：", 1)[-1]):
                lines.append(line)
    return SearchResult(tuple(ranked), tuple(lines[: limit - len(ranked)]))
