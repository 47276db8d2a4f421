"""A key per install (v1.md "Keys per install", issue 36 item 13), over the real server.

Two installs of one mod that keep their keys in separate stores (two DST Steam accounts, two
SMAPI folders) each send their own ``installId`` in ``adapter.pair`` and each keep a key:
pairing the second never refuses the first, both survive a server restart, revoking one leaves
the other. A mod that sends no ``installId`` (written before the field) keeps one key per mod
exactly as before. An ``installId`` is an opaque random id: a path, a name or an account id is
refused, naming the field. Squatting (S5-3) still cannot block or replace: a request carrying a
paired install's id changes nothing without the player's click on the code the game shows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest
import websockets
from websockets.asyncio.server import ServerConnection, serve

from tests.conftest import Harness, hello_frame, recv, running, send
from tests.manage.test_http import Page
from tests.test_server_pairing import DST, MOD, client, pair_frame, pending
from xtyserver.adapter.pairing import install_id, pair
from xtyserver.clock import ManualClock
from xtyserver.protocol.frames import ChatDone
from xtyserver.serve.pairing import PAIR_SECONDS

pytestmark = pytest.mark.anyio
START = 1_800_000_000.0


def with_install(install: str | None, frame_id: str = "p1") -> dict[str, Any]:
    frame = pair_frame(frame_id=frame_id)
    if install is not None:
        frame["installId"] = install
    return frame


async def pair_raw(h: Harness, page: Page, install: str | None) -> str:
    """One tokenless connection asks (with ``install``), the player allows it: the key."""
    async with h.client() as ws:
        await send(ws, with_install(install))
        code = (await recv(ws))["code"]
        [request] = [r for r in await pending(page) if r["code"] == code]
        await page.post("pair", requestId=request["id"], allow=True)
        granted = await recv(ws)
        assert granted["type"] == "pair.granted", granted
        return str(granted["key"])


async def says_hello(h: Harness, key: str) -> bool:
    async with h.client() as ws:
        await send(ws, hello_frame(DST, "world-a", token=key))
        return (await recv(ws))["type"] == "server.hello"


async def allow_next(page: Page, codes: list[str], count: int) -> None:
    """The player types the code the game shows (the ``count``-th) and allows that request."""
    with anyio.fail_after(10):
        while len(codes) < count:
            await anyio.sleep(0.01)
    [request] = [r for r in await pending(page) if r["code"] == codes[count - 1]]
    await page.post("pair", requestId=request["id"], allow=True)


async def test_two_installs_keep_a_key_each_across_a_restart(tmp_path: Path) -> None:
    """Two installs (two key files, as two Steam accounts' persistent strings are) pair one
    after the other: both keys are listed, both play, a restart keeps both, revoking one leaves
    the other, and the revoked one pairing again replaces only its own key."""
    data = tmp_path / "data"
    one, two = tmp_path / "account-1" / "key", tmp_path / "account-2" / "key"
    codes: list[str] = []

    async def play(key_file: Path) -> None:
        async with client(h, key_file, codes) as mod:
            assert isinstance(await (await mod.chat("你好")).result(), ChatDone)

    async with running(data, clock=ManualClock(START)) as h:
        page = Page(h)
        await page.open()
        for n, key_file in enumerate((one, two), 1):
            async with anyio.create_task_group() as tg:
                tg.start_soon(play, key_file)
                await allow_next(page, codes, n)
        ids = {install_id(one), install_id(two)}
        assert len(ids) == 2 and all(len(i) == 32 for i in ids)  # each made its own, kept
        keys = (await page.get("pairing"))["keys"]
        assert [(k["adapter"], k["gameId"], k["install"]) for k in keys] == [
            ("xty-dst", DST, 1),
            ("xty-dst", DST, 2),
        ]
        stored = (data / "paired-keys.json").read_text(encoding="utf-8")
        for key_file in (one, two):
            assert key_file.read_text(encoding="ascii") not in stored  # hashes only
        view = (await page.get("pairing"))["keys"]
        assert all("installId" not in k and "install_id" not in k for k in view)
        assert not any(i in str(view) for i in ids)  # the page never sees an install id
    # The server restarts: both installs still play with their kept keys, nobody pairs.
    async with running(data, clock=ManualClock(START + 60)) as h:
        page = Page(h)
        await page.open()
        for key_file in (one, two):
            await play(key_file)
        assert len(codes) == 2
        first, second = (await page.get("pairing"))["keys"]
        # Which row is the game in front of the player: the one with an open connection.
        async with client(h, two) as mod:
            assert mod.server_hello.session_id
            want = {first["id"]: False, second["id"]: True}
            with anyio.fail_after(10):  # the earlier connections' closes may still be on their way
                while {k["id"]: k["inUse"] for k in (await page.get("pairing"))["keys"]} != want:
                    await anyio.sleep(0.02)
        # Revoke the first install: the second plays on; the first asks to pair again.
        await page.post("revoke", keyId=first["id"])
        assert [k["id"] for k in (await page.get("pairing"))["keys"]] == [second["id"]]
        assert await says_hello(h, two.read_text(encoding="ascii"))
        assert not await says_hello(h, one.read_text(encoding="ascii"))
        one.unlink()  # what the mod does with a refused key (AdapterClient does not: it raises)
        async with anyio.create_task_group() as tg:
            tg.start_soon(play, one)
            await allow_next(page, codes, 3)
        assert install_id(one) in ids  # the same install: its id was kept beside the key
        keys = (await page.get("pairing"))["keys"]
        assert len(keys) == 2 and second["id"] in {k["id"] for k in keys}
        for key_file in (one, two):
            assert await says_hello(h, key_file.read_text(encoding="ascii"))


async def test_pairing_again_replaces_only_the_same_installs_key(tmp_path: Path) -> None:
    install_a, install_b = "0123456789abcdef" * 2, "fedcba98-7654-3210-fedc-ba9876543210"
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        a1 = await pair_raw(h, page, install_a)
        b1 = await pair_raw(h, page, install_b)
        a2 = await pair_raw(h, page, install_a)  # install A lost its store's key and paired again
        assert not await says_hello(h, a1)
        assert await says_hello(h, a2) and await says_hello(h, b1)
        assert len((await page.get("pairing"))["keys"]) == 2


async def test_a_mod_without_an_install_id_keeps_one_key_per_mod(tmp_path: Path) -> None:
    """Today's mods, unchanged: pairing again replaces the mod's key (and never a key of an
    install that sent an id); the listing has no install numbers for a single key."""
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        first = await pair_raw(h, page, None)
        [listed] = (await page.get("pairing"))["keys"]
        assert listed["install"] is None and listed["inUse"] is False
        with_id = await pair_raw(h, page, "ab" * 16)
        second = await pair_raw(h, page, None)
        assert not await says_hello(h, first)
        assert await says_hello(h, second) and await says_hello(h, with_id)
        assert len((await page.get("pairing"))["keys"]) == 2


@pytest.mark.parametrize(
    "install",
    [
        "C:/Users/xiaoming/AppData",  # a path
        "xiaoming-steam-account",  # a user name
        "76561197960287930",  # a Steam64 id (all digits, so hex-shaped)
        "xiaoming@qq.com-0000",  # an e-mail
        "0123456789abcde",  # 15 characters: too short to be random
        "-0123456789abcdef",  # not starting with a hex digit
        "0" * 65,  # too long
    ],
)
async def test_an_install_id_is_an_opaque_random_id(tmp_path: Path, install: str) -> None:
    """Refused naming the field, the connection stays, and the same connection may ask again."""
    async with running(tmp_path) as h, h.client() as ws:
        await send(ws, with_install(install))
        refused = await recv(ws)
        assert refused["type"] == "error" and refused["fields"] == ["installId"], refused
        assert refused["code"] in {"invalid_frame", "forbidden_content"}
        await send(ws, with_install("9f" * 16, "p2"))
        assert (await recv(ws))["type"] == "pair.pending"


async def test_a_squatter_with_an_installs_id_replaces_nothing(tmp_path: Path) -> None:
    """S5-3 with install ids: a local process that read an install's id asks to pair with it
    50 times; the page names none of them until a code is typed, nothing is replaced without
    the click, and the real install's key plays on; the real mod of another install still
    pairs among them by its own code."""
    install = "5a" * 16
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        kept = await pair_raw(h, page, install)
        async with anyio.create_task_group() as tg:
            squatters = []
            for n in range(50):
                ws = await websockets.connect(h.url)
                squatters.append(ws)
                await send(ws, with_install(install, f"s{n}"))
                assert (await recv(ws))["type"] == "pair.pending"
            key_file = tmp_path / "other-install" / "key"
            codes: list[str] = []

            async def play() -> None:
                async with client(h, key_file, codes) as mod:
                    assert isinstance(await (await mod.chat("你好")).result(), ChatDone)

            tg.start_soon(play)
            listed = await pending(page, 51)
            assert len({r["code"] for r in listed}) == 51
            await allow_next(page, codes, 1)
        h.clock.advance(PAIR_SECONDS)
        for ws in squatters:
            assert (await recv(ws))["type"] == "pair.expired"
            await ws.close()
        assert await says_hello(h, kept)
        assert len((await page.get("pairing"))["keys"]) == 2


async def test_a_server_older_than_install_ids_is_asked_again_without_one(
    tmp_path: Path,
) -> None:
    """A new mod meets a server from before the field: it refuses ``installId`` as an unknown
    field (the exact answer such a server gives); the client asks again without it and pairs."""
    asked: list[dict[str, Any]] = []

    async def old_server(ws: ServerConnection) -> None:
        import json

        async for raw in ws:
            frame = json.loads(raw)
            asked.append(frame)
            if "installId" in frame:
                refusal = {
                    "type": "error",
                    "code": "invalid_frame",
                    "message": "installId: unknown field",
                    "id": frame["id"],
                    "fields": ["installId"],
                }
                await ws.send(json.dumps(refusal))
                continue
            for answer in (
                {
                    "type": "pair.pending",
                    "replyTo": "pair",
                    "code": "1234",
                    "expiresInSeconds": 120,
                },
                {"type": "pair.granted", "replyTo": "pair", "key": "k" * 43},
            ):
                await ws.send(json.dumps(answer))

    async with serve(old_server, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        async with websockets.connect(f"ws://127.0.0.1:{port}") as ws:
            key = await pair(ws, MOD, DST, timeout=10, install=install_id(tmp_path / "key"))
    assert key == "k" * 43
    assert ["installId" in f for f in asked] == [True, False]


async def test_keys_paired_before_install_ids_keep_working(tmp_path: Path) -> None:
    """A paired-keys.json written before install ids (no ``install``): its key still opens a
    session, is listed with no install number, and is replaced only by a pairing without an id;
    a newer install of the same mod gets a key of its own beside it."""
    import hashlib
    import json

    old_key = "o" * 43
    old = {
        "id": "0123456789abcdef",
        "adapter": "xty-dst",
        "gameId": DST,
        "pairedAt": START - 86_400,
        "digest": hashlib.sha256(old_key.encode()).hexdigest(),
        "lastUsed": START - 3_600,
    }
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "paired-keys.json").write_text(json.dumps([old]), encoding="utf-8")
    async with running(tmp_path, clock=ManualClock(START)) as h:
        page = Page(h)
        await page.open()
        assert await says_hello(h, old_key)
        [listed] = (await page.get("pairing"))["keys"]
        assert (listed["id"], listed["install"]) == (old["id"], None)
        with_id = await pair_raw(h, page, "c0ffee00" * 4)
        assert await says_hello(h, old_key) and await says_hello(h, with_id)
        assert [k["install"] for k in (await page.get("pairing"))["keys"]] == [1, 2]
        without = await pair_raw(h, page, None)  # the old mod pairs again: its own key replaced
        assert not await says_hello(h, old_key)
        assert await says_hello(h, without) and await says_hello(h, with_id)


def see_the_requests(link: str, codes: dict[str, str]) -> dict[str, str]:
    """In Chromium: type each waiting request's code; the note under its question, by name."""
    from tests import browser
    from tests.manage.test_browser import css, ready, wait

    notes: dict[str, str] = {}
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        wait(d, lambda d: d.execute_script("return document.body.dataset.pairing") == "3")
        for name, code in codes.items():
            field = css(d, "#pair-code")[0]
            field.clear()
            field.send_keys(code)
            wait(d, lambda d, c=code: c in "".join(e.text for e in css(d, ".pair-request p")))
            notes[name] = "".join(e.text for e in css(d, ".pair-request .pair-before"))
    return notes


async def test_the_page_says_whether_allowing_adds_or_replaces_a_key(tmp_path: Path) -> None:
    """Once the player typed a request's code, the page says what 允许 does to the keys: a new
    install of a paired mod gets its own key beside the other's; an install (or a mod without
    install ids) paired before has its old key replaced; a mod never paired, nothing more."""
    from tests import browser

    if browser.find() is None:
        pytest.skip(browser.MISSING)
    paired, other = "a1" * 16, "b2" * 16
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        await pair_raw(h, page, paired)
        async with h.client() as again, h.client() as another, h.client() as stranger:
            await send(again, with_install(paired))
            await send(another, with_install(other))
            await send(stranger, pair_frame(name="xty-oni", game="oxygen-not-included"))
            codes = {
                name: (await recv(ws))["code"]
                for name, ws in (("again", again), ("another", another), ("stranger", stranger))
            }
            listed = {r["code"]: r["pairedBefore"] for r in await pending(page, 3)}
            assert [listed[codes[n]] for n in ("again", "another", "stranger")] == [
                "this_install",
                "other_install",
                "no",
            ]
            assert not any(i in str(listed) for i in (paired, other))  # never an install id
            notes = await anyio.to_thread.run_sync(see_the_requests, h.server.ui_link, codes)
    assert notes == {
        "again": "这个 mod 以前配对过：允许后它的旧钥匙作废，换成新的。",
        "another": "这台电脑上已经配对过这个 mod 的另一个安装（比如另一个 Steam 账号的游戏）："
        "允许后两个都能连，各用各的钥匙。",
        "stranger": "",
    }
