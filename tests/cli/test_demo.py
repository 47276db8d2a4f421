"""`xtyserver demo` runs end to end with a derived saveId and a projection per question."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from xtyserver.cli.demo import QUESTIONS, SCRIPTED, run_demo

pytestmark = pytest.mark.anyio


async def test_demo_uses_a_derived_save_id_and_projects_per_question(tmp_path: Path) -> None:
    out = io.StringIO()
    assert await run_demo(str(tmp_path), out) == 0
    text = out.getvalue()
    assert re.search(r"saveId [a-z2-7]{26}\n", text), text
    assert text.count("   modelContext   ") == 2
    for answer in SCRIPTED:  # the scripted answers matched the questions
        assert answer in text


async def test_the_demo_prints_its_scripted_answers_not_an_echo(tmp_path: Path) -> None:
    # The questions end in a full-width "？" and the scripted model matches them
    # as written: only a server that sends the player's text as typed gets the
    # scripted answers.
    assert all("？" in question for question in QUESTIONS)
    out = io.StringIO()
    assert await run_demo(str(tmp_path), out) == 0
    text = out.getvalue()
    for answer in SCRIPTED:
        assert answer in text
    assert "小汤圆收到" not in text
