"""The 设置 page's memory vectors: which embedder runs, and the player's choice of in-process,
the chat provider's own embedding model with the key already given (bound to that provider),
a local embedding server, or none; counted from the next start. Through the page API and in
Debian's chromium."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests import browser
from tests.conftest import START, TOKEN, Harness, running
from tests.manage.test_browser import css, ready, wait
from tests.manage.test_http import Page
from xtyserver.clock import ManualClock
from xtyserver.manage.embedding import SERVER_BASE_URL, SERVER_MODEL
from xtyserver.model.local_embedding import available as in_process_installed
from xtyserver.model.router import embedding_route
from xtyserver.model.routing import resolve
from xtyserver.serve.player_settings import PlayerSettings
from xtyserver.server import serving

browser_only = pytest.mark.skipif(browser.find() is None, reason=browser.MISSING)
DASHSCOPE = "https://dashscope.aliyuncs.com/compatible-mode/v1"
KEY = "sk-dash-0123456789abcdef7890"


def planned(player: PlayerSettings) -> Any:
    """The embedding route the stored choices give at the next start (with its key)."""
    settings = player.effective()
    routing = resolve(settings.model, settings.models, {})
    return embedding_route(
        routing,
        local=settings.memory.local_embedding,
        provider=settings.memory.provider_embedding,
    )


@pytest.mark.anyio
async def test_the_page_shows_the_embedder_and_stores_the_players_choice(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        view = (await page.get("settings"))["embedding"]
        # This server was started with none; nothing stored: automatic.
        assert view["inUse"] == {"kind": "none", "model": "", "origin": ""}
        assert view["choice"] == "auto" and view["inProcessInstalled"] == in_process_installed()
        assert view["providerModel"] == ""  # the scripted provider is no preset
        refused = await page.post("settings", 400, changes={"embedding": "provider"})
        assert refused["fields"] == ["embedding"]
        refused = await page.post("settings", 400, changes={"embedding": "cloud"})
        assert refused["fields"] == ["embedding"]
        # A player on Windows picks DashScope on this page (no preset name is stored) and
        # gives its key: its own embedding model, with that key, to that provider only.
        changes = {"model.base_url": DASHSCOPE, "model.model": "qwen-vl-plus"}
        await page.post("settings", changes=changes)
        await page.post("key", apiKey=KEY)
        view = (await page.get("settings"))["embedding"]
        assert view["providerModel"] == "text-embedding-v3"
        assert view["provider"] == "https://dashscope.aliyuncs.com:443"
        view = (await page.post("settings", changes={"embedding": "provider"}))["embedding"]
        assert view["choice"] == "provider" and view["restart"] is True
        assert view["chosen"] == {
            "kind": "cloud",
            "model": "text-embedding-v3",
            "origin": "https://dashscope.aliyuncs.com:443",
        }
        player = h.server.ui.settings.player  # type: ignore[union-attr]
        route = planned(player)
        assert (route.base_url, route.model, route.api_key) == (
            DASHSCOPE,
            "text-embedding-v3",
            KEY,
        )
        # A local embedding server: Ollama's address and bge-m3, and never the provider's key.
        view = (await page.post("settings", changes={"embedding": "server"}))["embedding"]
        assert view["choice"] == "server"
        assert view["chosen"] == {
            "kind": "local",
            "model": SERVER_MODEL,
            "origin": "http://127.0.0.1:11434",
        }
        route = planned(player)
        assert (route.base_url, route.model, route.api_key) == (SERVER_BASE_URL, SERVER_MODEL, "")
        view = (await page.post("settings", changes={"embedding": "off"}))["embedding"]
        assert view["choice"] == "off" and view["chosen"]["kind"] == "none"
        assert planned(player) is None
        view = (await page.post("settings", changes={"embedding": "server"}))["embedding"]
    # The next start runs what was chosen, and the page says so.
    player = PlayerSettings(tmp_path, env={}, overrides={"server.port": 0})
    async with serving(
        player.effective(), token=TOKEN, clock=ManualClock(START), player=player
    ) as server:
        assert server.model.embedder is not None and server.model.embedder.model == SERVER_MODEL
        settings = server.ui.settings
        assert settings is not None
        view = (await settings.view())["embedding"]
        assert view["inUse"]["kind"] == "local" and view["restart"] is False


def drive(h: Harness, link: str) -> list[Path]:
    shots: list[Path] = []
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        assert css(d, "#s-emb-in-use")[0].text == "现在在用：没有（只按字词和游戏词表找）"
        radios = {r.get_attribute("value"): r for r in css(d, 'input[name="s-emb"]')}
        assert radios["auto"].is_selected()
        assert radios["provider"].is_enabled() is False  # the scripted provider has none
        assert radios["in_process"].is_enabled() is in_process_installed()
        assert not css(d, "#s-emb-base-url")[0].is_displayed()
        radios["server"].click()
        assert css(d, "#s-emb-base-url")[0].get_attribute("value") == SERVER_BASE_URL
        assert css(d, "#s-emb-model")[0].get_attribute("value") == SERVER_MODEL
        css(d, "#s-save-embedding")[0].click()
        wait(d, lambda d: css(d, "#status")[0].text == "已保存：重启 xtyserver 后生效。")
        restart = css(d, "#s-emb-restart")[0].text
        assert restart == f"已保存：重启 xtyserver 后改用 本机嵌入服务（{SERVER_MODEL}）。", restart
        for width in (390, 1280):
            shots.append(browser.screenshot(d, f"ui-embedding-{width}.png", width))
            assert d.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth"
            ), width
        css(d, "#lang")[0].click()
        ready(d, "settings")
        assert css(d, "#s-emb-in-use")[0].text == (
            "In use now: none (words and the game glossary only)"
        )
        assert css(d, 'input[name="s-emb"][value="server"]')[0].is_selected()
    return shots


@pytest.mark.anyio
@browser_only
async def test_memory_vectors_on_the_settings_page_in_the_browser(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running(tmp_path) as h:
        shots = await anyio.to_thread.run_sync(drive, h, h.server.ui_link)
        player = h.server.ui.settings.player  # type: ignore[union-attr]
        assert player.stored()["models.embedding.model"] == SERVER_MODEL
    with capsys.disabled():
        for path in shots:
            print(f"\nscreenshot: {path}")
