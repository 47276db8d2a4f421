"""The character error rate of a transcript, judged on its normal form (the voice tests and
scripts/bench/voice.py): no punctuation or spaces, Chinese numerals as digits."""

from __future__ import annotations

import re

NUMERALS = str.maketrans("〇一二三四五六七八九", "0123456789")


def edit_distance(a: str, b: str) -> int:
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def normal(text: str) -> str:
    """What is compared: no punctuation or spaces, Chinese numerals as digits (十 as 10)."""
    text = re.sub(r"[\W_]", "", text.lower())
    return re.sub(r"(?<![0-9])十", "10", text).translate(NUMERALS)


def error_rate(heard: str, reference: str) -> float:
    """The character error rate of ``heard``, both in :func:`normal` form."""
    a, b = normal(heard), normal(reference)
    return edit_distance(a, b) / max(1, len(b))
