#!/usr/bin/env python3
"""Benchmark: the server's CPU per step of a 1920x1080 screenshot turn, in one process.

Each step of what the server does with one ``chat.send`` carrying the
``turn.py`` screenshot, timed with ``time.thread_time`` (CPU of this thread:
little disturbed by a busy machine) and counted in minor page faults
(``getrusage(RUSAGE_THREAD)``), rounds interleaved. The glibc mmap threshold is
fixed as ``xtyserver serve`` fixes it (``serve/heap.py``) unless
``--dynamic-heap``: with it fixed every buffer over 128 KiB is a fresh mapping,
so the faults are part of each step's cost.

Rows marked ``(old)`` are the other way of doing a step, measured side by
side: websockets' UTF-8 decoding plus the codec re-encoding the ``str``, and
the openai SDK's ``json.dumps`` of the body.
Rows marked ``(alt)`` are alternatives measured and not taken: libjpeg-turbo's
fast DCT and upsampling flags (no faster: a scaled decode uses its own
inverse DCTs), and decoding into a kept pixel buffer (no page faults, but the
buffer stays resident). The 1/8 decode row is about the entropy decoding
alone, the part no scale or flag removes.

Usage: ``python scripts/bench/image_turn_steps.py [--rounds 30] [--dynamic-heap]``.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import simplejpeg
from openai._utils._json import openapi_dumps
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from turn import screenshot_jpeg

from xtyserver.protocol.codec import decode_client_frame
from xtyserver.serve.heap import fix_mmap_threshold
from xtyserver.serve.image import ImageLimits, check_and_prepare
from xtyserver.serve.jpeg import jpeg_scale
from xtyserver.serve.text_frames import valid_utf8


def _faults() -> int:
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--dynamic-heap", action="store_true", help="leave glibc's threshold dynamic")
    args = ap.parse_args()
    fixed = False if args.dynamic_heap else fix_mmap_threshold()

    jpeg = screenshot_jpeg()
    frame = {
        "type": "chat.send",
        "id": "chat-1",
        "text": "今天适合去钓鱼吗？社区中心的鱼缸",
        "source": "text",
        "image": {"mime": "image/jpeg", "data": base64.b64encode(jpeg).decode("ascii")},
    }
    raw = json.dumps(frame, ensure_ascii=False).encode()
    limits = ImageLimits()
    b64 = str(frame["image"]["data"])  # type: ignore[index]
    with Image.open(io.BytesIO(jpeg)) as header:
        width, height = header.size
    n = jpeg_scale(width, height, limits.max_side) or 8
    scaled = {"min_width": -(-width * n // 8), "min_height": -(-height * n // 8)}
    kept = bytearray(scaled["min_width"] * scaled["min_height"] * 3)
    prepared = check_and_prepare("image/jpeg", b64, limits)
    url = prepared.data_url()
    body = {
        "model": "scripted-vl",
        "messages": [
            {"role": "system", "content": "你是小汤圆" * 300},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": str(frame["text"])},
                    {"type": "image_url", "image_url": {"url": url}},
                ],
            },
        ],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    data = base64.b64decode(b64)
    pixels = simplejpeg.decode_jpeg(data, colorspace="RGB", strict=True, **scaled)

    steps: dict[str, Callable[[], Any]] = {
        "receive: UTF-8 decode to str + re-encode (old)": lambda: decode_client_frame(raw.decode()),
        "receive: valid_utf8 + decode_client_frame(bytes)": lambda: (
            valid_utf8(raw),
            decode_client_frame(raw),
        ),
        "  of which valid_utf8": lambda: valid_utf8(raw),
        "check_and_prepare (all of it)": lambda: check_and_prepare("image/jpeg", b64, limits),
        "  base64 decode (msgspec)": lambda: msgspec.convert(b64, bytes),
        f"  libjpeg-turbo decode at {n}/8": lambda: simplejpeg.decode_jpeg(
            data, colorspace="RGB", strict=True, **scaled
        ),
        f"  decode at {n}/8, fastdct+fastupsample (alt)": lambda: simplejpeg.decode_jpeg(
            data, colorspace="RGB", strict=True, fastdct=True, fastupsample=True, **scaled
        ),
        f"  decode at {n}/8 into a kept buffer (alt)": lambda: simplejpeg.decode_jpeg(
            data, colorspace="RGB", strict=True, buffer=kept, **scaled
        ),
        "  decode at 1/8 (about the entropy decoding alone)": lambda: simplejpeg.decode_jpeg(
            data, colorspace="RGB", strict=True, min_width=-(-width // 8), min_height=1
        ),
        f"  encode q{limits.jpeg_quality} 4:2:0": lambda: simplejpeg.encode_jpeg(
            pixels, quality=limits.jpeg_quality, colorspace="RGB", colorsubsampling="420"
        ),
        f"  encode q{limits.jpeg_quality} 4:2:0 fastdct (alt)": lambda: simplejpeg.encode_jpeg(
            pixels,
            quality=limits.jpeg_quality,
            colorspace="RGB",
            colorsubsampling="420",
            fastdct=True,
        ),
        "data URL": prepared.data_url,
        "request body: the SDK's json.dumps (old)": lambda: openapi_dumps(body),
        "request body: msgspec (post_chat)": lambda: msgspec.json.encode(body),
    }
    cpu: dict[str, list[float]] = {k: [] for k in steps}
    faults: dict[str, list[int]] = {k: [] for k in steps}
    for i in range(args.rounds + 3):
        for name, step in steps.items():
            t, f = time.thread_time(), _faults()
            step()
            if i >= 3:
                cpu[name].append((time.thread_time() - t) * 1e3)
                faults[name].append(_faults() - f)
    print(
        f"1920x1080 screenshot: {len(jpeg)} bytes JPEG, frame {len(raw)} bytes, prepared"
        f" {prepared.width}x{prepared.height} {len(prepared.data)} bytes;"
        f" mmap threshold {'fixed' if fixed else 'dynamic'}; {args.rounds} rounds"
    )
    print(f"{'step':52s} {'CPU ms p50':>10s} {'p10':>7s} {'p90':>7s} {'faults':>7s}")
    for name in steps:
        deciles = statistics.quantiles(cpu[name], n=10)
        p50 = statistics.median(cpu[name])
        print(
            f"{name:52s} {p50:10.2f} {deciles[0]:7.2f} {deciles[-1]:7.2f}"
            f" {statistics.median(faults[name]):7.0f}"
        )


if __name__ == "__main__":
    main()
