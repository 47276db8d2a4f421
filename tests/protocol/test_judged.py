"""The look-alike table behind the judged form (protocol/judged.py, v1.md "Normalisation")."""

from __future__ import annotations

import importlib.util
import json
import runpy
from pathlib import Path

from xtyserver.protocol import judged as judged_module
from xtyserver.protocol.judged import CONFUSABLES_FILE, judged
from xtyserver.protocol.normalize import inert_sets, normalize

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "scripts" / "gen_confusables.py"


def _reference() -> dict[str, str]:
    """The fold table read straight from TR39's whole JSON, as judged did before."""
    spec = importlib.util.find_spec("confusable_homoglyphs")
    assert spec is not None and spec.submodule_search_locations
    path = Path(next(iter(spec.submodule_search_locations))) / "confusables.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    targets = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-./:\\<>")
    brackets = {"\u276c": "<", "\u276d": ">"}  # TR39's prototypes of 〈 and 〉
    out = {}
    for char, glyphs in data.items():
        found = (brackets.get(g["c"], g["c"]) for g in glyphs if g["c"] in targets | set(brackets))
        target = next(found, None) or brackets.get(char)
        if target is None or len(char) != 1 or char.isascii():
            continue
        if inert_sets().inert.match(char) or normalize(char) != char:
            continue
        out[char] = "I" if target == "l" and char.isupper() else target
    return out


def test_the_shipped_file_is_what_the_generator_writes() -> None:
    text = runpy.run_path(str(GENERATOR), run_name="gen")["confusables_text"]()
    shipped = Path(CONFUSABLES_FILE).read_text(encoding="utf-8")
    assert shipped == text, "run: python scripts/gen_confusables.py"


def test_the_table_is_tr39s_as_read_from_the_whole_data() -> None:
    assert _reference() == judged_module.confusables()
    assert len(judged_module.confusables()) > 400


def test_look_alikes_fold_and_inert_text_does_not() -> None:
    assert judged("С:\\Users\\аlice") == "C:\\Users\\alice"  # Cyrillic С and а
    assert judged("Ιd") == "Id"  # Greek capital iota: TR39 says l, the fold I
    assert judged("ノ丿") == "ノ丿"  # kana and CJK stay as they are
