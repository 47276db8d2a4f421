"""Toneless pinyin of the GB2312 characters, read once from ``pinyin.txt`` beside this module.

The file is package data written by ``scripts/gen_pinyin_table.py`` (a test
checks that it is current): each line is ``syllable:characters``, the
characters' most common readings first, then their second.
"""

import os
from typing import Final

PINYIN_FILE: Final = os.path.join(os.path.dirname(__file__), "pinyin.txt")

with open(PINYIN_FILE, encoding="utf-8") as _file:
    TABLE: Final = "".join(line for line in _file if not line.startswith("#"))
