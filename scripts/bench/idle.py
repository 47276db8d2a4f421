#!/usr/bin/env python3
"""Benchmark: start to ``listening`` with a 30,000-event store, and RSS per idle connection.

* **Start**: ``python -m xtyserver serve`` is started as a process over a data
  folder holding a 30,000-event store (100 saves x 300) whose memories all have
  their vectors where the tree has an embedder (the player's steady state: no
  embedding backlog runs while anything is read; see baseline.py); the time from the
  spawn to its ``listening ws://...`` line, median of ``--starts`` runs (each
  includes the interpreter start and every import, as a player would see it);
  for a tree that builds what turns need after that line (``serve/warm.py``),
  also the time to its ``server.warmed`` log line.
  With ``--baseline REF`` the starts alternate with those of another commit
  (exported with ``git archive``, first on ``PYTHONPATH``; see rss.py).
* **Idle connections**: against the last of those servers, ``--connections``
  adapter clients (each its own new save) say hello (``max_connections`` is
  raised to 1,000 in a config file) and then only send
  heartbeats. The server's RSS (``/proc/PID/status`` VmRSS) is read idle (once
  warmed, for a tree that logs it, and steady for half a second: what a server
  builds and loads after listening is not a connection's), after 10
  warm-up connections and again after all of them have been up for two
  heartbeat periods; the difference over the added connections is the cost
  of one idle connection. With ``--baseline`` the baseline's last server is
  measured so too, just before ours.

Usage: ``python scripts/bench/idle.py [--connections 200] [--starts 5] [--same-save]
[--saves 100] [--per-save 300] [--baseline REF] [--heartbeat-ms 5000]`` (the suite's
tiny run waits 0.5 s periods).
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import tempfile
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import serving  # noqa: E402
from baseline import backlog, export_tree, seed_store, seed_vectors  # noqa: E402

from xtyserver.adapter import AdapterClient, AdapterInfo, Identity  # noqa: E402

TOKEN = "bench-token-idle-9fK2mQ7xLp3VtR8wZ4nB6cH1jD5sG0aE"
WARM = 10
WARM_WAIT = 5.0
"""Seconds a start waits for ``server.warmed``; a tree that logs none is not waited for again."""
CONFIG = "[server]\nmax_connections = 1000\nheartbeat_ms = {beat_ms}\n"


def _start(
    data_dir: str, beat_ms: int, tree: Path | None = None, warms: list[bool] | None = None
) -> serving.Started:
    """A started server; waits for its ``server.warmed`` too while ``warms`` holds True
    (made False when a start's line did not come)."""
    config = CONFIG.format(beat_ms=beat_ms)
    server = serving.start(Path(data_dir), config, env={"XTY_TOKEN": TOKEN}, tree=tree)
    if warms is not None and warms[0]:
        warms[0] = server.wait_warmed(WARM_WAIT)
    return server


async def _idle(
    url: str, pid: int, count: int, same_save: str | None
) -> tuple[int, int, int, float]:
    async with contextlib.AsyncExitStack() as stack:

        async def open_one(i: int) -> float:
            client = AdapterClient(
                url,
                token=TOKEN,
                identity=Identity(game_id="stardew", save_id=same_save or f"idle-{i}"),
                adapter=AdapterInfo(name="bench-idle", version="0.1.0"),
                timezone="Asia/Shanghai",
            )
            await stack.enter_async_context(client)
            return client.server_hello.heartbeat_ms / 1000

        beat = 5.0
        for i in range(WARM):
            beat = await open_one(i)
        await anyio.sleep(2 * beat)
        warm = serving.memory_kib(pid)["VmRSS"]
        for i in range(WARM, count):
            await open_one(i)
        await anyio.sleep(2 * beat)
        full = serving.memory_kib(pid)["VmRSS"]
    return warm, full, count - WARM, beat


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--connections", type=int, default=200)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--same-save", action="store_true", help="every connection on one save")
    ap.add_argument("--saves", type=int, default=100, help="saves in the store (at least 43)")
    ap.add_argument("--per-save", type=int, default=300, help="memories of each save")
    ap.add_argument("--baseline", default="", help="git ref whose starts alternate with these")
    ap.add_argument(
        "--heartbeat-ms", type=int, default=5000, help="the servers' heartbeat period (5000)"
    )
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="xty-bench-") as tmp:
        data = Path(tmp) / "data"
        seed_store(data, args.saves, args.per_save)
        _steady(data, None)
        starts: list[serving.Started] = []
        base_starts: list[serving.Started] = []
        base = export_tree(args.baseline, Path(tmp) / "base") if args.baseline else None
        base_data = str(Path(tmp) / "base-data")
        warms, base_warms = [True], [True]
        if base is not None:  # once untimed: the exported tree compiles its bytecode
            seed_store(
                Path(base_data), args.saves, args.per_save, base
            )  # in the store format it reads
            _steady(Path(base_data), base)
            serving.stop(_start(base_data, args.heartbeat_ms, base, base_warms))
        same = "one" if args.same_save else None
        base_idle = None
        for n in range(args.starts):
            if base is not None:
                base_starts.append(_start(base_data, args.heartbeat_ms, base, base_warms))
                if n == args.starts - 1:  # the baseline's idle connections, before ours
                    base_idle = _measure(base_starts[-1], args.connections, same)
                serving.stop(base_starts[-1])
            starts.append(_start(str(data), args.heartbeat_ms, None, warms))
            if n < args.starts - 1:
                serving.stop(starts[-1])
        measured = _measure(starts[-1], args.connections, same)
    print(f"{'what':52s} {'value':>12s}")
    rows = [("", starts)]
    if base is not None:
        rows.append((f" [baseline {args.baseline}]", base_starts))
    for label, runs in rows:
        times = [r.seconds for r in runs]
        q1, _, q3 = statistics.quantiles(times, n=4)
        print(
            f"{f'start to listening, {args.saves * args.per_save:,}-event store' + label:52s}"
            f" {statistics.median(times):7.3f} ± {(q3 - q1) / 2:.3f} s"
            f"  (min {min(times):.3f}, max {max(times):.3f}, n={len(times)});"
            f" server CPU {statistics.median(r.cpu_s for r in runs):.3f} s"
        )
        warmed = [(r.warmed_s, r.warmed_cpu_s) for r in runs if r.warmed_s is not None]
        if len(warmed) == len(runs):
            print(
                f"{'start to server.warmed' + label:52s}"
                f" {statistics.median(w for w, _ in warmed):7.3f} s"
                f"  (min {min(w for w, _ in warmed):.3f}, max {max(w for w, _ in warmed):.3f});"
                f" server CPU {statistics.median(c or 0.0 for _, c in warmed):.3f} s"
            )
    print("(median ± IQR/2; server CPU: user + system from /proc at `listening`, median)")
    idle_rows = [("", measured)]
    if base_idle is not None:
        idle_rows.append((f" [baseline {args.baseline}]", base_idle))
    for label, (before, warm, full, added, beat) in idle_rows:
        rss = f"{before} / {warm} / {full} KiB"
        print(f"{'server RSS idle / 10 conns / all conns' + label:52s} {rss}")
        per, every = (full - warm) / added, (full - before) / args.connections
        what = f"RSS per idle connection ({added} added, heartbeats every {beat:g} s)" + label
        print(f"{what:52s} {per:8.1f} KiB  (all {args.connections}: {every:.1f} KiB)")


def _steady(data: Path, tree: Path | None) -> None:
    """Every memory of the store with its vector (a tree with an embedder): the player's
    steady state, in which no embedding backlog runs while the RSS is read."""
    model = seed_vectors(data, tree)
    if model and backlog(data, model):
        raise SystemExit(f"{data}: memories without a vector: a backlog would run")
    state = f"every memory has a vector ({model})" if model else "no embedder"
    print(f"{tree.name if tree else 'candidate'}: {state}")


def _measure(
    server: serving.Started, connections: int, same_save: str | None
) -> tuple[int, int, int, int, float]:
    """RSS before (after the warmed line, which ``_start`` waited for, once steady),
    after 10 and after all idle connections to ``server``, which is then stopped."""
    try:
        before = serving.settled_rss_kib(server.proc.pid)
        warm, full, added, beat = anyio.run(
            _idle, server.url, server.proc.pid, connections, same_save
        )
    finally:
        serving.stop(server)
    return before, warm, full, added, beat


if __name__ == "__main__":
    main()
