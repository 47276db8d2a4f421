"""A key per install (v1.md "Keys per install", issue 36 item 13) walked with the real mods.

Two Steam accounts on one PC play DST (two game clients at once, as a couple sharing a PC
would, or one after the other): each account has its own persistent strings (Klei keeps
them per account), so the mod in each is its own install, with its own install id, key and salt.
Before install ids the server kept one key per mod name, and the second account's pairing
revoked the first's. Here both DST clients (scripts/xty/mod.lua in the lua5.1 shim, over
POST /v1/http) pair one after the other with the player's click, both keep playing, both
come back by themselves after the server restarts (no pairing again), and the page in headless
Chromium lists both installs, marks both as connected, and removes one with 撤销: that
install is closed (4001) and forgets its key; the other plays on.

The same with the C# library (test/Probe.cs on Mono, over WebSocket): two SMAPI installs, each
with its own mod folder and its own KeepStore (ModFolder.InstallId() beside the key), pair one
after the other, both play, and both come back after a server restart without pairing again.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.adapter.games import EVENING, NO_LUA, Game, dst_game, free_port, has_luasocket, serve
from tests.adapter.mono import NO_MONO, NO_MONO_REASON
from tests.adapter.test_pairing_clients import DST_KEY, KEY_FILE, code_in, csharp_mod
from tests.conftest import Harness
from tests.manage.test_http import Page
from tests.test_server_pairing import pending
from xtyserver.clock import ManualClock

pytestmark = pytest.mark.anyio
NEEDS_LUA = pytest.mark.skipif(NO_LUA or not has_luasocket(), reason="needs lua5.1 and lua-socket")
NEEDS_MONO = pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON)
INSTALL = "xiaotangyuan_install"  # mod.lua M.INSTALL_KEY
INSTALL_FILE = "xiaotangyuan-install.txt"  # ModFolder.InstallName in a FolderStore
PROMPT = "said: 在小汤圆页面上确认配对码 "


async def pair_with_click(page: Page, world: Game) -> None:
    """The player types the code this game shows and allows that request."""
    shown = world.lines[await world.expect(PROMPT)]
    [request] = [r for r in await pending(page) if r["code"] == code_in(shown)]
    await page.post("pair", requestId=request["id"], allow=True)
    await world.expect(f"persisted {DST_KEY}")
    await world.expect("session open")


async def chats(world: Game, text: str, after: int = 0) -> None:
    world.do(f"chat {text}")
    await world.expect(f"reply: 小汤圆收到：{text}", after=after)


def revoke_the_first_install(link: str, shots: list[Path]) -> None:
    """In Chromium: 设置 lists both installs of XTY DST, both connected now; 撤销 on the first."""
    from tests import browser
    from tests.manage.test_browser import css, ready, wait

    rows = "#paired-keys tr[data-paired-key]"
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        wait(d, lambda d: len(css(d, rows)) == 2)
        wait(d, lambda d: all(r.find_elements("css selector", "td")[3].text for r in css(d, rows)))
        cells = [[c.text for c in r.find_elements("css selector", "td")] for r in css(d, rows)]
        assert [c[:2] for c in cells] == [
            ["XTY DST（第 1 个安装）", "饥荒联机版"],
            ["XTY DST（第 2 个安装）", "饥荒联机版"],
        ], cells
        assert [c[3] for c in cells] == ["现在连着", "现在连着"], cells
        note = css(d, "#paired-installs")[0]
        assert note.is_displayed() and note.text.startswith("同一个 mod 的每个安装"), note.text
        # Nothing waits to pair after the restart: no code prompt (hidden, not just empty).
        assert not css(d, "#pair-requests")[0].is_displayed()
        d.set_window_size(390, 900)  # the section alone: the whole page is taller than a shot
        section = css(d, "#paired-mods")[0]
        d.execute_script("arguments[0].scrollIntoView()", section)
        browser.ARTIFACTS.mkdir(parents=True, exist_ok=True)
        shots.append(browser.ARTIFACTS / "ui-paired-installs-390.png")
        assert section.screenshot(str(shots[-1]))
        # English beside: the same rows say which install and that both are connected.
        css(d, "#lang")[0].click()
        english = [
            ["XTY DST (install 1)", "connected now"],
            ["XTY DST (install 2)", "connected now"],
        ]
        wait(
            d,
            lambda d: (
                [
                    [r.find_elements("css selector", "td")[i].text for i in (0, 3)]
                    for r in css(d, rows)
                ]
                == english
            ),
        )
        assert css(d, "#paired-installs")[0].text.startswith("Each install of one mod")
        css(d, "#lang")[0].click()
        wait(d, lambda d: css(d, rows)[0].find_elements("css selector", "td")[3].text == "现在连着")
        css(d, rows)[0].find_elements("css selector", "button.pair-revoke")[0].click()
        wait(d, lambda d: len(css(d, rows)) == 1)
        [left] = [[c.text for c in r.find_elements("css selector", "td")] for r in css(d, rows)]
        assert left[0] == "XTY DST" and left[3] == "现在连着", left  # one install: no number
        assert not css(d, "#paired-installs")[0].is_displayed()
        assert "操作失败" not in css(d, "#status")[0].text


@NEEDS_LUA
async def test_two_dst_accounts_on_one_pc_keep_a_key_each(tmp_path: Path) -> None:
    from tests import browser

    if browser.find() is None:
        pytest.skip(browser.MISSING)
    port = free_port()
    clock = ManualClock(EVENING)
    accounts = [tmp_path / "klei-account-1", tmp_path / "klei-account-2"]
    async with (
        dst_game(tmp_path, port, store=accounts[0], token="") as first,
        dst_game(tmp_path, port, store=accounts[1], token="") as second,
    ):
        async with serve(tmp_path, port, clock) as h:
            page = Page(h)
            await page.open()
            # Both ask (each its own code); the player allows one, then the other.
            await pair_with_click(page, first)
            clock.advance(60)
            await pair_with_click(page, second)
            for world in (first, second):
                await chats(world, "附近危险吗？")
            # Two installs, two ids, two keys: the second pairing revoked nobody.
            ids = [(store / INSTALL).read_text() for store in accounts]
            keys = [(store / DST_KEY).read_text() for store in accounts]
            assert ids[0] != ids[1] and keys[0] != keys[1]
            assert "session closed" not in first.output
            assert len((await page.get("pairing"))["keys"]) == 2
        # The server restarts (the same data folder): both come back with their kept keys.
        marks = [len(world.lines) for world in (first, second)]
        async with serve(tmp_path, port, clock) as h:
            for world, mark in zip((first, second), marks, strict=True):
                await world.expect("session open", after=mark, timeout=120)
                await chats(world, "你好", after=mark)
            assert [w.count(PROMPT, m) for w, m in zip((first, second), marks, strict=True)] == [
                0,
                0,
            ]
            assert [w.count(f"persisted {DST_KEY}") for w in (first, second)] == [1, 1]
            assert [(store / DST_KEY).read_text() for store in accounts] == keys
            # 设置 in the browser: both installs listed and connected; 撤销 the first.
            shots: list[Path] = []
            mark = len(first.lines)
            await anyio.to_thread.run_sync(revoke_the_first_install, h.server.ui_link, shots)
            await first.expect("session closed 4001", after=mark)
            await first.expect(f"persisted {DST_KEY}", after=mark)
            assert (accounts[0] / DST_KEY).read_text() == ""  # forgotten: it pairs next time
            mark = len(second.lines)
            await chats(second, "还在吗？", after=mark)
            assert "session closed 4001" not in second.output
            assert (accounts[1] / DST_KEY).read_text() == keys[1]
            for shot in shots:
                print(f"screenshot: {shot}")


@NEEDS_MONO
async def test_two_csharp_installs_with_their_own_stores_keep_a_key_each(
    tmp_path: Path, probe: Path
) -> None:
    port = free_port()
    clock = ManualClock(EVENING)
    stores = [tmp_path / "user-1" / "mod-data", tmp_path / "user-2" / "mod-data"]
    folders = [tmp_path / "smapi-1-mod", tmp_path / "smapi-2-mod"]
    for store in stores:
        store.parent.mkdir()
    async with (
        csharp_mod(tmp_path, probe, port, folders[0], stores[0]) as one,
        csharp_mod(tmp_path, probe, port, folders[1], stores[1]) as two,
    ):
        async with serve(tmp_path, port, clock) as h:
            page = Page(h)
            await page.open()
            for mod in (one, two):  # the player allows one, then the other, by its code
                shown = mod.lines[await mod.expect("pair code ")]
                [request] = [r for r in await pending(page) if r["code"] == code_in(shown)]
                await page.post("pair", requestId=request["id"], allow=True)
                await mod.expect("paired, key kept")
                await mod.expect("session open")
                clock.advance(60)
            for mod in (one, two):
                mod.do("chat 你好")
                await mod.expect("chat end done 小汤圆收到：你好")
            ids = [(store / INSTALL_FILE).read_text(encoding="utf-8") for store in stores]
            keys = [(store / KEY_FILE).read_text(encoding="utf-8") for store in stores]
            assert ids[0] != ids[1] and keys[0] != keys[1]
            listed = (await page.get("pairing"))["keys"]
            assert [(k["adapter"], k["install"], k["inUse"]) for k in listed] == [
                ("XTY Probe", 1, True),
                ("XTY Probe", 2, True),
            ]
            assert "closed 4001" not in one.output + two.output
        marks = [len(one.lines), len(two.lines)]
        async with serve(tmp_path, port, clock) as h:  # the server restarts
            for mod, mark in zip((one, two), marks, strict=True):
                await mod.expect("session open", after=mark, timeout=120)
                mod.do("chat 还在吗？")
                await mod.expect("chat end done 小汤圆收到：还在吗？", after=mark)
                assert mod.count("pair code", mark) == 0
            assert [(store / KEY_FILE).read_text(encoding="utf-8") for store in stores] == keys
            assert len(await _keys(h)) == 2  # both kept, nothing paired again
        assert "closed 4001" not in one.output + two.output


async def _keys(h: Harness) -> list[dict[str, object]]:
    page = Page(h)
    await page.open()
    return list((await page.get("pairing"))["keys"])
