"""Issue 19 §1-2 as a player (or a mod) meets them: real ``python -m xtyserver`` processes.

One server per data folder (a second ``serve`` leaves the first and its live
mod alone), a busy port in one line, both loopback addresses, ``server.json``,
Ctrl+C ending sessions at their last heartbeat, a GBK console with an emoji
save name, ``xtyserver`` alone opening the page once, and ``autostart``. The
data folders' paths hold Chinese characters and spaces (tests/cli/conftest.py).
"""

from __future__ import annotations

import json
import re
import shlex
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.cli.test_main import ROOT, TOKEN, env_for, hello_frame, seed, xty
from xtyserver.clock import ManualClock
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import Scope

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and modes")


def has_ipv6_loopback() -> bool:
    try:
        with socket.socket(socket.AF_INET6) as s:
            s.bind(("::1", 0))
    except OSError:
        return False
    return True


class Serve:
    """``python -m xtyserver [serve ARGS]`` on a data folder; the first lines it prints."""

    def __init__(self, data: Path, *args: str, **env: str) -> None:
        self.data = data
        self.log = (data.parent / f"serve-{time.monotonic_ns()}.log").open("w", encoding="gbk")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xtyserver", *args],
            stdout=subprocess.PIPE,
            stderr=self.log,
            encoding="gbk",
            cwd=ROOT,
            env=env_for(data, **{"XTY_TOKEN": TOKEN, "XTY_LANG": "zh", **env}),
        )
        assert self.proc.stdout is not None
        if args and args[0] == "serve":  # the lines tools read: listening, token, memory page
            self.lines = [self.proc.stdout.readline().strip() for _ in range(3)]
            assert self.lines[0].startswith("listening ws://127.0.0.1:"), self.lines
            self.url = self.lines[0].removeprefix("listening ")
            self.link = self.lines[2].removeprefix("memory page: ")
        else:  # ``xtyserver`` alone: the player's console, in its language
            self.lines = [self.proc.stdout.readline().strip() for _ in range(2)]
            assert self.lines[0].startswith("小汤圆已启动"), self.lines
            self.url = re.search(r"ws://[^\s）]+", self.lines[0]).group()  # type: ignore[union-attr]
            assert self.lines[1].startswith("记忆页："), self.lines
            self.link = self.lines[1].removeprefix("记忆页：")
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])
        self.ui_port = int(self.link.split("/ui/", 1)[0].rsplit(":", 1)[1])

    def stop(self, sig: int | None = signal.SIGINT) -> str:
        """Send ``sig``; return the rest of stdout once the process ended (exit code checked).

        ``sig`` None: the test has signalled already; only wait (a second Ctrl+C
        while the first one's shutdown runs is a forced exit, 130).
        """
        if sig is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
        rest, _ = self.proc.communicate(timeout=20)
        self.log.close()
        assert self.proc.returncode == 0, self.proc.returncode
        return rest

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()
        self.log.close()


@contextmanager
def serving(data: Path, *args: str, **env: str) -> Iterator[Serve]:
    """The server, stopped with Ctrl+C (SIGINT) at the end, which must exit 0."""
    server = Serve(data, "serve", "--port", "0", *args, **env)
    try:
        yield server
    except BaseException:
        server.kill()
        raise
    if server.proc.poll() is None or not server.log.closed:
        server.stop()


def hello(ws: ClientConnection, save: str = "farm-a", **extra: Any) -> dict[str, Any]:
    ws.send(json.dumps(hello_frame("stardew-valley", save, **extra), ensure_ascii=False))
    answer = json.loads(ws.recv(timeout=10))
    assert answer["type"] == "server.hello", answer
    return answer


def beat_and_ask(ws: ClientConnection, n: int) -> dict[str, Any]:
    """A heartbeat, then stats.get: its answer means the heartbeat was stored."""
    ws.send(json.dumps({"type": "heartbeat"}))
    ws.send(json.dumps({"type": "stats.get", "id": f"s{n}"}))
    answer = json.loads(ws.recv(timeout=10))
    assert answer["type"] == "stats.result", answer
    return answer


def sessions(data: Path) -> list[Any]:
    with MemoryStore.open_profile(data, "default", clock=ManualClock(0)) as store:
        return list(store.export().sessions)


def second_serve(data: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "xtyserver", "serve", *args],
        capture_output=True,
        encoding="gbk",
        timeout=30,
        cwd=ROOT,
        env=env_for(data, XTY_TOKEN=TOKEN),
    )


# --- one server per data folder; a busy port -----------------------------------------------


@pytest.mark.parametrize("same_port", [True, False], ids=["same-port", "port-0"])
def test_a_second_serve_on_the_same_data_folder_leaves_the_running_one_and_its_mod_alone(
    tmp_path: Path, same_port: bool
) -> None:
    data = tmp_path / "data"
    with serving(data) as first, connect(first.url, max_size=None) as ws:
        hello(ws)
        beat_and_ask(ws, 0)
        before = sessions(data)
        assert [s.ended_at for s in before] == [None]  # the live play session is open

        done = second_serve(data, "--port", str(first.port) if same_port else "0")
        assert done.returncode == 1, (done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1, done.stderr
        assert lines[0] == (
            f"xtyserver is already running on this data folder (pid {first.proc.pid},"
            f" {first.url}): the memory page of the running one:"
            f" http://127.0.0.1:{first.ui_port}/ui/ (`xtyserver ui` opens it)"
        )
        assert "Traceback" not in done.stderr and done.stdout == ""

        # Nothing was touched: the session is still open, the mod still plays.
        assert sessions(data) == before
        for n in range(1, 4):
            beat_and_ask(ws, n)
        assert first.proc.poll() is None
        assert json.loads((data / "server.json").read_text())["pid"] == first.proc.pid


def test_a_busy_port_prints_one_line_and_exits_1(tmp_path: Path) -> None:
    with serving(tmp_path / "a") as first:
        other = tmp_path / "b"
        done = second_serve(other, "--port", str(first.port), "--ui-port", str(first.ui_port))
        assert done.returncode == 1
        assert done.stderr.splitlines() == [
            f"port {first.port} is in use by another program (no xtyserver on this data"
            " folder holds it): choose another port with --port"
        ]
        assert not (other / "profiles").exists()  # no store was opened
        assert not (other / "server.json").exists()


# --- addresses, server.json ----------------------------------------------------------------


@pytest.mark.skipif(not has_ipv6_loopback(), reason="this machine has no IPv6 loopback")
def test_the_server_listens_on_both_loopback_addresses_with_the_same_upgrade_guard(
    tmp_path: Path,
) -> None:
    with serving(tmp_path / "data") as server:
        v6 = f"ws://[::1]:{server.port}/v1"
        with connect(v6, max_size=None) as ws:
            hello(ws)
            beat_and_ask(ws, 0)
        with connect(f"ws://localhost:{server.port}/v1", max_size=None) as ws:
            hello(ws, "farm-b")
        # The guard is the same on [::1]: a foreign Host, an Origin, a wrong token.
        refusals = [
            {"additional_headers": {"Origin": "http://evil.example"}},
            {"additional_headers": {"Authorization": "Bearer wrong"}},
        ]
        for extra in refusals:
            with pytest.raises(Exception, match=r"HTTP 40[13]"):
                connect(v6, **extra).close()  # type: ignore[arg-type]
        with socket.create_connection(("::1", server.port), timeout=5) as raw:
            raw.sendall(
                b"GET /v1 HTTP/1.1\r\nHost: evil.example\r\nUpgrade: websocket\r\n"
                b"Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                b"Sec-WebSocket-Version: 13\r\n\r\n"
            )
            assert raw.recv(200).startswith(b"HTTP/1.1 403")


def test_server_json_tells_a_mod_where_the_server_is_and_goes_at_shutdown(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    with serving(data, XTY_TOKEN="") as server:
        path = data / "server.json"
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        info = json.loads(path.read_text(encoding="utf-8"))
        assert info["url"] == server.url and info["port"] == server.port
        assert info["uiPort"] == server.ui_port
        assert info["pageUrl"] == f"http://127.0.0.1:{server.ui_port}/ui/"
        assert info["pid"] == server.proc.pid
        assert info["tokenFile"] == str(data / "token")
        assert "127.0.0.1" in info["addresses"]
        assert info["startedAt"].endswith("Z")
        # What the README tells mod authors: read both files, connect.
        token = Path(info["tokenFile"]).read_text(encoding="ascii").strip()
        with connect(info["url"], max_size=None) as ws:
            hello(ws, token=token)
        assert stat.S_IMODE(data.stat().st_mode) == 0o700  # a new data folder is owner-only
        # `xtyserver ui` finds the port (here a free one) in server.json by itself.
        printed = subprocess.run(
            [sys.executable, "-m", "xtyserver", "ui", "--print"],
            capture_output=True,
            encoding="gbk",
            cwd=ROOT,
            env=env_for(data),
            timeout=30,
        )
        assert printed.stdout.strip().startswith(f"http://127.0.0.1:{server.ui_port}/ui/#token=")
        server.stop()
        assert not path.exists()


# --- Ctrl+C ---------------------------------------------------------------------------------


def test_ctrl_c_ends_the_play_session_at_its_last_heartbeat(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with serving(data) as server:
        with connect(server.url, max_size=None) as ws:
            hello(ws)
            for n in range(3):
                beat_and_ask(ws, n)
                time.sleep(0.2)
            last_beat = time.time()
            beat_and_ask(ws, 3)
            time.sleep(1.5)  # silence, then Ctrl+C while the mod is still connected
            server.proc.send_signal(signal.SIGINT)
            with pytest.raises(ConnectionClosed):  # the server closes the connection
                while True:
                    ws.recv(timeout=15)
        server.stop(None)  # the one Ctrl+C above; its shutdown must end with 0
    [played] = sessions(data)
    assert played.ended_at is not None
    assert played.ended_at == played.last_heartbeat_at
    assert last_beat - 0.5 < played.ended_at < last_beat + 0.5  # not the Ctrl+C time
    assert not (data / "server.json").exists()


# --- console ------------------------------------------------------------------------------


def test_memory_view_and_stats_under_a_gbk_console_with_an_emoji_save_name(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    seed(data)
    with MemoryStore.open_profile(data, "default", clock=ManualClock(0)) as store:
        sid = store.open_play_session(
            Scope("stardew-valley", "farm-a"),
            1_790_000_000.0,
            "Asia/Shanghai",
            save_name="阳光农场🌻",
        )
        store.close_play_session(sid, 1_790_000_060.0)
    for args in (["memory", "view"], ["stats"]):
        done = xty(data, *args)  # PYTHONIOENCODING=gbk, decoded as GBK
        assert done.returncode == 0, (args, done.stderr)
        assert "Traceback" not in done.stderr
        assert "阳光农场?" in done.stdout, (args, done.stdout)
    # JSON stays lossless: the emoji as a \\u escape, the same document.
    for args in (["memory", "view", "--json"], ["stats", "--json"], ["memory", "export"]):
        done = xty(data, *args)
        assert done.returncode == 0, (args, done.stderr)
        assert "阳光农场🌻" in json.dumps(json.loads(done.stdout), ensure_ascii=False), args


# --- xtyserver alone, autostart -----------------------------------------------------------


def fake_browser(tmp_path: Path) -> tuple[Path, Path]:
    """A BROWSER program that records the links it is asked to open (webbrowser runs it)."""
    opened = tmp_path / "opened.txt"
    program = tmp_path / "fake-browser"
    record = f"open({str(opened)!r}, 'a', encoding='utf-8').write(sys.argv[1] + '\\n')"
    program.write_text(f"#!{sys.executable}\nimport sys\n{record}\n", encoding="utf-8")
    program.chmod(0o755)
    return program, opened


def test_xtyserver_alone_serves_and_opens_the_page_once_then_a_second_start_opens_it_again(
    tmp_path: Path,
) -> None:
    program, opened = fake_browser(tmp_path)
    data = tmp_path / "data"
    env = {"BROWSER": str(program), "XTY_TOKEN": TOKEN, "XTY_LANG": "zh"}
    config = tmp_path / "xty.toml"
    config.write_text("[server]\nport = 0\n", encoding="utf-8")  # not the player's 8765
    first = Serve(data, "--config", str(config), **env)
    try:
        link = first.link
        assert link.startswith(f"http://127.0.0.1:{first.ui_port}/ui/#token=")
        assert first.proc.stdout is not None
        assert first.proc.stdout.readline().strip() == "已在浏览器中打开记忆页。"
        # The player's console: no model yet names the 设置 tab, then how to stop.
        assert "「设置」" in first.proc.stdout.readline()
        assert "Ctrl+C" in first.proc.stdout.readline()
        # The browser was handed the 0600 open-page.html, never the key on its command line.
        handoff = data / "open-page.html"
        assert opened.read_text(encoding="utf-8").splitlines() == [handoff.as_uri()]
        assert stat.S_IMODE(handoff.stat().st_mode) == 0o600
        first_key = handoff.read_text(encoding="utf-8").split('name="key" value="', 1)[1]
        first_key = first_key.split('"', 1)[0]

        # Started again (a double-click): the running one's page, nothing else.
        again = subprocess.run(
            [sys.executable, "-m", "xtyserver", "--config", str(config)],
            capture_output=True,
            encoding="gbk",
            timeout=30,
            cwd=ROOT,
            env=env_for(data, **env),
        )
        assert again.returncode == 0, again.stderr
        assert f"小汤圆已经在运行了（进程 {first.proc.pid}）" in again.stdout
        assert opened.read_text(encoding="utf-8").splitlines() == [handoff.as_uri()] * 2
        inside = handoff.read_text(encoding="utf-8")
        assert f"http://127.0.0.1:{first.ui_port}/ui/open" in inside  # a fresh key
        assert first_key not in inside
        assert first.proc.poll() is None
    finally:
        rest = first.stop()
    assert "memory page" not in rest
    assert rest.splitlines() == ["正在停止小汤圆……", "小汤圆已停止。"]
    # The log went to the data folder, owner-only, not to the player's console.
    logged = data / "logs" / "xtyserver.log"
    assert stat.S_IMODE(logged.stat().st_mode) == 0o600
    assert '"event": "server.listening"' in logged.read_text(encoding="utf-8")
    assert "server.listening" not in Path(first.log.name).read_text(encoding="gbk")


def test_no_browser_and_xty_no_browser_leave_the_browser_alone(tmp_path: Path) -> None:
    program, opened = fake_browser(tmp_path)
    config = tmp_path / "xty.toml"
    config.write_text("[server]\nport = 0\n", encoding="utf-8")
    for n, (args, extra) in enumerate(((["--no-browser"], {}), ([], {"XTY_NO_BROWSER": "1"}))):
        server = Serve(
            tmp_path / f"d{n}", *args, "--config", str(config), BROWSER=str(program), **extra
        )
        server.stop()
    assert not opened.exists()


def test_autostart_on_writes_an_xdg_entry_that_starts_this_server_and_off_removes_it(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    config = tmp_path / "xdg config"
    env = env_for(data, XDG_CONFIG_HOME=str(config), XTY_LANG="zh")
    run = [sys.executable, "-m", "xtyserver", "autostart"]

    def autostart(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*run, *args], capture_output=True, encoding="gbk", cwd=ROOT, env=env, timeout=30
        )

    assert "开机自动启动：没有开启" in autostart("status").stdout
    done = autostart("on", "--data-dir", str(data), "--port", "0")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("已开启开机自动启动：") and "autostart off" in done.stdout
    entry = config / "autostart" / "xiaotangyuan.desktop"
    text = entry.read_text(encoding="utf-8")
    assert "[Desktop Entry]" in text and "Type=Application" in text
    [exec_line] = [line for line in text.splitlines() if line.startswith("Exec=")]
    argv = shlex.split(exec_line.removeprefix("Exec="))
    assert argv == [
        sys.executable,
        *("-m", "xtyserver", "--no-browser", "--data-dir", str(data), "--port", "0"),
    ]
    assert "开机自动启动：已开启" in autostart("status").stdout

    # The entry's command starts the player's console on that folder (a path with spaces
    # and 汉字), its lines in Chinese, no browser.
    started = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        encoding="gbk",
        cwd=ROOT,
        env={**env, "XTY_DATA_DIR": "", "XTY_LANG": "zh", "BROWSER": "false"},
    )
    try:
        assert started.stdout is not None
        assert started.stdout.readline().startswith("小汤圆已启动")
        assert started.stdout.readline().startswith("记忆页：")
        assert (data / "server.json").exists()
    finally:
        started.send_signal(signal.SIGINT)
        rest, _ = started.communicate(timeout=20)
    assert "已在浏览器中打开" not in rest and "小汤圆已停止。" in rest
    assert started.returncode == 0

    done = autostart("off")
    assert done.returncode == 0 and not entry.exists()
    assert "本来就没有开启" in autostart("off").stdout
