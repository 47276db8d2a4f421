"""Numbers as one term, however they are written (pure).

A memory says 「矿井第25层」 or "sold for 250g"; the player asks 「打到二十五层」 or "the
thing I sold for two hundred and fifty". :func:`number_terms` gives a term ``#25`` for
each number a text writes in digits (25, 250g, 10,000g, 100k), in Chinese numerals
(二十五, 一百, 两千, 一打) or in English words (twenty-five, two hundred and fifty, a
dozen, half a dozen, a hundred K), so both sides of a search carry the same term. Like a
glossary entity's (``@coop``) it is a meaning, not a shared surface: the words stay as
they are (the player's words are theirs: these are extra terms, never a rewrite of what
is stored or shown).

A lone Chinese numeral counts only before a measure word (三个, 五只; 一下 and 十分 are
not numbers), a lone English "one" never (it is a pronoun far more often). A date (第25天,
第3周期, "Day 25", "Cycle 3", "Spring 8") gives no term: nearly every memory starts with
one, and what a question's time refers to is read by memory/cues.py. Nor does a small
ordinal (第二个厨房, 第一次: "the second", not two of them); 第25层 does (矿井二十五层).
Nor a time (三天前, 五十来轮, "two days back"): how long, not how many.
"""

from __future__ import annotations

import functools
import re

from xtyserver.protocol.normalize import normalize

NUMBER_PREFIX = "#"
"""Number terms start with a character :func:`~xtyserver.memory.tokenize.tokenize` never
yields (nor the glossary's ``@``)."""

_DIGITS = dict(zip("零〇一二两三四五六七八九", (0, 0, 1, 2, 2, 3, 4, 5, 6, 7, 8, 9), strict=True))
_UNITS = {"十": 10, "百": 100, "千": 1000}
_MYRIAD = {"万": 10_000, "亿": 100_000_000}

MEASURE_WORDS = (
    "个只块层天周期份次头条棵座台张把瓶袋组堆件颗朵根枚匹箱桶罐盘串粒轮季年级倍套扇间口株"
)
"""What follows a number in Chinese (三个, 五只, 第二年): a lone numeral before one of these
is a number; before anything else (一下, 一起, 十分) it is part of a word."""

DOZENS = {"一打": 12, "半打": 6, "两打": 24, "三打": 36}
"""Chinese dozens (一打鸡蛋)."""

_EN_ONES = {
    "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
}  # fmt: skip
_EN_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}  # fmt: skip
_EN_SCALES = {"hundred": 100, "thousand": 1000, "k": 1000, "million": 1_000_000}


def chinese_value(run: str) -> int | None:
    """The value of a run of Chinese numerals (二十五 -> 25, 两千 -> 2000, 一百零五 -> 105,
    colloquial 一百五 -> 150 and 一万二 -> 12000), or None when it is no well-formed
    number (二五, 十百)."""
    total = 0
    section = 0
    digit: int | None = None
    last = 10**9  # the last unit or myriad written
    zero = False  # 一百零五: the digit after 零 is units
    for ch in run:
        if ch in ("零", "〇") and digit is None and (section or total):
            zero = True
        elif ch in _DIGITS:
            if digit is not None:
                return None
            digit = _DIGITS[ch]
        elif ch in _UNITS:
            if _UNITS[ch] >= last and last in _UNITS.values():
                return None
            section += (1 if digit is None else digit) * _UNITS[ch]
            digit, last, zero = None, _UNITS[ch], False
        elif ch in _MYRIAD:
            section += digit or 0
            if section == 0:
                return None
            total += section * _MYRIAD[ch]
            section, digit, last, zero = 0, None, _MYRIAD[ch], False
        else:
            return None
    if digit is not None and last > 10 and not zero and last != 10**9:
        digit *= last // 10  # a digit after a unit above ten counts a tenth of it
    return total + section + (digit or 0)


@functools.cache
def _patterns() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    numerals = "".join((*_DIGITS, *_UNITS, *_MYRIAD))
    chinese = re.compile(rf"[{numerals}]+")
    words = "|".join(
        sorted(
            (*_EN_ONES, *_EN_TENS, *_EN_SCALES, "a", "an", "and", "half", "dozen"),
            key=len,
            reverse=True,
        )
    )
    english = re.compile(rf"\b(?:(?:{words})(?:[\s-]+|\b))+", re.IGNORECASE)
    digits = re.compile(
        r"(?<![A-Za-z0-9.,])(\d{1,3}(?:,\d{3})+|\d+)(k|g|gold)?(?![A-Za-z0-9])", re.IGNORECASE
    )
    dates = re.compile(
        rf"第[\d{numerals}]+(?:天|周期|日|年|季)|第(?:[零〇一二两三四五六七八九]|[0-9])(?![\d{numerals}])|"
        r"\b(?:day|cycle|year|spring|summer|fall|autumn|winter)\s+[\w-]+",
        re.IGNORECASE,
    )
    return chinese, english, digits, dates


def _english_value(phrase: str) -> int | None:
    """The value of English number words (two hundred and fifty -> 250, a dozen -> 12,
    half a dozen -> 6, a hundred k -> 100000), or None when they hold no number."""
    words = [w for w in re.split(r"[\s-]+", phrase.lower()) if w]
    total = 0
    current = 0
    seen = False
    half = False
    for w in words:
        if w in _EN_ONES:
            current += _EN_ONES[w]
            seen = True
        elif w in _EN_TENS:
            current += _EN_TENS[w]
            seen = True
        elif w == "dozen":
            current = (current or 1) * 12
            seen = True
        elif w in _EN_SCALES:
            scale = _EN_SCALES[w]
            if w == "k" and not seen:
                return None
            current = (current or 1) * scale
            seen = True
            if scale >= 1000:
                total += current
                current = 0
        elif w == "half":
            half = True
        elif w in ("a", "an", "and"):
            continue
        else:  # pragma: no cover - the pattern admits no other word
            return None
    if not seen:
        return None
    value = total + current
    return value // 2 if half else value


_TIMED = re.compile(
    r"\s*(?:[来多几]?个?(?:天|周期|日|年|季|轮|月|周|礼拜|星期|小时|钟头|分钟)|"
    r"(?:days?|cycles?|years?|seasons?|weeks?|months?|hours?|minutes?|nights?)\b)",
    re.IGNORECASE,
)
"""A time after a number (三天, 五十来轮, 两个月, "two days"): how long or how long ago, read
by memory/cues.py, not a count to match (a memory's 20个 is no 二十天前)."""


def number_terms(text: str) -> list[str]:
    """The terms (``#25``) of the numbers ``text`` writes (see the module docstring)."""
    chinese, english, digits, dates = _patterns()
    text = dates.sub(" ", normalize(text))

    def timed(end: int) -> bool:
        return _TIMED.match(text, end) is not None

    out: list[int] = [value for word, value in DOZENS.items() if word in text]
    for m in chinese.finditer(text):
        run = m.group(0)
        if text[m.start() : m.end() + 1][-2:] in DOZENS or timed(m.end()):
            continue
        after = text[m.end() : m.end() + 1]
        measured = bool(after) and after in MEASURE_WORDS
        if len(run) == 1 and not measured:
            continue  # 一下, 十分: part of a word
        if not measured and not any(ch in _UNITS or ch in _MYRIAD for ch in run):
            continue  # 一一, 三五 (a few): no number
        value = chinese_value(run)
        if value is not None and value >= 2:
            out.append(value)
    for m in english.finditer(text):
        value = _english_value(m.group(0))
        if value is not None and value >= 2 and not timed(m.end()):
            out.append(value)
    for m in digits.finditer(text):
        unit = (m.group(2) or "").lower()
        if not timed(m.end()):
            out.append(int(m.group(1).replace(",", "")) * (1000 if unit == "k" else 1))
    return [f"{NUMBER_PREFIX}{value}" for value in out]
