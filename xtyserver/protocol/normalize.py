"""The one text normaliser: what every peer-given text becomes before it is judged.

v1.md "Normalisation" is the contract. :func:`normalize` removes invisible
characters, then applies Unicode NFKC:

- **Removed**: every format character (general category ``Cf``: zero-width
  space, joiners, BOM, bidi controls, soft hyphen, tag characters, ...), the
  rest of the ``Default_Ignorable_Code_Point`` set (listed with ``_INVISIBLE_BMP``
  below) and the C0/C1 control characters that are not whitespace. All of them
  render as nothing, so they can hide inside a Steam id or an e-mail address
  without the player seeing them.
- **NFKC** then folds compatibility forms onto their plain form: full-width
  ``Ｃ：＼`` becomes ``C:\\``, ``７６５６１１９`` becomes ``7656119``.

Removal comes first so that a removed character cannot stand between a letter
and its combining mark, so ``normalize(normalize(t)) == normalize(t)``. The
character set is written out below rather than read from :mod:`unicodedata` at
import (1.1 million code points); the tests check it against the running Python's.

Cost (``scripts/bench/decode.py``): the common cases build no new string. ASCII
costs an ``isascii`` and an ``isprintable``, plain text (:func:`is_plain`) one
scan of a character set, full-width forms a few ``str.replace`` calls; only the
rest pays for the removal scan and ``unicodedata.normalize`` (dear for CJK text).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from typing import Final, NamedTuple

__all__ = ["InertSets", "inert_sets", "is_plain", "keeps_length", "normalize", "visible"]

# C0/C1 controls other than whitespace (TAB, LF, VT, FF, CR, the separators
# U+001C-U+001F and NEL stay: they separate words, they do not hide).
_CONTROLS = r"\x00-\x08\x0e-\x1b\x7f-\x84\x86-\x9f"
# Format characters (Cf) and the other default-ignorable code points, by
# block. Unassigned ignorables (U+2065, U+FFF0-U+FFF8, plane 14) are included
# so that a newer Unicode version assigning them changes nothing here.
_INVISIBLE_BMP = (
    r"\u00ad"  # soft hyphen
    r"\u034f"  # combining grapheme joiner
    r"\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"  # Arabic/Syriac format, ALM
    r"\u115f\u1160"  # Hangul choseong/jungseong fillers
    r"\u17b4\u17b5"  # Khmer inherent vowels
    r"\u180b-\u180f"  # Mongolian free variation selectors, vowel separator
    r"\u200b-\u200f"  # ZWSP, ZWNJ, ZWJ, LRM, RLM
    r"\u202a-\u202e"  # LRE, RLE, PDF, LRO, RLO
    r"\u2060-\u206f"  # word joiner, invisible operators, LRI, RLI, FSI, PDI, deprecated
    r"\u3164"  # Hangul filler
    r"\ufe00-\ufe0f"  # variation selectors
    r"\ufeff"  # BOM / zero-width no-break space
    r"\uffa0"  # half-width Hangul filler
    r"\ufff0-\ufffb"  # reserved, interlinear annotation
)
_INVISIBLE_ASTRAL = (
    r"\U000110bd\U000110cd"  # Kaithi number signs
    r"\U00013430-\U0001343f"  # Egyptian hieroglyph format controls
    r"\U0001bca0-\U0001bca3"  # shorthand format controls
    r"\U0001d173-\U0001d17a"  # musical symbol format controls
    r"\U000e0000-\U000e0fff"  # tags, variation selectors supplement, reserved
)

_REMOVE: Final[re.Pattern[str]] = re.compile(f"[{_CONTROLS}{_INVISIBLE_BMP}{_INVISIBLE_ASTRAL}]+")
_ASCII_REMOVE: Final[re.Pattern[str]] = re.compile(r"[\x00-\x08\x0e-\x1b\x7f]+")

# Inert characters: NFKC leaves them as they are and they never combine with the
# character before them, none of them removed above, so a text made only of these
# (ASCII, kana, Hangul, CJK: nearly all of a Chinese player's text but its
# full-width punctuation) is already normal; one scan for anything else is ten times
# cheaper than the removal scan plus NFKC's quick check. The tests check every one.
_INERT = (
    r"\t-\r\x1c-\x7e\xb7\u2010\u2012-\u2016\u2018-\u2023\u2027"
    r"\u3001-\u3003\u3008-\u3011\u3014-\u301f\u3041-\u3096\u30a1-\u30fa\u30fc-\u30fe"
    r"\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7a3"
)
# Full-width forms of ASCII and the ideographic space: what a Chinese input
# method types by default. NFKC maps each to one ASCII character.
_FULL_WIDTH = "\uff01-\uff5e\u3000"
_FULL_WIDTH_CHAR: Final[re.Pattern[str]] = re.compile(f"[{_FULL_WIDTH}]")


class InertSets(NamedTuple):
    """One character that is inert (see above), one that is not, one neither nor full-width."""

    inert: re.Pattern[str]
    not_inert: re.Pattern[str]
    not_inert_nor_full_width: re.Pattern[str]


@functools.cache
def inert_sets() -> InertSets:
    """The inert character sets, compiled on first use.

    Each set spans most of the BMP: compiling the three costs more than
    starting the server's listener, and nothing before the first frame needs them.
    """
    return InertSets(
        re.compile(f"[{_INERT}]"),
        re.compile(f"[^{_INERT}]"),
        re.compile(f"[^{_INERT}{_FULL_WIDTH}]"),
    )


_TO_ASCII: Final[dict[str, str]] = {chr(c): chr(c - 0xFEE0) for c in range(0xFF01, 0xFF5F)}
_TO_ASCII["\u3000"] = " "
_SHORT: Final = 16


def normalize(text: str) -> str:
    """Return ``text`` without invisible characters, in Unicode NFKC (see the module).

    When ``text`` is already normal this is usually ``text`` itself (no copy),
    so comparing the two is cheap.
    """
    if text.isascii():
        # NFKC leaves ASCII alone; only the few ASCII controls can go.
        if text.isprintable() or _ASCII_REMOVE.search(text) is None:
            return text
        return _ASCII_REMOVE.sub("", text)
    sets = inert_sets()
    if sets.not_inert.search(text) is None:
        return text
    if len(text) > _SHORT and sets.not_inert_nor_full_width.search(text) is None:
        # Only full-width forms need work, and their ASCII replacements combine
        # with nothing: a few str.replace calls give exactly NFKC, four times
        # faster than unicodedata.normalize on a Chinese sentence (and slower
        # on a short text with many different full-width letters).
        for char in set(_FULL_WIDTH_CHAR.findall(text)):
            text = text.replace(char, _TO_ASCII[char])
        return text
    if _REMOVE.search(text) is not None:
        text = _REMOVE.sub("", text)
    return unicodedata.normalize("NFKC", text)


def visible(text: str) -> str:
    """Return ``text`` with only its invisible characters removed: the kept form.

    What the server keeps, prompts, stores and shows (v1.md "Normalisation"):
    the characters :func:`normalize` removes go, everything else (full-width
    punctuation, ``～``, ``…``, ``①``, emoji, kana, full-width letters) stays as
    typed. ``normalize(visible(t)) == normalize(t)``.
    """
    if text.isascii():
        if text.isprintable() or _ASCII_REMOVE.search(text) is None:
            return text
        return _ASCII_REMOVE.sub("", text)
    if inert_sets().not_inert.search(text) is None or _REMOVE.search(text) is None:
        return text
    return _REMOVE.sub("", text)


def keeps_length(text: str) -> bool:
    """Whether normalising ``text`` removes nothing and maps each character to one.

    True for plain text and full-width forms: limits measured on ``text`` then
    hold for its normal form, which need not be built. False means "look closer".
    """
    return (text.isascii() and text.isprintable()) or (
        inert_sets().not_inert_nor_full_width.search(text) is None
    )


def is_plain(text: str) -> bool:
    """Whether ``text`` is made only of inert characters: then ``normalize(text) is text``.

    One scan of a character set, so a caller can check a whole JSON document at
    once (a False only means "look closer", not "not normal").
    """
    return inert_sets().not_inert.search(text) is None
