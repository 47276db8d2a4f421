"""The game glossary: entity names in English, Chinese, internal ids and player aliases (pure).

A :class:`Glossary` maps each name of a thing (``Abigail``, 阿比盖尔, 紫发女孩) to
one entity key of its game, and :meth:`GameGlossary.entities` finds the
entities a text's :func:`~xtyserver.memory.tokenize.tokenize` tokens name
(longest name first, non-overlapping), so memory retrieval meets them across
languages; docs/memory.md "Game glossary" tells how names match. This module builds a
glossary from already-parsed TOML (:func:`parse_documents`);
:mod:`xtyserver.serve.glossary` reads the files
``xtyserver/memory/glossary/<game-id>.toml``, one table per kind::

    game = "stardew-valley"
    [npc]
    abigail = { en = "Abigail", zh = "阿比盖尔", ids = ["Abigail"], aliases = ["紫发女孩"] }

Fields: ``en`` and ``zh`` (required: the official names), ``ids`` (internal ids
as mods send them), ``aliases`` (what players say), ``broader`` (the key of a
more general entity), ``related`` (keys of entities players connect with it,
both ways), ``unverified`` (the Chinese name is not checked against the game's
official localisation).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import Any

import msgspec

from xtyserver.memory.lexicon import EMPTY as EMPTY_LEXICON
from xtyserver.memory.lexicon import FrozenLexicon
from xtyserver.memory.tokenize import tokenize

TERM_PREFIX = "@"
"""Entity terms start with a character :func:`tokenize` never yields."""

_KEY_RE = re.compile(r"^[a-z0-9][a-z0-9_]{0,63}$")
_GAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,63}$")
_FIELDS = frozenset({"en", "zh", "ids", "aliases", "broader", "related", "unverified"})
MAX_NAME = 80
MAX_NAMES = 32


class GlossaryError(ValueError):
    """A glossary file is not valid; the message names the file, entry and field."""


class Entry(msgspec.Struct, frozen=True):
    """One entity of one game: its ``key`` (unique in the game), the ``kind`` (table) it is
    listed under, the fields of the module docstring, and the ``source`` file it came from."""

    key: str
    kind: str
    en: str
    zh: str
    ids: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    broader: str = ""
    related: tuple[str, ...] = ()
    unverified: bool = False
    source: str = ""

    @property
    def names(self) -> tuple[str, ...]:
        return (self.en, self.zh, *self.ids, *self.aliases)


# first token -> ((name tokens, entity key), ...), longest names first
_Patterns = Mapping[str, tuple[tuple[tuple[str, ...], str], ...]]
# head word -> ((the name's other words, entity key), ...)
_Partial = Mapping[str, tuple[tuple[frozenset[str], str], ...]]

PARTIAL_WINDOW = 3
"""Words either side of a head word where another word of its name may stand."""
GENERIC_HEADS = frozenset(
    word
    for line in (
        "house machine room box building station place thing stuff item area part tool block",
        "tile door wall floor light lamp pipe farm field water gas ore bar one way set kit",
    )
    for word in line.split()
)
"""Head words too common to name one thing with one more word ("big house")."""
_WEAK = frozenset(
    ["big", "small", "little", "large", "great", "old", "new", "good", "bad", "one", "s"]
)


class GameGlossary(msgspec.Struct, frozen=True):
    """The entities of one game and the name patterns that find them."""

    game_id: str
    entries: Mapping[str, Entry]
    patterns: _Patterns
    broader: Mapping[str, tuple[str, ...]]
    related: Mapping[str, tuple[str, ...]] = msgspec.field(
        default_factory=lambda: MappingProxyType({})
    )
    # The names' tokens by sound, initials and spelling (a misspelt or pinyin name).
    lexicon: FrozenLexicon = EMPTY_LEXICON
    # English names of three words or more by their head word (:func:`partial_names`).
    partial: _Partial = msgspec.field(default_factory=lambda: MappingProxyType({}))

    def __len__(self) -> int:
        return len(self.entries)

    def entities(self, tokens: Sequence[str], *, related: bool = False) -> list[str]:
        """Entity keys named in ``tokens`` (of :func:`tokenize`), in order, with repeats.

        ``related``: each named entity's related ones too (a memory's index holds
        them; a query does not). A one-character Chinese name (牛) is found inside
        a run of bigrams too (我的牛呢 -> 的牛 牛呢).
        """
        out: list[str] = []
        patterns = self.patterns
        i, n = 0, len(tokens)
        while i < n:
            token = tokens[i]
            candidates = patterns.get(token)
            step = 1
            found: list[str] = []
            if candidates:
                for pattern, key in candidates:
                    size = len(pattern)
                    if size == 1 or tuple(tokens[i : i + size]) == pattern:
                        found.append(key)
                        step = size
                        break
            if step == 1 and token in self.partial:
                # A head word with one more word of a longer name names that one
                # ("gas generator"), even where the head alone names another.
                key = self._partial(tokens, i)
                if key:
                    found = [key]
            if not found and len(token) == 2 and _is_cjk_pair(token):
                found.append(self._single(token[0]))
                # A bigram's second character is the next bigram's first, unless the run ends.
                if i + 1 >= n or tokens[i + 1][:1] != token[1]:
                    found.append(self._single(token[1]))
            for key in found:
                if key:
                    out.append(key)
                    out.extend(self.broader.get(key, ()))
                    if related:
                        out.extend(self.related.get(key, ()))
            i += step
        return out

    def _partial(self, tokens: Sequence[str], i: int) -> str:
        """The one entity whose head word ``tokens[i]`` is and another of whose words
        stands within :data:`PARTIAL_WINDOW` words of it ("" when none or several)."""
        near = set(tokens[max(0, i - PARTIAL_WINDOW) : i]) | set(
            tokens[i + 1 : i + 1 + PARTIAL_WINDOW]
        )
        keys = {key for others, key in self.partial[tokens[i]] if others & near}
        return next(iter(keys)) if len(keys) == 1 else ""

    def _single(self, char: str) -> str:
        """The entity whose one-character name ``char`` is (""; 牛 -> cow)."""
        for pattern, key in self.patterns.get(char, ()):
            if len(pattern) == 1:
                return key
        return ""

    def terms(self, text: str) -> list[str]:
        """The entity terms (``@key``) ``text`` mentions, with repeats."""
        return [TERM_PREFIX + key for key in self.entities(tokenize(text))]


EMPTY_GAME = GameGlossary("", MappingProxyType({}), MappingProxyType({}), MappingProxyType({}))


class Glossary(msgspec.Struct, frozen=True):
    """Every game's glossary; an unknown game has an empty one."""

    games: Mapping[str, GameGlossary] = msgspec.field(default_factory=lambda: MappingProxyType({}))

    def for_game(self, game_id: str) -> GameGlossary:
        return self.games.get(game_id, EMPTY_GAME)

    def __len__(self) -> int:
        return sum(len(g) for g in self.games.values())


NICKNAMED = frozenset({"npc", "character", "duplicant", "boss", "critter", "animal", "mob"})
"""Kinds of entity players call by a pet name (小哈 for 哈奇, 老齐 for 齐先生)."""
_PET = "小老阿"
# Words a pet name's two characters often are instead.
_NOT_PET = frozenset(
    [
        "小心",
        "小时",
        "小孩",
        "小姐",
        "小子",
        "小说",
        "小学",
        "小朋",
        "小小",
        "小吃",
        "小的",
        "小屋",
        "小路",
        "小鸡",
        "小猪",
        "小牛",
        "小羊",
        "老师",
        "老家",
        "老板",
        "老是",
        "老婆",
        "老公",
        "老大",
        "老人",
        "老鼠",
        "老实",
        "老子",
        "老的",
        "老天",
        "阿姨",
        "阿拉",
    ]
)


def _nicknames(entries: Iterable[Entry]) -> dict[str, str]:
    """Pet names of people and creatures: 小, 老 or 阿 and the first character of a
    Chinese name of two characters or more; a pet name two entities share is none."""
    found: dict[str, set[str]] = {}
    for entry in entries:
        if entry.kind not in NICKNAMED:
            continue
        for name in (entry.zh, *entry.aliases):
            if len(name) >= 2 and _is_cjk_pair(name[:2]):
                for pet in _PET:
                    if name[0] != pet and pet + name[0] not in _NOT_PET:
                        found.setdefault(pet + name[0], set()).add(entry.key)
    return {pet: next(iter(keys)) for pet, keys in found.items() if len(keys) == 1}


def _is_cjk_pair(token: str) -> bool:
    """Whether a token is a Chinese character bigram (not a two-letter word)."""
    return all(ord(c) > 0x2FFF for c in token)


def _names(value: Any, where: str, field: str) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_NAMES:
        raise GlossaryError(f"{where}: field {field!r} must be a list of at most {MAX_NAMES} names")
    for item in value:
        if not isinstance(item, str) or not item.strip() or len(item) > MAX_NAME:
            raise GlossaryError(
                f"{where}: field {field!r} holds {item!r}, not a name of 1-{MAX_NAME} characters"
            )
    return tuple(value)


def _name(value: Any, where: str, field: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME:
        raise GlossaryError(f"{where}: field {field!r} must be a name of 1-{MAX_NAME} characters")
    return value


def _entry(source: str, kind: str, key: str, raw: Any) -> Entry:
    where = f"{source}: entry {kind}.{key}"
    if not _KEY_RE.match(key):
        raise GlossaryError(f"{where}: the key must be lowercase letters, digits and _")
    if not isinstance(raw, dict):
        raise GlossaryError(f"{where}: must be a table such as {{ en = ..., zh = ... }}")
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise GlossaryError(f"{where}: unknown field {unknown[0]!r}")
    for required in ("en", "zh"):
        if required not in raw:
            raise GlossaryError(f"{where}: field {required!r} is missing")
    unverified = raw.get("unverified", False)
    if not isinstance(unverified, bool):
        raise GlossaryError(f"{where}: field 'unverified' must be true or false")
    broader = raw.get("broader", "")
    if not isinstance(broader, str):
        raise GlossaryError(f"{where}: field 'broader' must be an entry key")
    related = raw.get("related", [])
    if not isinstance(related, list) or not all(isinstance(k, str) for k in related):
        raise GlossaryError(f"{where}: field 'related' must be a list of entry keys")
    return Entry(
        key=key,
        kind=kind,
        en=_name(raw["en"], where, "en"),
        zh=_name(raw["zh"], where, "zh"),
        ids=_names(raw.get("ids", []), where, "ids"),
        aliases=_names(raw.get("aliases", []), where, "aliases"),
        broader=broader,
        related=tuple(related),
        unverified=unverified,
        source=source,
    )


def head_word(name: str) -> str:
    """The head word of an English name: its last word, or the one before ``of``
    (``Lord of the Fruit Flies`` -> ``lord``), as :func:`tokenize` spells it."""
    before_of = re.split(r"\s+of\s+", name, maxsplit=1, flags=re.IGNORECASE)[0]
    words = tokenize(before_of if before_of != name else name)
    return words[-1] if words else ""


def partial_names(entries: Iterable[Entry]) -> dict[str, tuple[tuple[frozenset[str], str], ...]]:
    """English names of three words or more, by head word, for matching a part of them:
    the head and one more of its words (``Pierre's store``, ``gas generator``).

    A generic head (:data:`GENERIC_HEADS`) takes no part; a weak word (big, old) never
    counts as the other word.
    """
    found: dict[str, set[tuple[frozenset[str], str]]] = {}
    for entry in entries:
        for name in (entry.en, *entry.aliases):
            if not name.isascii():
                continue
            words = [w for w in tokenize(name) if len(w) > 1]
            head = head_word(name)
            if len(words) < 3 or len(head) < 3 or head in GENERIC_HEADS:
                continue
            others = frozenset(w for w in words if w != head and w not in _WEAK)
            if others:
                found.setdefault(head, set()).add((others, entry.key))
    return {head: tuple(sorted(v, key=lambda p: (p[1], sorted(p[0])))) for head, v in found.items()}


def parse_document(source: str, doc: Mapping[str, Any]) -> tuple[str, list[Entry]]:
    """The game id and entries of one parsed TOML document.

    Raises:
        GlossaryError: Not a valid glossary document (the message names
            ``source``, the entry and the field).
    """
    game = doc.get("game")
    if not isinstance(game, str) or not _GAME_RE.match(game):
        raise GlossaryError(f"{source}: 'game' must name the game id (such as \"stardew-valley\")")
    entries: list[Entry] = []
    for kind, table in doc.items():
        if kind == "game":
            continue
        if not isinstance(table, dict) or not _KEY_RE.match(kind):
            raise GlossaryError(f"{source}: {kind!r} must be a table of entries such as [npc]")
        entries += [_entry(source, kind, key, raw) for key, raw in table.items()]
    return game, entries


def _known(by_key: Mapping[str, Entry], game_id: str, entry: Entry, field: str, key: str) -> str:
    """``key``, named in ``entry``'s ``field``, if it is an entry of the game."""
    if key not in by_key:
        raise GlossaryError(
            f"{entry.source}: entry {entry.kind}.{entry.key}: field {field!r} "
            f"names {key!r}, which is no entry of {game_id}"
        )
    return key


def build(entries_by_game: Mapping[str, Iterable[Entry]]) -> Glossary:
    """A :class:`Glossary` of the given entries; a later entry with a known key replaces it.

    Raises:
        GlossaryError: An entry's ``broader`` or ``related`` names no entry of its game.
    """
    games: dict[str, GameGlossary] = {}
    for game_id, entries in entries_by_game.items():
        by_key = {entry.key: entry for entry in entries}
        broader: dict[str, tuple[str, ...]] = {}
        for entry in by_key.values():
            chain: list[str] = []
            up = entry.broader
            while up and up not in chain and up != entry.key:
                chain.append(_known(by_key, game_id, entry, "broader", up))
                up = by_key[up].broader
            if chain:
                broader[entry.key] = tuple(chain)
        related: dict[str, set[str]] = {}
        for entry in by_key.values():
            for other in entry.related:
                if _known(by_key, game_id, entry, "related", other) != entry.key:
                    related.setdefault(entry.key, set()).add(other)
                    related.setdefault(other, set()).add(entry.key)
        patterns: dict[str, set[tuple[tuple[str, ...], str]]] = {}
        used: Counter[str] = Counter()
        for entry in by_key.values():
            for name in entry.names:
                tokens = tuple(tokenize(name))
                used.update(set(tokens))
                if tokens:
                    patterns.setdefault(tokens[0], set()).add((tokens, entry.key))
        for nickname, key in _nicknames(by_key.values()).items():
            if nickname not in patterns:
                patterns[nickname] = {((nickname,), key)}
        ordered = {
            first: tuple(sorted(found, key=lambda p: (-len(p[0]), p[1])))
            for first, found in patterns.items()
        }
        games[game_id] = GameGlossary(
            game_id,
            MappingProxyType(by_key),
            MappingProxyType(ordered),
            MappingProxyType(broader),
            MappingProxyType({k: tuple(sorted(v)) for k, v in related.items()}),
            FrozenLexicon(used),
            MappingProxyType(partial_names(by_key.values())),
        )
    return Glossary(MappingProxyType(games))


def parse_documents(docs: Iterable[tuple[str, Mapping[str, Any]]]) -> Glossary:
    """A :class:`Glossary` of ``(source, parsed TOML)`` documents, in order (later wins).

    Raises:
        GlossaryError: A document is not valid.
    """
    by_game: dict[str, list[Entry]] = {}
    for source, doc in docs:
        game, entries = parse_document(source, doc)
        by_game.setdefault(game, []).extend(entries)
    return build(by_game)
