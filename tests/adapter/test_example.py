"""The example adapter in docs/adapter-client.md runs as written against the real server."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TOKEN, running

pytestmark = pytest.mark.anyio
DOC = Path(__file__).resolve().parents[2] / "docs" / "adapter-client.md"


def example_source() -> str:
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "the document has exactly one python example"
    return str(blocks[0])


def test_example_is_under_60_lines() -> None:
    assert len(example_source().splitlines()) < 60


async def test_example_runs_against_the_server(tmp_path: Path) -> None:
    printed: list[str] = []

    def capture(*args: object, end: str = "\n", **_: object) -> None:
        printed.append(" ".join(map(str, args)) + end)

    # The example's own print, apart from the server's log lines on stdout.
    namespace: dict[str, Any] = {"__name__": "example", "print": capture}
    exec(compile(example_source(), str(DOC), "exec"), namespace)
    async with running(tmp_path) as h:
        await namespace["main"](h.url, TOKEN)
        stats = h.store.stats()
    out = "".join(printed)
    assert "小汤圆收到：今天适合钓鱼吗？\n[fresh]" in out
    assert "nickname: 小明" in out
    assert [s.save_id for s in stats.saves] == ["k3J9xQ2mPa"]
