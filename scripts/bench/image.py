#!/usr/bin/env python3
"""Benchmark: preparing one screenshot, the libjpeg-turbo DCT-scaled path against Pillow's.

In one process, interleaved round by round so both see the same machine:

* ``scaled``: ``check_and_prepare`` as the server runs it (a JPEG over
  ``max_side`` decoded straight at the largest n/8 scale that fits, re-encoded);
* ``pillow``: the same call with the scaled path turned off (Pillow's ``draft``,
  the banded bilinear resample to ``max_side``, Pillow's encoder) — the baseline.

Prints the median and the spread (p10-p90) of each and the ratio of the medians.

Usage: ``python scripts/bench/image.py [--rounds 30] [--width 1920 --height 1080]``.
"""

from __future__ import annotations

import argparse
import base64
import io
import random
import statistics
import sys
import time
from pathlib import Path

from PIL import Image, ImageDraw

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import xtyserver.serve.jpeg as module
from xtyserver.serve.image import ImageLimits, check_and_prepare


def screenshot(width: int, height: int) -> str:
    """A busy game-like frame (rectangles of colour), as a base64 JPEG at quality 90."""
    rng = random.Random(1)
    image = Image.new("RGB", (width, height), (90, 140, 60))
    draw = ImageDraw.Draw(image)
    for _ in range(600):
        x0, x1 = sorted(rng.randrange(width) for _ in range(2))
        y0, y1 = sorted(rng.randrange(height) for _ in range(2))
        draw.rectangle([x0, y0, x1, y1], fill=tuple(rng.randrange(256) for _ in range(3)))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=90)
    return base64.b64encode(out.getvalue()).decode("ascii")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    args = parser.parse_args()
    data = screenshot(args.width, args.height)
    limits = ImageLimits()
    scaled_path = module.scaled
    times: dict[str, list[float]] = {"scaled": [], "pillow": []}
    sizes: dict[str, tuple[int, int]] = {}
    for _ in range(args.rounds + 2):
        for name in ("scaled", "pillow"):
            module.scaled = scaled_path if name == "scaled" else (lambda *a: None)  # type: ignore[assignment]
            started = time.perf_counter()
            prepared = check_and_prepare("image/jpeg", data, limits)
            times[name].append((time.perf_counter() - started) * 1000)
            sizes[name] = (prepared.width, prepared.height)
    module.scaled = scaled_path
    print(f"screenshot preparation, {args.width}x{args.height} JPEG, {args.rounds} rounds")
    for name, values in times.items():
        values = sorted(values[2:])
        deciles = statistics.quantiles(values, n=10)
        print(
            f"  {name:7} median {statistics.median(values):6.1f} ms  "
            f"p10-p90 {deciles[0]:.1f}-{deciles[-1]:.1f} ms  -> {sizes[name][0]}x{sizes[name][1]}"
        )
    ratio = statistics.median(times["pillow"][2:]) / statistics.median(times["scaled"][2:])
    print(f"  pillow / scaled: {ratio:.2f}x")


if __name__ == "__main__":
    main()
