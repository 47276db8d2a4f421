#!/usr/bin/env python3
"""Benchmark: preparing one screenshot, the libjpeg-turbo DCT-scaled path against Pillow's.

In one process, interleaved round by round so both see the same machine, on two
1920x1080 JPEGs: ``game`` (a busy frame of coloured rectangles, quality 90) and
``noisy`` (the same blended with noise at quality 95, about 1.1 MB):

* ``scaled``: ``check_and_prepare`` with the DCT-scaled path
  (:func:`xtyserver.serve.jpeg.scaled`, when the tree has one);
* ``pillow``: the same call with that path turned off, as the server runs it
  where ``simplejpeg`` is not installed: Pillow's ``draft`` (no 6/8 step: a
  full decode for 1920x1080), the banded bilinear resample to the same n/8
  size on the band helper thread, Pillow's encoder.

Prints the median wall and CPU time (all threads of the process) of each, the
spread (p10-p90), the ratio of the medians, and how far each output is from
the reference picture (the full decode downscaled to the same size with
Lanczos): the mean absolute difference per channel (0-255) and the PSNR of
the picture the model gets.

Usage: ``python scripts/bench/image.py [--rounds 30] [--width 1920 --height 1080]``.
"""

from __future__ import annotations

import argparse
import base64
import io
import math
import random
import statistics
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from PIL import Image, ImageChops, ImageDraw, ImageStat

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

import xtyserver.serve.jpeg as module
from xtyserver.serve.image import ImageLimits, check_and_prepare


def screenshot(width: int, height: int, *, noisy: bool) -> str:
    """A busy game-like frame (rectangles of colour) as base64 JPEG; ``noisy`` adds noise."""
    rng = random.Random(1)
    image = Image.new("RGB", (width, height), (90, 140, 60))
    draw = ImageDraw.Draw(image)
    for _ in range(600):
        x0, x1 = sorted(rng.randrange(width) for _ in range(2))
        y0, y1 = sorted(rng.randrange(height) for _ in range(2))
        draw.rectangle([x0, y0, x1, y1], fill=tuple(rng.randrange(256) for _ in range(3)))
    if noisy:
        image = Image.blend(image, Image.effect_noise((width, height), 30).convert("RGB"), 0.25)
    out = io.BytesIO()
    image.save(out, "JPEG", quality=95 if noisy else 90)
    return base64.b64encode(out.getvalue()).decode("ascii")


def distance(prepared: bytes, data: str) -> tuple[float, float]:
    """Mean absolute difference (0-255) and PSNR (dB) of ``prepared`` from the reference."""
    with Image.open(io.BytesIO(prepared)) as out:
        out = out.convert("RGB")
        with Image.open(io.BytesIO(base64.b64decode(data))) as full:
            reference = full.convert("RGB").resize(out.size, Image.Resampling.LANCZOS)
    difference = ImageChops.difference(out, reference)
    stat = ImageStat.Stat(difference)
    mse = statistics.fmean(v / n for v, n in zip(stat.sum2, stat.count, strict=True))
    return statistics.fmean(stat.mean), 10 * math.log10(255**2 / max(mse, 1e-9))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--width", type=int, default=1920)
    parser.add_argument("--height", type=int, default=1080)
    args = parser.parse_args()
    limits = ImageLimits()
    scaled_path: Callable[..., object] | None = getattr(module, "scaled", None)
    bands = ThreadPoolExecutor(max_workers=1)
    for kind in ("game", "noisy"):
        data = screenshot(args.width, args.height, noisy=kind == "noisy")
        names = ("scaled", "pillow") if scaled_path is not None else ("pillow",)
        wall: dict[str, list[float]] = {name: [] for name in names}
        cpu: dict[str, list[float]] = {name: [] for name in names}
        sizes: dict[str, tuple[int, int, int]] = {}
        outputs: dict[str, bytes] = {}
        for _ in range(args.rounds + 2):
            for name in names:
                if scaled_path is not None:
                    module.scaled = scaled_path if name == "scaled" else (lambda *a: None)  # type: ignore[attr-defined]
                started, started_cpu = time.perf_counter(), time.process_time()
                prepared = check_and_prepare("image/jpeg", data, limits, bands=bands)
                wall[name].append((time.perf_counter() - started) * 1000)
                cpu[name].append((time.process_time() - started_cpu) * 1000)
                sizes[name] = (prepared.width, prepared.height, len(prepared.data))
                outputs[name] = prepared.data
        if scaled_path is not None:
            module.scaled = scaled_path  # type: ignore[attr-defined]
        size_kib = len(base64.b64decode(data)) // 1024
        print(f"{kind} {args.width}x{args.height} JPEG ({size_kib} KiB), {args.rounds} rounds")
        for name in names:
            values = sorted(wall[name][2:])
            deciles = statistics.quantiles(values, n=10)
            w, h, n = sizes[name]
            mean, psnr = distance(outputs[name], data)
            print(
                f"  {name:7} wall median {statistics.median(values):6.1f} ms "
                f"(p10-p90 {deciles[0]:.1f}-{deciles[-1]:.1f})  "
                f"cpu median {statistics.median(cpu[name][2:]):6.1f} ms  -> {w}x{h}, {n} B, "
                f"from the reference {mean:.2f} mean, {psnr:.1f} dB"
            )
        if len(names) == 2:
            for label, table in (("wall", wall), ("cpu", cpu)):
                ratio = statistics.median(table["pillow"][2:]) / statistics.median(
                    table["scaled"][2:]
                )
                print(f"  pillow / scaled ({label}): {ratio:.2f}x")
    bands.shutdown()


if __name__ == "__main__":
    main()
