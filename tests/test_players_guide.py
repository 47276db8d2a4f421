"""The players' guide says what the page says: each provider's key page, and what a
text-only preset loses (docs/players.md, section 2)."""

from __future__ import annotations

from pathlib import Path

from xtyserver.model.presets import KEY_PAGES, PRESETS

GUIDE = (Path(__file__).resolve().parents[1] / "docs" / "players.md").read_text(encoding="utf-8")


def test_the_guide_names_every_key_page_the_page_links() -> None:
    for name, page in KEY_PAGES.items():
        assert page in GUIDE, name


def test_the_guide_says_which_preset_sees_no_screenshots() -> None:
    rows = [line for line in GUIDE.splitlines() if line.strip().startswith("| ")]
    for name, preset in PRESETS.items():
        page = KEY_PAGES.get(name)
        if page is None:
            continue
        [row] = [r for r in rows if page in r]
        assert (
            row.rstrip(" |")
            .split("|")[-1]
            .strip()
            .startswith("不能" if preset["vision"] is False else "能")
        ), row
