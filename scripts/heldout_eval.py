"""Recall on a players'-words set (the held-out ``eval/heldout/``), over the real server.

The set was written by someone who had read none of the retrieval code or the
glossary (``eval/heldout/README.md``); it is never used for tuning. Each case
becomes a save of its own (its memories, loaded as an upgrade leaves them:
without search keys) plus the other save its leak bait sits in; the question is
asked through ``xtyeval.runner.run_set`` (the real server, the
scripted model, one adapter connection per save) and scored from the request
the model received. Small-talk cases (no expected memory) count only what they
inject.

    .venv/bin/python scripts/heldout_eval.py [--file F] [--set K=V ...] [--json] [--cases] [--cold]

``--cold`` brings the set in through the real ``xtyserver memory import`` and asks at
once (no wait for search keys or vectors). Optional case fields: per memory
``session`` and ``minutesBeforeEnd`` (the play session it was formed in and how long
before that session ended: the harness records the sessions), per case ``negated``
(the memory the question rules out: counted in ``negated`` when it went in and the
expected one did not) and ``bridge`` (the memory that resolves a multi-hop reference:
neither a hit nor an "other").

``--file`` names another set of the same format, such as the development set
``eval/dev/players_words_dev.json`` (written blind too, but for tuning);
``--set`` passes a setting as a dotted key (``--set memory.glossary=false``);
``--cases`` prints each case's question, what it missed and what else went in,
for a development set only (it is refused for a file under ``eval/heldout/``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import anyio
import msgspec

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # the evaluation (xtyeval/) is in the checkout, not installed

from xtyeval.evalset import EvalSet  # noqa: E402
from xtyeval.runner import run_set  # noqa: E402
from xtyeval.scoring import QuestionResult, score  # noqa: E402
from xtyserver import log  # noqa: E402

SET = ROOT / "eval" / "heldout" / "heldout_players_words.json"
START = 1_790_000_000.0


def to_evalset(cases: list[dict[str, Any]]) -> tuple[EvalSet, dict[str, dict[str, str]]]:
    """The cases as an :class:`EvalSet` (one save per case) and each question's labels."""
    saves: list[dict[str, Any]] = []
    labels: dict[str, dict[str, str]] = {}
    for case in cases:
        cid = case["id"]
        day = case.get("currentDay")
        context: dict[str, Any] = {"world": {"day": day}} if day is not None else {}
        plays, ages = sessions(case["memories"])
        events = [
            {
                "key": f"{cid}:{m['key']}",
                "kind": m.get("kind", "event"),
                "subject": m["text"][:80],
                "summary": m["text"][:160],
                **({"day": m["day"]} if m.get("day") is not None else {}),
                **({"ageHours": ages[n]} if n in ages else {}),
            }
            for n, m in enumerate(case["memories"])
        ]
        qkey = f"{cid}:q"
        saves.append(
            {
                "game": case["gameId"],
                "save": f"{cid}-{case['saveId']}",
                "name": f"{cid}",
                "context": context,
                "events": events,
                "plays": plays,
                "questions": [
                    {
                        "key": qkey,
                        "text": case["question"],
                        "kind": "literal",  # its own validator checked the no-shared-word rule
                        "expect": [f"{cid}:{k}" for k in case["expected"]],
                    }
                ],
            }
        )
        own = {m["text"] for m in case["memories"]}
        # A bait word for word one of the case's own memories is seen in the prompt
        # whenever that memory is: only saves apart can pass it, not a text check.
        bait = [
            {
                "key": f"{cid}:bait{n}",
                "kind": "event",
                "subject": o["text"][:80],
                "summary": o["text"][:160],
            }
            for n, o in enumerate(case.get("otherSaveMemories", []))
            if o["text"] not in own
        ]
        if bait:
            other = case["otherSaveMemories"][0]["saveId"]
            saves.append(
                {
                    "game": case["gameId"],
                    "save": f"{cid}-{other}",
                    "name": f"{cid} other",
                    "context": {},
                    "events": bait,
                    "questions": [],
                }
            )
        labels[qkey] = {
            "style": case["style"],
            "lang": case["lang"],
            "game": case["gameId"],
            # a set of several parts (round four's: paraphrase, players' words, harder words)
            "part": case.get("part", ""),
            # negation: the memory the question rules out; multi-hop: the one that
            # resolves the reference (neither a hit nor an "other")
            "negated": f"{cid}:{case['negated']}" if case.get("negated") else "",
            "bridge": f"{cid}:{case['bridge']}" if case.get("bridge") else "",
        }
    doc = {"name": "heldout-players-words", "start": START, "profile": {}, "saves": saves}
    return msgspec.convert(doc, EvalSet), labels


LAST_ENDED_H = 20.0  # the last play session ended the evening before the set's start
SESSION_GAP_H = 24.0  # one session a day before it


def sessions(memories: list[dict[str, Any]]) -> tuple[list[tuple[float, float]], dict[int, float]]:
    """The play sessions of a case whose memories carry ``session`` (1 = the first) and
    ``minutesBeforeEnd``: each session as (started, ended) hours before the start, and
    each such memory's age in hours (formed that many minutes before its session ended)."""
    numbered = [m.get("session") for m in memories]
    if not any(numbered):
        return [], {}
    last = max(n for n in numbered if n)
    plays: dict[int, tuple[float, float]] = {}
    for k in range(1, last + 1):
        ended = LAST_ENDED_H + (last - k) * SESSION_GAP_H
        longest = max(
            (float(m.get("minutesBeforeEnd", 60)) for m in memories if m.get("session") == k),
            default=60.0,
        )
        plays[k] = (ended + max(2.0, longest / 60.0 + 0.25), ended)
    ages = {
        n: plays[m["session"]][1] + float(m.get("minutesBeforeEnd", 60)) / 60.0
        for n, m in enumerate(memories)
        if m.get("session")
    }
    return [plays[k] for k in sorted(plays)], ages


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        return text


def table(results: list[QuestionResult], labels: dict[str, dict[str, str]]) -> dict[str, Any]:
    """Recall per style, language, game and part (where a set has parts); leaks; memories injected beyond the expected."""
    groups: dict[str, list[QuestionResult]] = defaultdict(list)
    for r in results:
        for axis in ("style", "lang", "game", "part"):
            if labels[r.key].get(axis):
                groups[f"{axis}:{labels[r.key][axis]}"].append(r)
        groups["all"].append(r)

    def others(r: QuestionResult) -> int:
        bridge = labels[r.key].get("bridge", "")
        return sum(1 for k in r.injected if k not in r.expected and k != bridge)

    def row(rs: list[QuestionResult]) -> dict[str, Any]:
        asked = [r for r in rs if r.expected]
        expected = sum(len(r.expected) for r in asked)
        recalled = sum(len(r.recalled) for r in asked)
        negation = [r for r in rs if labels[r.key].get("negated")]
        return {
            "questions": len(rs),
            "recall": round(recalled / expected, 3) if expected else None,
            # only the case's own bait: decoy texts repeat across cases on purpose
            "leaks": sum(
                sum(k.startswith(r.key.removesuffix(":q") + ":bait") for k in r.leaked) for r in rs
            ),
            "othersMean": round(sum(others(r) for r in rs) / len(rs), 2) if rs else 0.0,
            "errors": sum(r.error is not None for r in rs),
            # negation cases whose ruled-out memory went in with the expected one missing
            "negatedWon": sum(
                labels[r.key]["negated"] in r.injected and not r.recalled for r in negation
            ),
        }

    return {name: row(rs) for name, rs in sorted(groups.items())}


def cases(
    results: list[QuestionResult], labels: dict[str, dict[str, str]], evalset: EvalSet
) -> None:
    """Each case: its style, question, the expected memories missed and the others injected."""
    texts = {ev.key: ev.summary for save in evalset.saves for ev in save.events}
    questions = {q.key: q.text for save in evalset.saves for q in save.questions}
    for r in results:
        missed = [k for k in r.expected if k not in r.recalled]
        others = [k for k in r.injected if k not in r.expected]
        mark = "MISS" if missed else "ok  "
        print(f"{mark} {r.key:<10} {labels[r.key]['style']:<15} {questions[r.key]}")
        for k in missed:
            print(f"       missed  {texts[k]}")
        for k in others:
            print(f"       other   {texts[k]}  [{r.paths.get(k, '')}]")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--file", type=Path, default=SET)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--cases", action="store_true")
    parser.add_argument(
        "--cold", action="store_true", help="import with `memory import` and ask at once"
    )
    args = parser.parse_args(argv)
    if args.cases and "heldout" in args.file.resolve().parent.parts:
        parser.error("--cases shows a held-out set's cases: use it on a development set")
    log.configure(json=True, level="warning")
    overrides = {k: _value(v) for k, v in (item.split("=", 1) for item in args.set)}
    evalset, labels = to_evalset(json.loads(args.file.read_text(encoding="utf-8")))
    loaded, turns = anyio.run(lambda: run_set(evalset, overrides=overrides, cold=args.cold))
    results = score(evalset, turns, loaded)
    rows = table(results, labels)
    if args.cases:
        cases(results, labels, evalset)
    if args.json:
        print(json.dumps(rows, ensure_ascii=False, indent=2))
        return 0
    head = f"{'group':<28} {'n':>4} {'recall':>7} {'leaks':>6} {'others':>7} {'errors':>7}"
    print(f"{head} {'negated':>8}")
    for name, r in rows.items():
        recall = "-" if r["recall"] is None else f"{r['recall']:.3f}"
        print(
            f"{name:<28} {r['questions']:>4} {recall:>7} {r['leaks']:>6} "
            f"{r['othersMean']:>7.2f} {r['errors']:>7} {r['negatedWon']:>8}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
