"""A player's misspelt, same-sounding and pinyin words, matched to a save's own words (pure).

Chinese players type through a pinyin IME: a typo is most often another
character of the same sound (火推 for 火腿), or the Latin letters themselves, in
full (``huotui``) or as initials (``sqzx`` for 社区中心); English typos are a
letter or two off (``stardorp``). None of these shares a token with the memory
it means. :func:`respell` gives back the words of a lexicon
(:mod:`xtyserver.memory.lexicon`: a save's memories, its game's glossary) that a
question's unknown words stand for, as runs of tokens in order; known words are
never respelt, and each path (same sound, full pinyin, initials, English typos:
docs/memory.md "Game glossary") is narrow enough that small talk finds nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Hashable, Iterable, Sequence

from xtyserver.memory.lexicon import LONG, MAX_TYPO, MIN_TYPO, Vocabulary, deletes
from xtyserver.memory.pinyin import HEARD, MAX_SPLITS, READINGS, VOWELS, fuzzy, split_ways
from xtyserver.memory.tokenize import STOP_WORDS, runs, stem

FUNCTION_CHARS = frozenset("的了吗呢吧啊呀是在有我你他她它们着过得地和与就都也还又很太不没这那个么")
"""Characters too common to show that two bigrams are one word."""
MAX_CANDIDATES = 6
"""Vocabulary bigrams kept per position of a run (the most used first)."""


def _keys(bigram: str, heard: bool) -> list[tuple[str, str]]:
    """The (fuzzy when ``heard``) sounds of a bigram of common characters."""
    table = HEARD if heard else READINGS
    return list(itertools.product(table.of(bigram[0]), table.of(bigram[1])))


def edit_distance(a: str, b: str) -> int:
    """Optimal string alignment distance: insertions, deletions, substitutions and
    swaps of two neighbours each count one."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = a[i - 1] != b[j - 1]
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def _gather(lexicons: Sequence[Vocabulary], table: str, keys: Iterable[Hashable]) -> dict[str, int]:
    found: dict[str, int] = {}
    for lex in lexicons:
        counts = lex.counts
        for key in keys:
            for word in lex.words_at(table, key):
                found[word] = found.get(word, 0) + counts[word]
    return found


def _candidates(
    keys: Sequence[Hashable],
    lexicons: Sequence[Vocabulary],
    table: str = "sound",
    heard: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """Vocabulary bigrams of these sounds (or initials), the most used first; of their
    fuzzy sounds (``heard``) when none."""
    found = _gather(lexicons, table, keys)
    if not found and heard:
        found = _gather(lexicons, "heard", heard)
    return sorted(found, key=lambda w: (-found[w], w))[:MAX_CANDIDATES]


def _chains(columns: Sequence[Sequence[str]]) -> list[list[str]]:
    """Runs of bigrams, one per column, each linked to the next by a shared character.

    Every maximal run: it starts where no bigram of the column before links to
    it and follows, at each step, the link that runs longest.
    """
    n = len(columns)
    reach: list[dict[str, int]] = [{} for _ in range(n)]
    for i in range(n - 1, -1, -1):
        for word in columns[i]:
            later = columns[i + 1] if i + 1 < n else ()
            reach[i][word] = 1 + max((reach[i + 1][w] for w in later if w[0] == word[1]), default=0)
    out: list[list[str]] = []
    for i in range(n):
        for word in columns[i]:
            if i and any(w[1] == word[0] for w in columns[i - 1]):
                continue
            chain, j = [word], i
            while j + 1 < n:
                linked = [w for w in columns[j + 1] if w[0] == chain[-1][1]]
                if not linked:
                    break
                chain.append(max(linked, key=lambda w: reach[j + 1][w]))
                j += 1
            out.append(chain)
    return out


def _known(lexicons: Sequence[Vocabulary], word: str) -> bool:
    return any(word in lex.counts for lex in lexicons)


def _same_sound(run: str, lexicons: Sequence[Vocabulary]) -> list[list[str]]:
    typed = [run[i : i + 2] for i in range(len(run) - 1)]
    unknown = [not _known(lexicons, bigram) for bigram in typed]
    if not any(unknown):
        return []
    columns: list[list[str]] = []
    for bigram, is_unknown in zip(typed, unknown, strict=True):
        if not is_unknown:
            columns.append([bigram])
        elif READINGS.of(bigram[0]) and READINGS.of(bigram[1]):
            columns.append(_candidates(_keys(bigram, False), lexicons, heard=_keys(bigram, True)))
        else:
            columns.append([])
    spans: list[list[str]] = []
    for chain in _chains(columns):
        start = next(i for i, col in enumerate(columns) if chain[0] in col)
        new = [w for k, w in enumerate(chain) if w != typed[start + k]]
        if not new:
            continue
        # One bigram alone must keep one of its characters, and not a particle: a wrong
        # pick in the IME, not a different word that sounds the same (我是 / 卧室, 卖了 / 买了).
        # Nor may it put a particle in (哪一 is not 了一, which half the save's memories
        # carry: round four's development set, where it took the words' places).
        pairs = list(zip(chain[0], typed[start], strict=True))
        if len(chain) == 1 and (
            not any(a == b and a not in FUNCTION_CHARS for a, b in pairs)
            or any(a != b and a in FUNCTION_CHARS for a, b in pairs)
        ):
            continue
        spans.append(chain)
    return spans


def _pinyin(syllables: Sequence[str], lexicons: Sequence[Vocabulary]) -> list[list[str]]:
    columns = [
        _candidates([(a, b)], lexicons, heard=[(fuzzy(a), fuzzy(b))])
        for a, b in itertools.pairwise(syllables)
    ]
    return _chains(columns)


def _initials(word: str, lexicons: Sequence[Vocabulary]) -> list[list[str]]:
    columns = [_candidates([pair], lexicons, "initials") for pair in itertools.pairwise(word)]
    return [chain for chain in _chains(columns) if len(chain) == len(columns)]


def _typos(word: str, lexicons: Sequence[Vocabulary]) -> list[str]:
    """Vocabulary words within one edit of ``word``, two for those of :data:`LONG` letters."""
    found: set[str] = set()
    # A word two edits from one of LONG letters has LONG - 2 at least.
    for key in deletes(word, 2 if len(word) >= LONG - 2 else 1):
        for lex in lexicons:
            found.update(lex.words_at("near", key))
    return sorted(w for w in found if edit_distance(word, w) <= (2 if len(w) >= LONG else 1))


def respell(text: str, lexicons: Sequence[Vocabulary]) -> list[list[str]]:
    """Runs of ``lexicons``' tokens (each in the order a name would be tokenized) that
    ``text``'s unknown words stand for."""
    spans: list[list[str]] = []
    pending: list[str] = []  # consecutive Latin words that split into syllables

    def flush() -> None:
        if not pending:
            return
        ways = [split_ways(w) for w in pending]
        for way in itertools.islice(itertools.product(*ways), MAX_SPLITS):
            syllables = [s for part in way for s in part]
            if len(syllables) >= 2:
                spans.extend(_pinyin(syllables, lexicons))
        pending.clear()

    pieces = list(runs(text))
    english: bool | None = None  # read when first needed: most questions need it not

    def is_english() -> bool:
        # A question in English uses words that are no pinyin ("like" splits as li-ke).
        return any(
            not cjk
            and p.isascii()
            and p.isalpha()
            and p.lower() not in STOP_WORDS
            and not split_ways(p.lower())
            and VOWELS.intersection(p.lower())
            and not _known(lexicons, stem(p.lower()))
            for cjk, p in pieces
        )

    latin: list[str] = []
    typo = False
    initials_of: dict[str, list[list[str]]] = {}  # a word said twice is read once
    for is_cjk, piece in pieces:
        if is_cjk:
            flush()
            if len(piece) >= 2:
                spans.extend(_same_sound(piece, lexicons))
            continue
        word = piece.lower()
        token = stem(word)
        if word in STOP_WORDS:
            flush()
            continue
        if _known(lexicons, token) or not word.isascii() or not word.isalpha():
            flush()
            latin.append(token)
            continue
        if split_ways(word):
            if english is None:
                english = is_english()
            if not english:
                pending.append(word)
                continue
        flush()
        vowelless = 3 <= len(word) <= 6 and not VOWELS.intersection(word)
        if vowelless and word not in initials_of:
            initials_of[word] = _initials(word, lexicons)
        initials = initials_of.get(word, [])
        if initials:
            spans.extend(initials)
            continue
        fixed = _typos(token, lexicons) if MIN_TYPO <= len(token) <= MAX_TYPO else []
        latin.append(fixed[0] if fixed else token)
        spans.extend([w] for w in fixed[1:])
        typo = typo or bool(fixed)
    flush()
    if typo:
        spans.append(latin)
    return [span for span in spans if span]
