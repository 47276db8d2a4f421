"""``python3 dev.py eval``: the memory evaluation from a checkout (docs/evaluation.md).

``dev.py eval [ARGS]`` runs ``python -m xtyeval [ARGS]`` in the checkout's .venv.
Exit codes: 0 the run holds up against the baseline, 1 it does not (recall
dropped, a leak, a failed turn), 2 a usage error (an unreadable set or
baseline, an unknown part, a bad flag).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from xtyeval import command
from xtyserver import errors, log
from xtyserver.cli.console import make_console_safe


def build_parser() -> argparse.ArgumentParser:
    ev = argparse.ArgumentParser(
        prog="dev.py eval", description="run the memory evaluation set against its baseline"
    )
    ev.add_argument("--set", type=Path, help="evaluation set (default: eval/memory-v2.json)")
    ev.add_argument("--baseline", type=Path, help="default: <set>.baseline.json next to it")
    ev.add_argument("--json", action="store_true", help="one JSON document")
    ev.add_argument("--update-baseline", action="store_true", help="write this run as baseline")
    ev.add_argument(
        "--without",
        action="append",
        default=[],
        metavar="PART",
        help="leave a part of retrieval out (glossary, keys); no baseline comparison",
    )
    ev.add_argument(
        "--parts",
        action="store_true",
        help="run words only, then add each part (embeddings last); print recall per kind",
    )
    ev.add_argument(
        "--embeddings",
        action="store_true",
        help="add memory vectors from the scripted embedding route; no baseline comparison",
    )
    return ev


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point; returns the process exit code."""
    make_console_safe()
    args = build_parser().parse_args(argv)
    log.configure(json=True, level="warning")
    try:
        if args.parts:
            return command.run_parts(args.set or command.default_set())
        return command.run(
            args.set or command.default_set(),
            baseline=args.baseline,
            as_json=args.json,
            update_baseline=args.update_baseline,
            without=args.without,
            embeddings=args.embeddings,
        )
    except errors.XtyError as exc:
        print(f"dev.py eval: {exc.message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
