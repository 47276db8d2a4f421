#!/usr/bin/env python3
"""Benchmark: harness overhead of a chat turn, text and with a 1920x1080 JPEG screenshot.

Three kinds of process: the scripted model server, ``xtyserver`` (the default
install over a 30,000-event store whose save ``stardew-valley/save-42`` holds
300 memories, memory extraction off, logging at info as ``xtyserver serve``
does; the working-memory fold runs every few rounds, answered by the scripted
model as a real one would) and this script, which is the adapter and, side by
side, a plain model client (``model/provider.py``) talking to the same scripted model. The scripted
model keeps connections alive, as real providers do.

Two states of each tree, side by side (``--states``): ``vectors``, the player's
steady state, where every memory of the save has its vector from the default
embedder (written before the server starts, as its embedding backlog would
have; checked before anything is timed, and the run refuses otherwise), so
every turn embeds its question; and ``no vectors``, the same install with
``memory.local_embedding = false`` (no embedder: no turn embeds). Each round's
question is new (a cache of query vectors would otherwise answer every turn
after the first); every server gets the same one.

Per round, interleaved:

* ``model``: the scripted model's own time to first token, measured directly
  with the server's provider client (``post_chat`` -> first chunk with text);
* ``text``: ``chat.send`` written to the socket -> first ``chat.delta`` read;
* ``image``: the same with a ~1.2 MiB 1920x1080 JPEG screenshot (downscaled);
* ``image720``: the same with a 1280x720 JPEG (within limits: not re-encoded);
* ``typed``: a text turn whose question came first as ``chat.typing`` (the mod's
  hint when the player pauses typing), ``--lead-ms`` before its ``chat.send``
  (timed from the ``chat.send``, as ``text``); a tree without the frame answers
  it with ``error`` and embeds at the ``chat.send``.

Overhead = turn time minus the median direct time of the same request (with
the prepared screenshot for the image turns), measured in the same run. The server's
CPU time per turn is read from ``/proc`` (less disturbed by a busy machine).

With ``--baseline REF`` (repeatable) more servers run another commit (exported
with ``git archive`` and put first on its ``sys.path``, see rss.py) over a copy
of the same store, in both states when the commit has memory vectors (one
server when it has none: its turns never embed), and every round plays each
kind on every server, in shuffled order: the rows marked ``[REF ...]`` are that
commit, under the same load.

With ``--steps`` each server also marks the CPU time of the steps from a text
turn's ``chat.send`` to its first ``chat.delta`` (:mod:`steps`) and the tables
follow the figures.

With ``--samples FILE`` every timed value is written to FILE (JSON, round
order, with each turn's start on the system-wide ``perf_counter``) and each
server's garbage collections to ``FILE.gcN.json`` (start, generation,
seconds), to line the slow turns up with what the server did then;
``XTY_BENCH_GC_TYPES=1`` also prints what each full collection walked.

The p99 is the nearest-rank one (of 100 rounds the 99th value); the largest
is printed beside it as "max".

Usage: ``python scripts/bench/turn.py [--rounds 200] [--warmup 20] [--only KIND...]
[--states vectors novectors] [--baseline REF]... [--lead-ms 150] [--steps] [--samples FILE]``
(``--only text`` also runs the direct model request the text turn is measured
against).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import io
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import anyio
from PIL import Image, ImageDraw

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
if os.environ.get("XTY_BENCH_TREE"):  # a baseline server child: its own package first
    sys.path.insert(0, os.environ["XTY_BENCH_TREE"])
    # And only it: an editable install's finder would fill a module the older tree
    # lacks (``xtyserver.serve``) in from this checkout, so that a fallback import
    # below would run the candidate's code in the baseline's server.
    sys.meta_path[:] = [f for f in sys.meta_path if not f.__module__.startswith("__editable__")]

from baseline import STATES, variants  # noqa: E402
from stats import machine, nearest_rank  # noqa: E402

from xtyserver.adapter import AdapterClient, AdapterInfo, Capabilities, Identity  # noqa: E402
from xtyserver.adapter.reply import ChatReply  # noqa: E402
from xtyserver.adapter.support import captured_at, screenshot  # noqa: E402
from xtyserver.clock import SystemClock  # noqa: E402
from xtyserver.config import load_settings  # noqa: E402
from xtyserver.model.request import post_chat  # noqa: E402

TOKEN = "bench-token-turn-7gQ3nV9tK1zM5xR2pW8cH4bF6jL0sDaE"
SAVE = Identity(game_id="stardew-valley", save_id="save-42")  # baseline.SAVE: 300 memories

# A new question each round, all about as long (the query's embedding grows with its tokens).
_ASKS = (
    "今天适合去钓鱼吗？{}",
    "{}那件事我们说到哪了",
    "明天去{}要准备什么",
    "我之前跟你说过{}吗",
    "{}现在该怎么办？",
    "还记得{}的事情吗",
    "What should I do about {} today?",
    "{}还差几样东西",
    "你觉得{}值得做吗",
    "上次{}是哪天来着",
    "提醒我一下{}的计划",
    "{}和矿井哪个先做",
)
_TOPICS = (
    "社区中心的鱼缸",
    "温室",
    "法师塔",
    "矿井第四十层",
    "秋天的南瓜",
    "阿比盖尔的生日",
    "鸡舍升级",
    "草莓种子",
    "夜市",
    "酿酒桶",
    "the Community Center",
    "铱矿",
    "海莉的礼物",
    "鱼塘",
    "沙漠商人",
    "冬天的种子",
    "Willy's boat",
    "地窖",
    "蓝莓田",
    "骷髅洞穴",
)
_OPENINGS = ("", "小汤圆，", "话说，")
QUESTIONS = tuple(o + a.format(t) for o in _OPENINGS for t in _TOPICS for a in _ASKS)
"""720 questions: a round's four turns take four, so 180 rounds never repeat one."""

KINDS = ("text", "image", "image720", "typed")


def screenshot_jpeg(seed: int = 3, size: tuple[int, int] = (1920, 1080)) -> bytes:
    """A busy JPEG (quality 95; 1920x1080 is about 1.2 MiB), like a game frame."""
    rng = random.Random(seed)
    width, height = size
    image = Image.new("RGB", size, (100, 160, 90))
    draw = ImageDraw.Draw(image)
    for _ in range(3000 * width * height // (1920 * 1080)):
        x, y = rng.randrange(width), rng.randrange(height)
        colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
        draw.rectangle((x, y, x + rng.randrange(4, 60), y + rng.randrange(4, 40)), fill=colour)
    noise = Image.effect_noise(size, 30).convert("RGB")
    image = Image.blend(image, noise, 0.25)
    buf = io.BytesIO()
    image.save(buf, format="JPEG", quality=95)
    return buf.getvalue()


def model_context() -> dict[str, Any]:
    return {
        "schemaVersion": 1,
        "capturedAt": captured_at(),
        "world": {"location": "Farm", "time": "08:10", "season": "spring", "day": 12},
        "player": {"health": 100, "stamina": 72, "status": ["hungry"], "heldItem": "Fishing Rod"},
        "nearby": [{"kind": "npc", "name": f"NPC {i}", "distance": i} for i in range(5)],
        "relevantItems": [{"name": f"Item {i}", "count": i} for i in range(8)],
    }


async def connect(stack: contextlib.AsyncExitStack, url: str) -> AdapterClient:
    """The mod's connection to the server at ``url`` on :data:`SAVE`, its state sent
    (closed with ``stack``)."""
    client = AdapterClient(
        url,
        token=TOKEN,
        identity=SAVE,
        adapter=AdapterInfo(name="bench", version="0.1.0"),
        capabilities=Capabilities(image=True),
        timezone="Asia/Shanghai",
    )
    await stack.enter_async_context(client)
    await client.update_state(model_context())
    return client


# -- child processes ---------------------------------------------------------------------


FOLD_ANSWER = {
    "requests": ["去钓鱼"],
    "decisions": ["先修温室"],
    "preferences": ["喜欢钓鱼"],
    "open_questions": [],
    "mood": "开心",
}


async def _child_model() -> None:
    from xtyserver.session.fold import FOLD_MARKER
    from xtyserver.testing import FakeModelServer, Reply

    # The session folds its working memory every few rounds (a stateless model call
    # after a reply). A real model answers it; the scripted default answer is no
    # summary, so every later round would ask again. Keep fold answers queued.
    fold = Reply(text=json.dumps(FOLD_ANSWER, ensure_ascii=False), match=FOLD_MARKER)

    async def keep_fold_answers(fake: FakeModelServer) -> None:
        while True:
            if fake.queued < 4:
                fake.enqueue(*[fold] * 8)
            await anyio.sleep(0.05)

    async with FakeModelServer() as fake, anyio.create_task_group() as tg:
        tg.start_soon(keep_fold_answers, fake)
        # The scripted model stands in for a provider on another machine: its own
        # garbage collections (full ones of 25-45 ms were seen here) would count as
        # the server's overhead. Nothing it keeps lives long enough to matter.
        gc.freeze()
        gc.disable()
        print(fake.base_url, flush=True)
        await anyio.to_thread.run_sync(sys.stdin.read)
        tg.cancel_scope.cancel()


async def _child_server(data_dir: str, model_url: str, vectors: bool) -> None:
    from xtyserver import log
    from xtyserver.server import serving

    try:
        from xtyserver.serve.heap import settle_heap
    except ImportError:  # a baseline tree from before it moved there
        from xtyserver.server import settle_heap  # type: ignore[attr-defined,no-redef]

    # Log as ``xtyserver serve`` does (info, JSON lines), to nowhere: the lines are
    # rendered and written, but do not fill the bench's terminal.
    steps_file = os.environ.get("XTY_BENCH_STEPS")
    gc_file = os.environ.get("XTY_BENCH_GC")
    collections: list[tuple[float, int, float]] = []
    if gc_file:  # when each of the server's collections ran (perf_counter is system-wide)
        started: list[float] = [0.0]

        def note(phase: str, info: dict[str, int]) -> None:
            now = time.perf_counter()
            if phase == "start":
                started[0] = now
            else:
                collections.append((started[0], info["generation"], now - started[0]))
                if info["generation"] == 2 and os.environ.get("XTY_BENCH_GC_TYPES"):
                    import collections as _c

                    kinds = _c.Counter(type(o).__name__ for o in gc.get_objects())
                    print("GC2", len(gc.get_objects()), kinds.most_common(12), file=sys.stderr)

        gc.callbacks.append(note)
    if steps_file:
        import steps

        steps.install()
    with open(os.devnull, "w") as devnull:
        log.configure(stream=devnull, json=True)
        settings = _settings(data_dir, model_url, vectors)
        async with (
            serving(settings, token=TOKEN, clock=SystemClock()) as server,
            anyio.create_task_group() as probes,
        ):
            settle_heap()  # as ``xtyserver serve`` does once it listens
            if os.environ.get("XTY_BENCH_STALL"):  # idle_cpu.py: the event loop's stalls
                from idle_cpu import probe_stalls

                probes.start_soon(probe_stalls(os.environ["XTY_BENCH_STALL"]))
            print(f"\n{server.url}", flush=True)
            await anyio.to_thread.run_sync(sys.stdin.read)
            probes.cancel_scope.cancel()
    if gc_file:
        Path(gc_file).write_text(json.dumps(collections))
    if steps_file:
        Path(steps_file).write_text(steps.table(int(os.environ["XTY_BENCH_STEPS_SKIP"])))


def _settings(data_dir: str, model_url: str, vectors: bool = True) -> Any:
    overrides: dict[str, Any] = {
        "data_dir": data_dir,
        "server.port": 0,
        "server.chat_burst": 1_000_000,
        "server.frame_burst": 1_000_000,
        "memory.extraction": False,
        "model.base_url": model_url,
        "model.model": "scripted-vl",
    }
    if not vectors:  # a tree without the setting has no embedder anyway
        overrides["memory.local_embedding"] = False
    return load_settings(None, env={}, overrides=overrides)


def _spawn(
    *args: str,
    tree: Path | None = None,
    env: dict[str, str] | None = None,
    script: str = __file__,
) -> tuple[subprocess.Popen[str], str]:
    """``script`` (this file) with ``args`` in a child; returns once it printed its URL."""
    env = {**os.environ, "PYTHONUTF8": "1", **(env or {})}
    if tree is not None:
        env["XTY_BENCH_TREE"] = str(tree)
    proc = subprocess.Popen(
        [sys.executable, script, *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    for line in proc.stdout:  # log lines may come first
        if line.startswith(("ws://", "http://")):
            # Keep reading its log lines so a full pipe never blocks the child.
            threading.Thread(target=proc.stdout.read, daemon=True).start()
            return proc, line.strip()
    raise SystemExit(f"child {args[1]} did not start")


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _faults(pid: int) -> int:
    """Minor page faults of ``pid`` so far (a page the heap gave back, touched again)."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])


# -- measuring ---------------------------------------------------------------------------


async def _direct_ttft(client: Any, image_url: str | None) -> float:
    """The scripted model's own time to first token, through the server's request path."""
    text = "今天适合去钓鱼吗？"
    content: Any = text
    if image_url is not None:
        content = [
            {"type": "text", "text": text},
            {"type": "image_url", "image_url": {"url": image_url}},
        ]
    body = {
        "model": "scripted-vl",
        "messages": [{"role": "user", "content": content}],
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    t = time.perf_counter()
    # The same request path the server's model client uses.
    stream = await post_chat(client, body)
    first = None
    async for chunk in stream:
        data: Any = chunk.data  # the chunk's JSON, as the server's model client reads it
        if first is None and data["choices"] and data["choices"][0]["delta"].get("content"):
            first = time.perf_counter() - t
    assert first is not None
    return first


async def _turn(
    client: AdapterClient,
    image: Any | None,
    text: str,
    lead: float | None = None,
    sent: list[float] | None = None,
) -> float:
    """``chat.send`` -> first ``chat.delta`` in s (``sent``: gets the send's perf_counter)."""
    if lead is not None:  # the player paused typing: the mod's hint, then Enter
        await client._send(await client._check({"type": "chat.typing", "text": text}))
        await anyio.sleep(lead)
    frame: dict[str, Any] = {
        "type": "chat.send",
        "id": client._next("chat"),
        "text": text,
        "source": "text",
    }
    if image is not None:
        frame["image"] = image
    data = await client._check(frame)  # the adapter's own encode and pre-check: not timed
    reply = ChatReply(frame["id"], client.cancel)
    client._chats[reply.id] = reply
    t = time.perf_counter()
    if sent is not None:
        sent.append(t)
    await client._send(data)
    first = None
    async for _ in reply:
        if first is None:
            first = time.perf_counter() - t
    await reply.result()
    assert first is not None, "no delta"
    return first


def _stats(samples: list[float]) -> tuple[float, float, float, float]:
    """Median, half the interquartile range, p99 (nearest rank) and max, in ms."""
    s = sorted(samples)
    q1, _, q3 = statistics.quantiles(s, n=4)
    p99 = nearest_rank(s, 99)
    return statistics.median(s) * 1e3, (q3 - q1) / 2 * 1e3, p99 * 1e3, s[-1] * 1e3


def _direct_of(kind: str) -> str:
    """The direct model request a turn kind is measured against."""
    return "model" if kind in ("text", "typed") else f"model+{kind}"


async def _bench(
    servers: dict[str, tuple[str, int]],
    model_url: str,
    rounds: int,
    warmup: int,
    only: list[str],
    samples: str = "",
    lead: float = 0.15,
) -> None:
    """Play the rounds; ``servers``: label ("" for the candidate) -> (URL, pid)."""
    jpeg = screenshot_jpeg()
    images = {
        "image": screenshot(jpeg, "image/jpeg"),
        "image720": screenshot(screenshot_jpeg(size=(1280, 720)), "image/jpeg"),
    }
    # Imported here: a baseline server child of an older tree runs this file too.
    from xtyserver.model.tls import provider_client
    from xtyserver.serve.image import ImageLimits, check_and_prepare

    # What the model receives for each screenshot, for the direct baselines.
    urls = {
        f"model+{k}": check_and_prepare("image/jpeg", v.data, ImageLimits()).data_url()
        for k, v in images.items()
    }
    direct = provider_client(model_url, "", timeout=60.0)
    models = ["model", "model+image", "model+image720"]
    turns = [(label, kind) for label in servers for kind in KINDS]
    times: dict[Any, list[float]] = {k: [] for k in [*models, *turns]}
    cpu: dict[Any, list[float]] = {k: [] for k in turns}
    faults: dict[Any, list[int]] = {k: [] for k in turns}
    starts: list[tuple[str, float, float]] = []
    async with contextlib.AsyncExitStack() as stack:
        clients = {}
        for label, (url, _) in servers.items():
            clients[label] = await connect(stack, url)
        # The harness's own full collections (31-81 ms seen here, mid-turn) are not
        # the server's: as timeit does, none runs while a turn is timed; each round
        # starts with one, untimed. The servers keep their own collector as served.
        gc.collect()
        gc.freeze()
        gc.disable()
        for i in range(warmup + rounds):
            gc.collect()
            wanted = {_direct_of(k) for k in only}
            order: list[Any] = [k for k in models if not only or k in wanted or k in only]
            order += [k for k in turns if not only or k[1] in only]
            random.Random(i).shuffle(order)
            for item in order:
                if isinstance(item, str):
                    value = await _direct_ttft(direct, urls.get(item))
                else:
                    label, kind = item
                    pid = servers[label][1]
                    before, faults_before = _cpu_s(pid), _faults(pid)
                    started = time.perf_counter()
                    nth = len(KINDS) * i + KINDS.index(kind)
                    text = QUESTIONS[nth % len(QUESTIONS)]
                    ahead = lead if kind == "typed" else None  # the hint's CPU is the turn's
                    value = await _turn(clients[label], images.get(kind), text, ahead)
                    if i >= warmup:
                        starts.append((f"{kind}{label}", started, value))
                    await anyio.sleep(0.02)  # let the turn's tail (memory touch) finish
                    if i >= warmup:
                        cpu[item].append(_cpu_s(pid) - before)
                        faults[item].append(_faults(pid) - faults_before)
                if i >= warmup:
                    times[item].append(value)
        gc.enable()
    await direct.close()
    if samples:  # every timed value, in round order, for a look at the tail
        raw = {(k if isinstance(k, str) else f"{k[1]}{k[0]}"): v for k, v in times.items()}
        raw |= {f"cpu:{k[1]}{k[0]}": v for k, v in cpu.items()}
        raw["starts"] = starts
        Path(samples).write_text(json.dumps(raw))
    print(
        f"\nimage: 1920x1080 JPEG, {len(jpeg)} bytes (downscaled to fit max_side);"
        f" image720: 1280x720 JPEG (within limits, sent as is minus metadata);"
        f" {rounds} rounds, interleaved"
    )
    print(
        f"{'what':52s} {'p50 ms':>8s} {'±':>6s} {'p99 ms':>8s} {'max ms':>8s}"
        f" {'server CPU ms/turn':>19s}"
        f" {'faults/turn':>12s}"
    )
    for kind in [k for k in models if times[k]]:
        p50, spread, p99, top = _stats(times[kind])
        name = f"scripted model TTFT, direct ({kind})"
        print(f"{name:52s} {p50:8.2f} {spread:6.2f} {p99:8.2f} {top:8.2f}")
    for item in [k for k in turns if times[k]]:
        label, kind = item
        base = _direct_of(kind)
        base_p50 = statistics.median(times[base])
        p50, spread, p99, top = _stats([v - base_p50 for v in times[item]])
        c = statistics.fmean(cpu[item]) * 1e3
        f = statistics.fmean(faults[item])
        name = f"harness overhead, {kind} turn{label}"
        print(f"{name:52s} {p50:8.2f} {spread:6.2f} {p99:8.2f} {top:8.2f} {c:19.1f} {f:12.0f}")
    print("(overhead = turn time - the median direct time of the same request to the model;")
    print(" ± is half the interquartile range; p99 by nearest rank: of 100 rounds the 99th")
    print(" value, max the 100th; server CPU and minor page faults: mean over the run, from /proc;")
    print(f" typed: chat.typing {lead * 1000:.0f} ms before chat.send, its CPU in the turn's)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=200)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--saves", type=int, default=100, help="saves in the store (at least 43)")
    ap.add_argument("--per-save", type=int, default=300, help="memories of each save")
    ap.add_argument("--only", nargs="*", default=[], help="kinds to run (default: all)")
    ap.add_argument(
        "--baseline", action="append", default=[], help="git ref of baseline servers (repeatable)"
    )
    ap.add_argument(
        "--states",
        nargs="+",
        choices=STATES,
        default=list(STATES),
        help="the save with its vectors (the player's steady state), without, or both",
    )
    ap.add_argument(
        "--steps", action="store_true", help="also the CPU of each step to a text turn's delta"
    )
    ap.add_argument("--samples", default="", help="write every timed value to this JSON file")
    ap.add_argument(
        "--lead-ms", type=float, default=150.0, help="typed: chat.typing this long before chat.send"
    )
    ap.add_argument("--child", choices=["model", "server"], help=argparse.SUPPRESS)
    ap.add_argument("--data-dir", help=argparse.SUPPRESS)
    ap.add_argument("--model-url", help=argparse.SUPPRESS)
    ap.add_argument("--no-vectors", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child == "model":
        anyio.run(_child_model)
        return
    if args.child == "server":
        anyio.run(_child_server, args.data_dir, args.model_url, not args.no_vectors)
        return
    with tempfile.TemporaryDirectory(prefix="xty-bench-") as tmp:
        t = time.perf_counter()
        print(f"machine: {machine()}")
        runs = variants(Path(tmp), args.baseline, tuple(args.states), args.saves, args.per_save)
        built = time.perf_counter() - t
        print(f"stores: {args.saves} saves x {args.per_save} memories each, built in {built:.1f} s")
        model, model_url = _spawn("--child", "model")
        children = [model]
        servers: dict[str, tuple[str, int]] = {}
        tables = {run.label: Path(tmp) / f"steps{i}.txt" for i, run in enumerate(runs)}
        try:
            for run in runs:
                label = run.label
                env: dict[str, str] = {}
                if args.steps:
                    env["XTY_BENCH_STEPS"] = str(tables[label])
                    # Every text turn is marked, warm-up ones too: they are left out.
                    env["XTY_BENCH_STEPS_SKIP"] = str(args.warmup)
                if args.samples:
                    env["XTY_BENCH_GC"] = f"{args.samples}.gc{len(servers)}.json"
                server, url = _spawn(
                    "--child",
                    "server",
                    "--data-dir",
                    str(run.data),
                    "--model-url",
                    model_url,
                    *([] if run.vectors else ["--no-vectors"]),
                    tree=run.tree,
                    env=env,
                )
                children.append(server)
                servers[label] = (url, server.pid)
            print(f"before the rounds: {machine()}")
            anyio.run(
                _bench,
                servers,
                model_url,
                args.rounds,
                args.warmup,
                args.only,
                args.samples,
                args.lead_ms / 1000,
            )
            print(f"after the rounds: {machine()}")
        finally:
            for proc in reversed(children):
                assert proc.stdin is not None
                proc.stdin.close()
                proc.wait(timeout=30)
        for label, path in tables.items() if args.steps else ():
            print(f"\nCPU of each step, chat.send -> first chat.delta{label}:")
            print(path.read_text() if path.exists() else "(no table written)", end="")


if __name__ == "__main__":
    main()
