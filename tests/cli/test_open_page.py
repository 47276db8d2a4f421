"""`xtyserver` and `xtyserver ui` open the memory page in a real browser, as handed.

``BROWSER`` points Python's ``webbrowser`` at headless Chromium or Firefox
(tests/handed_browser.py): the first run, a second start while it runs, and
`xtyserver ui` each open a tab that loads the page and its data; the key is on
no command line, in no file of the browser's profile (its history included),
and opens one page only.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests import handed_browser
from tests.cli.test_main import ROOT, env_for

READY = "return document.body.dataset.ready"


def _key(data: Path) -> str:
    """The key in the hand-off file now."""
    page = (data / "open-page.html").read_text(encoding="utf-8")
    found = re.search(r'name="key" value="([A-Za-z0-9_-]+)"', page)
    assert found is not None, page
    return found.group(1)


def _post_form(url: str, key: str) -> tuple[int, str]:
    request = urllib.request.Request(
        url,
        data=f"key={key}".encode(),
        method="POST",
        headers={
            "Content-Type": "application/x-www-form-urlencoded",
            "Origin": "null",
            "Sec-Fetch-Site": "cross-site",
            "Sec-Fetch-Mode": "navigate",
            "Sec-Fetch-Dest": "document",
        },
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


@pytest.mark.parametrize("kind", handed_browser.KINDS)
def test_the_page_opens_in_a_real_browser_from_each_command(tmp_path: Path, kind: str) -> None:
    if (why := handed_browser.missing(kind)) is not None:
        pytest.skip(why)
    data = tmp_path / "data"
    config = tmp_path / "xty.toml"
    config.write_text("[server]\nport = 0\nui_port = 0\n", encoding="utf-8")
    with handed_browser.handed(kind, tmp_path / "browser") as handed:
        env = env_for(data, BROWSER=str(handed.program), XTY_LANG="zh")
        start = [sys.executable, "-m", "xtyserver", "--config", str(config)]
        server = subprocess.Popen(
            start, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env, encoding="gbk"
        )
        try:
            keys = []
            first = handed.tab(0)  # the first run opens on 设置: no model yet
            assert first.wait(READY, "the first page ready") == "settings"
            keys.append(_key(data))
            assert first.run("return location.pathname") == "/ui/"
            assert first.run("return document.getElementById('s-preset').options.length") > 1
            shot = first.screenshot(f"open-page-{kind}-first-run.png", 800)

            again = subprocess.run(start, capture_output=True, encoding="gbk", env=env, timeout=60)
            assert again.returncode == 0, again.stderr
            assert "小汤圆已经在运行了" in again.stdout
            second = handed.tab(1)
            assert second.wait(READY, "the second start's page ready") == "settings"
            keys.append(_key(data))

            ui = [sys.executable, "-m", "xtyserver", "ui", "--config", str(config)]
            opened = subprocess.run(ui, capture_output=True, encoding="gbk", env=env, timeout=60)
            assert opened.returncode == 0, opened.stderr
            third = handed.tab(2)
            assert third.wait(READY, "xtyserver ui's page ready") == "settings"
            keys.append(_key(data))

            assert len(set(keys)) == 3
            for call in handed.handed():  # what each command line carried
                assert call["argv"] == [(data / "open-page.html").as_uri()]
            # each key opened its page and is gone: the form again gets a readable page
            page = third.run("return location.origin") + "/ui/open"
            status, body = _post_form(page, keys[2])
            assert status == 401
            assert "已经用过或已过期" in body and "xtyserver ui" in body and "<h1>" in body
            # the server stops: the open page says so, in its language, and what to do
            server.send_signal(signal.SIGINT)
            server.communicate(timeout=30)
            third.run("document.getElementById('tab-stats').click(); return 1")
            status = "return document.getElementById('status').textContent"
            gone = third.wait(status, "the page noticed the stopped server")
            assert gone.startswith("连不上小汤圆的服务器") and "再启动 xtyserver" in gone, gone
            # the tabs quit as a player closes them; no file they leave holds a key
            tabs = (first, second, third)
            for tab in tabs:
                tab.close()
            for tab, key in zip(tabs, keys, strict=True):
                tab.reap()
                assert tab.profile_files_holding(key) == []
            # ... although the history was written: the page's address is in it
            assert first.profile_files_holding(page.removesuffix("open"))
        finally:
            if server.poll() is None:
                server.send_signal(signal.SIGINT)
                server.communicate(timeout=30)
    # the player's console shows no log lines: the log is in the data folder
    err = (data / "logs" / "xtyserver.log").read_text(encoding="utf-8")
    assert err.count('"ui.session_opened"') == 3, err
    assert '"reason": "cross-site request"' not in err
    print(f"\nscreenshot: {shot}")
