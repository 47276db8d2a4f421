"""Pairing (v1.md "Pairing") as the reference mods do it against the real server, with no token.

The C# client (test/Probe.cs on Mono, over WebSocket, its key in its mod folder) and the DST
mod (scripts/xty/mod.lua in the lua5.1 shim, over POST /v1/http, its key in the persistent
string ``xiaotangyuan_key``) each ask to pair; the code they show is the one the memory page
lists; the player's click is made through the page API as the page's script makes it
(tests/test_server_pairing.py); the mod keeps the key, says hello with it and chats. The next
start uses the kept key without a pair request; a key revoked on the page is forgotten, so the
start after asks again; a Deny, and a code nobody allowed in time, end in the refusal the mod
reports; 50 processes squatting under the DST mod's name do not keep it from pairing. Each test
waits for the mod's own pair prompt (a mono or lua5.1 start may take long on a busy machine)
before it looks at the page.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from tests.adapter.games import (
    EVENING,
    NO_LUA,
    Game,
    dst_game,
    free_port,
    game_process,
    has_luasocket,
    serve,
)
from tests.adapter.mono import NO_MONO, NO_MONO_REASON
from tests.conftest import TOKEN
from tests.manage.test_http import Page
from tests.test_server_pairing import SQUATTERS, pending
from xtyserver.clock import ManualClock
from xtyserver.serve.pairing import PAIR_SECONDS

pytestmark = pytest.mark.anyio
NEEDS_MONO = pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON)
NEEDS_LUA = pytest.mark.skipif(NO_LUA or not has_luasocket(), reason="needs lua5.1 and lua-socket")
KEY_FILE = "xiaotangyuan-key.txt"  # ModFolder.KeyFile
DST_KEY = "xiaotangyuan_key"  # mod.lua M.KEY_KEY


async def one_key(page: Page, adapter: str, game: str) -> str:
    """The page lists exactly one paired key, this mod's; its id."""
    [paired] = (await page.get("pairing"))["keys"]
    assert (paired["adapter"], paired["gameId"]) == (adapter, game)
    return str(paired["id"])


async def kept(page: Page, file: Path, adapter: str, game: str) -> str:
    """The key the mod kept in ``file`` after the click, the one the page lists."""
    key = file.read_text(encoding="utf-8")
    assert len(key) == 43
    await one_key(page, adapter, game)
    return key


# Another local process that asks to pair as the DST mod on many connections and holds them.
SQUAT = """
import json, sys
from websockets.sync.client import connect
url, n = sys.argv[1], int(sys.argv[2])
held = []
for _ in range(n):
    ws = connect(url)
    ws.send(json.dumps({"type": "adapter.pair", "id": "p1", "gameId": "dont-starve-together",
                        "adapter": {"name": "XTY DST", "version": "0.1.0"}}))
    assert json.loads(ws.recv())["type"] == "pair.pending"
    held.append(ws)
print("squatting", n, flush=True)
sys.stdin.read()
"""


def code_in(line: str) -> str:
    """The four-digit pair code a game's line shows."""
    found = re.search(r"(?:pair code|配对码) ?([0-9]{4})", line)
    assert found is not None, line
    return found.group(1)


async def deny(page: Page) -> None:
    """The player clicks Deny on the one pending request."""
    [request] = await pending(page)
    await page.post("pair", requestId=request["id"], allow=False)


@asynccontextmanager
async def csharp_mod(
    tmp: Path, probe: Path, port: int, folder: Path, keep: Path | None = None
) -> AsyncIterator[Game]:
    """Probe.exe's game loop (Start(), Poll() every tick) with no token and its mod folder:
    the key kept in `keep` (default: the mod folder), else pairing."""
    folder.mkdir(exist_ok=True)
    control = tmp / f"control-{folder.name}.txt"
    url = f"ws://127.0.0.1:{port}/v1"
    args = [
        "mono",
        str(probe),
        "session",
        url,
        "",
        "--pair",
        str(folder),
        "--keep",
        str(keep or folder),
        "--control",
        str(control),
    ]
    # No server token file to fall back on (ModFolder.Key): only pairing gives this mod a key.
    env = {**os.environ, "XDG_DATA_HOME": str(tmp / "no-server-folder")}
    async with game_process(args, control, env=env) as game:
        yield game


@NEEDS_MONO
async def test_the_csharp_mod_pairs_keeps_its_key_and_reports_refusals(
    tmp_path: Path, probe: Path
) -> None:
    port = free_port()
    folder = tmp_path / "mod"
    async with serve(tmp_path, port, ManualClock(EVENING)) as h:
        page = Page(h)
        await page.open()
        async with csharp_mod(tmp_path, probe, port, folder) as mod:
            shown = mod.lines[await mod.expect("pair code ")]
            [request] = await pending(page)
            assert shown == f"pair code {request['code']} for {PAIR_SECONDS} s"
            assert (request["adapter"], request["gameId"]) == ("XTY Probe", "stardew-valley")
            assert not (folder / KEY_FILE).exists()  # nothing without the click
            await page.post("pair", requestId=request["id"], allow=True)
            await mod.expect("paired, key kept")
            await mod.expect("session open")
            mod.do("chat 今天适合钓鱼吗？")
            await mod.expect("chat end done 小汤圆收到：今天适合钓鱼吗？")
        key = await kept(page, folder / KEY_FILE, "XTY Probe", "stardew-valley")

        # The next start: the kept key, no pair request.
        async with csharp_mod(tmp_path, probe, port, folder) as mod:
            await mod.expect("session open")
            mod.do("chat 你好")
            await mod.expect("chat end done 小汤圆收到：你好")
        assert "pair code" not in mod.output and "paired" not in mod.output
        assert (folder / KEY_FILE).read_text(encoding="utf-8") == key
        key_id = await one_key(page, "XTY Probe", "stardew-valley")

        # Revoked on the page while the mod plays: closed 4001, the mod forgets the key.
        async with csharp_mod(tmp_path, probe, port, folder) as mod:
            await mod.expect("session open")
            await page.post("revoke", keyId=key_id)
            await mod.expect("[xty] closed 4001")
            await mod.expect("key refused, forgotten")
        assert not (folder / KEY_FILE).exists()

        # Its next start asks again, and the player clicks Deny: refused, no key kept.
        async with csharp_mod(tmp_path, probe, port, folder) as mod:
            await mod.expect("pair code ")
            await deny(page)
            await mod.expect("[xty] reconnect refused: refused by the server: pair_denied: ")
            assert "session open" not in mod.output
        assert not (folder / KEY_FILE).exists()
        assert (await page.get("pairing")) == {"pending": [], "keys": [], "connected": []}

        # And nobody clicks: the code expires on the server's clock.
        late = tmp_path / "late-mod"
        async with csharp_mod(tmp_path, probe, port, late) as mod:
            await mod.expect("pair code ")
            await pending(page)
            h.clock.advance(PAIR_SECONDS)
            await mod.expect("[xty] reconnect refused: refused by the server: pair_expired: ")
        assert not (late / KEY_FILE).exists()


@NEEDS_MONO
async def test_two_copies_of_a_mod_on_one_pc_share_one_key(tmp_path: Path, probe: Path) -> None:
    """Issue 36 item 13: two copies of one mod on one PC (say Stardew from Steam and from GOG,
    one SMAPI global data folder) keep their key in the same store. A second pairing would
    replace the first's key on the server and the two would take turns revoking each other, so:
    the copy that starts while the other's request waits gets its own code (a name reserves
    nothing, S5-3), and once the other's key is kept it leaves its request and says hello with
    it; both play at once; restarting both pairs nothing and nobody is refused."""
    port = free_port()
    keep = tmp_path / "StardewValley" / ".smapi" / "mod-data" / "xiaotangyuan"
    steam, gog = tmp_path / "steam-mod", tmp_path / "gog-mod"
    async with serve(tmp_path, port, ManualClock(EVENING)) as h:
        page = Page(h)
        await page.open()
        async with csharp_mod(tmp_path, probe, port, steam, keep) as first:
            shown = first.lines[await first.expect("pair code ")]
            await pending(page)
            async with csharp_mod(tmp_path, probe, port, gog, keep) as second:
                # Its own request and code (a name reserves nothing: S5-3); the player types
                # the first game's code, and the second copy takes the key the first kept.
                await second.expect("pair code ")
                [request] = [r for r in await pending(page, 2) if r["code"] == code_in(shown)]
                await page.post("pair", requestId=request["id"], allow=True)
                for copy in (first, second):
                    await copy.expect("session open")
                    copy.do("chat 你好")
                    await copy.expect("chat end done 小汤圆收到：你好")
                assert "paired, key kept" in first.output
                assert "another copy of this mod paired meanwhile" in second.output
                assert "paired, key kept" not in second.output
        key = await kept(page, keep / KEY_FILE, "XTY Probe", "stardew-valley")
        async with (  # both again: the kept key, no pairing, nobody refused
            csharp_mod(tmp_path, probe, port, steam, keep) as one,
            csharp_mod(tmp_path, probe, port, gog, keep) as other,
        ):
            for copy in (one, other):
                await copy.expect("session open")
            assert "pair code" not in one.output + other.output
            assert "closed 4001" not in one.output + other.output
        assert (keep / KEY_FILE).read_text(encoding="utf-8") == key
        await one_key(page, "XTY Probe", "stardew-valley")
        assert not (steam / KEY_FILE).exists() and not (gog / KEY_FILE).exists()


@NEEDS_MONO
async def test_a_waiting_copy_takes_the_key_another_copy_kept(tmp_path: Path, probe: Path) -> None:
    """Issue 36 item 13, the narrow race: a copy whose pair request is already waiting on the
    page when the other copy keeps a key (it started in the instant between the other's grant
    and its save) takes that key within KeyRecheck, withdraws its request (the page lists
    none), and plays; nothing is paired twice. The kept key here is the server's adapter
    token, which a hello accepts as it accepts a paired key."""
    port = free_port()
    keep = tmp_path / "mod-data"
    async with serve(tmp_path, port, ManualClock(EVENING)) as h:
        page = Page(h)
        await page.open()
        async with csharp_mod(tmp_path, probe, port, tmp_path / "late-copy", keep) as late:
            await late.expect("pair code ")
            await pending(page)
            keep.mkdir(exist_ok=True)  # the copy made it already, for its install id
            (keep / KEY_FILE).write_text(TOKEN, encoding="utf-8")  # the other copy kept its key
            await late.expect("[xty] another copy of this mod paired meanwhile")
            await late.expect("session open")
            late.do("chat 你好")
            await late.expect("chat end done 小汤圆收到：你好")
            view = await page.get("pairing")
            assert view["pending"] == [] and view["keys"] == []
            # the page's 「现在连着……」 names the copy that plays
            assert [c["gameId"] for c in view["connected"]] == ["stardew-valley"], view
        assert "paired, key kept" not in late.output
        assert (keep / KEY_FILE).read_text(encoding="utf-8") == TOKEN


@NEEDS_LUA
async def test_the_dst_mod_pairs_keeps_its_key_and_reports_refusals(tmp_path: Path) -> None:
    port = free_port()
    store = tmp_path / "persistent"
    async with serve(tmp_path, port, ManualClock(EVENING)) as h:
        page = Page(h)
        await page.open()
        async with dst_game(tmp_path, port, store=store, token="") as world:
            said = world.lines[await world.expect("said: 在小汤圆页面上确认配对码 ")]
            [request] = await pending(page)
            assert said == (
                f"said: 在小汤圆页面上确认配对码 {request['code']}"
                f" / Confirm code {request['code']} on the XiaoTangYuan page"
            )
            assert (request["adapter"], request["gameId"]) == ("XTY DST", "dont-starve-together")
            assert not (store / DST_KEY).exists()  # nothing without the click
            await page.post("pair", requestId=request["id"], allow=True)
            await world.expect(f"persisted {DST_KEY}")
            await world.expect("session open")
            world.do("chat 附近危险吗？")
            await world.expect("reply: 小汤圆收到：附近危险吗？")
        key = await kept(page, store / DST_KEY, "XTY DST", "dont-starve-together")

        # The next start: the kept key, no pair request.
        async with dst_game(tmp_path, port, store=store, token="") as world:
            await world.expect("session open")
            world.do("chat 你好")
            await world.expect("reply: 小汤圆收到：你好")
        assert "配对码" not in world.output and "pairing" not in world.output
        assert (store / DST_KEY).read_text(encoding="utf-8") == key
        key_id = await one_key(page, "XTY DST", "dont-starve-together")

        # Revoked on the page while the mod plays: closed 4001, the mod forgets the key.
        async with dst_game(tmp_path, port, store=store, token="") as world:
            await world.expect("session open")
            await page.post("revoke", keyId=key_id)
            await world.expect("session closed 4001")
            await world.expect(f"persisted {DST_KEY}")
        assert (store / DST_KEY).read_text(encoding="utf-8") == ""

        # Its next start asks again, and the player clicks Deny: the mod tells the player why.
        async with dst_game(tmp_path, port, store=store, token="") as world:
            await world.expect("said: 在小汤圆页面上确认配对码 ")
            await deny(page)
            await world.expect("session closed 4001")
            world.do("chat 你好")
            await world.expect("said (pair_denied): 配对被拒绝了：请在小汤圆页面上点“允许”。")
            assert "session open" not in world.output
        assert (store / DST_KEY).read_text(encoding="utf-8") == ""
        assert (await page.get("pairing")) == {"pending": [], "keys": [], "connected": []}

        # And nobody clicks: the code expires on the server's clock.
        late = tmp_path / "late-install"
        async with dst_game(tmp_path, port, store=late, token="") as world:
            await world.expect("said: 在小汤圆页面上确认配对码 ")
            await pending(page)
            h.clock.advance(PAIR_SECONDS)
            await world.expect("session closed 4001")
            world.do("chat 你好")
            await world.expect("said (pair_expired): 配对码过期了：重新进入世界再试一次。")
        assert not (late / DST_KEY).exists()


@NEEDS_LUA
async def test_two_dst_clients_on_one_pc_share_one_key(tmp_path: Path) -> None:
    """Issue 36 item 13 in DST: two game clients on one PC (or two installs of the mod) share
    the game's persistent strings. The one that starts while the other's request waits gets its
    own code; the player allows the first game's, and the second leaves its request and says
    hello with the key the first kept: one key, both play."""
    port = free_port()
    store = tmp_path / "persistent"
    async with serve(tmp_path, port, ManualClock(EVENING)) as h:
        page = Page(h)
        await page.open()
        async with dst_game(tmp_path, port, store=store, token="") as first:
            shown = first.lines[await first.expect("said: 在小汤圆页面上确认配对码 ")]
            await pending(page)
            async with dst_game(tmp_path, port, store=store, token="") as second:
                await second.expect("said: 在小汤圆页面上确认配对码 ")  # its own code
                [request] = [r for r in await pending(page, 2) if r["code"] == code_in(shown)]
                await page.post("pair", requestId=request["id"], allow=True)
                await first.expect("session open")
                await second.expect("[xty] another copy of this mod paired: its key")
                await second.expect("session open")
                for world in (first, second):
                    world.do("chat 你好")
                    await world.expect("reply: 小汤圆收到：你好")
        # One key: the second copy's request was left to lapse, never allowed.
        await kept(page, store / DST_KEY, "XTY DST", "dont-starve-together")


@NEEDS_LUA
async def test_the_dst_mod_pairs_while_fifty_processes_squat_under_its_name(
    tmp_path: Path,
) -> None:
    """S5-3 with the real DST mod (POST /v1/http in the lua5.1 shim) against a squatter
    process: 50 tokenless connections of another OS process ask to pair as XTY DST first and
    hold them; the mod still gets its own code (unique among the 51), and the player allows
    the request of the code the game shows. The squatter ends when its stdin closes."""
    port = free_port()
    store = tmp_path / "persistent"
    async with serve(tmp_path, port, ManualClock(EVENING)) as h:
        squat = await anyio.open_process([sys.executable, "-c", SQUAT, h.url, str(SQUATTERS)])
        async with squat:
            said_by_squatter = b""
            assert squat.stdout is not None
            with anyio.fail_after(60):
                while b"squatting" not in said_by_squatter:
                    said_by_squatter += await squat.stdout.receive()
            page = Page(h)
            await page.open()
            async with dst_game(tmp_path, port, store=store, token="") as world:
                said = world.lines[await world.expect("said: 在小汤圆页面上确认配对码 ")]
                listed = await pending(page, SQUATTERS + 1)
                assert {r["adapter"] for r in listed} == {"XTY DST"}
                [mine] = [r for r in listed if r["code"] == code_in(said)]
                await page.post("pair", requestId=mine["id"], allow=True)
                await world.expect(f"persisted {DST_KEY}")
                await world.expect("session open")
                world.do("chat 附近危险吗？")
                await world.expect("reply: 小汤圆收到：附近危险吗？")
            await kept(page, store / DST_KEY, "XTY DST", "dont-starve-together")
