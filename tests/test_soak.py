"""The 30-second version of scripts/soak.py (the full run is 10 minutes, by hand)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.anyio

_SPEC = importlib.util.spec_from_file_location(
    "soak", Path(__file__).resolve().parents[1] / "scripts" / "soak.py"
)
assert _SPEC is not None and _SPEC.loader is not None
soak = importlib.util.module_from_spec(_SPEC)
sys.modules["soak"] = soak
_SPEC.loader.exec_module(soak)


async def test_eight_adapters_for_30_seconds_meet_the_soak_targets() -> None:
    figures = await soak.run_soak(seconds=30, adapters=8)
    report = figures.report()
    assert figures.chats >= 8, report
    assert figures.heartbeats >= 8 * 5, report
    assert figures.failures() == [], report
