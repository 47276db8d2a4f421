"""Opening the page again keeps the open tab working (Debian's chromium, one profile).

A player opens the memory page, then runs ``xtyserver`` (or ``xtyserver ui``)
again: a second tab in the same browser, with a new page session and its own
cookie. The first tab still reads and writes, says nothing of a restart or
12 hours, and neither tab's polling is refused. Only when the first tab's
session really ends (here: eight newer pages pushed it out) does it say so,
once, and stop asking every 2 s (each ask would be a refused request in the log).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests import browser
from tests.conftest import Harness, running
from tests.manage.test_browser import css, ready, wait
from tests.manage.test_http import Page
from xtyserver.manage.access import MAX_SESSIONS

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(browser.find() is None, reason=browser.MISSING),
]
ENDED = "会话已经结束"
POLL_S = 2.0  # pairing.js's POLL_MS


def pairing_answers(d: Any) -> Any:
    """The tab's own pairing call (the one it polls with), as its script makes it."""
    return d.execute_async_script(
        "const done = arguments[arguments.length - 1];"
        "window.XTY_PAGE.call('GET', 'pairing').then(() => done('ok'), (e) => done(e.kind));"
    )


def drive(h: Harness) -> None:
    with browser.chromium() as d:
        d.get(h.server.ui_link)
        ready(d, "memory")
        first = d.current_window_handle
        d.switch_to.new_window("tab")  # the page opened again: a second session
        d.get(h.server.ui_link)
        ready(d, "memory")
        second = d.current_window_handle
        assert len(h.server.ui.sessions) == 2

        d.switch_to.window(first)
        css(d, "#tab-stats")[0].click()
        ready(d, "stats")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        assert ENDED not in css(d, "#status")[0].text
        assert pairing_answers(d) == "ok"
        css(d, "#tab-memory")[0].click()
        ready(d, "memory")
        d.switch_to.window(second)
        assert pairing_answers(d) == "ok"
        css(d, "#tab-trash")[0].click()
        ready(d, "trash")
        assert not h.server.ui.refused, h.server.ui.refused

        # Eight newer pages: the first tab's session is pushed out (MAX_SESSIONS).
        for _ in range(MAX_SESSIONS):
            anyio.from_thread.run(Page(h).open)  # on the server's own loop
        d.switch_to.window(first)
        wait(d, lambda d: d.execute_script("return document.body.dataset.ready") == "locked")
        assert ENDED in css(d, "#status")[0].text
        refused = sum(h.server.ui.refused.values())
        assert refused >= 1
        time.sleep(3 * POLL_S)  # three polls' time: none is sent once the tab knows
        assert sum(h.server.ui.refused.values()) == refused


async def test_opening_the_page_again_keeps_the_open_tab_working(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        await anyio.to_thread.run_sync(drive, h)
