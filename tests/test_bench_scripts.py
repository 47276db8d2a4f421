"""The benchmark scripts still run: each once, tiny, as a developer would start it.

The figures are not checked (speed is measured by the scripts, not by tests);
only that each script runs to its table against today's code, so a change of
an API it uses shows up here rather than the next time someone measures.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "scripts" / "bench"

CASES = {
    "decode": (["--repeat", "3", "--number", "20"], "state.update"),
    "prompt_size": (["--sizes", "10", "30"], "inject all"),
    "retrieval": (["--saves", "3", "--per-save", "30", "--queries", "20"], "p99"),
    "turn": (
        ["--rounds", "3", "--warmup", "1", "--baseline", "HEAD", "--steps"],
        "chat.send -> first delta",
    ),
    "idle": (
        ["--connections", "12", "--starts", "2", "--baseline", "HEAD", "--heartbeat-ms", "500"],
        "RSS per idle connection",
    ),
    "first_turn": (["--starts", "1", "--baseline", "HEAD"], "chat.send -> first delta"),
    "image": (["--rounds", "3"], "pillow / scaled"),
    "image_turn_steps": (["--rounds", "3"], "request body: msgspec"),
    "start_to_page": (["--runs", "1"], "page answered"),
    "rss": (
        [
            *("--turns", "4", "--repeat", "1", "--saves", "3", "--per-save", "30"),
            *("--settle", "0.2", "--baseline", "HEAD", "--mappings", "--routes"),
        ],
        "idle after 4 turns (1 with screenshots)",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(CASES))
def test_a_benchmark_script_runs_to_its_table(script: str) -> None:
    args, expected = CASES[script]
    done = subprocess.run(
        [sys.executable, str(BENCH / f"{script}.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=240,
        env={**os.environ, "PYTHONUTF8": "1"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    assert expected in done.stdout, done.stdout[-2000:]
