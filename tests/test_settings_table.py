"""docs/configuration.md's settings table is written from the Settings Structs."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgspec
import pytest

from xtyserver.config import Settings

ROOT = Path(__file__).resolve().parents[1]
GENERATOR = ROOT / "scripts" / "settings_table.py"


@pytest.fixture(scope="module")
def generator() -> dict[str, Any]:
    return runpy.run_path(str(GENERATOR), run_name="gen")


def test_readme_holds_the_table_the_structs_write(generator: dict[str, Any]) -> None:
    readme = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert generator["with_table"](readme) == readme, "run: python scripts/settings_table.py"


def test_every_setting_has_a_row_with_its_default_and_what_it_does(
    generator: dict[str, Any],
) -> None:
    rows = {name: (default, text) for name, default, text in generator["rows"]()}
    assert len(rows) >= 150
    assert all(text.strip() for _default, text in rows.values())
    assert rows["server.port"][0] == "8765"
    assert rows["server.stale_after"][0] == "5.0"
    assert rows["model.daily_token_budget"][0] == "unset"
    assert rows["memory.budget.total_chars"][0] == "1200"
    assert rows["models.*.api_key_env"][0] == '""'  # one set of rows for every route
    assert rows["texts.ask.item"][0].startswith('"要删掉')
    assert "`server.stop_timeout`" in rows["memory.drain_timeout"][1]  # reST made Markdown
    assert not any(":func:" in text or "``" in text for _default, text in rows.values())


def test_a_setting_documented_nowhere_stops_the_generator(generator: dict[str, Any]) -> None:
    class Partly(msgspec.Struct):
        """A table.

        Attributes:
            told: This one has its line.
        """

        told: int = 1
        untold: int = 2

    with pytest.raises(SystemExit, match=r"Partly.untold is documented nowhere"):
        generator["rows"](Partly)


def test_check_fails_on_a_stale_readme(tmp_path: Path) -> None:
    """``--check`` exits 1 when docs/configuration.md is not what the generator writes."""
    copy = tmp_path / "scripts"
    copy.mkdir()
    (copy / "settings_table.py").write_text(GENERATOR.read_text(encoding="utf-8"))
    (tmp_path / "docs").mkdir()
    readme = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    stale = readme.replace("| `server.port` | `8765` |", "| `server.port` | `8000` |")
    (tmp_path / "docs" / "configuration.md").write_text(stale, encoding="utf-8")
    run = [sys.executable, str(copy / "settings_table.py"), "--check"]
    assert subprocess.run(run, capture_output=True, check=False).returncode == 1
    (tmp_path / "docs" / "configuration.md").write_text(readme, encoding="utf-8")
    assert subprocess.run(run, capture_output=True, check=False).returncode == 0
    assert Settings().server.port == 8765
