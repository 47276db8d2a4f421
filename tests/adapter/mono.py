"""Compiling the C# reference adapter with Mono's mcs, for the tests that run it."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CSHARP = ROOT / "adapters" / "csharp"
NO_MONO = shutil.which("mcs") is None or shutil.which("mono") is None
NO_MONO_REASON = "needs Mono's C# compiler and runtime (apt-get install mono-mcs mono-runtime)"


def compile_cs(out: Path, *extra: Path, refs: tuple[str, ...] = (), library: bool = True) -> Path:
    """`extra` (with the library's src/*.cs unless not `library`) into `out`, warnings as errors."""
    sources = sorted(str(p) for p in (CSHARP / "src").glob("*.cs")) if library else []
    target = ["-target:library"] if out.suffix == ".dll" else []
    result = subprocess.run(
        ["mcs", "-warnaserror+", "-r:System.Core.dll", *target, *refs, f"-out:{out}", *sources]
        + [str(p) for p in extra],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out
