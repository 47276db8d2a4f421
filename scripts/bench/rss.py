#!/usr/bin/env python3
"""Benchmark: server RSS idle after start and after 80 and 100 turns, baseline vs candidate.

``python -m xtyserver serve`` is started as a process, as a player starts it,
over a copy of a 30,000-event store (100 saves x 300; the turns go to a
300-event save), with the scripted model (turn.py's, which keeps connections
alive and answers the working-memory folds) configured by environment.
One adapter client says hello, sends a state.update, then plays ``--turns``
turns one after the other; every fourth turn carries a 1920x1080 JPEG
screenshot (~1.2 MiB; 20 of the first 80 turns, 25 of 100). The server's
memory is read from ``/proc/PID/status`` (VmRSS, RssAnon) and
``/proc/PID/smaps_rollup`` (Private_Dirty) after ``--settle`` idle seconds at
each checkpoint: start, each of ``--checkpoints`` below ``--turns``, and
``--turns``; then once more a heartbeat period later (``--no-heartbeat-row``
leaves it out). Every checkpoint that is a multiple of four follows a
screenshot turn: until the client's next frame (its heartbeat, every 5 s),
websockets still holds that frame's bytes (1.6 MiB), which the last row shows
released.

The candidate is this checkout. The baseline is another commit (``--baseline
REF``, default ``main``) exported with ``git archive`` to a temporary folder
and put first on ``PYTHONPATH``, run by the same interpreter and packages.
Each runs in two states (``--states``, see turn.py): the save's memories with
their vectors (checked before the runs) and the default embedder, and without
(``memory.local_embedding = false``); all alternate, ``--repeat``
times each. RSS is hardly disturbed by a busy machine, so the medians are close to exact.

``--backlog`` takes every other save's vectors out of the store first (the played
save keeps its own): the embedding backlog runs through the turns, and each
reading is the server's plus its child processes' (the passage worker,
``serve/passage_worker.py``, where the tree has one; its columns beside).

``--routes`` adds distinct ``[models.vision]`` and ``[models.quick]`` models (of
the same scripted server) to the chat model: three model clients.

Usage: ``python scripts/bench/rss.py [--turns 100] [--checkpoints 40,80] [--repeat 3]
[--routes] [--backlog] [--baseline main]`` (``--baseline ''``: the candidate only).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import serving  # noqa: E402
from baseline import SAVE as PLAYED  # noqa: E402
from baseline import STATES, variants  # noqa: E402
from stats import machine  # noqa: E402
from turn import model_context, screenshot_jpeg  # noqa: E402

from xtyserver.adapter import AdapterClient, AdapterInfo, Capabilities, Identity  # noqa: E402
from xtyserver.adapter.support import screenshot  # noqa: E402

TOKEN = "bench-token-rss-4hT8pW2qZ6vN1cX9mB3kR7yF5dL0sJaG"
SAVE = Identity(game_id="stardew-valley", save_id="save-42")  # baseline.SAVE: 300 memories
IMAGE_EVERY = 4
KEYS = ("VmRSS", "RssAnon", "Private_Dirty")
SHOW_MAPPINGS = "--mappings" in sys.argv
CONFIG = """\
[server]
chat_burst = 1000000
frame_burst = 1000000
chats_per_minute = 1000000

[memory]
extraction = false
"""
# --routes: the chat, vision and quick models are three models of the same scripted
# server (three model clients; screenshot turns go to the vision one).
ROUTES = """
[models.vision]
model = "scripted-vision"
vision = true

[models.quick]
model = "scripted-quick"
"""


def _memory(pid: int) -> dict[str, int]:
    """The server's readings, and its children's summed under ``child `` keys."""
    out = serving.memory_kib(pid)
    for child in serving.children(pid):
        with contextlib.suppress(OSError):
            for key, value in serving.memory_kib(child).items():
                out[f"child {key}"] = out.get(f"child {key}", 0) + value
    return out


def _drop_other_vectors(folder: Path) -> int:
    """Delete every vector but the played save's: a backlog for the server to embed."""
    path = folder / "profiles" / "default" / "memory-v1.sqlite"
    conn = sqlite3.connect(path)
    try:
        with conn:
            done = conn.execute(
                "DELETE FROM memory_vector WHERE event_id NOT IN (SELECT id FROM game_memory"
                " WHERE game_id = ? AND save_id = ?)",
                PLAYED,
            )
    finally:
        conn.close()
    return done.rowcount


async def _play(
    url: str, pid: int, checkpoints: list[int], image: Any, settle: float, heartbeat_row: bool
) -> list[dict[str, int]]:
    await anyio.sleep(settle)
    readings = [_memory(pid)]
    async with AdapterClient(
        url,
        token=TOKEN,
        identity=SAVE,
        adapter=AdapterInfo(name="bench-rss", version="0.1.0"),
        capabilities=Capabilities(image=True),
        timezone="Asia/Shanghai",
    ) as client:
        await client.update_state(model_context())
        for i in range(1, checkpoints[-1] + 1):
            shot = image if i % IMAGE_EVERY == 0 else None
            reply = await client.chat("今天适合去钓鱼吗？社区中心的鱼缸", image=shot)
            async for _ in reply:
                pass
            await reply.result()
            if i in checkpoints:
                await anyio.sleep(settle)
                readings.append(_memory(pid))
        if heartbeat_row:
            await anyio.sleep(client.server_hello.heartbeat_ms / 1000)
            readings.append(_memory(pid))
        if SHOW_MAPPINGS:
            print("\nlargest mappings at the last reading: Rss KiB, of it anonymous, name")
            for rss, anon, name in serving.mappings_kib(pid):
                print(f"{rss:8d} {anon:8d}  {name}")
    return readings


def run_one(
    template: Path,
    model_url: str,
    tree: Path | None,
    checkpoints: list[int],
    image: Any,
    settle: float,
    heartbeat_row: bool,
    routes: bool = False,
    vectors: bool = True,
) -> list[dict[str, int]]:
    with tempfile.TemporaryDirectory(prefix="xty-rss-") as tmp:
        data = Path(tmp) / "data"
        shutil.copytree(template, data)
        env = {"XTY_TOKEN": TOKEN, "XTY_MODEL_BASE_URL": model_url, "XTY_MODEL": "scripted-vl"}
        config = CONFIG + ROUTES if routes else CONFIG
        if not vectors:  # no embedder: no turn embeds its question
            config = config.replace("[memory]\n", "[memory]\nlocal_embedding = false\n")
        with serving.running(data, config, env=env, tree=tree) as server:
            return anyio.run(
                _play, server.url, server.proc.pid, checkpoints, image, settle, heartbeat_row
            )


def _spawn_model() -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, str(Path(__file__).with_name("turn.py")), "--child", "model"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUTF8": "1"},
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.startswith("http://"):
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, line.strip()
    raise SystemExit("the scripted model did not start")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--turns", type=int, default=100)
    ap.add_argument(
        "--checkpoints", default="80", help="turn counts below --turns to read at (comma-separated)"
    )
    ap.add_argument("--settle", type=float, default=1.0, help="idle seconds before each reading")
    ap.add_argument("--no-heartbeat-row", action="store_true", help="no reading a heartbeat later")
    ap.add_argument(
        "--mappings", action="store_true", help="print each run's largest mappings at its end"
    )
    ap.add_argument("--repeat", type=int, default=3, help="runs of each, alternating")
    ap.add_argument(
        "--routes", action="store_true", help="distinct chat, vision and quick models (3 clients)"
    )
    ap.add_argument(
        "--backlog", action="store_true", help="other saves without vectors: a backlog runs"
    )
    ap.add_argument("--baseline", default="main", help="git ref of the baseline ('' for none)")
    ap.add_argument(
        "--states",
        nargs="+",
        choices=STATES,
        default=list(STATES),
        help="the save with its vectors (the player's steady state), without, or both",
    )
    ap.add_argument("--saves", type=int, default=100)
    ap.add_argument("--per-save", type=int, default=300)
    args = ap.parse_args()
    wanted = {int(c) for c in args.checkpoints.split(",") if c.strip()}
    checkpoints = sorted({*(c for c in wanted if 0 < c < args.turns), args.turns})
    heartbeat_row = not args.no_heartbeat_row
    image = screenshot(screenshot_jpeg(), "image/jpeg")
    with tempfile.TemporaryDirectory(prefix="xty-rss-") as tmp:
        print(f"machine: {machine()}")
        t = time.perf_counter()
        baselines = [args.baseline] if args.baseline else []
        runs = variants(Path(tmp), baselines, tuple(args.states), args.saves, args.per_save)
        events = args.saves * args.per_save
        print(
            f"stores: {events:,} events in {args.saves} saves, built in "
            f"{time.perf_counter() - t:.1f} s"
        )
        if args.backlog:
            for run in runs:
                if run.vectors:
                    print(f"{run.label.strip()}: {_drop_other_vectors(run.data)} vectors taken out")
        model, model_url = _spawn_model()
        results: dict[str, list[list[dict[str, int]]]] = {r.label.strip(" []"): [] for r in runs}
        try:
            for _ in range(args.repeat):
                for run in runs:
                    results[run.label.strip(" []")].append(
                        run_one(
                            run.data,
                            model_url,
                            run.tree,
                            checkpoints,
                            image,
                            args.settle,
                            heartbeat_row,
                            args.routes,
                            run.vectors,
                        )
                    )
            print(f"after the runs: {machine()}")
        finally:
            assert model.stdin is not None
            model.stdin.close()
            model.wait(timeout=30)
    points = ["idle after start"] + [
        f"idle after {n} turns ({n // IMAGE_EVERY} with screenshots)" for n in checkpoints
    ]
    if heartbeat_row:
        points.append("  the same, one heartbeat later")
    print(
        f"\nserver memory, MiB, median of {args.repeat} (min-max); VmRSS / RssAnon / Private_Dirty;"
        f" read {args.settle:g} s after the turn"
    )
    print(f"{'what':44s} " + " ".join(f"{n:>30s}" for n in results))
    for i, point in enumerate(points):
        cells = []
        for runs in results.values():
            rss = [r[i]["VmRSS"] / 1024 for r in runs]
            anon = statistics.median(r[i]["RssAnon"] / 1024 for r in runs)
            dirty = statistics.median(r[i].get("Private_Dirty", 0) / 1024 for r in runs)
            cells.append(
                f"{statistics.median(rss):5.1f} ({min(rss):.0f}-{max(rss):.0f}) "
                f"/ {anon:5.1f} / {dirty:5.1f}"
            )
        print(f"{point:44s} " + " ".join(f"{c:>30s}" for c in cells))
    if any("child VmRSS" in r for runs in results.values() for run in runs for r in run):
        print("\nits child processes (the passage worker), MiB, median: VmRSS / RssAnon /")
        print("Private_Dirty (its RssFile is mostly the model file the server maps too)")
        for i, point in enumerate(points):
            cells = []
            for runs in results.values():
                got = [tuple(r[i].get(f"child {k}", 0) / 1024 for k in KEYS) for r in runs]
                columns = zip(*got, strict=True)
                cells.append(" / ".join(f"{statistics.median(v):5.1f}" for v in columns))
            print(f"{point:44s} " + " ".join(f"{c:>30s}" for c in cells))


if __name__ == "__main__":
    main()
