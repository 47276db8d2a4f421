"""The form text is judged in, and the way back to the text that is kept.

v1.md "Normalisation" is the contract. Peer text is **kept** as sent with only
its invisible characters removed (:func:`~xtyserver.protocol.normalize.visible`)
and **judged** in a stricter form (:func:`judged`): the normal form
(:func:`~xtyserver.protocol.normalize.normalize`, i.e. NFKC), then

- every decimal digit of any script (Unicode category ``Nd``: Arabic-Indic
  ``٧٦٥``, Devanagari ``७६५``, ...) folded to its ASCII digit, and
- every letter that Unicode TR39 lists as confusable with one ASCII letter,
  digit or separator (``- . / : \\``) folded to it: Cyrillic ``о`` and Greek
  ``ο`` become ``o``, Cyrillic ``ѕ`` becomes ``s``; where TR39's prototype is
  ``l`` for an upper-case letter (Greek ``Ι``) the fold gives ``I``. The data is
  ``confusables.txt`` beside this module (:data:`CONFUSABLES_FILE`), written by
  ``scripts/gen_confusables.py``.

Both folds map one character to one character. Inert characters (ASCII, kana,
CJK, Hangul) are never folded (TR39 has ``ノ`` and ``丿`` as look-alikes of ``/``),
so a plain text is judged as it is and the byte prefilter stays sound.
:class:`Judged` maps a span of the judged form back to the characters of the
kept text that produced it, which is what redaction replaces.
"""

from __future__ import annotations

import bisect
import functools
import os
import re
import unicodedata
from typing import Final

from xtyserver.protocol.normalize import inert_sets, is_plain, normalize

__all__ = ["NUMERALS", "Judged", "judged", "look_alikes", "numerals_folded"]


CONFUSABLES_FILE: Final = os.path.join(os.path.dirname(__file__), "confusables.txt")
"""TR39's look-alikes of one ASCII letter, digit or ``- . / : \\``, ``HEX target`` a line."""


def _read_confusables() -> dict[str, str]:
    """Every line of the file: a character and the ASCII character it looks like."""
    out: dict[str, str] = {}
    with open(CONFUSABLES_FILE, encoding="utf-8") as file:
        for line in file:
            if not line.startswith("#"):
                code, target = line.split()
                out[chr(int(code, 16))] = target
    return out


# Read at import: judging a text never opens a file (a flood of connections may
# have taken every descriptor). What is made of it waits for the first use.
_TABLE: Final[dict[str, str]] = _read_confusables()


@functools.cache
def confusables() -> dict[str, str]:
    """Non-inert characters TR39 lists as look-alikes of one ASCII target, made on first use.

    The filters that depend on the Unicode version (NFKC, which characters
    are inert) run here, on the Python that serves, not in the generator.
    """
    out: dict[str, str] = {}
    for char, target in _TABLE.items():
        if inert_sets().inert.match(char) or normalize(char) != char:
            continue
        out[char] = "I" if target == "l" and char.isupper() else target
    return out


def look_alikes(target: str) -> frozenset[str]:
    """Every character TR39 lists as a look-alike of ``target``, inert punctuation (``〈``) too.

    Kana and CJK ideographs (TR39 has ``く`` for ``<``) are left out: players' text is full of them.
    """
    return frozenset(
        char
        for char, to in _TABLE.items()
        if to == target
        and not (
            unicodedata.category(char).startswith("L")
            and (inert_sets().inert.match(char) or unicodedata.name(char, "").startswith("CJK"))
        )
    )


_CACHE_MAX: Final = 4096


class _Fold(dict[int, str]):
    """A ``str.translate`` table computed on demand: digits, then look-alikes."""

    def __missing__(self, code: int) -> str:
        char = chr(code)
        # digit(), not decimal(): also the circled and dingbat digits (❼).
        digit = unicodedata.digit(char, None) if code > 0x7F else None
        if digit is not None:
            out = str(digit)
        elif char == "\u3007":  # 〇, the ideographic zero, not an "O" (TR39's prototype)
            out = "0"
        elif inert_sets().inert.match(char):
            out = char
        else:
            out = confusables().get(char, char)
        if len(self) < _CACHE_MAX:
            self[code] = out
        return out


_FOLD: Final = _Fold()


def fold(normal: str) -> str:
    """``normal`` (a normalised text) with digits and look-alike letters folded (same length)."""
    if normal.isascii() or is_plain(normal):
        return normal
    return normal.translate(_FOLD)


def judged(text: str) -> str:
    """The form ``text`` is judged in (v1.md "Normalisation"): normal, then folded."""
    if text.isascii() and text.isprintable():
        return text
    return fold(normalize(text))


# Digits joined by up to four separators (anything but a letter, digit, CJK character
# or line break) count as one number: a separator inside a digit run hides nothing.
_JOIN: Final[re.Pattern[str]] = re.compile(r"[0-9]((?:[^\w\n]|_){1,4})(?=[0-9])")
# Chinese numerals written digit by digit (七六五六…, 壹贰叁, 〇/零, 幺) are digits
# in the joined view only: the judged text keeps them (一 is also "one"/"a").
NUMERALS: Final = "〇零一二三四五六七八九壹贰貳叁參肆伍陆陸柒捌玖幺"
_NUMERAL_FOLD: Final = str.maketrans(NUMERALS, "001234567891223345667891")
_NUMERAL: Final[re.Pattern[str]] = re.compile(f"[{NUMERALS}]")


def numerals_folded(text: str) -> str:
    """``text`` with every Chinese numeral of :data:`NUMERALS` as its digit (same length)."""
    if text.isascii() or _NUMERAL.search(text) is None:
        return text
    return text.translate(_NUMERAL_FOLD)


class Judged:
    """One kept text (invisible characters removed), its judged form ``text`` and the map."""

    __slots__ = ("_digits", "_ends", "_starts", "text")

    def __init__(self, kept: str, *, mapped: bool = True) -> None:
        """Judge ``kept``; ``mapped=False`` skips the map (only :attr:`text` is read)."""
        self._starts: list[int] | None = None
        self._ends: list[int] | None = None
        self._digits: tuple[str, list[int], list[int]] | None = None
        if kept.isascii() or is_plain(kept):
            self.text = kept
            return
        if not mapped:
            self.text = judged(kept)
            return
        normal = normalize(kept)
        if len(normal) == len(kept) and (
            inert_sets().not_inert_nor_full_width.search(kept) is None or _per_char(kept) == normal
        ):
            # Every changed character became one character, alone: the offsets
            # are the kept text's own (full-width forms, the common case).
            self.text = fold(normal)
            return
        starts: list[int] = []
        ends: list[int] = []
        pieces: list[str] = []
        for start, end in _chunks(kept):
            piece = normalize(kept[start:end])
            pieces.append(piece)
            starts.extend([start] * len(piece))
            ends.extend([end] * len(piece))
        joined = "".join(pieces)
        if joined != normal:
            # Composition across chunk boundaries (rare scripts): one chunk.
            joined = normal
            starts = [0] * len(normal)
            ends = [len(kept)] * len(normal)
        self.text = fold(joined)
        self._starts, self._ends = starts, ends

    def kept_span(self, start: int, end: int) -> tuple[int, int]:
        """The span of the kept text that produced ``text[start:end]`` (``end > start``)."""
        if self._starts is None or self._ends is None:
            return start, end
        return self._starts[start], self._ends[end - 1]

    def digits_joined(self) -> tuple[str, list[int], list[int]]:
        """The judged text with Chinese numerals as digits and digit-joining separators removed.

        Returns:
            The joined text, and for each of its segments the start in it and
            the start in :attr:`text` (for :meth:`joined_span`).
        """
        if self._digits is None:
            text = numerals_folded(self.text)
            at: list[int] = [0]
            src: list[int] = [0]
            parts: list[str] = []
            last = 0
            length = 0
            for m in _JOIN.finditer(text):
                parts.append(text[last : m.start(1)])
                length += m.start(1) - last
                last = m.end(1)
                at.append(length)
                src.append(last)
            parts.append(text[last:])
            self._digits = ("".join(parts), at, src)
        return self._digits

    def joined_span(self, start: int, end: int) -> tuple[int, int]:
        """A span of :meth:`digits_joined`'s text as a span of :attr:`text`."""
        _, at, src = self.digits_joined()

        def back(i: int) -> int:
            k = bisect.bisect_right(at, i) - 1
            return src[k] + (i - at[k])

        return back(start), back(end - 1) + 1


def _per_char(kept: str) -> str:
    """``kept`` with each non-inert character normalised on its own."""
    return inert_sets().not_inert.sub(lambda m: normalize(m.group()), kept)


def _chunks(kept: str) -> list[tuple[int, int]]:
    """Spans of ``kept`` that normalise independently: a starter and its marks."""
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(kept)):
        if unicodedata.combining(kept[i]) == 0 and not 0x1160 <= ord(kept[i]) <= 0x11FF:
            out.append((start, i))
            start = i
    if kept:
        out.append((start, len(kept)))
    return out
