#!/usr/bin/env python3
"""Probe: what one idle connection allocates, and how many tasks it keeps, inside the server.

The server runs in this process (``serving()``, as the tests start it) under
``tracemalloc``; the adapter clients run in a child process, so only the
server's side is counted. After ``WARM`` connections (and two heartbeat
periods) a snapshot is taken; then ``--connections`` more say hello and only
send heartbeats, and after two more periods a second snapshot. The diff,
grouped by the project's line that asked for it (the most recent frame in
the package, tracebacks ``--frames`` deep) and the line that allocated, is
divided by the added connections: bytes and blocks per idle connection,
largest first. The tasks
alive on the event loop are counted the same way, by coroutine name.

Not a benchmark of RSS (tracemalloc's own overhead is in the process): the
RSS figure is ``idle.py``'s. The heartbeats come every 15 s by default: traced,
the server is slow enough that at 5 s their store writes queue up, and the
queue would be counted as the connections' own. Usage: ``python scripts/bench/idle_alloc.py
[--connections 100] [--frames 25] [--top 30] [--heartbeat-ms 15000]``.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import os
import sys
import tempfile
import textwrap
import tracemalloc
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from xtyserver import log  # noqa: E402
from xtyserver.clock import SystemClock  # noqa: E402
from xtyserver.config import load_settings  # noqa: E402
from xtyserver.server import serving  # noqa: E402

TOKEN = "bench-token-idle-9fK2mQ7xLp3VtR8wZ4nB6cH1jD5sG0aE"
WARM = 10

# The clients: each line on stdin opens that many more connections, each its own
# new save; "ok" once they are up. EOF closes them all.
CLIENTS = textwrap.dedent(
    """
    import sys, contextlib, anyio
    from xtyserver.adapter import AdapterClient, AdapterInfo, Identity

    async def main(url, token):
        opened = 0
        async with contextlib.AsyncExitStack() as stack:
            while line := await anyio.to_thread.run_sync(sys.stdin.readline):
                for _ in range(int(line)):
                    client = AdapterClient(
                        url,
                        token=token,
                        identity=Identity(game_id="stardew", save_id=f"idle-{opened}"),
                        adapter=AdapterInfo(name="bench-idle", version="0.1.0"),
                        timezone="Asia/Shanghai",
                        timeout=60,
                    )
                    await stack.enter_async_context(client)
                    opened += 1
                print("ok", flush=True)

    anyio.run(main, sys.argv[1], sys.argv[2])
    """
)


def _tasks() -> collections.Counter[str]:
    return collections.Counter(task.get_name().split(" ")[0] for task in asyncio.all_tasks())


async def _settled() -> None:
    """Wait until the server's own start-up work (the glossary, on a thread) stops growing."""
    last = -1
    while True:
        await anyio.sleep(1)
        now = _rss_kib()
        if abs(now - last) < 64:
            return
        last = now


def _rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS"))


async def _probe(args: argparse.Namespace, data_dir: str) -> None:
    settings = load_settings(
        None,
        env={},
        overrides={
            "data_dir": data_dir,
            "server.port": 0,
            "server.max_connections": 1000,
            "server.heartbeat_ms": args.heartbeat_ms,
        },
    )
    beat = args.heartbeat_ms / 1000
    async with serving(settings, token=TOKEN, clock=SystemClock()) as server:
        child = await anyio.open_process(
            [sys.executable, "-c", CLIENTS, server.url, TOKEN], stderr=None
        )
        assert child.stdin is not None and child.stdout is not None
        async with child:

            async def more(n: int) -> None:
                assert child.stdin is not None and child.stdout is not None
                await child.stdin.send(f"{n}\n".encode())
                assert (await child.stdout.receive()).strip() == b"ok"
                await anyio.sleep(2 * beat)
                gc.collect()

            await more(WARM)
            await _settled()
            gc.collect()
            # Traced from here on: what was allocated before (start-up, the warm-up
            # connections) is not in either snapshot, so neither is its freeing.
            tracemalloc.start(args.frames)
            before, tasks_before = tracemalloc.take_snapshot(), _tasks()
            await more(args.connections)
            after, tasks_after = tracemalloc.take_snapshot(), _tasks()
            await child.stdin.aclose()
            await child.wait()
    _report(args, before, after, tasks_before, tasks_after)


def _report(
    args: argparse.Namespace,
    before: tracemalloc.Snapshot,
    after: tracemalloc.Snapshot,
    tasks_before: collections.Counter[str],
    tasks_after: collections.Counter[str],
) -> None:
    n = args.connections
    keep = [tracemalloc.Filter(False, tracemalloc.__file__)]
    stats = after.filter_traces(keep).compare_to(before.filter_traces(keep), "traceback")
    total = sum(s.size_diff for s in stats)
    blocks = sum(s.count_diff for s in stats)
    print(f"allocated per idle connection: {total / n / 1024:.2f} KiB in {blocks / n:.1f} blocks")
    # Grouped by the project's own line that asked (the most recent frame in the
    # package) and the line that allocated: a library's allocation is named by its caller.
    owners: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    for stat in stats:
        frames = list(reversed(stat.traceback))  # most recent first
        top = _where(frames[0]) if frames else "?"
        own = next((_where(f) for f in frames if "/xtyserver/" in f.filename), "(no project frame)")
        owners[own, top][0] += stat.size_diff
        owners[own, top][1] += stat.count_diff
    print(f"\n{'B/conn':>8s} {'blocks':>6s}  project line <- allocating line")
    ranked = sorted(owners.items(), key=lambda kv: -kv[1][0])
    for (own, top), (size, count) in ranked[: args.top]:
        print(f"{size / n:8.0f} {count / n:6.1f}  {own}" + ("" if top == own else f"  <- {top}"))
    mine = sum(s.size_diff for s in stats if any("/xtyserver/" in f.filename for f in s.traceback))
    print(f"(tracebacks with no project frame: {(total - mine) / n:.0f} B/conn)")
    tasks = (sum(tasks_after.values()) - sum(tasks_before.values())) / n
    print(f"\ntasks per idle connection: {tasks:g}")
    for name, count in (tasks_after - tasks_before).most_common():
        print(f"  {count / n:g}  {name}")


def _where(frame: tracemalloc.Frame) -> str:
    name = frame.filename
    for root, short in ((str(ROOT) + "/", ""), (sys.prefix, "<venv>"), (sys.base_prefix, "<py>")):
        if name.startswith(root):
            name = short + name[len(root) :]
            break
    return f"{name}:{frame.lineno}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--connections", type=int, default=100)
    ap.add_argument("--frames", type=int, default=25, help="traceback depth kept")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--heartbeat-ms", type=int, default=15000)
    args = ap.parse_args()
    log.configure(stream=open(os.devnull, "w"), level="error")  # noqa: SIM115
    with tempfile.TemporaryDirectory(prefix="xty-alloc-") as tmp:
        anyio.run(_probe, args, tmp)


if __name__ == "__main__":
    main()
