"""The printed table of ``dev.py eval`` (pure)."""

from __future__ import annotations

from collections.abc import Sequence

from xtyeval.evalset import QUESTION_KINDS
from xtyeval.scoring import (
    LAYERS,
    PATHS,
    Finding,
    QuestionResult,
    SaveRow,
    Summary,
    path_counts,
)

_LAYER_NAMES = {
    "persona": "persona",
    "style": "style",
    "profile": "profile",
    "memory": "memory",
    "summary": "session summary",
    "facts": "facts",
    "history": "history",
    "player": "player text",
    "other": "other",
    "fence": "fences",
    "tools": "tool schemas",
    "total": "total",
}

_STATS_HEAD = f"{'mean':>8}{'p50':>8}{'p95':>8}{'max':>8}"
_LATENCY = (("first_delta", "chat.send -> first delta"), ("done", "chat.send -> chat.done"))


def _save_line(row: SaveRow) -> str:
    return (
        f"{row.save:<36}{row.questions:>5}{row.expected:>6}{row.recalled:>6}"
        f"{row.recall:>8.3f}{row.leaks:>6}{row.wrong:>6}{row.injected_mean:>9.1f}"
        f"{row.others_mean:>8.1f}{row.errors:>7}"
    )


HEAD = (
    f"{'save':<36}{'qs':>5}{'exp':>6}{'hit':>6}{'recall':>8}{'leaks':>6}"
    f"{'wrong':>6}{'inj/turn':>9}{'others':>8}{'errors':>7}"
)


def render(
    summary: Summary,
    results: Sequence[QuestionResult],
    findings: Sequence[Finding],
    *,
    how: str,
    events: int,
) -> str:
    """The whole report as text: saves, misses, tokens per layer, latency, comparison."""
    lines = [
        f"memory evaluation {summary.set}: {len(summary.saves)} saves, {events} events,"
        f" {summary.total.questions} questions ({how})",
        "",
        HEAD,
        *(_save_line(row) for row in summary.saves),
        _save_line(summary.total),
        "",
    ]
    if len(summary.kinds) > 1:
        lines += [
            HEAD.replace("save", "kind", 1),
            *(_save_line(row) for row in summary.kinds),
            "",
        ]
    lines += _path_lines(results)
    misses = [r for r in results if len(r.recalled) < len(r.expected)]
    for r in misses:
        missed = [k for k in r.expected if k not in r.recalled]
        lines.append(f"  missed  {r.key}: {', '.join(missed)}")
    if misses:
        lines.append("")
    lines.append(
        f"{'prompt tokens per turn (approx)':<36}{'mean':>8}{'p50':>8}{'p95':>8}{'max':>8}"
    )
    for name in (*LAYERS, "total"):
        s = summary.tokens[name]
        if name == "other" and s.max == 0:
            continue
        lines.append(
            f"{_LAYER_NAMES[name]:<36}{s.mean:>8.1f}{s.p50:>8.0f}{s.p95:>8.0f}{s.max:>8.0f}"
        )
    lines += ["", f"{'harness latency per turn (ms)':<36}{'mean':>8}{'p50':>8}{'p95':>8}{'max':>8}"]
    for name, label in (
        ("first_delta", "chat.send -> first delta"),
        ("done", "chat.send -> chat.done"),
    ):
        s = summary.latency_ms[name]
        lines.append(f"{label:<36}{s.mean:>8.2f}{s.p50:>8.2f}{s.p95:>8.2f}{s.max:>8.2f}")
    lines.append("")
    for f in findings:
        lines.append(f"{'FAIL' if f.fail else 'ok  '}  {f.message}")
    return "\n".join(lines)


def _path_lines(results: Sequence[QuestionResult]) -> list[str]:
    """Per question kind: the recalled memories each retrieval path took part in finding
    (the injection log's ``via``; "section": a goal or "recent and important" alone)."""
    if not any(r.paths for r in results):
        return []
    asked = [r for r in results if r.expected]
    groups: list[tuple[str, list[QuestionResult]]] = [
        (kind, [r for r in asked if r.kind == kind]) for kind in QUESTION_KINDS
    ]
    groups.append(("all", asked))
    head = f"{'recalled, by path':<20}{'hits':>6}" + "".join(f"{p:>10}" for p in PATHS)
    lines = [head]
    for kind, rows in groups:
        if not rows:
            continue
        counts = path_counts(rows)
        hits = sum(len(r.recalled) for r in rows)
        lines.append(f"{kind:<20}{hits:>6}" + "".join(f"{counts[p]:>10}" for p in PATHS))
    return [*lines, ""]


def render_parts(name: str, rows: Sequence[tuple[str, Summary]]) -> str:
    """Recall per question kind and same-save others per turn, one line per configuration."""
    kinds = [row.save for row in rows[0][1].kinds] if rows else []
    short = {k: k.split(" ")[0] for k in kinds}
    width = max([28, *(len(label) + 1 for label, _ in rows)])
    head = f"{'retrieval':<{width}}" + "".join(f"{short[k]:>15}" for k in kinds)
    lines = [
        f"memory evaluation {name}: recall per question kind (others: same-save memories"
        " injected per turn that the question does not expect)",
        "",
        head + f"{'leaks':>7}",
    ]
    for label, summary in rows:
        by_kind = {row.save: row for row in summary.kinds}
        cells = "".join(
            f"{by_kind[k].recall:.2f} ({by_kind[k].others_mean:.1f})".rjust(15)
            if k in by_kind
            else " " * 15
            for k in kinds
        )
        lines.append(f"{label:<{width}}{cells}{summary.total.leaks:>7}")
    return "\n".join(lines)
