"""The pinyin table behind the spelling paths (memory/pinyin.txt, package data)."""

from __future__ import annotations

import runpy
from pathlib import Path

from xtyserver.memory.pinyin import READINGS, SYLLABLES
from xtyserver.memory.pinyin_table import PINYIN_FILE

GENERATOR = Path(__file__).resolve().parents[2] / "scripts" / "gen_pinyin_table.py"


def test_the_shipped_file_is_what_the_generator_writes() -> None:
    text = runpy.run_path(str(GENERATOR), run_name="gen")["pinyin_text"]()
    shipped = Path(PINYIN_FILE).read_text(encoding="utf-8")
    assert shipped == text, "run: python scripts/gen_pinyin_table.py"


def test_every_gb2312_character_has_its_readings_most_common_first() -> None:
    assert len(READINGS) == 6763
    assert READINGS["火"] == ("huo",)
    assert READINGS["行"][0] == "xing" and "hang" in READINGS["行"]
    assert READINGS["绿"][0] == "lv"  # ü typed as v, as IMEs take it
    assert {"zhuang", "lve", "er"} <= SYLLABLES and "ng" not in SYLLABLES
