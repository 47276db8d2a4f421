#!/usr/bin/env python3
"""Benchmark: a mod that connects at the listening line, and its first turn.

``python -m xtyserver serve`` is started over a 30,000-event store (as in
idle.py) with the scripted model configured; as soon as it prints its
``listening`` line an adapter client says hello on a new save and sends one
``chat.send``. Four figures per start, medians of ``--starts``: spawn to the
listening line, the listening line to ``server.hello``, ``chat.send`` to the
first ``chat.delta``, and spawn to that delta (what a player who starts the
game with the server sees). What the server makes once listening (on its
worker thread) competes with that first turn; ``--wait S`` sends the turn S
seconds after the hello instead, once that is done.

With ``--baseline REF`` the starts alternate with those of another commit
(exported with ``git archive``, first on ``PYTHONPATH``; see rss.py).

Usage: ``python scripts/bench/first_turn.py [--starts 5] [--baseline REF] [--wait 0]``
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import serving  # noqa: E402
from baseline import export_tree, seed_store  # noqa: E402

from xtyserver.adapter import AdapterClient, AdapterInfo, Identity  # noqa: E402

TOKEN = "bench-token-first-7Qm2xLp9VtR4wZ8nB3cH6jD1sG5aEkT0"
CONFIG = "[server]\nmax_connections = 1000\n"
FIGURES = ("spawn -> listening", "listening -> server.hello", "chat.send -> first delta")


def _fake_model() -> tuple[subprocess.Popen[str], str]:
    """The scripted OpenAI-compatible model server, as ``xtyserver fake-model`` runs it."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "xtyserver", "fake-model", "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        cwd=str(ROOT),
    )
    assert proc.stdout is not None
    url = proc.stdout.readline().split()[1]
    threading.Thread(target=proc.stdout.read, daemon=True).start()
    return proc, url


async def _first_turn(url: str, save: str, wait: float) -> tuple[float, float]:
    """Seconds to ``server.hello``, and from ``chat.send`` to the first delta."""
    start = time.perf_counter()
    client = AdapterClient(
        url,
        token=TOKEN,
        identity=Identity(game_id="stardew", save_id=save),
        adapter=AdapterInfo(name="bench-first-turn", version="0.1.0"),
        timezone="Asia/Shanghai",
    )
    async with client:
        hello = time.perf_counter() - start
        await anyio.sleep(wait)
        sent = time.perf_counter()
        reply = await client.chat("今天去哪里钓鱼比较好？")
        delta = None
        async for _ in reply:
            delta = time.perf_counter() - sent
            break
        await reply.result()
    assert delta is not None, "no chat.delta came"
    return hello, delta


def _one(data: Path, model_url: str, n: int, wait: float, tree: Path | None) -> tuple[float, ...]:
    env = {"XTY_TOKEN": TOKEN, "XTY_MODEL_BASE_URL": model_url, "XTY_MODEL": "scripted"}
    server = serving.start(data, CONFIG, env=env, tree=tree)
    try:
        hello, delta = anyio.run(_first_turn, server.url, f"first-{n}", wait)
    finally:
        serving.stop(server)
    return server.seconds, hello, delta, server.seconds + hello + wait + delta


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--starts", type=int, default=5)
    ap.add_argument("--baseline", default="", help="git ref whose starts alternate with these")
    ap.add_argument("--wait", type=float, default=0.0, help="seconds from the hello to the turn")
    args = ap.parse_args()
    fake, model_url = _fake_model()
    try:
        with tempfile.TemporaryDirectory(prefix="xty-bench-") as tmp:
            data = Path(tmp)
            seed_store(data, 100, 300)
            trees: dict[str, tuple[Path, Path | None]] = {"": (data, None)}
            if args.baseline:
                tree = export_tree(args.baseline, data / "base")
                seed_store(data / "base-data", 100, 300, tree)  # in the store format it reads
                trees[f" [baseline {args.baseline}]"] = (data / "base-data", tree)
            runs: dict[str, list[tuple[float, ...]]] = {label: [] for label in trees}
            for folder, tree in trees.values():  # once untimed: each tree compiles its bytecode
                _one(folder, model_url, 0, args.wait, tree)
            for n in range(1, args.starts + 1):
                for label, (folder, tree) in trees.items():
                    runs[label].append(_one(folder, model_url, n, args.wait, tree))
    finally:
        fake.terminate()
        fake.wait(timeout=30)
    print(f"{'what':66s} {'median':>9s}  runs")
    for label, rows in runs.items():
        names = (*FIGURES, f"spawn -> first delta (turn {args.wait:g} s after the hello)")
        for i, name in enumerate(names):
            values = [row[i] for row in rows]
            shown = " ".join(f"{v:.3f}" for v in values)
            print(f"{name + label:66s} {statistics.median(values):7.3f} s  {shown}")


if __name__ == "__main__":
    main()
