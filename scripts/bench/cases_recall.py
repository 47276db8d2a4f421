#!/usr/bin/env python3
"""Recall of the dev and held-out case sets (``eval/dev``, ``eval/heldout``) through the
real turn path, to report what a latency change costs in recall. Not a benchmark of speed.

Those sets are lists of cases (one save of memories, one player question, the
expected memory keys, a leak bait in another save), not ``xtyeval`` sets; each
case becomes a save of its own (``<id>``, its bait in ``<id>-bait``) and one
question, run by ``xtyeval.runner.run_set`` with the default install (the
in-process embedder where it installs). A memory's subject is its text up to the
first comma, its summary the whole text. Held-out sets are for reporting only:
never tune on them (eval/heldout/README.md).

Usage: ``python scripts/bench/cases_recall.py SET.json... [--set KEY=VALUE ...]``
(``--set memory.local_embedding=false``: without vectors). Run from a tree to
measure that tree (``cd TREE && python .../cases_recall.py eval/dev/...``).
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sys
from functools import partial
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path.cwd()))  # the tree measured: this folder's xtyserver and xtyeval

from xtyeval.evalset import EvalEvent, EvalSave, EvalSet, Question
from xtyeval.runner import run_set
from xtyeval.scoring import score

START = 1_780_000_000.0


def to_set(name: str, cases: list[dict[str, Any]]) -> EvalSet:
    saves = []
    for case in cases:
        day = case["currentDay"]
        context = {"world": {"day": day}}
        events = [
            EvalEvent(
                key=f"{case['id']}:{m['key']}",
                kind=m["kind"],
                subject=re.split("[，,。.:：]", m["text"], maxsplit=1)[0][:40] or m["text"][:40],
                summary=m["text"][:160],
                day=m.get("day"),
            )
            for m in case["memories"]
        ]
        question = Question(
            key=case["id"],
            text=case["question"],
            expect=[f"{case['id']}:{k}" for k in case["expected"]],
        )
        saves.append(EvalSave(case["gameId"], case["id"], case["id"], context, events, [question]))
        baits = [
            EvalEvent(key=f"{case['id']}:bait{i}", kind="event", subject="bait", summary=b["text"])
            for i, b in enumerate(case.get("otherSaveMemories", ()))
        ]
        if baits:
            saves.append(EvalSave(case["gameId"], f"{case['id']}-bait", "bait", context, baits, []))
    return EvalSet(name=name, start=START, profile={}, saves=saves)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("sets", nargs="+")
    ap.add_argument("--set", action="append", default=[], dest="overrides")
    args = ap.parse_args()
    overrides: dict[str, Any] = {}
    for item in args.overrides:
        key, _, value = item.partition("=")
        overrides[key] = json.loads(value)
    for path in args.sets:
        cases = json.loads(Path(path).read_text(encoding="utf-8"))
        evalset = to_set(Path(path).stem, cases)
        loaded, turns = anyio.run(partial(run_set, evalset, overrides=overrides))
        results = score(evalset, turns, loaded)
        styles = {c["id"]: c.get("style", "") for c in cases}
        by: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
        for r in results:
            for key in ("all", styles.get(r.key, "")):
                by[key][0] += len(r.recalled)
                by[key][1] += len(r.expected)
        errors = sum(1 for r in results if r.error)
        first = sorted(r.first_ms for r in results if r.first_ms is not None)
        hit, total = by.pop("all")
        print(
            f"{Path(path).name}: recall {hit}/{total} = {hit / max(total, 1):.3f}"
            f"  errors {errors}  first delta p50 {first[len(first) // 2]:.0f} ms"
            f"  ({' '.join(f'{k}={v[0]}/{v[1]}' for k, v in sorted(by.items()) if v[1])})",
            flush=True,
        )


if __name__ == "__main__":
    main()
