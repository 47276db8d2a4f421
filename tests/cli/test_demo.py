"""``xtyserver demo``: its scripted answers match the questions as typed (issue 17 part 4)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from xtyserver.cli.demo import QUESTIONS, SCRIPTED, run_demo

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_demo_prints_its_scripted_answers_not_an_echo(tmp_path: Path) -> None:
    # The questions end in a full-width "？"; the scripted model matches them
    # only if the server sends the player's text as typed.
    assert all("？" in question for question in QUESTIONS)
    out = io.StringIO()
    assert await run_demo(str(tmp_path), out=out) == 0
    text = out.getvalue()
    for answer in SCRIPTED:
        assert answer in text
    assert "小汤圆收到" not in text
