"""A bounded second hop through another memory (pure).

「答应那个戴帽子的人的事」 names a person by a trait another memory holds
(「刘易斯总是戴着一顶帽子」); the memory asked for (「答应刘易斯帮他找回紫色短裤」)
shares nothing with the question but that person. The first hop's best
memories (the *bridges*) are read for the entities they name and the question
does not; the save is searched again with those, lexically (no second query
embedding: the query's cosines already computed order the ties), and the best
memory found through them may take ONE place of the turn, never an extra one
(:func:`xtyserver.memory.retrieval.select_memories` decides which).

An entity, and what a link through it weighs (times its BM25 idf):

1. a glossary person (``@lewis``: a villager, a character, a duplicant, a boss;
   not a species, a spider is any spider) the bridge names (its subject, summary
   or search keys), not the generic name of its kind (复制人 is every duplicant):
   :data:`PERSON_WEIGHT`;
2. the words of a bridge's subject when it is a short name (a memory formed by
   extraction says whom it is about: 「小黄」), and the words of its search keys
   (the names it mentions, in both languages): :data:`NAME_WEIGHT`;
3. a name the glossary does not know that at most ``rare`` memories of the save
   carry: an English word capitalised inside the sentence (Moo), a Chinese pet
   name (小黄, 老王, 阿里) or what follows a naming verb (取名叫旺财, 叫做鸟窝滩); no
   number, no bigram glued by a particle (在河, 家把): 1. Ordinary words (下面,
   开始, "full") and glossary places (the farm, the caves) linked unrelated
   memories on the development sets, so they link nothing.

Each must also be carried by some memory other than the bridge (else it links
nothing), and by few of the save's memories (else it names nothing in particular).
A memory's link is the sum of its links (a three-character name is two words);
on a tie the memory nearest the query by cosine goes first.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import Protocol

from xtyserver.memory.glossary import TERM_PREFIX, GameGlossary
from xtyserver.memory.spelling import FUNCTION_CHARS
from xtyserver.memory.tokenize import tokenize
from xtyserver.memory.types import MemoryEvent

_TEMPLATE = re.compile(
    r"玩家|第\s*\d+\s*(?:天|周期|层)|[春夏秋冬]季|\b(?:the\s+)?players?(?:'s)?\b"
    r"|\b(?:day|cycle|spring|summer|fall|autumn|winter)\s*\d+",
    re.IGNORECASE,
)
"""What every memory's text carries (the player, the day it was formed on)."""
GLUE = FUNCTION_CHARS | frozenset("一把给被到说叫让从对将为")
"""Characters that glue words together: a bigram holding one (在河, 家把) is no name."""
_CAPITALISED = re.compile(r"(?<![.!?:;]\s)(?<!^)(?<![A-Za-z'])([A-Z][a-z]+)(?![A-Za-z])")
"""A capitalised English word inside a sentence (not its first word)."""
_NAMED_AFTER = re.compile(r"(?:取名叫|取名为|取名|名叫|叫做|叫作|名字是|叫)([\u4e00-\u9fff]{2,4})")
"""The Chinese characters right after a naming verb (取名叫旺财)."""
_PET_NAME = re.compile(r"[小老阿][\u4e00-\u9fff]")
"""A Chinese pet name (小黄, 老王, 阿里)."""
PERSON_KINDS = frozenset({"npc", "character", "duplicant", "boss"})
"""Glossary kinds whose entries are one someone (a spider, a cow or a hatch is any of them)."""
PERSON_WEIGHT = 2.0
"""A link through a glossary person."""
NAME_WEIGHT = 1.5
"""A link through a short subject's or a search key's word."""
SUBJECT_CHARS = 12
"""A subject this long at most is a name (a longer one is a sentence)."""
HOP_BRIDGES = 2
"""The first hop's best memories read for an entity."""
RARE_MEMORIES = 3
"""A word of the bridge carried by this many memories at most may name something."""
COMMON_SHARE = 0.2
"""Any entity carried by more than this share of the save's memories (and more than
:data:`RARE_MEMORIES`) links nothing in particular."""


class HopIndex(Protocol):
    """What the hop reads of a :class:`~xtyserver.memory.retrieval.SaveIndex`."""

    glossary: GameGlossary

    def term_frequencies(self, event_id: int) -> Mapping[str, float]: ...

    def carriers(self, term: str) -> AbstractSet[int]: ...

    def __len__(self) -> int: ...


def _entity_terms(glossary: GameGlossary, event: MemoryEvent) -> dict[str, float]:
    """The person, creature and place entities ``event`` names itself (not related ones),
    with their weights."""
    if not glossary.entries:
        return {}
    text = f"{event.subject} {event.summary} {' '.join(event.search_keys or ())}"
    tokens = tokenize(_TEMPLATE.sub(" ", text))  # 玩家 holds 家: the farmhouse
    out: dict[str, float] = {}
    for key in glossary.entities(tokens):
        entry = glossary.entries.get(key)
        if entry is not None and entry.key != entry.kind and entry.kind in PERSON_KINDS:
            out[TERM_PREFIX + key] = PERSON_WEIGHT
    return out


def _named_words(event: MemoryEvent) -> set[str]:
    """The words of a short subject (not the summary itself) and of the search keys."""
    words: set[str] = set()
    subject = event.subject.strip()
    if subject and len(subject) <= SUBJECT_CHARS and subject != event.summary.strip():
        words.update(tokenize(subject))
    for key in event.search_keys or ():
        words.update(tokenize(key))
    return words


def _rare_words(glossary: GameGlossary, event: MemoryEvent) -> set[str]:
    """The words of ``event`` that look like a name the glossary does not know: an English
    word written with a capital inside the sentence (Moo, Linus), a Chinese pet name
    (小黄, 老王, 阿里) or the words right after a naming verb (取名叫旺财, 叫做鸟窝滩); none
    of the memory's template (玩家, 第12天, "Day 9"), no number, none of a name the
    glossary knows (its entity stands for it)."""
    text = _TEMPLATE.sub(" ", f"{event.subject} {event.summary}")
    named: set[str] = set()
    for match in _CAPITALISED.finditer(text):
        named.update(tokenize(match.group(1)))
    for match in _NAMED_AFTER.finditer(text):
        run = match.group(1)
        named.update(run[i : i + 2] for i in range(len(run) - 1))
    for match in _PET_NAME.finditer(text):
        named.add(match.group(0))
    covered: set[str] = set()
    for key in glossary.entities(tokenize(text)) if glossary.entries else ():
        entry = glossary.entries.get(key)
        for name in entry.names if entry is not None else ():
            covered.update(tokenize(name))
    return {
        t for t in named if t not in covered and not any(ch.isdigit() or ch in GLUE for ch in t)
    }


def linking_terms(
    index: HopIndex,
    bridge: MemoryEvent,
    asked: AbstractSet[str],
    *,
    rare: int = RARE_MEMORIES,
) -> dict[str, float]:
    """The terms by which ``bridge`` names something the question (``asked``) does not,
    each with its weight (see the module docstring); only terms some other memory
    carries too, and few do."""
    own = index.term_frequencies(bridge.id)
    weights = _entity_terms(index.glossary, bridge)
    for term in _named_words(bridge):
        if term in own:
            weights.setdefault(term, NAME_WEIGHT)
    for term in _rare_words(index.glossary, bridge):
        if term in own and len(index.carriers(term)) <= rare:
            weights.setdefault(term, 1.0)
    # Whatever most memories carry names no one in particular.
    common = max(rare, int(len(index) * COMMON_SHARE))
    return {
        t: weight
        for t, weight in weights.items()
        if t not in asked and 1 < len(index.carriers(t)) <= common
    }


def second_hop(
    index: HopIndex,
    bridges: Sequence[MemoryEvent],
    asked: AbstractSet[str],
    allowed: AbstractSet[int],
    *,
    cosine: Mapping[int, float] | None = None,
    rare: int = RARE_MEMORIES,
) -> tuple[int, int] | None:
    """The memory reached through the bridges' entities: ``(bridge id, its id)``, or None.

    Only ids in ``allowed`` are candidates, another bridge too (the caller adds
    nothing when the best one is in the turn already: the bridges name each other).
    The strongest link wins (weights times BM25's idf, summed); on a tie the memory
    nearest the query by ``cosine`` (the first hop's cosines: no new embedding), then
    the lower id.
    """
    n_docs = len(index)
    links: dict[int, float] = {}
    via: dict[int, int] = {}
    for bridge in bridges:
        for term, weight in linking_terms(index, bridge, asked, rare=rare).items():
            carriers = index.carriers(term)
            df = len(carriers)
            link = weight * math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            for event_id in carriers:
                if event_id == bridge.id or event_id not in allowed:
                    continue
                links[event_id] = links.get(event_id, 0.0) + link
                via.setdefault(event_id, bridge.id)
    if not links:
        return None
    near = cosine or {}
    best = max(links, key=lambda i: (round(links[i], 9), near.get(i, 0.0), -i))
    return via[best], best
