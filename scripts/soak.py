#!/usr/bin/env python3
"""Soak test: 8 adapters against a real server process and the scripted model.

Each adapter sends a state update every second, a heartbeat every few seconds,
a ``stats.get`` probe every second (its round trip is the frame-handling
latency we can observe from outside) and a chat every 20 s. Each adapter's
first probe waits behind the store's work for eight new connections at once
(their play sessions, on one writer): it is counted apart
(``first_probe_max_ms``), not as frame handling. At the end it
prints the figures and exits non-zero when a target is missed:

* p99 probe round trip under 50 ms,
* no missed heartbeat (no 4003 close; every heartbeat sent on time),
* no error frames for valid traffic,
* server RSS drift under 50 MB (after a warm-up).

Usage: ``python scripts/soak.py [--seconds 600] [--adapters 8]``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
from websockets.asyncio.client import ClientConnection, connect

TOKEN = "soak-token-6mQ2tV8zK4xN1pR7wB3cH9jF5dL0sGaE"


@dataclass
class Figures:
    probes_ms: list[float] = field(default_factory=list)
    first_probes_ms: list[float] = field(default_factory=list)
    first_delta_ms: list[float] = field(default_factory=list)
    chats: int = 0
    chat_failures: int = 0
    errors: list[str] = field(default_factory=list)
    frames_sent: int = 0
    heartbeats: int = 0
    late_heartbeats: int = 0
    closes: list[int] = field(default_factory=list)
    rss_start_mb: float = 0.0
    rss_end_mb: float = 0.0

    def p(self, values: list[float], q: float) -> float:
        if not values:
            return 0.0
        ordered = sorted(values)
        return ordered[min(len(ordered) - 1, int(q * len(ordered)))]

    def report(self) -> dict[str, Any]:
        return {
            "frames_sent": self.frames_sent,
            "probe_p50_ms": round(self.p(self.probes_ms, 0.50), 2),
            "probe_p99_ms": round(self.p(self.probes_ms, 0.99), 2),
            "probe_max_ms": round(max(self.probes_ms, default=0.0), 2),
            "first_probe_max_ms": round(max(self.first_probes_ms, default=0.0), 2),
            "chats": self.chats,
            "chat_failures": self.chat_failures,
            "first_delta_p50_ms": round(statistics.median(self.first_delta_ms), 1)
            if self.first_delta_ms
            else None,
            "heartbeats": self.heartbeats,
            "late_heartbeats": self.late_heartbeats,
            "error_frames": len(self.errors),
            "closes": self.closes,
            "rss_start_mb": round(self.rss_start_mb, 1),
            "rss_end_mb": round(self.rss_end_mb, 1),
            "rss_drift_mb": round(self.rss_end_mb - self.rss_start_mb, 1),
        }

    def failures(self) -> list[str]:
        out = []
        if self.p(self.probes_ms, 0.99) >= 50:
            out.append("p99 frame handling >= 50 ms")
        if self.late_heartbeats or 4003 in self.closes:
            out.append("missed heartbeats")
        if self.errors:
            out.append(f"error frames for valid traffic: {self.errors[:3]}")
        if self.chat_failures:
            out.append(f"{self.chat_failures} chats failed")
        if self.rss_end_mb - self.rss_start_mb >= 50:
            out.append("RSS drift >= 50 MB")
        return out


def rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def _start(args: list[str], env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "xtyserver", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    if not line.startswith("listening "):
        proc.kill()
        raise RuntimeError(f"did not start: {line!r}")
    return proc, line.split(" ", 1)[1]


def _context(day: int) -> dict[str, Any]:
    return {
        "schemaVersion": 1,
        "capturedAt": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "world": {"location": "Farm", "time": "08:10", "season": "spring", "day": day},
        "player": {"health": 100, "stamina": 80, "heldItem": "Hoe"},
        "nearby": [{"kind": "npc", "name": "Abigail", "distance": 3}],
    }


async def adapter(n: int, url: str, seconds: float, figures: Figures) -> None:
    async with connect(url, max_size=None) as ws:
        await ws.send(
            json.dumps(
                {
                    "type": "adapter.hello",
                    "protocol": "v1",
                    "adapter": {"name": "soak", "version": "1"},
                    "identity": {"gameId": "stardew-valley", "saveId": f"soak-{n}"},
                    "token": TOKEN,
                    "timezone": "UTC",
                }
            )
        )
        hello = json.loads(await ws.recv())
        assert hello["type"] == "server.hello", hello
        interval = hello["heartbeatMs"] / 1000
        waiting: dict[str, float] = {}
        chat_started: dict[str, float] = {}
        async with anyio.create_task_group() as tg:
            tg.start_soon(_reader, ws, waiting, chat_started, figures)
            start = time.monotonic()
            next_beat = start
            next_chat = start + 2 + n  # stagger the chats
            tick = 0
            while time.monotonic() - start < seconds:
                now = time.monotonic()
                if now >= next_beat:
                    if now - next_beat > interval:
                        figures.late_heartbeats += 1
                    await _send(ws, {"type": "heartbeat"}, figures)
                    figures.heartbeats += 1
                    next_beat += interval
                await _send(ws, {"type": "state.update", "modelContext": _context(tick)}, figures)
                probe = f"p{n}-{tick}"
                waiting[probe] = time.monotonic()
                await _send(ws, {"type": "stats.get", "id": probe}, figures)
                if now >= next_chat and not chat_started:
                    chat_id = f"c{n}-{tick}"
                    chat_started[chat_id] = time.monotonic()
                    figures.chats += 1
                    await _send(
                        ws,
                        {
                            "type": "chat.send",
                            "id": chat_id,
                            "text": "今天做什么好？",
                            "source": "text",
                        },
                        figures,
                    )
                    next_chat += 20
                tick += 1
                await anyio.sleep(max(0.0, start + tick - time.monotonic()))
            with anyio.move_on_after(10):
                while chat_started:
                    await anyio.sleep(0.05)
            tg.cancel_scope.cancel()


async def _send(ws: ClientConnection, frame: dict[str, Any], figures: Figures) -> None:
    await ws.send(json.dumps(frame, ensure_ascii=False))
    figures.frames_sent += 1


async def _reader(
    ws: ClientConnection,
    waiting: dict[str, float],
    chat_started: dict[str, float],
    figures: Figures,
) -> None:
    try:
        async for raw in ws:
            frame = json.loads(raw)
            kind = frame["type"]
            fid = frame.get("id")
            if kind == "stats.result" and fid in waiting:
                took = (time.monotonic() - waiting.pop(fid)) * 1000
                first = fid.endswith("-0")  # behind the new connections' store work
                (figures.first_probes_ms if first else figures.probes_ms).append(took)
            elif kind == "chat.delta" and fid in chat_started:
                started = chat_started[fid]
                if started > 0:
                    figures.first_delta_ms.append((time.monotonic() - started) * 1000)
                    chat_started[fid] = -1.0
            elif kind == "chat.done":
                chat_started.pop(fid, None)
            elif kind == "chat.error":
                figures.chat_failures += 1
                chat_started.pop(fid, None)
            elif kind == "error":
                figures.errors.append(f"{frame['code']}: {frame['message']}")
    except Exception:
        code = ws.close_code
        if code is not None:
            figures.closes.append(code)


async def run_soak(seconds: float = 600.0, adapters: int = 8) -> Figures:
    """Run the soak and return its figures."""
    figures = Figures()
    with tempfile.TemporaryDirectory(prefix="xty-soak-") as tmp:
        env = {**os.environ, "XTY_TOKEN": TOKEN, "XTY_DATA_DIR": tmp}
        model, model_url = _start(["fake-model", "--port", "0"], env)
        env["XTY_MODEL_BASE_URL"] = model_url.replace("listening ", "")
        if not env["XTY_MODEL_BASE_URL"].endswith("/v1"):
            env["XTY_MODEL_BASE_URL"] += "/v1"
        env["XTY_MODEL"] = "scripted"
        server, url = _start(["serve", "--port", "0", "--log-json"], env)
        try:
            await anyio.sleep(0.5)
            warm = min(5.0, seconds / 6)
            async with anyio.create_task_group() as tg:
                for n in range(adapters):
                    tg.start_soon(adapter, n, url, seconds, figures)
                await anyio.sleep(warm)
                figures.rss_start_mb = rss_mb(server.pid)
            figures.rss_end_mb = rss_mb(server.pid)
        finally:
            for proc in (server, model):
                proc.terminate()
                try:
                    proc.wait(10)
                except subprocess.TimeoutExpired:
                    proc.kill()
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--adapters", type=int, default=8)
    args = parser.parse_args()
    figures = anyio.run(run_soak, args.seconds, args.adapters)
    print(json.dumps(figures.report(), indent=2))
    failures = figures.failures()
    for failure in failures:
        print(f"FAIL: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
