"""Time from a stop (SIGINT) to the end of ``xtyserver serve``, per misbehaving peer.

    python scripts/bench/shutdown.py [--runs 3] [--mono]

Each run starts a real server with the default bounds (``server.close_timeout``
2 s, ``server.stop_timeout`` 5 s), connects one peer of
``tests/cli/test_shutdown.py`` (the peers live there, so the test and the
figures use the same ones), sends SIGINT and measures until the process has
exited; beside it, the server's own ``server.stopped`` figure. With ``--mono``
also the reference C# client (it does not answer a close). Medians of the runs.
"""

from __future__ import annotations

import argparse
import functools
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.cli import test_shutdown as peers
from xtyserver.testing import FakeModelServer, Reply

peers.CLOSE_TIMEOUT, peers.STOP_TIMEOUT = 2.0, 5.0  # the defaults, not the test's short ones


Connect = Callable[[peers.Server, list[socket.socket]], object]


def one_stop(connect: Connect, **env: str) -> tuple[float, float]:
    server = peers.Server(Path(tempfile.mkdtemp()) / "data", **env)
    keep: list[socket.socket] = []
    try:
        connect(server, keep)
        start = time.monotonic()
        code = server.stop(signal.SIGINT)
        took = time.monotonic() - start
        assert code == 0, server.log()[-2000:]
        return took, peers.stopped_seconds(server.log())
    finally:
        for sock in keep:
            sock.close()
        server.kill()


def row(name: str, figures: list[tuple[float, float]]) -> None:
    exits = [f[0] for f in figures]
    own = statistics.median(f[1] for f in figures)
    print(
        f"{name:40s} exit median {statistics.median(exits):5.2f} s (max {max(exits):5.2f})"
        f"   server.stopped median {own:5.2f} s",
        flush=True,
    )


def model_in_flight(runs: int) -> list[tuple[float, float]]:
    def chat_with(fake: FakeModelServer) -> Connect:
        asked = len(fake.chat_requests)

        def chat(server: peers.Server, keep: list[socket.socket]) -> None:
            sock = peers.raw(server.port)
            keep.append(sock)
            peers.upgrade(sock, server.port, token=True)
            peers.hello_and_beat(sock)
            frame = {"type": "chat.send", "id": "c1", "text": "去钓鱼吗", "source": "text"}
            sock.sendall(peers.ws_frame(frame))
            while len(fake.chat_requests) == asked:  # the request is at the model
                time.sleep(0.02)

        return chat

    async def measure() -> list[tuple[float, float]]:
        out = []
        async with FakeModelServer() as fake:
            env = {"XTY_MODEL_BASE_URL": fake.base_url, "XTY_MODEL": "fake"}
            for _ in range(runs):
                fake.enqueue(Reply(text="-", first_delay=1e6, match="钓鱼"))
                stop = functools.partial(one_stop, chat_with(fake), **env)
                out.append(await anyio.to_thread.run_sync(stop))
        return out

    return anyio.run(measure)


def csharp(runs: int) -> list[tuple[float, float]]:
    folder = Path(tempfile.mkdtemp())
    source, exe = folder / "Stay.cs", folder / "Stay.exe"
    source.write_text(peers.STAY, encoding="utf-8")
    sources = sorted(str(p) for p in (peers.ROOT / "adapters" / "csharp" / "src").glob("*.cs"))
    subprocess.run(["mcs", "-r:System.Core.dll", f"-out:{exe}", *sources, str(source)], check=True)
    clients: list[subprocess.Popen[str]] = []

    def connect(server: peers.Server, keep: list[socket.socket]) -> None:
        client = subprocess.Popen(
            ["mono", str(exe), f"ws://127.0.0.1:{server.port}/v1", peers.TOKEN],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        clients.append(client)
        assert client.stdout is not None and client.stdout.readline().strip() == "connected"

    try:
        return [one_stop(connect) for _ in range(runs)]
    finally:
        for client in clients:
            client.kill()
            client.communicate()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--mono", action="store_true", help="also the reference C# client")
    args = parser.parse_args()
    row("no peer", [one_stop(lambda server, keep: None) for _ in range(args.runs)])
    for name, peer in peers.PEERS.items():
        row(name, [one_stop(peer) for _ in range(args.runs)])
    row("model-request-in-flight", model_in_flight(args.runs))
    if args.mono:
        row("csharp-reference-client", csharp(args.runs))


if __name__ == "__main__":
    main()
