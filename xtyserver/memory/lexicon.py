"""A vocabulary's words by sound, by initials and by spelling (pure).

:mod:`xtyserver.memory.spelling` matches a question's unknown words to the
words (tokens of :func:`~xtyserver.memory.tokenize.tokenize`) of a save's
memories and of its game's glossary through these tables:

* ``sound``: a bigram of common characters under each toneless reading pair;
* ``heard``: the same under each fuzzy pair (:func:`~xtyserver.memory.pinyin.fuzzy`);
* ``initials``: under each pair of the readings' first letters;
* ``near``: an English word of 5-24 letters under itself and what deleting
  one letter leaves of it (two letters from :data:`LONG` letters on): two
  words within the edit limit share one of these (symmetric deletion).

A save's :class:`Lexicon` changes word by word as its memories do; a game's
:class:`FrozenLexicon` never changes and holds its tables in two arrays.
"""

from __future__ import annotations

import itertools
from array import array
from bisect import bisect_left
from collections.abc import Collection, Hashable, Iterator, Mapping
from typing import Protocol

from xtyserver.memory.pinyin import READINGS, fuzzy, is_cjk_bigram

MIN_TYPO = 5
"""Letters of the shortest word matched within an edit (shorter ones are too alike)."""
MAX_TYPO = 24
"""Letters of the longest word matched within an edit or two (longer: no word)."""
LONG = 10
"""From this length on a vocabulary word may be two edits off, one below it."""
TABLES = ("sound", "heard", "initials", "near")


class Vocabulary(Protocol):
    """What :func:`~xtyserver.memory.spelling.respell` reads of a lexicon."""

    @property
    def counts(self) -> Mapping[str, int]:
        """Each word and how many memories or names use it."""

    def words_at(self, table: str, key: Hashable) -> Collection[str]:
        """The words one of :data:`TABLES` holds under ``key``."""


def deletes(word: str, edits: int) -> set[str]:
    """The word and what deleting up to ``edits`` letters leaves of it."""
    out = {word}
    for _ in range(edits):
        out |= {w[:i] + w[i + 1 :] for w in out for i in range(len(w))}
    return out


def entries(word: str) -> Iterator[tuple[str, Hashable]]:
    """The ``(table, key)`` pairs a vocabulary word is found under."""
    if is_cjk_bigram(word):
        for a, b in itertools.product(READINGS.of(word[0]), READINGS.of(word[1])):
            yield "sound", (a, b)
            yield "heard", (fuzzy(a), fuzzy(b))
            yield "initials", (a[0], b[0])
    elif MIN_TYPO <= len(word) <= MAX_TYPO and word.isascii() and word.isalpha():
        for key in deletes(word, 2 if len(word) >= LONG else 1):
            yield "near", key


class Lexicon:
    """A save's words (and how many memories use each) by sound, initials and spelling.

    Kept current word by word (:meth:`add`, :meth:`discard`) as a save's memories
    change, so no turn waits for it to be made again.
    """

    def __init__(self, counts: Mapping[str, int] | None = None) -> None:
        # Each key's words: one word as itself, more as a set (most keys have one).
        self.counts: dict[str, int] = {}
        self.sound: dict[Hashable, str | set[str]] = {}
        self.heard: dict[Hashable, str | set[str]] = {}
        self.initials: dict[Hashable, str | set[str]] = {}
        self.near: dict[Hashable, str | set[str]] = {}
        self._tables = dict(
            zip(TABLES, (self.sound, self.heard, self.initials, self.near), strict=True)
        )
        self.version = 0
        """Changes with every change of the counts (what a cached reading depends on)."""
        for word, n in (counts or {}).items():
            self.add(word, n)

    def words_at(self, table: str, key: Hashable) -> Collection[str]:
        found = self._tables[table].get(key)
        if found is None:
            return ()
        return (found,) if isinstance(found, str) else found

    def add(self, word: str, n: int = 1) -> None:
        """Count ``n`` more uses of ``word``."""
        self.version += 1
        if word in self.counts:
            self.counts[word] += n
            return
        self.counts[word] = n
        for table, key in entries(word):
            words = self._tables[table]
            found = words.get(key)
            if found is None:
                words[key] = word
            elif isinstance(found, str):
                if found != word:
                    words[key] = {found, word}
            else:
                found.add(word)

    def discard(self, word: str, n: int = 1) -> None:
        """Count ``n`` fewer uses of ``word``; at none it is no word of the vocabulary."""
        if word not in self.counts:
            return
        self.version += 1
        left = self.counts[word] - n
        if left > 0:
            self.counts[word] = left
            return
        del self.counts[word]
        for table, key in entries(word):
            words = self._tables[table]
            found = words.get(key)
            if found == word:
                del words[key]
            elif isinstance(found, set):
                found.discard(word)
                if len(found) == 1:
                    words[key] = next(iter(found))


class FrozenLexicon:
    """A vocabulary that never changes (a game's glossary), in little memory.

    Every ``(table, key)`` of every word is one 64-bit hash in a sorted array
    beside the word's number in a second one: 12 bytes an entry, where
    dictionaries of key strings and tuples took about 100. The hashes are this
    process's own (``str`` hashing is salted), never stored. Two keys of one
    hash (for some 20,000 entries, odds of about 10**-11) would only propose
    one candidate more.
    """

    def __init__(self, counts: Mapping[str, int]) -> None:
        self.counts: Mapping[str, int] = dict(counts)
        self._words = tuple(sorted(self.counts))
        hashes: array[int] = array("q")
        ids: array[int] = array("I")
        for i, word in enumerate(self._words):
            for entry in set(entries(word)):
                hashes.append(hash(entry))
                ids.append(i)
        order = sorted(range(len(hashes)), key=hashes.__getitem__)
        self._hashes = array("q", (hashes[i] for i in order))
        self._ids = array("I", (ids[i] for i in order))

    def words_at(self, table: str, key: Hashable) -> Collection[str]:
        h = hash((table, key))
        hashes = self._hashes
        i = bisect_left(hashes, h)
        found: list[str] = []
        while i < len(hashes) and hashes[i] == h:
            found.append(self._words[self._ids[i]])
            i += 1
        return found


EMPTY = FrozenLexicon({})
