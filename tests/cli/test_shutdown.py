"""A stop ends ``xtyserver serve`` within its bound, whatever the peers do (docs/install.md).

Each peer misbehaves over a real socket against a real ``python -m xtyserver
serve`` process: a WebSocket peer that never reads and never answers the close,
one that completed the upgrade and never spoke, a TCP connection that never
sent a byte, a request head that never ends, an HTTP long-poll and a body that
never ends, a model request in flight, and the reference C# client (Mono). Then
SIGINT or SIGTERM: the process exits 0 (the graceful path, not the backstop's
exit 1) within ``server.stop_timeout`` and the backstop, ``server.lock`` and
``server.json`` are released, a second start works at once, and the play
session ends at its last heartbeat.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.cli.test_main import ROOT, TOKEN, env_for, hello_frame
from tests.cli.test_windows import sessions
from xtyserver.cli.shutdown import BACKSTOP_S
from xtyserver.serve.instance import LOCK_FILE, InstanceLock
from xtyserver.testing import FakeModelServer, Reply

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")

CLOSE_TIMEOUT = 1.0
STOP_TIMEOUT = 3.0
# How long the test waits for the exit: the bound, the backstop after it, and room
# for a loaded machine. The exit code tells the graceful path from the backstop's.
EXIT_WAIT = STOP_TIMEOUT + BACKSTOP_S + 20


class Server:
    """``python -m xtyserver serve --port 0`` with short stop bounds, on ``data``."""

    def __init__(self, data: Path, **env: str) -> None:
        data.mkdir(parents=True, exist_ok=True)
        config = data.parent / "stop.toml"
        config.write_text(
            f"[server]\nclose_timeout = {CLOSE_TIMEOUT}\nstop_timeout = {STOP_TIMEOUT}\n",
            encoding="utf-8",
        )
        self.data = data
        self.log_path = data.parent / f"serve-{time.monotonic_ns()}.log"
        self._log = self.log_path.open("w", encoding="utf-8")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xtyserver", "serve", "--port", "0", "--config", str(config)],
            stdout=subprocess.PIPE,
            stderr=self._log,
            encoding="gbk",
            cwd=ROOT,
            env=env_for(data, XTY_TOKEN=TOKEN, **env),
        )
        assert self.proc.stdout is not None
        first = self.proc.stdout.readline().strip()
        assert first.startswith("listening ws://127.0.0.1:"), (first, self.log())
        self.port = int(first.rsplit(":", 1)[1].split("/")[0])

    def log(self) -> str:
        return self.log_path.read_text(encoding="utf-8", errors="replace")

    def stop(self, sig: int) -> int:
        """Send ``sig``; the exit code once the process ended (within EXIT_WAIT)."""
        self.proc.send_signal(sig)
        try:
            self.proc.communicate(timeout=EXIT_WAIT)
        except subprocess.TimeoutExpired:
            self.kill()
            pytest.fail(f"still running {EXIT_WAIT} s after the stop:\n{self.log()[-3000:]}")
        self._log.close()
        return self.proc.returncode

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        self._log.close()


@contextmanager
def running(data: Path, **env: str) -> Iterator[Server]:
    server = Server(data, **env)
    try:
        yield server
    finally:
        server.kill()


def stopped_seconds(log: str) -> float:
    """The server's own figure for its stop (its ``server.stopped`` line)."""
    for line in log.splitlines():
        if '"server.stopped"' in line:
            return float(json.loads(line)["seconds"])
    raise AssertionError(f"no server.stopped line:\n{log[-3000:]}")


def assert_released(data: Path, *, start_again: bool) -> None:
    """No server.json and the lock free; with ``start_again``, a second start listens at once."""
    assert not (data / "server.json").exists()
    lock = InstanceLock(data)
    assert lock.acquire(), f"{LOCK_FILE} still held"
    lock.release()
    if start_again:
        with running(data) as again:
            assert (data / "server.json").exists()
            assert again.stop(signal.SIGTERM) == 0


# --- the misbehaving peers, over raw sockets -----------------------------------------------


def raw(port: int, *, rcvbuf: int | None = None) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if rcvbuf is not None:  # before connect: the window the server sees stays small
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    sock.connect(("127.0.0.1", port))
    sock.settimeout(10)
    return sock


def upgrade(sock: socket.socket, port: int, *, token: bool) -> None:
    key = base64.b64encode(os.urandom(16)).decode()
    head = (
        f"GET /v1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
        f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
    )
    if token:
        head += f"Authorization: Bearer {TOKEN}\r\n"
    sock.sendall((head + "\r\n").encode())
    answer = b""
    while b"\r\n\r\n" not in answer:
        answer += sock.recv(4096)
    assert answer.startswith(b"HTTP/1.1 101"), answer


def ws_frame(value: dict[str, Any]) -> bytes:
    """One masked text frame, as a client sends it."""
    data = json.dumps(value, ensure_ascii=False).encode()
    mask = os.urandom(4)
    n = len(data)
    length = bytes([0x80 | n]) if n < 126 else bytes([0x80 | 126]) + n.to_bytes(2, "big")
    return b"\x81" + length + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data))


def ws_read_json(sock: socket.socket) -> dict[str, Any]:
    """One unmasked text frame from the server (small frames only)."""

    def exactly(n: int) -> bytes:
        out = b""
        while len(out) < n:
            chunk = sock.recv(n - len(out))
            assert chunk, "connection closed"
            out += chunk
        return out

    first, second = exactly(2)
    n = second & 0x7F
    if n == 126:
        n = int.from_bytes(exactly(2), "big")
    elif n == 127:
        n = int.from_bytes(exactly(8), "big")
    value = json.loads(exactly(n))
    assert first == 0x81 and isinstance(value, dict), value
    return value


def hello_and_beat(sock: socket.socket) -> float:
    """The hello, then a heartbeat stored (its stats.get answered): the time of that beat."""
    sock.sendall(ws_frame(hello_frame()))
    assert ws_read_json(sock)["type"] == "server.hello"
    beat = time.time()
    sock.sendall(ws_frame({"type": "heartbeat"}) + ws_frame({"type": "stats.get", "id": "s"}))
    assert ws_read_json(sock)["type"] == "stats.result"
    return beat


def http_call(port: int, body: dict[str, Any]) -> socket.socket:
    data = json.dumps(body).encode()
    sock = raw(port)
    sock.sendall(
        f"POST /v1/http HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode()
        + data
    )
    return sock


def http_answer(sock: socket.socket) -> dict[str, Any]:
    answer = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            break
        answer += chunk
    value = json.loads(answer.split(b"\r\n\r\n", 1)[1])
    assert isinstance(value, dict)
    return value


Peer = Callable[[Server, list[socket.socket]], float | None]
"""Connects one misbehaving peer; returns the time of its last stored heartbeat, if any."""


def never_reads_never_closes(server: Server, keep: list[socket.socket]) -> float | None:
    sock = raw(server.port, rcvbuf=4096)
    keep.append(sock)
    upgrade(sock, server.port, token=True)
    beat = hello_and_beat(sock)
    # Requests whose answers it never reads: the server's writes back up.
    sock.settimeout(0.2)
    for n in range(2000):
        try:
            sock.sendall(ws_frame({"type": "stats.get", "id": f"f{n}"}))
        except TimeoutError:
            break
    return beat


def upgraded_then_silent(server: Server, keep: list[socket.socket]) -> float | None:
    sock = raw(server.port)
    keep.append(sock)
    upgrade(sock, server.port, token=True)
    return None


def upgraded_without_token_then_silent(server: Server, keep: list[socket.socket]) -> float | None:
    sock = raw(server.port)
    keep.append(sock)
    upgrade(sock, server.port, token=False)
    return None


def tcp_never_speaks(server: Server, keep: list[socket.socket]) -> float | None:
    keep.append(raw(server.port))
    return None


def head_never_ends(server: Server, keep: list[socket.socket]) -> float | None:
    sock = raw(server.port)
    keep.append(sock)
    sock.sendall(f"GET /v1 HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n".encode())
    return None


def http_long_poll(server: Server, keep: list[socket.socket]) -> float | None:
    hello = http_answer(http_call(server.port, {"session": None, "frames": [hello_frame()]}))
    assert hello["frames"][0]["type"] == "server.hello", hello
    beat = time.time()
    frames = [{"type": "heartbeat"}, {"type": "stats.get", "id": "s"}]
    answer = http_answer(http_call(server.port, {"session": hello["session"], "frames": frames}))
    if not answer["frames"]:  # the answer may come with the next call
        answer = http_answer(
            http_call(server.port, {"session": hello["session"], "frames": [], "waitMs": 5000})
        )
    assert answer["frames"][0]["type"] == "stats.result", answer
    keep.append(http_call(server.port, {"session": hello["session"], "waitMs": 25000}))
    return beat


def http_body_never_ends(server: Server, keep: list[socket.socket]) -> float | None:
    sock = raw(server.port)
    keep.append(sock)
    sock.sendall(
        f"POST /v1/http HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\n"
        "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n".encode()
        + b'{"session": null, '
    )
    return None


PEERS: dict[str, Peer] = {
    "ws-never-reads-never-closes": never_reads_never_closes,
    "ws-upgraded-never-spoke": upgraded_then_silent,
    "ws-upgraded-without-token-never-spoke": upgraded_without_token_then_silent,
    "tcp-half-open": tcp_never_speaks,
    "http-head-never-ends": head_never_ends,
    "http-long-poll": http_long_poll,
    "http-body-never-ends": http_body_never_ends,
}


def check_stop(
    server: Server, sig: int, last_beat: float | None, *, start_again: bool = False
) -> None:
    code = server.stop(sig)
    log = server.log()
    assert code == 0, log[-3000:]  # the graceful path: the backstop exits 1
    assert stopped_seconds(log) <= STOP_TIMEOUT, log[-3000:]
    played = sessions(server.data)
    for one in played:  # every play session ended, at its last heartbeat
        assert one.ended_at is not None
        assert one.ended_at == one.last_heartbeat_at
    if last_beat is not None:
        [one] = played
        assert last_beat - 1 < one.ended_at < last_beat + 1  # not the stop's time
    assert_released(server.data, start_again=start_again)


@pytest.mark.parametrize("peer", list(PEERS), ids=list(PEERS))
def test_sigint_stops_the_server_within_its_bound_whatever_the_peer_does(
    tmp_path: Path, peer: str
) -> None:
    keep: list[socket.socket] = []
    with running(tmp_path / "data") as server:
        try:
            last_beat = PEERS[peer](server, keep)
            check_stop(server, signal.SIGINT, last_beat)
        finally:
            for sock in keep:
                sock.close()


def test_sigterm_stops_the_server_with_every_misbehaving_peer_at_once(tmp_path: Path) -> None:
    keep: list[socket.socket] = []
    with running(tmp_path / "data") as server:
        try:
            for peer in PEERS.values():
                if peer is not never_reads_never_closes and peer is not http_long_poll:
                    peer(server, keep)
            last_beat = never_reads_never_closes(server, keep)
            check_stop(server, signal.SIGTERM, last_beat, start_again=True)
        finally:
            for sock in keep:
                sock.close()


@pytest.mark.anyio
async def test_sigint_during_a_model_request_that_never_answers(tmp_path: Path) -> None:
    async with FakeModelServer() as fake:
        fake.enqueue(Reply(text="不会来的回答", first_delay=1e6, match="钓鱼"))
        data = tmp_path / "data"
        server = Server(data, XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake")
        keep: list[socket.socket] = []
        try:

            def connect_and_chat() -> float:
                sock = raw(server.port)
                keep.append(sock)
                upgrade(sock, server.port, token=True)
                beat = hello_and_beat(sock)
                chat = {"type": "chat.send", "id": "c1", "text": "去钓鱼吗", "source": "text"}
                sock.sendall(ws_frame(chat))
                return beat

            last_beat = await anyio.to_thread.run_sync(connect_and_chat)
            with anyio.fail_after(30):
                while not fake.chat_requests:
                    await anyio.sleep(0.05)
            await anyio.to_thread.run_sync(check_stop, server, signal.SIGINT, last_beat)
        finally:
            for sock in keep:
                sock.close()
            server.kill()


# --- the reference C# client, which does not answer a close --------------------------------

STAY = """
using System;
using System.Threading;
using XiaoTangYuan.Adapter;
public static class Stay
{
    public static int Main(string[] args)
    {
        var identity = new JsonObject().Add("gameId", "stardew-valley").Add("saveId", "farm-a");
        var client = new XtyClient(
            new Uri(args[0]), args[1], identity, "stay", "0", "Asia/Shanghai");
        client.Reconnect = false;
        client.ConnectAsync().GetAwaiter().GetResult();
        Console.WriteLine("connected");
        Thread.Sleep(Timeout.Infinite);
        return 0;
    }
}
"""


@pytest.mark.skipif(
    shutil.which("mcs") is None or shutil.which("mono") is None, reason="needs Mono (mcs, mono)"
)
def test_sigint_with_the_reference_csharp_client_connected(tmp_path: Path) -> None:
    source = tmp_path / "Stay.cs"
    source.write_text(STAY, encoding="utf-8")
    exe = tmp_path / "Stay.exe"
    sources = sorted(str(p) for p in (ROOT / "adapters" / "csharp" / "src").glob("*.cs"))
    built = subprocess.run(
        ["mcs", "-r:System.Core.dll", f"-out:{exe}", *sources, str(source)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout + built.stderr
    with running(tmp_path / "data") as server:
        client = subprocess.Popen(
            ["mono", str(exe), f"ws://127.0.0.1:{server.port}/v1", TOKEN],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        try:
            assert client.stdout is not None
            assert client.stdout.readline().strip() == "connected"
            check_stop(server, signal.SIGINT, None, start_again=True)
        finally:
            client.kill()
            client.communicate()
