"""Pairing (v1.md "Pairing"): a mod without a key asks, the player allows.

Over the real server: the Python adapter client pairs after the player's
click, made through the real page API exactly as the page's script makes it
(session cookie, CSRF, ``POST /ui/api/pair``), stores its key owner-only and
connects with it again; without the click (denied, expired) nothing pairs; a
revoked key is refused and its open connection closed (4001); the limits hold;
the DST HTTP transport carries the same frames.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import anyio
import pytest
import websockets

from tests.conftest import Harness, chat, hello_frame, recv, running, send
from tests.manage.test_http import Page
from tests.serve.test_http_transport import call, until
from xtyserver.adapter.client import AdapterClient
from xtyserver.adapter.precheck import Refused
from xtyserver.protocol.frames import AdapterInfo, ChatDone, Identity
from xtyserver.serve.pairing import PAIR_SECONDS

pytestmark = pytest.mark.anyio
DST = "dont-starve-together"
MOD = AdapterInfo(name="xty-dst", version="0.1.0")


def pair_frame(name: str = "xty-dst", game: str = DST, frame_id: str = "p1") -> dict[str, Any]:
    return {
        "type": "adapter.pair",
        "id": frame_id,
        "adapter": {"name": name, "version": "0.1.0"},
        "gameId": game,
    }


async def pending(page: Page, count: int = 1) -> list[dict[str, Any]]:
    """The page's pending requests, once there are ``count`` of them."""
    with anyio.fail_after(10):
        while len(listed := (await page.get("pairing"))["pending"]) < count:
            await anyio.sleep(0.01)
    return list(listed)


def client(h: Harness, key_file: Path, codes: list[str] | None = None, **kw: Any) -> AdapterClient:
    return AdapterClient(
        h.url,
        identity=Identity(game_id=DST, save_id="world-a"),
        adapter=MOD,
        timezone="Asia/Shanghai",
        key_file=key_file,
        on_pair_code=None if codes is None else codes.append,
        **kw,
    )


async def test_a_mod_pairs_after_the_players_click_and_a_revoked_key_is_refused(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        key_file = tmp_path / "mod" / "xiaotangyuan_key"
        codes: list[str] = []
        sessions: list[str] = []

        async def play() -> None:
            async with client(h, key_file, codes) as mod:
                sessions.append(mod.server_hello.session_id)
                reply = await mod.chat("你好")
                assert isinstance(await reply.result(), ChatDone)

        async with anyio.create_task_group() as tg:
            tg.start_soon(play)
            [request] = await pending(page)
            # what the page shows: the mod, the game, the same code the mod may show in game
            assert (request["adapter"], request["gameId"]) == ("xty-dst", DST)
            assert codes == [request["code"]] and len(request["code"]) == 4
            assert not key_file.exists()  # nothing without the click
            view = await page.post("pair", requestId=request["id"], allow=True)
            assert view["pending"] == []
        assert len(sessions) == 1
        key = key_file.read_text(encoding="ascii")
        assert len(key) == 43 and stat.S_IMODE(key_file.stat().st_mode) == 0o600
        [paired] = (await page.get("pairing"))["keys"]
        assert (paired["adapter"], paired["gameId"]) == ("xty-dst", DST)
        assert paired["lastUsed"] is not None
        stored = (h.settings.data_path / "paired-keys.json").read_text(encoding="utf-8")
        assert key not in stored  # a hash only
        assert stat.S_IMODE((h.settings.data_path / "paired-keys.json").stat().st_mode) == 0o600

        # the stored key opens the next connection, as a header or in the hello
        async with client(h, key_file) as mod:
            assert mod.server_hello.session_id not in sessions
        async with client(h, key_file, token_in_hello=True) as mod:
            assert mod.server_hello.session_id

        # revoked on the page: the open connection is closed 4001, the key refused after
        async with h.client(additional_headers={"Authorization": f"Bearer {key}"}) as ws:
            await send(ws, hello_frame(DST, "world-a", token=None))
            assert (await recv(ws))["type"] == "server.hello"
            view = await page.post("revoke", keyId=paired["id"])
            assert view["keys"] == []
            with anyio.fail_after(10), pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4001
        with pytest.raises(websockets.InvalidStatus) as refused:
            async with h.client(additional_headers={"Authorization": f"Bearer {key}"}):
                pass
        assert refused.value.response.status_code == 401
        async with h.client() as ws:  # and in a hello
            await send(ws, hello_frame(DST, "world-a", token=key))
            assert (await recv(ws))["code"] == "unauthorized"
        assert (await page.post("revoke", status=404, keyId=paired["id"]))["fields"] == ["keyId"]


async def test_nothing_pairs_without_the_click(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        key_file = tmp_path / "key"
        outcome: list[BaseException] = []

        async def ask() -> None:
            try:
                async with client(h, key_file):
                    pass
            except Refused as exc:
                outcome.append(exc)

        # denied
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            [request] = await pending(page)
            await page.post("pair", requestId=request["id"], allow=False)
        assert [getattr(e, "code", None) for e in outcome] == ["pair_denied"]
        # a decided request is gone: a second click does nothing
        await page.post("pair", status=404, requestId=request["id"], allow=True)
        # nobody clicks: expired after its life, on the server's clock
        async with anyio.create_task_group() as tg:
            tg.start_soon(ask)
            await pending(page)
            h.clock.advance(PAIR_SECONDS - 1)
            assert len((await page.get("pairing"))["pending"]) == 1
            h.clock.advance(1)
        assert [getattr(e, "code", None) for e in outcome] == ["pair_denied", "pair_expired"]
        assert not key_file.exists()
        assert (await page.get("pairing")) == {"pending": [], "keys": []}
        # a page that is not the player's: no session, no click
        bare = [page.host, page.origin, page.json]
        from tests.manage.ui_fixtures import http

        body = json.dumps({"requestId": "0" * 16, "allow": True}).encode()
        assert (await http(page.port, "POST", "/ui/api/pair", bare, body)).status == 401


async def test_pair_requests_are_limited(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        async with h.client() as one, h.client() as same:
            await send(one, pair_frame())
            assert (await recv(one))["type"] == "pair.pending"
            await send(same, pair_frame(frame_id="p2"))  # the same mod again
            busy = await recv(same)
            assert (busy["type"], busy["code"], busy["id"]) == ("error", "pair_busy", "p2")
            await send(one, pair_frame(frame_id="p3"))  # twice on one connection
            assert (await recv(one))["code"] == "pair_busy"
            others = [h.client() for _ in range(4)]
            opened = [await o.__aenter__() for o in others]
            try:
                for n, ws in enumerate(opened):
                    await send(ws, pair_frame(name=f"mod-{n}"))
                answers = [(await recv(ws))["type"] for ws in opened]
                assert answers == ["pair.pending"] * 3 + ["error"]  # at most 4 at once
                assert len(await pending(page, 4)) == 4
            finally:
                for o in others:
                    await o.__aexit__(None, None, None)
        # a connection that already proved the token does not pair
        bearer = {"Authorization": "Bearer " + hello_frame()["token"]}
        async with h.client(additional_headers=bearer) as ws:
            await send(ws, pair_frame())
            assert (await recv(ws))["code"] == "hello_required"


async def test_the_http_transport_carries_pairing(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        first = await call(h, None, [pair_frame()])
        [answer] = first["frames"]
        assert answer["type"] == "pair.pending" and answer["replyTo"] == "p1"
        assert answer["expiresInSeconds"] == PAIR_SECONDS
        session = first["session"]
        [request] = await pending(page)
        assert request["code"] == answer["code"]
        await page.post("pair", requestId=request["id"], allow=True)
        seen, _ = await until(h, session, "pair.granted")
        key = next(f["key"] for f in seen if f["type"] == "pair.granted")
        # the same session goes on with the key, as a DST mod's next call does
        done = await call(h, session, [hello_frame(DST, "world-a", token=key)], 2000)
        assert [f["type"] for f in done["frames"]] == ["server.hello"]
        async with h.client() as ws:  # and a new connection with it
            await send(ws, hello_frame(DST, "world-a", token=key))
            assert (await recv(ws))["type"] == "server.hello"
            _, end = await chat(ws, "你好", "c1")
            assert end["type"] == "chat.done"


def click_allow(link: str, shots: list[Path]) -> None:
    """In Chromium: the request shows on the page (its code too); the player clicks Allow."""
    from tests import browser
    from tests.manage.test_browser import css, ready, wait

    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        wait(d, lambda d: d.execute_script("return document.body.dataset.pairing") == "1")
        text = css(d, "#pair-requests .pair-request p")[0].text
        assert text.startswith("饥荒联机版的 mod（xty-dst）想连接小汤圆，配对码 ")
        shots.append(browser.screenshot(d, "ui-pair-request-390.png", 390))
        css(d, "#pair-requests .pair-allow")[0].click()
        wait(d, lambda d: d.execute_script("return document.body.dataset.pairing") == "0")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        wait(d, lambda d: len(css(d, "#paired-keys tr[data-paired-key]")) == 1)
        assert css(d, "#paired-keys tr[data-paired-key] td")[0].text == "xty-dst"
        shots.append(browser.screenshot(d, "ui-paired-mods-1280.png", 1280))
        # 设置 still works once a mod is paired, after a reload too (issue 36, item 1): its
        # fields show the saved values and saving says so, with no failure on the status line.
        d.refresh()
        ready(d, "memory")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        wait(d, lambda d: len(css(d, "#paired-keys tr[data-paired-key]")) == 1)
        assert len(css(d, "#s-preset option")) > 1  # the view was drawn
        assert "操作失败" not in css(d, "#status")[0].text
        css(d, "#s-save")[0].click()
        wait(
            d,
            lambda d: (
                "已保存" in css(d, "#status")[0].text or "操作失败" in css(d, "#status")[0].text
            ),
        )
        assert css(d, "#status")[0].text.startswith("已保存"), css(d, "#status")[0].text


async def test_the_player_allows_a_mod_in_the_browser(tmp_path: Path) -> None:
    from tests import browser

    if browser.find() is None:
        pytest.skip(browser.MISSING)
    async with running(tmp_path) as h:
        key_file = tmp_path / "key"
        codes: list[str] = []
        shots: list[Path] = []
        async with anyio.create_task_group() as tg:

            async def pair_and_play() -> None:
                async with client(h, key_file, codes) as mod:
                    assert isinstance(await (await mod.chat("你好")).result(), ChatDone)

            tg.start_soon(pair_and_play)
            await anyio.to_thread.run_sync(click_allow, h.server.ui_link, shots)
        assert len(key_file.read_text(encoding="ascii")) == 43 and len(codes) == 1
        for shot in shots:
            print(f"screenshot: {shot}")


async def test_a_web_page_never_pairs(tmp_path: Path) -> None:
    page_origin = "http://game-guide.example"
    async with running(tmp_path, overrides={"server.allowed_origins": [page_origin]}) as h:
        async with h.client(origin=page_origin) as ws:  # let in by server.allowed_origins
            await send(ws, pair_frame())
            answer = await recv(ws)
            assert (answer["type"], answer["code"]) == ("error", "unauthorized")
            with anyio.fail_after(10), pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4001
        page = Page(h)
        await page.open()
        assert (await page.get("pairing"))["pending"] == []


async def test_a_revoke_closes_sessions_whose_first_hello_carried_the_key(tmp_path: Path) -> None:
    """A hello sent as the connection's first message seats it at once; revoked, it closes too."""
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        session = (await call(h, None, [pair_frame()]))["session"]
        [request] = await pending(page)
        await page.post("pair", requestId=request["id"], allow=True)
        seen, _ = await until(h, session, "pair.granted")
        key = next(f["key"] for f in seen if f["type"] == "pair.granted")
        async with h.client() as ws:
            await send(ws, hello_frame(DST, "world-a", token=key))  # first message: seated at once
            assert (await recv(ws))["type"] == "server.hello"
            opened = await call(h, None, [hello_frame(DST, "world-b", token=key)], 2000)
            assert [f["type"] for f in opened["frames"]] == ["server.hello"]
            [paired] = (await page.get("pairing"))["keys"]
            await page.post("revoke", keyId=paired["id"])
            with anyio.fail_after(10), pytest.raises(websockets.ConnectionClosed) as closed:
                await ws.recv()
            assert closed.value.rcvd is not None and closed.value.rcvd.code == 4001
        with anyio.fail_after(10):
            while "closed" not in (answer := await call(h, opened["session"], [], 2000)):
                pass
        assert answer["closed"]["code"] == 4001
