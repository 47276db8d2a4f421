"""Names the game itself shows, beside the ids a mod sends (pure).

A mod may send the held item's id (``player.heldItem``: ``(O)128``) and its
name as the game shows it in the player's language (``player.heldItemName``:
河豚). That is what the player reads and says, so for the rest of the session
on that save (:class:`ShownNames`, never stored) it is an alias of the glossary
entry its id names, both ways (:func:`alias_terms`). Only the glossary of the
save's game is read, so one game's names never become another game's aliases.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet

from xtyserver.memory.glossary import TERM_PREFIX, GameGlossary
from xtyserver.memory.tokenize import tokenize

MAX_SHOWN = 32
"""Shown names one session keeps per save; the oldest goes first."""


class ShownNames:
    """The ids and shown names one session saw on its current save, newest last."""

    def __init__(self) -> None:
        self._by_id: dict[str, str] = {}

    def learn(self, item_id: str | None, shown: str | None) -> None:
        """Keep ``shown`` as the name of ``item_id`` (both sent; the newest wins)."""
        if not item_id or not shown or item_id == shown:
            return
        self._by_id.pop(item_id, None)
        self._by_id[item_id] = shown
        while len(self._by_id) > MAX_SHOWN:
            del self._by_id[next(iter(self._by_id))]

    def clear(self) -> None:
        """Another save: its names are not this one's."""
        self._by_id.clear()

    def pairs(self) -> tuple[tuple[str, str], ...]:
        """``(id, shown name)`` pairs, oldest first."""
        return tuple(self._by_id.items())


def alias_terms(
    glossary: GameGlossary,
    text: str,
    asked: AbstractSet[str],
    pairs: Iterable[tuple[str, str]],
) -> set[str]:
    """The query terms ``text`` (searched by ``asked`` already) gains from ``(id, shown
    name)`` pairs whose id names a glossary entry: the entry's terms when it says the
    shown name, the shown name's words when it names the entry."""
    out: set[str] = set()
    if not glossary.entries:
        return out
    said: list[str] | None = None
    for item_id, shown in pairs:
        key = key_of(glossary, item_id)
        if not key:
            continue
        words = tokenize(shown)
        if not words:
            continue
        term = TERM_PREFIX + key
        if term in asked:
            out.update(words)
        if said is None:
            said = tokenize(text)
        if says(said, words):
            out.add(term)
            out.update(TERM_PREFIX + up for up in glossary.broader.get(key, ()))
    return out


def key_of(glossary: GameGlossary, name: str) -> str:
    """The entry whose whole name (id, English, Chinese or alias) ``name`` is, or ""."""
    tokens = tuple(tokenize(name))
    if not tokens:
        return ""
    for pattern, key in glossary.patterns.get(tokens[0], ()):
        if pattern == tokens:
            return key
    return ""


def says(text: Sequence[str], name: Sequence[str]) -> bool:
    """Whether the tokens ``name`` occur in ``text`` in a row (a one-character
    Chinese name also inside a bigram: 牛 in 我的牛呢)."""
    size = len(name)
    if size == 1 and len(name[0]) == 1 and ord(name[0]) > 0x2FFF:
        return any(name[0] in token for token in text)
    first = name[0]
    return any(
        token == first and tuple(text[i : i + size]) == tuple(name) for i, token in enumerate(text)
    )
