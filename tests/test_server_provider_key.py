"""The stored provider key goes only to the provider it was saved for.

Over the real server and the real page API, as the page's script calls it, with
two real scripted model servers on two ports (two origins) and the real
``openai`` client: the key saved for the first is never sent to the second,
whether by "测试连接" or by a turn, until the player enters one for the second;
the page says so, and shows each provider change.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.conftest import chat, running
from tests.manage.test_http import Page
from xtyserver.model.routing import origin
from xtyserver.testing import FakeModelServer, RecordedRequest

pytestmark = pytest.mark.anyio
KEY = "sk-first-provider-0123456789abcd"
OTHER_KEY = "sk-other-provider-9876543210wxyz"


def seen(requests: list[RecordedRequest], secret: str) -> int:
    """How many requests carried ``secret`` anywhere: a header or the body."""
    return sum(secret in json.dumps(r.headers) or secret.encode() in r.body for r in requests)


async def test_a_stored_key_is_not_sent_to_another_provider(tmp_path: Path) -> None:
    async with running(tmp_path, model=False) as h, FakeModelServer() as other:
        first = h.fake
        page = Page(h)
        await page.open()
        await page.post("settings", changes={"model.base_url": first.base_url, "model.model": "m"})
        view = await page.post("key", apiKey=KEY)
        assert view["key"]["origin"] == origin(first.base_url) and view["key"]["applies"]
        await page.post("doctor")
        assert first.requests and seen(first.requests, KEY) == len(first.requests)

        # only the base URL changes: 测试连接 and a turn reach the other server without the key
        view = await page.post("settings", changes={"model.base_url": other.base_url})
        key = view["key"]
        assert (key["applies"], key["origin"], key["provider"]) == (
            False,
            origin(first.base_url),
            origin(other.base_url),
        )
        assert key["shown"] == "sk-…abcd"  # still stored, for its own provider
        await page.post("doctor")
        async with h.adapter() as ws:
            _, done = await chat(ws, "你好", "c1")
        assert done["type"] == "chat.done", done
        assert other.chat_requests and other.requests
        assert seen(other.requests, KEY) == 0
        assert h.server.model.routing.chat.api_key == ""
        # a vision model the page names at the other provider gets no key either
        await page.post(
            "settings",
            changes={"models.vision.model": "vl", "models.vision.base_url": other.base_url},
        )
        assert h.server.model.routing.vision.api_key == ""

        # the page lists what changed, origins only
        changes = (await page.get("settings"))["providerChanges"]
        assert [(c["what"], c["setting"], c["before"], c["after"]) for c in changes] == [
            ("base_url", "model.base_url", "", origin(first.base_url)),
            ("key_saved", "", "", origin(first.base_url)),
            ("base_url", "model.base_url", origin(first.base_url), origin(other.base_url)),
            ("base_url", "models.vision.base_url", "", origin(other.base_url)),
        ]
        assert KEY not in json.dumps(changes)

        # the player enters a key for the other provider: now it has one, the first none
        view = await page.post("key", apiKey=OTHER_KEY)
        assert view["key"]["applies"] and view["key"]["origin"] == origin(other.base_url)
        before = len(other.requests)
        await page.post("doctor")
        assert seen(other.requests[before:], OTHER_KEY) == len(other.requests) - before > 0
        await page.post("settings", changes={"model.base_url": first.base_url})
        before = len(first.requests)
        await page.post("doctor")
        assert len(first.requests) > before
        assert seen(first.requests, OTHER_KEY) == 0
        assert seen(other.requests, KEY) == 0
        stored = (h.settings.data_path / "provider.json").read_text(encoding="utf-8")
        assert KEY not in stored and OTHER_KEY not in stored


async def test_a_key_needs_a_provider_first(tmp_path: Path) -> None:
    async with running(tmp_path, model=False) as h:
        page = Page(h)
        await page.open()
        answer = await page.post("key", status=400, apiKey=KEY)
        assert answer["fields"] == ["model.base_url"] and answer["code"] == "needs_base_url"
        assert "「接口地址」" in answer["error"] and "choose the provider" not in answer["error"]
        assert (await page.get("settings"))["key"]["source"] == "none"


def look_at_settings(link: str) -> tuple[str, list[str]]:
    from tests import browser
    from tests.manage.test_browser import css, ready

    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        d.execute_script("document.getElementById('s-provider-log').open = true")
        note = css(d, "#s-key-origin")[0].text
        changes = [li.text for li in css(d, "#s-provider-changes li")]
        browser.screenshot(d, "ui-key-other-provider-390.png", 390)
        return note, changes


async def test_the_page_says_the_other_provider_needs_its_own_key(tmp_path: Path) -> None:
    from tests import browser

    if browser.find() is None:
        pytest.skip(browser.MISSING)
    async with running(tmp_path, model=False) as h, FakeModelServer() as other:
        page = Page(h)
        await page.open()
        await page.post("settings", changes={"model.base_url": h.fake.base_url, "model.model": "m"})
        await page.post("key", apiKey=KEY)
        await page.post("settings", changes={"model.base_url": other.base_url})
        note, changes = await anyio.to_thread.run_sync(look_at_settings, h.server.ui_link)
        first, second = origin(h.fake.base_url), origin(other.base_url)
    assert note == (
        f"保存的密钥属于 {first}，不会发给现在的服务商 {second}：请在上面粘贴这个服务商自己的密钥。"
    )
    assert len(changes) == 3 and changes[0].endswith(f"接口地址：{first} → {second}")
    assert changes[1].endswith(f"保存了 {first} 的密钥")
