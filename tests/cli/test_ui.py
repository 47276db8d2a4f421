"""`xtyserver serve` prints the page's link once; `xtyserver ui` opens (or prints) the same link."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

from tests.cli.test_main import ROOT, TOKEN, env_for, seed
from xtyserver.manage.access import LAUNCH_HEADER, launch_key


def test_serve_prints_a_working_page_link_once_and_ui_opens_it(tmp_path: Path) -> None:
    data = tmp_path / "live"
    seed(data)
    env = env_for(data, XTY_TOKEN=TOKEN)
    proc = subprocess.Popen(
        [sys.executable, "-m", "xtyserver", "serve", "--port", "0", "--ui-port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=ROOT,
        env=env,
    )
    try:
        assert proc.stdout is not None
        listening = proc.stdout.readline().strip()
        ws_port = int(listening.rsplit(":", 1)[1].split("/")[0])
        proc.stdout.readline()  # where the token is
        link = proc.stdout.readline().strip().removeprefix("memory page: ")
        key = launch_key(TOKEN)
        port = int(link.split(":")[2].split("/")[0])  # the page's own port
        assert port != ws_port
        assert link == f"http://127.0.0.1:{port}/ui/#token={key}"

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
        assert exchange(TOKEN) == 401  # the adapter token itself is not the page's key

        # `xtyserver ui` builds the same link from the token and hands it to the browser
        ui = [sys.executable, "-m", "xtyserver", "ui", "--ui-port", str(port)]
        printed = subprocess.run([*ui, "--print"], capture_output=True, text=True, env=env)
        assert printed.stdout.strip() == link
        # without --ui-port the page is the server's port + 1
        derived = [sys.executable, "-m", "xtyserver", "ui", "--port", "9000", "--print"]
        printed = subprocess.run(derived, capture_output=True, text=True, env=env)
        assert printed.stdout.strip() == f"http://127.0.0.1:9001/ui/#token={key}"
        opened = tmp_path / "opened.txt"
        fake_browser = tmp_path / "fake-browser"
        record = f"pathlib.Path({str(opened)!r}).write_text(sys.argv[1])"
        fake_browser.write_text(f"#!{sys.executable}\nimport sys, pathlib\n{record}\n")
        fake_browser.chmod(0o755)
        ran = subprocess.run(
            ui, capture_output=True, text=True, env={**env, "BROWSER": str(fake_browser)}
        )
        assert ran.returncode == 0, ran.stderr
        assert opened.read_text() == link
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, _ = proc.communicate(timeout=15)
    assert "memory page" not in rest  # printed once
