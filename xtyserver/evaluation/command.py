"""``xtyserver eval``: run the memory evaluation set, print the table, compare with the baseline."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TextIO

import anyio
import msgspec

from xtyserver.errors import UsageError
from xtyserver.evaluation.evalset import EvalSet, parse_set
from xtyserver.evaluation.runner import run_set
from xtyserver.evaluation.scoring import (
    Baseline,
    Finding,
    compare,
    make_baseline,
    score,
    summarize,
)
from xtyserver.evaluation.table import render

HOW = "real server over loopback, scripted model, one connection per save"


def default_set() -> Path:
    """``eval/memory-v1.json`` of this checkout, else of the working folder."""
    here = Path(__file__).resolve().parents[2] / "eval" / "memory-v1.json"
    return here if here.exists() else Path("eval") / "memory-v1.json"


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
    out: TextIO | None = None,
) -> int:
    """Run the set; 0 when it holds up against the baseline, 1 when not.

    Raises:
        UsageError: The set or the baseline cannot be read.
    """
    out = out or sys.stdout
    evalset = _read_set(set_path)
    base_path = baseline or baseline_path(set_path)
    reference = _read_baseline(base_path)
    loaded, turns = anyio.run(run_set, evalset)
    results = score(evalset, turns, loaded)
    summary = summarize(evalset, results)
    findings = compare(summary, results, None if update_baseline else reference)
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
