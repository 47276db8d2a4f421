"""Running out of file descriptors: the server pauses accepting, logs it at
most once per second per listener, and serves again once descriptors are free."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.test_main import ROOT, env_for
from tests.conftest import TOKEN

pytestmark = pytest.mark.skipif(os.name != "posix", reason="RLIMIT_NOFILE is POSIX")


def _limit_files() -> None:
    import resource

    resource.setrlimit(resource.RLIMIT_NOFILE, (96, 96))


def test_too_many_open_files_is_logged_at_most_once_a_second_and_survived(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    log = tmp_path / "server.log"
    with log.open("w") as err:
        proc = subprocess.Popen(
            [sys.executable, "-m", "xtyserver", "serve", "--port", "0", "--ui-port", "0"],
            stdout=subprocess.PIPE,
            stderr=err,
            text=True,
            cwd=ROOT,
            env=env_for(data, XTY_TOKEN=TOKEN),
            preexec_fn=_limit_files,
        )
    try:
        assert proc.stdout is not None
        ws_port = int(proc.stdout.readline().strip().rsplit(":", 1)[1].split("/")[0])
        proc.stdout.readline()
        page_port = int(proc.stdout.readline().split(":")[3].split("/")[0])
        held: list[socket.socket] = []
        started = time.monotonic()
        for _ in range(3):  # three seconds of a flood against both listeners
            for port in (ws_port, page_port):
                for _ in range(60):
                    try:
                        held.append(socket.create_connection(("127.0.0.1", port), timeout=1))
                    except OSError:
                        break
            time.sleep(1.0)
        flood_seconds = time.monotonic() - started
        assert proc.poll() is None, "the server died"
        for s in held:
            s.close()
        # Descriptors free again: a mod connects (accepts resume within about a second).
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", page_port), timeout=2) as s:
                    s.sendall(b"GET /ui/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % page_port)
                    assert s.recv(12).startswith(b"HTTP/1.1 200")
                    break
            except (OSError, AssertionError):
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.2)
    finally:
        proc.terminate()
        proc.wait(timeout=15)
    text = log.read_text()
    page_lines = text.count("ui.accept_failed")
    asyncio_lines = text.count("server.accept_failed")

    assert "socket.accept() out of system resource" not in text
    assert page_lines >= 1 and asyncio_lines >= 1, text[-2000:]
    # At most one line per second per listener (+1 for the edges of the window).
    assert page_lines <= flood_seconds + 2, page_lines
    assert asyncio_lines <= flood_seconds + 2, asyncio_lines
