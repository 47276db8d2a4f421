"""The first run: ``xtyserver`` without a model opens the page on 设置.

The server decides: ``GET /ui/api/settings`` answers ``modelConfigured`` from
the running server's router (not the stored file, not the browser). A real
``python -m xtyserver`` process (no arguments, no model anywhere) and Debian's
chromium under Selenium: the page lands on the settings tab with the line that
the companion needs a model first (Chinese, or English when the page is); once
a model is saved, the same tab reloaded and a fresh link open on the memory tab.
Screenshots: ``ui-first-run-390.png`` and ``ui-first-run-1280.png``.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests import browser
from tests.cli.test_main import ROOT, TOKEN, env_for
from tests.cli.test_windows import Serve
from tests.conftest import running
from tests.manage.test_browser import css, ready, wait
from tests.manage.test_http import Page
from tests.manage.test_page import choose
from tests.unusual_paths import unusual

browser_only = pytest.mark.skipif(browser.find() is None, reason=browser.MISSING)
ZH_NOTE = "小汤圆要先接上一个大模型才能陪你聊天"
EN_NOTE = "XiaoTangYuan needs a model before it can chat with you"


@pytest.mark.anyio
async def test_the_settings_view_says_whether_the_running_server_has_a_model(
    tmp_path: Path,
) -> None:
    async with running(tmp_path / "none", model=False) as h:
        page = Page(h)
        await page.open()
        assert (await page.get("settings"))["modelConfigured"] is False
        # the player saves a provider on the page: the running server has a model now
        changes = {"model.base_url": h.fake.base_url, "model.model": "fake-from-page"}
        answer = await page.post("settings", changes=changes)
        assert answer["modelConfigured"] is True
        assert (await page.get("settings"))["modelConfigured"] is True
        assert h.server.model.configured
        # ... and taken away again: the first-run view comes back
        unset = {"model.base_url": None, "model.model": None}
        assert (await page.post("settings", changes=unset))["modelConfigured"] is False
    # A server started with a model (here by its flags, which the stored file knows
    # nothing of) says so: the answer is the router's, not the settings file's.
    async with running(tmp_path / "flags") as h:
        page = Page(h)
        await page.open()
        view = await page.get("settings")
        assert view["modelConfigured"] is True and view["values"]["model.model"] != "fake-vl"


def ui_link(data: Path) -> str:
    """A fresh link to the running server's page (``xtyserver ui --print``)."""
    done = subprocess.run(
        [sys.executable, "-m", "xtyserver", "ui", "--print"],
        capture_output=True,
        encoding="gbk",
        timeout=30,
        cwd=ROOT,
        env=env_for(data, XTY_TOKEN=TOKEN),
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def drive_first_run(link: str, data: Path) -> list[Path]:
    shots: list[Path] = []
    with browser.chromium() as d:
        d.get(link)
        ready(d, "settings")  # by itself: nobody clicked 设置
        assert css(d, "#tab-settings")[0].get_attribute("aria-pressed") == "true"
        assert not css(d, "#memory-view")[0].is_displayed()
        note = css(d, "#s-first-run")[0]
        assert note.is_displayed() and note.text.startswith(ZH_NOTE), note.text
        for width in (390, 1280):
            shots.append(browser.screenshot(d, f"ui-first-run-{width}.png", width))
            assert d.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth"
            ), width
        css(d, "#lang")[0].click()
        ready(d, "settings")
        assert css(d, "#s-first-run")[0].text.startswith(EN_NOTE)
        css(d, "#lang")[0].click()
        ready(d, "settings")

        # the player picks a provider and saves: no longer a first run
        choose(d, "#s-preset", "deepseek")
        css(d, "#s-save")[0].click()
        wait(d, lambda d: css(d, "#status")[0].text == "已保存，下一轮对话起生效。")
        assert not css(d, "#s-first-run")[0].is_displayed()

        # the same tab reloaded (same session, same cookie) and a fresh link: the memory tab
        d.refresh()
        ready(d, "memory")
        d.get(ui_link(data))
        ready(d, "memory")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        assert not css(d, "#s-first-run")[0].is_displayed()
    return shots


@pytest.mark.anyio
@browser_only
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals")
async def test_xtyserver_without_a_model_opens_the_page_on_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = unusual(tmp_path)
    data = root / "data"
    config = root / "xty.toml"
    config.write_text("[server]\nport = 0\n", encoding="utf-8")  # no [model]; no XTY_MODEL*
    server = Serve(data, "--no-browser", "--config", str(config))
    try:
        link = server.link
        shots = await anyio.to_thread.run_sync(drive_first_run, link, data)
    finally:
        server.stop()
    with capsys.disabled():
        for path in shots:
            print(f"\nscreenshot: {path}")
