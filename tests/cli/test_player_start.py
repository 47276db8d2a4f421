"""The player's ``xtyserver`` when its folder or its port cannot be had, and ``--port``.

Real ``python -m xtyserver`` processes with a Chinese console (a GBK pipe): a
data folder that is a file, or lies under one, is one line in Chinese and one in
English naming it, exit 1, no traceback; a port another program holds (a plain
listening socket here, no xtyserver anywhere) is one Chinese line that says so
without guessing who holds it, and names ``xtyserver --port``; ``xtyserver
--port N`` then starts on N with the player's console and hands the page to
the browser (``BROWSER``: a program that notes what it was handed).
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.cli.test_main import ROOT, TOKEN, env_for
from tests.cli.test_windows import Serve

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")


def start(
    data: Path, *args: str, timeout: float = 60, **env: str
) -> subprocess.CompletedProcess[str]:
    """``xtyserver ARGS`` as a player types it, to its end."""
    return subprocess.run(
        [sys.executable, "-m", "xtyserver", *args],
        capture_output=True,
        encoding="gbk",
        timeout=timeout,
        cwd=ROOT,
        env=env_for(data, XTY_TOKEN=TOKEN, XTY_LANG="zh", XTY_NO_BROWSER="1", **env),
    )


@contextmanager
def held_port() -> Iterator[int]:
    """A port another program listens on (not an xtyserver)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen()
    try:
        yield int(sock.getsockname()[1])
    finally:
        sock.close()


@contextmanager
def held_page_port() -> Iterator[int]:
    """A free port whose next one (the page's) another program listens on."""
    for _ in range(50):
        with held_port() as page:
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", page - 1))
                except OSError:
                    continue
            yield page - 1
            return
    raise AssertionError("no free port below a held one")


def free_pair() -> int:
    """A port whose next one is free too (the page's)."""
    for _ in range(50):
        with socket.socket() as a:
            a.bind(("127.0.0.1", 0))
            port = int(a.getsockname()[1])
        with socket.socket() as a, socket.socket() as b:
            try:
                a.bind(("127.0.0.1", port))
                b.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        return port
    raise AssertionError("no two free ports in a row")


@pytest.mark.parametrize("under", [False, True])
def test_a_data_folder_that_cannot_be_used_is_one_line_in_chinese_and_english(
    tmp_path: Path, under: bool
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file", encoding="utf-8")
    folder = blocker / "XiaoTangYuan" if under else blocker
    for args in (["--data-dir", str(folder)], ["stats", "--data-dir", str(folder)]):
        done = start(tmp_path / "unused", *args)
        assert done.returncode == 1, done
        said = done.stdout + done.stderr
        assert "Traceback" not in said and "Error" not in said, said
        lines = said.strip().splitlines()
        assert len(lines) == 2, lines
        assert lines[0].startswith(f"小汤圆用不了它的数据文件夹 {folder}："), lines[0]
        assert "是一个文件，不是文件夹" in lines[0] and "--data-dir" in lines[0]
        assert lines[1].startswith(f"XiaoTangYuan cannot use its data folder {folder}:")
    assert blocker.read_text(encoding="utf-8") == "a file"  # nothing touched


def test_a_port_held_by_another_program_says_so_and_names_xtyserver_port(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with held_port() as port:
        done = start(data, "--port", str(port))
        assert done.returncode == 1
        said = done.stdout + done.stderr
        assert "Traceback" not in said
        line = done.stdout.strip()
        assert line.startswith(f"端口 {port} 已经被这台电脑上的另一个程序占用了"), said
        assert re.search(r"xtyserver --port \d+", line) and "Port" in line, line
        assert "already running" not in said and "已经在运行" not in said
        assert "xtyserver serve" not in line  # the player's command, not the developer console
    with held_page_port() as port:  # the page's port (port + 1) held: said as the page's
        done = start(data, "--port", str(port))
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        assert done.stdout.startswith(f"记忆页要用的端口 {port + 1} 已经被"), done.stdout
    assert not (data / "server.json").exists()


def test_xtyserver_port_starts_the_player_console_there_and_opens_the_page(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    handed = tmp_path / "handed.txt"
    program = tmp_path / "browser"
    program.write_text(f"#!/bin/sh\necho \"$1\" >> '{handed}'\n", encoding="utf-8")
    program.chmod(0o755)
    port = free_pair()
    server = Serve(data, "--port", str(port), BROWSER=str(program))
    try:
        assert server.port == port and server.lines[0].startswith("小汤圆已启动")
        assert server.link.startswith(f"http://127.0.0.1:{port + 1}/ui/"), server.link
        assert server.proc.stdout is not None
        assert server.proc.stdout.readline().strip() == "已在浏览器中打开记忆页。"
        assert handed.read_text(encoding="utf-8").strip().endswith("open-page.html")
        running = json.loads((data / "server.json").read_text(encoding="utf-8"))
        assert (running["port"], running["uiPort"]) == (port, port + 1)
    finally:
        out = server.stop()  # Ctrl+C; exit 0
    assert "小汤圆已停止。" in out and "{" not in out  # no JSON log lines on the console
