#!/usr/bin/env python3
"""Benchmark: what the server takes while a game runs: idle CPU with a mod connected, and
the event loop's worst stall during turns.

turn.py's servers (the default install over the 30,000-event store, the
played save's memories with their vectors and no backlog; ``--baseline REF``
repeatable, see turn.py), one adapter connected to each:

1. **Idle with a mod connected**: after a few turns (so the fold, the memory
   touch and the embedder have run) and ``--settle`` seconds, the server's CPU
   (``/proc``) over ``--idle`` seconds in which the mod only sends its
   heartbeats (every ``heartbeatMs`` of the server's hello), given per minute.
2. **The event loop's worst stall**: then a probe task in each server's event
   loop (started by ``SIGUSR1``, so it costs nothing in part 1) sleeps 20 ms
   over and over and notes how late it wakes, while ``--rounds`` rounds of a
   text turn and a 1920x1080 screenshot turn are played on every server in
   turn. A late wake-up is the loop blocked (work on the loop) or the process
   not scheduled (a busy machine): the load average is printed beside it.

Usage: ``python scripts/bench/idle_cpu.py [--idle 60] [--rounds 30] [--baseline REF]...``
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

import turn  # noqa: E402
from baseline import variants  # noqa: E402
from stats import machine, nearest_rank  # noqa: E402

from xtyserver.adapter import AdapterClient, AdapterInfo, Capabilities  # noqa: E402
from xtyserver.adapter.support import screenshot  # noqa: E402


async def _play(
    servers: dict[str, tuple[str, int]], idle: float, settle: float, rounds: int
) -> dict[str, dict[str, float]]:
    image = screenshot(turn.screenshot_jpeg(), "image/jpeg")
    out: dict[str, dict[str, float]] = {label: {} for label in servers}
    async with contextlib.AsyncExitStack() as stack:
        clients: dict[str, AdapterClient] = {}
        for label, (url, _) in servers.items():
            client = AdapterClient(
                url,
                token=turn.TOKEN,
                identity=turn.SAVE,
                adapter=AdapterInfo(name="bench-idle", version="0.1.0"),
                capabilities=Capabilities(image=True),
                timezone="Asia/Shanghai",
            )
            clients[label] = await stack.enter_async_context(client)
            await client.update_state(turn.model_context())
            for n in range(4):
                await turn._turn(client, None, turn.QUESTIONS[-1 - n])
        await anyio.sleep(settle)
        before = {label: turn._cpu_s(pid) for label, (_, pid) in servers.items()}
        await anyio.sleep(idle)
        for label, (_, pid) in servers.items():
            out[label]["idle"] = (turn._cpu_s(pid) - before[label]) * 60 / idle
        for _, pid in servers.values():
            os.kill(pid, signal.SIGUSR1)  # the stall probe starts
        await anyio.sleep(0.5)
        for i in range(rounds):
            for client in clients.values():
                await turn._turn(client, None, turn.QUESTIONS[4 * i])
                await turn._turn(client, image, turn.QUESTIONS[4 * i + 1])
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--idle", type=float, default=60.0, help="idle seconds measured")
    ap.add_argument("--settle", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--saves", type=int, default=100)
    ap.add_argument("--per-save", type=int, default=300)
    ap.add_argument("--baseline", action="append", default=[], help="git ref (repeatable)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="xty-bench-") as tmp:
        print(f"machine: {machine()}")
        runs = variants(Path(tmp), args.baseline, ("vectors",), args.saves, args.per_save)
        model, model_url = turn._spawn("--child", "model")
        children = [model]
        servers: dict[str, tuple[str, int]] = {}
        stalls: dict[str, Path] = {}
        try:
            for i, run in enumerate(runs):
                stalls[run.label] = Path(tmp) / f"stall{i}.json"
                env = {"XTY_BENCH_STALL": str(stalls[run.label])}
                args_ = ["--child", "server", "--data-dir", str(run.data), "--model-url", model_url]
                server, url = turn._spawn(*args_, tree=run.tree, env=env)
                children.append(server)
                servers[run.label] = (url, server.pid)
            figures = anyio.run(_play, servers, args.idle, args.settle, args.rounds)
            print(f"after the rounds: {machine()}")
        finally:
            for proc in reversed(children):
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(timeout=30)
        lates = {
            label: sorted(json.loads(path.read_text())) if path.exists() else []
            for label, path in stalls.items()
        }
    head = f"{'idle CPU ms/min':>16s} {'loop late p50':>14s} {'p99':>8s} {'max ms':>8s}"
    print(f"\n{'server':32s} {head}")
    for label, late in lates.items():
        if not late:
            raise SystemExit(f"{label}: the server's stall probe wrote nothing")
        print(
            f"{label:32s} {figures[label]['idle'] * 1000:16.1f}"
            f" {statistics.median(late) * 1000:14.2f} {nearest_rank(late, 99) * 1000:8.2f}"
            f" {late[-1] * 1000:8.2f}"
        )
    print(
        f"(idle: {args.idle:g} s with one mod connected, heartbeats only, after 4 turns;"
        f" loop: how late a 20 ms sleep in the server's event loop woke, during"
        f" {args.rounds} rounds of a text and a screenshot turn on each server)"
    )


def probe_stalls(path: str) -> Any:
    """The child's probe (turn.py's server child runs it when ``XTY_BENCH_STALL`` is set):
    after ``SIGUSR1``, how late each 20 ms sleep wakes, written to ``path`` at the end."""

    async def probe() -> None:
        late: list[float] = []
        try:
            with anyio.open_signal_receiver(signal.SIGUSR1) as signals:
                async for _ in signals:
                    break
            while True:
                started = time.perf_counter()
                await anyio.sleep(0.02)
                late.append(max(0.0, time.perf_counter() - started - 0.02))
        finally:
            Path(path).write_text(json.dumps(late))

    return probe


if __name__ == "__main__":
    main()
