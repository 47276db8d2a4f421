"""The first run's likeliest mistake, walked in a real browser on the player's ``xtyserver``.

A real ``python -m xtyserver`` (no arguments, no model anywhere) and Debian's
chromium under Selenium. 设置 starts on 「请选择服务商」, never on a provider the
player did not pick; a key pasted before any provider (or with 其他 and an empty
address) is answered in Chinese naming the field, which is marked and focused;
an address typed without ``http(s)://`` or pasted with ``/chat/completions`` is
stored whole and shown so; one that is no address is refused, nothing saved.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests import browser
from tests.cli.test_windows import Serve
from tests.manage.test_browser import css, ready, wait
from tests.manage.test_page import choose

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(browser.find() is None, reason=browser.MISSING),
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
]
KEY = "sk-firstrun-0123456789abcdef"


def status(d: Any) -> str:
    return str(css(d, "#status")[0].text)


def save_with_key(d: Any) -> None:
    field = css(d, "#s-key")[0]
    field.clear()
    field.send_keys(KEY)
    css(d, "#s-save")[0].click()  # the page clears its status line, then says the answer
    wait(d, lambda d: status(d))


def active_id(d: Any) -> str:
    return str(d.execute_script("return document.activeElement.id"))


def drive(link: str) -> None:
    with browser.chromium() as d:
        d.get(link)
        ready(d, "settings")
        preset = css(d, "#s-preset")[0]
        assert preset.get_attribute("value") == ""
        assert "请选择服务商" in d.execute_script(
            "const s = document.getElementById('s-preset'); return s.options[s.selectedIndex].text"
        )

        # A key pasted before choosing anything: the provider field is named and focused.
        save_with_key(d)
        said = status(d)
        assert said.startswith("操作失败") is False and "「服务商」" in said, said
        assert "choose the provider" not in said and "model.base_url" not in said
        assert "没有保存密钥" in said
        assert preset.get_attribute("aria-invalid") == "true" and active_id(d) == "s-preset"
        assert css(d, "#s-key-status")[0].text == "还没有保存密钥。"

        # 其他 with the address left empty: the address field this time.
        choose(d, "#s-preset", "other")
        assert "接口地址" in css(d, "#s-preset-note")[0].text
        save_with_key(d)
        assert "「接口地址」" in status(d), status(d)
        address = css(d, "#s-base-url")[0]
        assert address.get_attribute("aria-invalid") == "true" and active_id(d) == "s-base-url"

        # Not an address at all (a key pasted into the wrong box): refused, nothing stored.
        address.send_keys("sk-pasted-here")
        css(d, "#s-model")[0].send_keys("some-chat")
        save_with_key(d)
        assert "「接口地址」不是网址" in status(d) and "没有保存任何内容" in status(d), status(d)
        assert css(d, "#s-key-status")[0].text == "还没有保存密钥。"

        # Typed without https://, pasted with the endpoint: stored whole, shown whole.
        address.clear()
        address.send_keys("api.example.com/v1/chat/completions")
        save_with_key(d)
        wait(d, lambda d: "https://api.example.com/v1" in status(d))
        assert "补全" in status(d)
        assert css(d, "#s-base-url")[0].get_attribute("value") == "https://api.example.com/v1"
        assert css(d, "#s-key-status")[0].text.endswith("sk-…cdef"), css(d, "#s-key-status")[0].text
        assert css(d, "#s-preset")[0].get_attribute("value") == "other"

        # DeepSeek: where its key comes from, and that it sends no screenshots.
        choose(d, "#s-preset", "deepseek")
        note = css(d, "#s-preset-note")[0].text
        assert "platform.deepseek.com" in note and "不能看图" in note, note
        choose(d, "#s-preset", "ollama")
        assert "不需要 API 密钥" in css(d, "#s-preset-note")[0].text

        # The same in English.
        css(d, "#lang")[0].click()
        ready(d, "settings")
        css(d, "#s-base-url")[0].clear()
        css(d, "#s-base-url")[0].send_keys("not an address")
        save_with_key(d)
        assert status(d).startswith("The address is not a web address"), status(d)


async def test_a_key_before_a_provider_names_the_field_and_addresses_are_made_whole(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    config = tmp_path / "xty.toml"
    config.write_text("[server]\nport = 0\n", encoding="utf-8")
    server = Serve(data, "--no-browser", "--config", str(config))
    try:
        await anyio.to_thread.run_sync(drive, server.link)
    finally:
        server.stop()
