#!/usr/bin/env python3
"""The decode oracle at length: many generated frames through the fast path and the reference.

``tests/protocol/test_decode_oracle.py`` checks 400 generated ``state.update``
and ``chat.send`` frames per suite run (and runs this script on a few); this
runs as many as asked (8,000 by default, about 45 s on two cores) with the same
generator and the same comparison: ``decode_client_frame`` and the plain
reference give the same verdict, the same refused fields and the same kept frame;
then as many streams (3,000 by default): frames each one part away from the one
before, which is what the prefilter's memory of the last clean frame sees.

Run: ``.venv/bin/python scripts/decode_oracle.py [--examples 8000] [--streams 3000]``
from the repository root.
Exit status 1 (with hypothesis's shrunk example) on any disagreement.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from hypothesis import given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.protocol.test_decode_oracle import SETTINGS, frames, same, streams


def run(examples: int, stream_count: int) -> None:
    """Check generated frames, then streams; raises on the first disagreement (shrunk)."""

    @settings(max_examples=examples, **SETTINGS)  # type: ignore[arg-type]
    @given(frames())
    def agree(raw: bytes) -> None:
        same(raw)

    @settings(max_examples=stream_count, **SETTINGS)  # type: ignore[arg-type]
    @given(streams())
    def agree_on_streams(stream: list[bytes]) -> None:
        for raw in stream:
            same(raw)

    agree()
    if stream_count:
        agree_on_streams()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=8000, help="generated frames (8000)")
    parser.add_argument("--streams", type=int, default=3000, help="generated streams (3000)")
    args = parser.parse_args(argv)
    try:
        run(args.examples, args.streams)
    except AssertionError as exc:
        print(f"the fast path and the reference disagree: {exc}", file=sys.stderr)
        return 1
    print(
        f"{args.examples} generated frames and {args.streams} streams:"
        " the fast path and the reference agree"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
