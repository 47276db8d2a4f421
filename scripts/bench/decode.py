#!/usr/bin/env python3
"""Benchmark: decode_client_frame vs a bare typed msgspec decode, side by side.

The baseline is the cheapest thing that could work (one typed msgspec decode,
no budget, duplicate-key or forbidden-content checks); the ratio shows what the
protocol's extra checks cost per frame type. Prints medians of repeated runs.

Usage: ``python scripts/bench/decode.py [--repeat 7] [--number 2000] [--cpu]``.
``--cpu`` times with the process's CPU clock instead of the wall clock, which
other processes on a busy machine disturb less.
"""

from __future__ import annotations

import argparse
import base64
import io
import json
import statistics
import time
import timeit
from datetime import UTC, datetime

import msgspec
from PIL import Image

from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.frames import ClientFrame


def frames() -> dict[str, bytes]:
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    context = {
        "schemaVersion": 1,
        "capturedAt": now,
        "world": {
            "location": "Farm",
            "time": "08:10",
            "season": "spring",
            "weather": "sunny",
            "day": 12,
        },
        "player": {"health": 100, "stamina": 72, "status": ["hungry"], "heldItem": "Fishing Rod"},
        "focus": {"kind": "water", "name": "farm pond", "reachable": True},
        "nearby": [{"kind": "npc", "name": f"NPC {i}", "distance": i} for i in range(5)],
        "relevantItems": [{"name": f"Item {i}", "count": i} for i in range(8)],
        "ui": {"busy": False, "menu": None},
    }
    buf = io.BytesIO()
    Image.effect_noise((1280, 720), 64).convert("RGB").save(buf, format="JPEG", quality=90)
    image = base64.b64encode(buf.getvalue()).decode()
    out = {
        "heartbeat": {"type": "heartbeat"},
        "state.update": {"type": "state.update", "modelContext": context},
        "chat.send": {
            "type": "chat.send",
            "id": "c1",
            "text": "今天钓什么鱼？" * 20,
            "source": "text",
            "context": {"modelContext": context},
        },
        "chat.send+image": {
            "type": "chat.send",
            "id": "c2",
            "text": "看看这个",
            "source": "text",
            "image": {"mime": "image/jpeg", "data": image},
        },
    }
    return {k: json.dumps(v, ensure_ascii=False).encode() for k, v in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--cpu", action="store_true", help="time CPU, not wall clock")
    args = parser.parse_args()
    timer = time.process_time if args.cpu else time.perf_counter
    baseline = msgspec.json.Decoder(ClientFrame)
    print(f"{'frame':<18} {'bytes':>9} {'baseline µs':>12} {'xtyserver µs':>13} {'ratio':>6}")
    for name, raw in frames().items():
        number = max(5, args.number // (1 + len(raw) // 20_000))
        base = timeit.repeat(
            lambda r=raw: baseline.decode(r), number=number, repeat=args.repeat, timer=timer
        )
        ours = timeit.repeat(
            lambda r=raw: decode_client_frame(r), number=number, repeat=args.repeat, timer=timer
        )
        b = statistics.median(base) / number * 1e6
        o = statistics.median(ours) / number * 1e6
        print(f"{name:<18} {len(raw):>9} {b:>12.1f} {o:>13.1f} {o / b:>6.1f}")


if __name__ == "__main__":
    main()
