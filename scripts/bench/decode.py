#!/usr/bin/env python3
"""Benchmark: decode_client_frame vs a bare typed msgspec decode, side by side.

The baseline is the cheapest thing that could work (one typed msgspec decode,
no budget, duplicate-key or forbidden-content checks); the ratio shows what the
protocol's extra checks cost per frame type. Prints medians of repeated runs.

A third column runs a pydantic v2 implementation of the same state.update rules
(``decode_pydantic.py``; ``pip install -e .[bench]``). Rounds are interleaved
and each cell is the median with half the interquartile range.

Usage: ``python scripts/bench/decode.py [--repeat 15] [--number 2000] [--cpu]``.
``--cpu`` times with the process's CPU clock instead of the wall clock, which
other processes on a busy machine disturb less.
"""

from __future__ import annotations

import argparse
import base64
import io
import itertools
import json
import statistics
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import msgspec
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent))

from decode_pydantic import decode_state_update

from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.frames import ClientFrame


def _context(
    now: str, *, second: int = 0, clock: str = "08:10", names: str = "NPC"
) -> dict[str, object]:
    return {
        "schemaVersion": 1,
        "capturedAt": now,
        "world": {
            "location": "Farm",
            "time": clock,
            "season": "spring",
            "weather": "sunny",
            "day": 12,
        },
        "player": {
            "health": 100,
            "stamina": 72 - second % 50,
            "status": ["hungry"],
            "heldItem": "Fishing Rod",
        },
        "focus": {"kind": "water", "name": "farm pond", "reachable": True},
        "nearby": [
            {"kind": "npc", "name": f"{names} {i}", "distance": (i + second) % 9} for i in range(5)
        ],
        "relevantItems": [{"name": f"Item {i}", "count": i} for i in range(8)],
        "ui": {"busy": False, "menu": None},
    }


STREAM = 64  # frames in each of the two state.update streams, played in a cycle


def frames() -> dict[str, list[bytes]]:
    """Each kind of frame: one frame repeated, or a stream of different ones.

    "a game's stream": what a Stardew mod sends once a second: stamina,
    distances and ``capturedAt`` new in every frame, the game clock (10 game
    minutes in about 7 s) every seventh, the names every twentieth (a new
    place). "new texts": every frame's names new, so nothing a frame's texts
    were judged for before can help.
    """
    now = datetime.now(UTC).isoformat().replace("+00:00", "Z")
    context = _context(now)

    def update(ctx: dict[str, object]) -> dict[str, object]:
        return {"type": "state.update", "modelContext": ctx}

    game = [
        update(
            _context(
                f"2026-12-01T08:{i % 60:02d}:00Z",
                second=i,
                clock=f"{8 + i // 42:02d}:{i // 7 % 6}0",
                names=f"NPC{i // 20}",
            )
        )
        for i in range(STREAM)
    ]
    fresh = [update(_context(now, second=i, names=f"Villager{i}")) for i in range(STREAM)]
    buf = io.BytesIO()
    Image.effect_noise((1280, 720), 64).convert("RGB").save(buf, format="JPEG", quality=90)
    image = base64.b64encode(buf.getvalue()).decode()
    out = {
        "heartbeat": {"type": "heartbeat"},
        "state.update": update(context),
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
    encoded = {k: [json.dumps(v, ensure_ascii=False).encode()] for k, v in out.items()}
    streams = {"…a game's stream": game, "…new texts": fresh}
    for name, stream in streams.items():
        encoded[name] = [json.dumps(v, ensure_ascii=False).encode() for v in stream]
    return encoded


def _per_call(fn: Callable[[], object], number: int, timer: Callable[[], float]) -> float:
    start = timer()
    for _ in range(number):
        fn()
    return (timer() - start) / number * 1e6


def _cell(samples: list[float]) -> str:
    quartiles = statistics.quantiles(samples, n=4)
    return f"{statistics.median(samples):8.1f} ±{(quartiles[2] - quartiles[0]) / 2:5.1f}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--number", type=int, default=2000)
    parser.add_argument("--cpu", action="store_true", help="time CPU, not wall clock")
    args = parser.parse_args()
    timer = time.process_time if args.cpu else time.perf_counter
    baseline = msgspec.json.Decoder(ClientFrame)
    print(
        f"median µs per frame ± half the interquartile range of {args.repeat} interleaved rounds"
        f" ({'process CPU' if args.cpu else 'wall'} clock)"
    )
    print(
        f"{'frame':<16} {'bytes':>7} {'msgspec floor':>15} {'xtyserver':>15} {'pydantic v2':>15}"
        f" {'x floor':>8} {'pyd / xty':>9}"
    )
    for name, stream in frames().items():
        raw = stream[0]
        number = max(5, args.number // (1 + len(raw) // 20_000))
        # Each candidate walks the same cycle of frames (one frame, or a stream).
        cycles = [itertools.cycle(stream) for _ in range(3)]
        candidates: dict[str, Callable[[], object]] = {
            "base": lambda c=cycles[0]: baseline.decode(next(c)),
            "ours": lambda c=cycles[1]: decode_client_frame(next(c)),
        }
        if name.startswith(("state.update", "…")):
            candidates["pydantic"] = lambda c=cycles[2]: decode_state_update(next(c))
        samples: dict[str, list[float]] = {key: [] for key in candidates}
        for _ in range(args.repeat):  # interleaved: a busy moment hits every candidate
            for key, fn in candidates.items():
                samples[key].append(_per_call(fn, number, timer))
        base, ours = (statistics.median(samples[k]) for k in ("base", "ours"))
        pyd = samples.get("pydantic")
        print(
            f"{name:<16} {len(raw):>7} {_cell(samples['base']):>15} {_cell(samples['ours']):>15}"
            f" {_cell(pyd) if pyd else '-':>15} {ours / base:>8.1f}"
            f" {statistics.median(pyd) / ours if pyd else float('nan'):>9.1f}"
        )


if __name__ == "__main__":
    main()
