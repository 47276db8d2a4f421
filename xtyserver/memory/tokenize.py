"""A tokenizer for mixed Chinese/English memory text (pure).

Text is tokenized in its normal form (``protocol/v1.md`` "Normalisation"), so
``Ｆｉｓｈ Ｔａｎｋ`` finds ``fish tank`` and a zero-width space does not split a
word. Latin words are lowercased, lightly stemmed (``berries`` -> ``berry``)
and stop words dropped; runs of CJK characters become overlapping bigrams
(``社区中心`` -> ``社区 区中 中心``; one character alone stays itself), which
need no dictionary. Everything else separates tokens.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator

from xtyserver.protocol.normalize import normalize

_CJK = (
    r"\u3040-\u30ff"  # Hiragana, Katakana
    r"\u3400-\u4dbf"  # CJK Extension A
    r"\u4e00-\u9fff"  # CJK Unified Ideographs
    r"\uac00-\ud7af"  # Hangul syllables
    r"\uf900-\ufaff"  # CJK compatibility ideographs
    r"\U00020000-\U0002ebef"  # Extensions B-F
)


@functools.cache
def run_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    """A run (CJK characters, or a word), and one CJK character: compiled on first use."""
    return re.compile(rf"([{_CJK}]+)|([^\W_{_CJK}]+)"), re.compile(rf"[{_CJK}]")


_STOP = (
    "a an the and or of to in on at for with is are was were be been it its this that "
    "i me my you your we our he she they them his her do does did not no so as by from"
)
STOP_WORDS = frozenset(_STOP.split())


def stem(word: str) -> str:
    """The light plural stemmer of English words (``berries`` -> ``berry``)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
        return word[:-1]
    return word


def token_spans(text: str) -> Iterator[tuple[int, int, str]]:
    """Yield ``(start, end, token)`` for an FTS5 tokenizer.

    The offsets index ``normalize(text)``; for the text the memory store keeps
    (always normalised) that is ``text`` itself.
    """
    text = normalize(text)
    for m in run_patterns()[0].finditer(text):
        cjk, word = m.group(1), m.group(2)
        start = m.start()
        if cjk:
            if len(cjk) == 1:
                yield start, start + 1, cjk
            else:
                for i in range(len(cjk) - 1):
                    yield start + i, start + i + 2, cjk[i : i + 2]
        else:
            w = word.lower()
            if w not in STOP_WORDS:
                yield start, m.end(), stem(w)


def runs(text: str) -> Iterator[tuple[bool, str]]:
    """The runs of normalised ``text``: ``(True, 社区中心)`` for Chinese characters,
    ``(False, Coops)`` for a word of letters and digits (as typed: not lowercased)."""
    for m in run_patterns()[0].finditer(normalize(text)):
        cjk = m.group(1)
        yield (True, cjk) if cjk else (False, m.group(2))


def tokenize(text: str) -> list[str]:
    """Split normalised ``text`` into index/query tokens (see the module docstring)."""
    return [token for _, _, token in token_spans(text)]


@functools.lru_cache(maxsize=1024)
def approx_tokens(text: str) -> int:
    """Approximate model tokens: one per CJK character plus one per latin word.

    Cached: a turn counts the same texts again (the stable prompt layers, the
    window's rounds, the working memory's fold check), turn after turn.
    """
    run, cjk_char = run_patterns()
    cjk = len(cjk_char.findall(text))
    words = sum(1 for m in run.finditer(text) if m.group(2))
    return cjk + words
