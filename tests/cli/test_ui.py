"""`xtyserver serve` prints a page link once; `xtyserver ui` gets a fresh single-use one.

The key never rides on a command line: `ui` hands it to the browser in a 0600 file
(tests/cli/test_open_page.py opens that file in real browsers).
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.cli.test_main import ROOT, TOKEN, env_for, seed
from xtyserver.manage.access import LAUNCH_HEADER
from xtyserver.serve.instance import InstanceLock, read_server_file


def test_serve_prints_a_working_page_link_once_and_ui_opens_it(tmp_path: Path) -> None:
    data = tmp_path / "live"
    seed(data)
    env = env_for(data, XTY_TOKEN=TOKEN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "xtyserver", "serve", "--port", "0", "--ui-port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        encoding="gbk",
        cwd=ROOT,
        env=env,
    )
    try:
        assert proc.stdout is not None
        listening = proc.stdout.readline().strip()
        ws_port = int(listening.rsplit(":", 1)[1].split("/")[0])
        proc.stdout.readline()  # where the token is
        link = proc.stdout.readline().strip().removeprefix("memory page: ")
        key = link.split("#token=", 1)[1]
        port = int(link.split(":")[2].split("/")[0])  # the page's own port
        assert port != ws_port
        assert link == f"http://127.0.0.1:{port}/ui/#token={key}"
        assert len(key) >= 43 and TOKEN not in key

        # the link's key opens a session on the running server; a wrong one does not
        def exchange(token: str) -> int:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/ui/api/session",
                method="POST",
                headers={"Origin": f"http://127.0.0.1:{port}", LAUNCH_HEADER: token},
            )
            try:
                with urllib.request.urlopen(request, timeout=10) as answer:
                    assert "csrf" in json.loads(answer.read())
                    return int(answer.status)
            except urllib.error.HTTPError as exc:
                return exc.code

        assert exchange(key) == 200
        assert exchange(key) == 401  # single-use
        assert exchange(TOKEN) == 401  # the adapter token itself is not the page's key

        # `xtyserver ui` asks the running server for a fresh key
        ui = [sys.executable, "-m", "xtyserver", "ui", "--ui-port", str(port)]
        printed = subprocess.run([*ui, "--print"], capture_output=True, encoding="gbk", env=env)
        fresh = printed.stdout.strip()
        assert fresh.startswith(f"http://127.0.0.1:{port}/ui/#token=") and fresh != link
        assert exchange(fresh.split("#token=", 1)[1]) == 200
        # nothing answers on the server's port + 1 = 9001: a clear line, exit 1
        derived = [sys.executable, "-m", "xtyserver", "ui", "--port", "9000", "--print"]
        printed = subprocess.run(
            derived, capture_output=True, encoding="gbk", env={**env, "XTY_LANG": "zh"}
        )
        assert printed.returncode == 1
        assert "没有回应：小汤圆没在运行吗？运行 xtyserver 启动它" in printed.stderr
        opened = tmp_path / "opened.txt"
        fake_browser = tmp_path / "fake-browser"
        record = f"pathlib.Path({str(opened)!r}).write_text(sys.argv[1])"
        fake_browser.write_text(f"#!{sys.executable}\nimport sys, pathlib\n{record}\n")
        fake_browser.chmod(0o755)
        ran = subprocess.run(
            ui, capture_output=True, encoding="gbk", env={**env, "BROWSER": str(fake_browser)}
        )
        assert ran.returncode == 0, ran.stderr
        handed = opened.read_text()  # what the browser's command line carried
        assert handed.startswith("file://") and "#token=" not in handed
        handoff = data / "open-page.html"
        assert handed == handoff.as_uri()
        if os.name == "posix":
            assert stat.S_IMODE(handoff.stat().st_mode) == 0o600
        inside = handoff.read_text(encoding="utf-8")
        assert "#token=" not in inside  # the form posts the key: it is in no URL
        third = inside.split('name="key" value="', 1)[1].split('"', 1)[0]
        assert f'action="http://127.0.0.1:{port}/ui/open"' in inside
        assert exchange(third) == 200
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=15)
    assert "memory page" not in rest  # printed once


def test_a_start_that_loses_the_race_opens_the_winners_page(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = tmp_path / "xty.toml"
    config.write_text("[server]\nport = 0\nui_port = 0\n", encoding="utf-8")
    opened = tmp_path / "opened.txt"
    fake_browser = tmp_path / "fake-browser"
    record = f"open({str(opened)!r}, 'a').write(sys.argv[1] + chr(10))"
    fake_browser.write_text(f"#!{sys.executable}\nimport sys\n{record}\n")
    fake_browser.chmod(0o755)
    env = env_for(data, BROWSER=str(fake_browser), XTY_LANG="zh")
    start = [sys.executable, "-m", "xtyserver", "--config", str(config)]
    # The winner between taking the folder's lock and writing server.json: held here.
    early = InstanceLock(data)
    assert early.acquire()
    loser = subprocess.Popen(
        start, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, encoding="gbk", cwd=ROOT
    )
    winner = None
    try:
        assert loser.stdout is not None
        assert "小汤圆正在启动，等它打开记忆页" in loser.stdout.readline()
        early.release()
        winner = subprocess.Popen(
            start,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**env, "XTY_NO_BROWSER": "1"},
            cwd=ROOT,
        )
        out, err = loser.communicate(timeout=60)
        assert loser.returncode == 0, err
        running = read_server_file(data)
        assert running is not None and f"进程 {running.pid}" in out
        assert opened.read_text().splitlines() == [(data / "open-page.html").as_uri()]
        inside = (data / "open-page.html").read_text(encoding="utf-8")
        key = inside.split('name="key" value="', 1)[1].split('"', 1)[0]
        assert f"http://127.0.0.1:{running.ui_port}/ui/open" in inside
        request = urllib.request.Request(
            f"http://127.0.0.1:{running.ui_port}/ui/open",
            data=f"key={key}".encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded", "Origin": "null"},
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            assert answer.status == 200 and b'name="xty-session" content=""' not in answer.read()
    finally:
        for proc in (loser, winner):
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
                proc.wait(15)
