"""Fixtures of the adapter tests: the C# probe, compiled once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapter.mono import CSHARP, compile_cs


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """test/Probe.cs compiled with mcs: the C# client's game loop and checks."""
    return compile_cs(tmp_path_factory.mktemp("probe") / "Probe.exe", CSHARP / "test" / "Probe.cs")
