"""How a browser gets in, what it sees when it cannot, and what a failing page request leaves.

Over the real server and a real store: the hand-off file's form opens one
page; an error a browser tab would show is a readable page, Chinese first;
an OS error in a page handler answers 500 and the server, its listener and a
connected mod carry on.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.conftest import chat, running
from tests.manage.test_http import Page
from tests.manage.ui_fixtures import http
from xtyserver.manage.access import CSRF_HEADER
from xtyserver.testing.script import Reply

pytestmark = pytest.mark.anyio
FORM = ("Content-Type", "application/x-www-form-urlencoded")
NAVIGATE = [
    ("Sec-Fetch-Site", "cross-site"),
    ("Sec-Fetch-Mode", "navigate"),
    ("Sec-Fetch-Dest", "document"),
]


async def test_the_hand_off_form_opens_one_page_with_its_session(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        key = h.server.ui.mint_key()
        headers = [page.host, FORM, ("Origin", "null"), *NAVIGATE]
        opened = await http(page.port, "POST", "/ui/open", headers, f"key={key}".encode())
        assert opened.status == 200 and opened.header("content-type") == "text/html; charset=utf-8"
        found = re.search(rb'<meta name="xty-session" content="([A-Za-z0-9_-]+)">', opened.body)
        assert found is not None, opened.body[:400]
        cookie = (opened.header("set-cookie") or "").split(";", 1)[0]
        auth = [page.host, ("Cookie", cookie), (CSRF_HEADER, found.group(1).decode())]
        view = await http(page.port, "GET", "/ui/api/view", auth)
        assert view.status == 200 and "profile" in view.json()["result"]  # type: ignore[operator]
        # the same form again: the key is used; the tab shows what to do, not JSON
        again = await http(page.port, "POST", "/ui/open", headers, f"key={key}".encode())
        assert again.status == 401
        text = again.body.decode()
        assert "已经用过或已过期" in text and "xtyserver ui" in text
        assert text.index("已经用过") < text.index("already used")  # Chinese first
        # the plain page (GET, no session in it) is the same file with an empty slot
        plain = await http(page.port, "GET", "/ui/", [page.host, *NAVIGATE])
        assert plain.status == 200 and b'<meta name="xty-session" content="">' in plain.body
        assert len(h.server.ui.sessions) == 1


async def test_what_a_browser_tab_would_show_is_a_readable_page(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        cases = [
            ("/ui/app.js", NAVIGATE, 403),  # a navigation to anything but the page
            ("/ui/nothing-here", [("Sec-Fetch-Mode", "navigate")], 404),
            (
                "/ui/",
                [
                    ("Sec-Fetch-Site", "cross-site"),
                    ("Sec-Fetch-Mode", "navigate"),
                    ("Sec-Fetch-Dest", "iframe"),
                ],
                403,
            ),
            ("/ui/nothing-here", [("Accept", "text/html,*/*")], 404),  # no Fetch metadata
        ]
        for path, extra, status in cases:
            answer = await http(page.port, "GET", path, [page.host, *extra])
            assert answer.status == status, path
            assert answer.header("content-type") == "text/html; charset=utf-8", path
            text = answer.body.decode()
            assert "<h1>" in text and "xtyserver ui" in text and "{" not in text, text
        wrong_host = await http(page.port, "GET", "/ui/", [("Host", "evil.example"), *NAVIGATE])
        assert wrong_host.status == 403 and "127.0.0.1" in wrong_host.body.decode()
        # what a script asks for stays JSON
        api = await http(page.port, "GET", "/ui/api/view", [page.host, ("Accept", "text/html")])
        assert api.status == 401 and api.json() == {"error": "no session"}
        fetched = await http(page.port, "GET", "/ui/app.js", [page.host, NAVIGATE[0]])
        assert fetched.status == 403 and fetched.json() == {"error": "cross-site request"}


async def test_an_os_error_in_a_page_handler_answers_500_and_the_mod_stays(
    tmp_path: Path,
) -> None:
    async with running(tmp_path / "data") as h:
        page = Page(h)
        await page.open()
        async with h.adapter() as ws:
            # A real fault of the file system: where the settings file goes, a folder.
            (h.settings.data_path / "settings.json").mkdir()
            for name, body in (
                ("settings", {"changes": {"memory.trash_hours": 5}}),
                ("settings", {"changes": {"model.model": "other"}}),
            ):
                answer = await http(
                    page.port,
                    "POST",
                    f"/ui/api/{name}",
                    [*page.auth(), page.origin, page.json],
                    json.dumps(body).encode(),
                )
                assert answer.status == 500, answer.body
                got = answer.json()
                assert got["code"] == "os_error" and got["detail"] == "Is a directory", got
            # saving the key, on a disk that refuses its file (or its keyring marker) too
            for name in ("model-key", "model-key.in-keyring"):
                (h.settings.data_path / name).mkdir()
            answer = await http(
                page.port,
                "POST",
                "/ui/api/key",
                [*page.auth(), page.origin, page.json],
                json.dumps({"apiKey": "sk-test-0123456789"}).encode(),
            )
            assert answer.status == 500 and answer.json()["code"] == "os_error", answer.body
            # the server and the mod's connection are as they were
            h.fake.enqueue(Reply(text="还在呢"))
            _, done = await chat(ws, "你还在吗")
            assert done["type"] == "chat.done", done
            assert (await page.get("view"))["profile"] is not None
        assert h.server.ui.port is not None
