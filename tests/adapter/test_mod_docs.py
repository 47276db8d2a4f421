"""What a mod author reads is true (issue 36 item 12): the DST mod's options as DST loads them
from modinfo.lua (Lua 5.1), the ports the guides tell a player to start the server on, and
every Markdown file the adapters' code and READMEs point to."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.adapter.games import NO_LUA

ROOT = Path(__file__).resolve().parents[2]
DST = ROOT / "adapters" / "dst"
# A player is told to start the server on another port here; the DST mod must offer it.
GUIDES = [ROOT / "docs" / "players.md", DST / "README.md", ROOT / "docs" / "mod-authors.md"]


def dst_options() -> dict[str, tuple[str, list[str]]]:
    """modinfo.lua's configuration_options: name -> (default, the values offered)."""
    code = (
        'dofile("modinfo.lua")\n'
        "for _, o in ipairs(configuration_options) do\n"
        "  local d = {}\n"
        "  for _, x in ipairs(o.options) do d[#d + 1] = tostring(x.data) end\n"
        '  print(o.name .. "\\t" .. tostring(o.default) .. "\\t" .. table.concat(d, ","))\n'
        "end\n"
    )
    out = subprocess.run(
        ["lua5.1", "-e", code], cwd=DST, capture_output=True, text=True, timeout=60, check=True
    )
    options = {}
    for line in out.stdout.splitlines():
        name, default, values = line.split("\t")
        options[name] = (default, values.split(","))
    return options


@pytest.mark.skipif(NO_LUA, reason="needs lua5.1")
def test_the_dst_options_are_the_address_alone_and_offer_the_guides_ports() -> None:
    options = dst_options()
    # No token to paste: the mod pairs (v1.md "Pairing"), so only where the server is.
    assert sorted(options) == ["host", "port"]
    assert options["host"][0] == "localhost" and options["port"][0] == "8765"
    told = set()
    for guide in GUIDES:
        told |= set(re.findall(r"xtyserver (?:autostart on )?--port (\d+)", guide.read_text()))
    assert told, "the guides name no other port"
    assert told <= set(options["port"][1]), (told, options["port"])


def test_the_dst_mod_says_nothing_of_a_token_to_paste() -> None:
    """A DST mod cannot read the token file, and it pairs: the player is never sent to
    `xtyserver token show` (the README's shim commands are the developer's)."""
    for path in (DST / "modmain.lua", DST / "modinfo.lua"):
        text = path.read_text(encoding="utf-8")
        assert "token show" not in text, path
        assert not re.search(r'name\s*=\s*"token"', text), path


def test_every_markdown_file_the_adapters_name_exists() -> None:
    """A comment or README pointing to a missing page (PAIRING.md was one) sends the author
    nowhere: every `*.md` named in adapters/ is a file of this repository."""
    here = {p.name for p in ROOT.rglob("*.md") if ".venv" not in p.parts}
    missing = []
    for path in sorted((ROOT / "adapters").rglob("*")):
        if path.suffix not in (".lua", ".cs", ".md"):
            continue
        for name in re.findall(r"[\w./-]*\w\.md\b", path.read_text(encoding="utf-8")):
            if not ((path.parent / name).exists() or (ROOT / name).exists() or name in here):
                missing.append(f"{path.relative_to(ROOT)}: {name}")
    assert missing == []


def test_the_mod_authors_links_lead_somewhere() -> None:
    """Every relative link of the pages a mod author reads names a file that exists (the
    README's move to docs/ had left `protocol/v1.md` links that only worked from the root)."""
    pages = [
        ROOT / "docs" / "mod-authors.md",
        ROOT / "docs" / "adapter-client.md",
        *sorted((ROOT / "adapters").glob("*/README.md")),
    ]
    broken = []
    for page in pages:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if (
                not target.startswith(("http://", "https://"))
                and not (page.parent / target).exists()
            ):
                broken.append(f"{page.relative_to(ROOT)}: {target}")
    assert broken == []
