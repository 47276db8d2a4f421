"""`xtyserver demo` runs end to end with a derived saveId and a projection per question."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from xtyserver.cli.demo import SCRIPTED, run_demo

pytestmark = pytest.mark.anyio


async def test_demo_uses_a_derived_save_id_and_projects_per_question(tmp_path: Path) -> None:
    out = io.StringIO()
    assert await run_demo(str(tmp_path), out) == 0
    text = out.getvalue()
    assert re.search(r"saveId [a-z2-7]{26}\n", text), text
    assert text.count("   modelContext   ") == 2
    for answer in SCRIPTED:  # the scripted answers matched the (normalised) questions
        assert answer in text
