"""The memory page in a real browser (Debian's chromium, headless, Selenium) and the real server.

Skipped, with the reason, where chromium or chromedriver is missing. The
screenshots go to ``tests/artifacts/`` (or ``$XTY_TEST_ARTIFACTS``); their
paths are printed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest

from tests import browser
from tests.conftest import Harness, running
from tests.manage.ui_fixtures import DAYS_PLAYED, GAMES, MINUTE_BEATS, fill
from xtyserver.clock import ManualClock
from xtyserver.memory.types import Scope

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(browser.find() is None, reason=browser.MISSING),
]
FARM = Scope("stardew-valley", "farm-a")
WAIT = 30


def wait(driver: Any, condition: Any) -> Any:
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    stale = (StaleElementReferenceException,)  # the page re-rendered under the finder
    # Checked every 50 ms (Selenium's default is 500 ms, a wait usually holds within one).
    waiting = WebDriverWait(driver, WAIT, poll_frequency=0.05, ignored_exceptions=stale)
    return waiting.until(condition)


def css(driver: Any, selector: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, selector))


def ready(driver: Any, view: str) -> None:
    wait(driver, lambda d: d.execute_script("return document.body.dataset.ready") == view)


def drive_page(h: Harness, link: str) -> list[Path]:
    """Everything a player does on the page; runs on a worker thread beside the server."""
    shots: list[Path] = []
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        assert d.current_url.endswith("/ui/"), d.current_url  # the token left the address bar
        d.refresh()  # a reload keeps the session (the CSRF token is in this tab's sessionStorage)
        ready(d, "memory")

        # the profile, two games with two saves each, and their items
        nickname = css(d, 'tr[data-field="nickname"] td.value')[0]
        assert nickname.text == "小明"
        assert css(d, 'tr[data-field="hobbies"] td.value')[0].text == "钓鱼、种地"
        seen = {
            g.get_attribute("data-game"): {
                s.get_attribute("data-save") for s in g.find_elements("css selector", ".save")
            }
            for g in css(d, "article.game")
        }
        assert seen == GAMES
        for save in css(d, "section.save"):
            game = save.find_element("xpath", "./..").get_attribute("data-game")
            stored_here = h.store.load_scope(Scope(game, save.get_attribute("data-save")))
            assert len(save.find_elements("css selector", "li.event")) == len(stored_here) >= 2
        stored = {e.summary for s in h.store.list_scopes() for e in h.store.load_scope(s)}
        shown = {e.text for e in css(d, "li.event .summary")}
        assert shown == stored and len(shown) == 10
        shots.append(browser.screenshot(d, "ui-memory.png"))

        # only the filled shared fields have rows; the empty ones wait behind one "add"
        profile = h.store.get_profile()
        fields = [r.get_attribute("data-field") for r in css(d, "table.profile tr[data-field]")]
        empty = [o.get_attribute("value") for o in css(d, "#add-field option")]
        assert fields and empty and not set(fields) & set(empty)
        assert "nickname" in fields and "hobbies" in fields and len(empty) >= 5
        from selenium.webdriver.support.ui import Select

        Select(css(d, "#add-field")[0]).select_by_value(empty[0])
        css(d, "#add-field-go")[0].click()
        opened = css(d, f'tr[data-field="{empty[0]}"] input.field-input')[0]
        assert opened == d.switch_to.active_element
        # a save's timeline only when one of its items has an in-game day
        for save in css(d, "section.save"):
            dated = save.find_elements("css selector", "li.event span.day")
            assert len(save.find_elements("css selector", "aside.timeline")) == (1 if dated else 0)
        assert profile == h.store.get_profile()

        # edit one shared field
        css(d, 'tr[data-field="nickname"] button.edit')[0].click()
        field = css(d, 'tr[data-field="nickname"] input.field-input')[0]
        field.clear()
        field.send_keys("阿明")
        css(d, 'tr[data-field="nickname"] button.save')[0].click()
        wait(d, lambda d: css(d, 'tr[data-field="nickname"] td.value')[0].text == "阿明")
        assert h.store.get_profile().nickname == "阿明"

        # delete one item, after the confirmation shows the same preview
        target = h.store.load_scope(FARM)[0]
        item = f'section.save[data-save="farm-a"] li.event[data-event-id="{target.id}"]'
        css(d, f"{item} button.delete")[0].click()
        wait(d, lambda d: d.execute_script("return document.getElementById('confirm').open"))
        preview = css(d, "#confirm .preview-events li")
        assert [p.text for p in preview] == [f"星露谷物语 / 未命名存档 · farm-a：{target.summary}"]
        shots.append(browser.screenshot(d, "ui-confirm.png"))
        css(d, "#confirm-yes")[0].click()
        wait(d, lambda d: not css(d, item))
        left = h.store.load_scope(FARM)
        assert target.id not in [e.id for e in left] and len(left) == 4 - 1
        assert len(css(d, "li.event")) == 9

        # the statistics: a bar for each day played, per game
        css(d, "#tab-stats")[0].click()
        ready(d, "stats")
        days = {e.game_id: e.days for e in h.store.stats().games}
        assert days == DAYS_PLAYED
        for game, count in DAYS_PLAYED.items():
            bars = css(d, f'svg.chart[data-game="{game}"] rect.bar')
            assert len(bars) == count, game
            assert all(int(b.get_attribute("height")) >= 3 for b in bars)
        daily = {d.date for d in h.store.overview(since=0).daily if d.game_id == "stardew-valley"}
        drawn = {
            b.get_attribute("data-date")
            for b in css(d, 'svg.chart[data-game="stardew-valley"] rect.bar')
        }
        assert drawn == daily
        # Token use per day (the player's bill), the same sums as the store's.
        from selenium.webdriver.common.by import By

        bill: dict[str, int] = {}
        for use in h.store.stats().tokens:
            bill[use.date] = bill.get(use.date, 0) + use.prompt_tokens
        shown = {
            cells[0].text: int(cells[2].text)
            for cells in (r.find_elements(By.TAG_NAME, "td") for r in css(d, "#stats-tokens tr"))
            if cells
        }
        assert bill and shown == bill
        shots.append(browser.screenshot(d, "ui-stats.png"))

        # English is one click away
        css(d, "#lang")[0].click()
        ready(d, "stats")
        assert css(d, "h1")[0].text == "XiaoTangYuan's memory"
        css(d, "#tab-memory")[0].click()
        ready(d, "memory")
        shots.append(browser.screenshot(d, "ui-memory-en.png"))

        # the automatic-forming switch
        css(d, "#auto-shared")[0].click()
        wait(d, lambda d: css(d, "#status")[0].text == "Saved.")
        assert h.store.get_profile().auto_shared is False

        # pin
        farm_b = h.store.load_scope(Scope("stardew-valley", "farm-b"))[0]
        css(d, f'li.event[data-event-id="{farm_b.id}"] button.pin')[0].click()
        wait(d, lambda d: css(d, f'li.event.pinned[data-event-id="{farm_b.id}"]'))
        wait(
            d,
            lambda d: css(d, "#status")[0].text == f"Pinned: {farm_b.subject} (first in its save)",
        )
        # the line says what happened on its own tab: it does not follow to another
        css(d, "#tab-stats")[0].click()
        ready(d, "stats")
        assert css(d, "#status")[0].text == ""
        css(d, "#tab-memory")[0].click()
        ready(d, "memory")
        assert [e.pinned for e in h.store.load_scope(farm_b.scope) if e.id == farm_b.id] == [True]

        def confirm_and_wait(button: str, preview: str, done: Any) -> list[str]:
            css(d, button)[0].click()
            wait(d, lambda d: d.execute_script("return document.getElementById('confirm').open"))
            shown = [p.text for p in css(d, preview)]
            css(d, "#confirm-yes")[0].click()
            wait(d, done)
            return shown

        # delete a shared field
        shown = confirm_and_wait(
            'tr[data-field="hobbies"] button.delete',
            "#confirm .preview-field",
            lambda d: not css(d, 'tr[data-field="hobbies"]'),
        )
        # an empty field waits behind the one "add" control, with the other empty ones
        assert "hobbies" in [o.get_attribute("value") for o in css(d, "#add-field option")]
        assert shown == ["Hobbies: 钓鱼、种地"]
        assert h.store.get_profile().hobbies == []

        # clear a save, then a whole game; statistics stay
        world_a = 'section.save[data-save="world-a"]'
        shown = confirm_and_wait(
            f"{world_a} button.clear-save",
            "#confirm .preview-events li",
            lambda d: not css(d, f"{world_a} li.event"),
        )
        assert len(shown) == 2
        assert h.store.load_scope(Scope("dont-starve-together", "world-a")) == []
        stardew = 'article.game[data-game="stardew-valley"]'
        shown = confirm_and_wait(
            f"{stardew} button.clear-game",
            "#confirm .preview-events li",
            lambda d: not css(d, f"{stardew} li.event"),
        )
        assert len(shown) == 5
        assert all(
            h.store.load_scope(Scope("stardew-valley", s)) == [] for s in GAMES["stardew-valley"]
        )
        assert {g.game_id: g.days for g in h.store.stats().games} == DAYS_PLAYED
        assert len(css(d, "li.event")) == 2  # world-b's
    return shots


async def test_the_page_in_a_real_browser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        await fill(h)
        shots = await anyio.to_thread.run_sync(drive_page, h, h.server.ui_link)
    with capsys.disabled():
        for path in shots:
            print(f"\nscreenshot: {path}")


EVIL = """<!doctype html><html><head><title>cats</title></head><body><script>
(async () => {
  const target = "TARGET";
  const results = {};
  try {
    const r = await fetch(target + "/ui/api/view", {credentials: "include"});
    results.read = "read " + r.status + " " + (await r.text());
  } catch (e) { results.read = "failed: " + e.name; }
  try {
    const r = await fetch(target + "/ui/api/session", {credentials: "include"});
    results.csrf = "read " + (await r.text());
  } catch (e) { results.csrf = "failed: " + e.name; }
  try {
    await fetch(target + "/ui/api/profile",
                {method: "POST", credentials: "include", mode: "no-cors",
                 headers: {"Content-Type": "text/plain"},
                 body: JSON.stringify({field: "nickname", value: "evil"})});
    results.write = "sent blind";
  } catch (e) { results.write = "failed: " + e.name; }
  try {
    const r = await fetch(target + "/ui/api/forget",
                {method: "POST", credentials: "include",
                 headers: {"X-XTY-CSRF": "guess", "Content-Type": "application/json"},
                 body: JSON.stringify({target: "game", gameId: "stardew-valley"})});
    results.preflighted = "read " + r.status;
  } catch (e) { results.preflighted = "failed: " + e.name; }
  window.results = results;
  document.title = "done";
})();
</script></body></html>"""


@asynccontextmanager
async def evil_site(page: str) -> AsyncIterator[int]:
    """A web server on another origin (another port) that answers every request with ``page``."""

    async def answer(stream: anyio.abc.SocketStream) -> None:
        async with stream:
            head = b""
            try:  # the browser may open a spare connection and close it unused
                while b"\r\n\r\n" not in head:
                    head += await stream.receive()
                body = page.encode()
                await stream.send(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
                    + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
                    + body
                )
            except (anyio.EndOfStream, anyio.BrokenResourceError, OSError):
                return

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, answer)
        yield int(listener.extra(anyio.abc.SocketAttribute.local_port))
        tg.cancel_scope.cancel()


def attack(link: str, evil_urls: list[str]) -> list[dict[str, str]]:
    """Open the real page (a session cookie now exists), then visit each evil page."""
    found = []
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        for url in evil_urls:
            d.get(url)
            wait(d, lambda d: d.title == "done")
            found.append(d.execute_script("return window.results"))
    return found


async def test_a_page_on_another_origin_can_neither_read_nor_change(tmp_path: Path) -> None:
    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        await fill(h)
        before = (h.store.get_profile(), {s: h.store.load_scope(s) for s in h.store.list_scopes()})
        target = h.server.ui_link.split("/ui/")[0]
        async with evil_site(EVIL.replace("TARGET", target)) as port:
            urls = [
                f"http://127.0.0.1:{port}/",
                f"http://localhost:{port}/",
            ]  # same-site, cross-site
            results = await anyio.to_thread.run_sync(attack, h.server.ui_link, urls)
        for result in results:
            for call in ("read", "csrf", "preflighted"):
                assert result[call].startswith("failed"), result  # fetch fails: nothing readable
            # the blind write may be sent (opaque answer) or stopped by the browser itself
            assert result["write"] in ("sent blind", "failed: TypeError"), result
        # every request of both pages reached the server and was refused there
        assert h.server.ui.refused == {"origin not allowed": 4 * len(urls)}
        assert len(h.server.ui.sessions) == 1  # only the real page's
        after = (h.store.get_profile(), {s: h.store.load_scope(s) for s in h.store.list_scopes()})
        assert after == before
        assert after[0].nickname == "小明"


def drive_dead_ends(h: Harness, link: str) -> list[str]:
    """The page's words when the disk fails, its session ends and its key was used already."""
    said = []
    status = "return document.getElementById('status').textContent"
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        # the disk refuses the settings file (a folder in its place): the page says what to do
        (h.settings.data_path / "settings.json").mkdir()
        css(d, "#tab-settings")[0].click()
        wait(d, lambda d: "写不进文件" in d.execute_script(status))
        said.append(d.execute_script(status))
        css(d, "#tab-memory")[0].click()
        ready(d, "memory")
        anyio.from_thread.run_sync(h.server.ui.sessions.clear)  # a restart, or 12 hours on
        css(d, "#tab-stats")[0].click()
        ready(d, "locked")
        said.append(d.execute_script(status))
        d.get(link)  # the same link again: its key opened the first page
        wait(d, lambda d: "用过" in d.execute_script(status))
        said.append(d.execute_script(status))
        css(d, "#lang")[0].click()
        css(d, "#tab-memory")[0].click()
        wait(d, lambda d: "session" in d.execute_script(status))
        said.append(d.execute_script(status))
    return said


async def test_the_page_says_what_to_do_when_the_disk_its_session_or_key_fails(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        disk, ended, used, english = await anyio.to_thread.run_sync(
            drive_dead_ends, h, h.server.ui_link
        )
    assert disk.startswith("服务器写不进文件（Is a directory）") and "磁盘空间" in disk, disk
    assert ended.startswith("这个记忆页的会话已经结束") and "xtyserver ui" in ended
    assert used.startswith("这个链接已经用过或已过期") and "xtyserver ui" in used
    assert english.startswith("This memory page's session has ended"), english
