"""The reference clients send ``chat.typing`` (v1.md "chat.typing") as the player types, and the
turn that follows finds its query's vector ready: the C# library in Probe.cs's game loop on Mono,
the SMAPI example's chat box in SmapiHost's 60 Hz loop, the DST client under lua5.1; every one
against the real server, whose scripted embedding model shows what was embedded and when.

What a burst of keys sends is decided on a clock the test moves (Probe.cs ``--typing-clock``,
the Lua driver's own clock) and counted on the wire; nothing here bounds elapsed time.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.adapter.games import (
    NO_LUA,
    Game,
    dst_game,
    free_port,
    game_process,
    has_luasocket,
    stdin_game,
    until,
)
from tests.adapter.mono import NO_MONO, NO_MONO_REASON
from tests.adapter.test_csharp_examples import OLD_SALT, smapi_build
from tests.conftest import TOKEN, running
from tests.test_server_embeddings import (
    ABIGAIL,
    EMBED,
    FARM,
    QUESTION,
    embedded_texts,
    idle,
    injected,
)
from tests.test_server_query_vectors import embedded
from xtyserver.adapter.saveid import derive_save_id
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
needs_mono = pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON)
HINT = re.compile(r"^hint at (\d+): (.*)$")


def hints(game: Game, after: int = 0) -> list[tuple[int, str]]:
    """The hints the C# client queued, (time on its clock, draft), from the probe's lines."""
    found = [HINT.match(line) for line in game.lines[after:]]
    return [(int(m[1]), m[2]) for m in found if m]


async def step(game: Game, n: int) -> int:
    """The index of the probe's ``n``-th "idled" line (its ``n``-th idle command done)."""
    at = -1
    for _ in range(n):
        at = await game.expect("idled", after=at + 1)
    return at


def probe_game(tmp_path: Path, probe: Path, url: str) -> Any:
    """Probe.exe's game loop on the test's typing clock, for the farm of FARM's save."""
    control = tmp_path / "control.txt"
    args = ["mono", str(probe), "session", url, TOKEN, "--save", FARM.save_id]
    args += ["--save-name", "Sunny Farm", "--control", str(control), "--typing-clock"]
    return game_process(args, control)


@needs_mono
async def test_a_question_typed_in_a_burst_is_hinted_once_at_the_pause_and_its_turn_reuses_it(
    tmp_path: Path, probe: Path
) -> None:
    """The player types the question a key every 50 ms (no pause: no hint), stops, and 300 ms
    later the one hint goes out; the server embeds it before the send, the chat.send of the
    same text embeds nothing more, and the memory is found by that vector."""
    async with running(tmp_path / "data", overrides=EMBED) as h:
        abigail = h.store.upsert_event(FARM, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        async with probe_game(tmp_path, probe, h.url) as game:
            await game.expect("session open")
            await idle(h)
            background = len(embedded_texts(h))
            game.do(f"keys 50 {QUESTION}")
            typed = await game.expect(f"typed {QUESTION}")
            assert hints(game) == []  # a key every 50 ms is no pause
            game.do("idle 400")
            await game.expect("idled", after=typed)
            # The 23rd key at 1,100 ms on the probe's clock; the first tick 300 ms after it
            # (ticks of 16 ms from 1,150, where the burst's own wait ended) is at 1,406.
            assert hints(game) == [(1406, QUESTION)]
            await embedded(h, background + 1)  # embedded while the player "paused"
            h.fake.enqueue(Reply(text="紫水晶"))
            game.do(f"chat {QUESTION}")
            await game.expect("chat end done 紫水晶")
            await idle(h)
            game.do("count")
            await game.expect("chat.typing frames 1")
        assert embedded_texts(h)[background:] == [QUESTION]  # once, by the hint
        assert injected(h)[-1] == {abigail.id: "vectors"}
        assert "refused" not in game.output


@needs_mono
async def test_keys_repeats_and_ime_phrases_send_a_bounded_number_of_hints(
    tmp_path: Path, probe: Path
) -> None:
    """On the test's clock: 60 keys 20 ms apart, then a pause: one hint. The same draft again,
    or retyped key by key: none. A Chinese IME committing six phrases 400 ms apart (a pause
    after each): one hint a second at most, so three, the last the whole sentence."""
    long_text = "阿比盖尔" * 15
    phrases = ["今天", "去矿洞", "之前", "要不要", "带点", "吃的"]
    async with running(tmp_path / "data", overrides=EMBED) as h:
        async with probe_game(tmp_path, probe, h.url) as game:
            await game.expect("session open")
            game.do(f"keys 20 {long_text}")
            game.do("idle 1000")
            await step(game, 1)
            assert [d for _, d in hints(game)] == [long_text]
            game.do(f"type {long_text}")
            game.do("idle 1000")
            game.do(f"keys 100 {long_text}")
            game.do("idle 1000")
            second = await step(game, 3)
            assert len(hints(game)) == 1, game.output  # nothing new to hint
            game.do(f"phrases 400 {'|'.join(phrases)}")
            game.do("idle 1000")
            await step(game, 4)
            ime = hints(game, second)
            # Commits at 0, 400, ... 2000 ms, the loop ticking every 16 ms from each: a pause is
            # seen 304 ms after its commit, but a hint waits 1000 ms after the one before it:
            # 304, then 1504 (the fourth commit's pause), then the first tick from 2504 (2512).
            start = ime[0][0] - 304
            assert [(at - start, draft) for at, draft in ime] == [
                (304, "今天"),
                (1504, "今天去矿洞之前要不要"),
                (2512, "".join(phrases)),
            ]
            game.do("count")
            await game.expect("chat.typing frames 4")  # on the wire: every hint, nothing else
        assert "refused" not in game.output


@needs_mono
async def test_the_smapi_chat_box_hints_the_question_before_enter(tmp_path: Path) -> None:
    """The example SMAPI mod in SmapiHost's 60 Hz loop: the player opens the chat box (Y), types
    the question through the game's keyboard dispatcher, pauses, and presses Enter. The draft
    reached the server as chat.typing before Enter (its vector was being formed while the box
    was still open), and the turn Enter sent found the memory with it, embedding nothing more."""
    host, mod = smapi_build(tmp_path)
    folder = tmp_path / "Mods" / "XiaoTangYuan"
    folder.mkdir(parents=True)
    (folder / "xiaotangyuan-key.txt").write_text(TOKEN)
    (folder / "xiaotangyuan-salt.txt").write_text(OLD_SALT)  # so the test knows the saveId
    save = derive_save_id({"farm": "Sunny Farm", "id": "18000000000000000001"}, OLD_SALT)
    async with running(tmp_path / "data", overrides=EMBED) as h:
        scope = Scope("stardew-valley", save)
        abigail = h.store.upsert_event(scope, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        (folder / "xiaotangyuan-url.txt").write_text(h.url)
        args = ["mono", str(host), str(mod), str(folder), "", str(tmp_path / "StardewValley")]
        with anyio.fail_after(180):
            async with stdin_game([*args, "typing"]) as (game, out):
                assert game.stdin is not None
                await until(lambda: b"connected, session" in out, timeout=120)
                await idle(h)
                background = len(embedded_texts(h))
                await game.stdin.send(f"open\ntype {QUESTION}\n".encode())
                await until(lambda: b"typed" in out)
                # The player pauses with the question in the box: its hint is embedded.
                await until(lambda: QUESTION in embedded_texts(h)[background:], timeout=60)
                h.fake.enqueue(Reply(text="紫水晶！"))
                await game.stdin.send(b"enter\n")
                await until(lambda: "XiaoTangYuan: 紫水晶！".encode() in out, timeout=60)
                await idle(h)
                await game.stdin.send(b"leave\n")
                await game.wait()
        text = out.decode()
        assert game.returncode == 0, text
        assert "OFF THE MAIN THREAD" not in text  # every callback ran in UpdateTicked
        assert "back at the title" in text
        asked = embedded_texts(h)[background:]
        # Once, from the box; a draft hinted earlier (a tick late on a busy machine) is a
        # prefix of it, never another text, and the chat.send embedded nothing.
        assert asked.count(QUESTION) == 1, asked
        assert all(QUESTION.startswith(draft) for draft in asked), asked
        assert injected(h)[-1] == {abigail.id: "vectors"}


LUA_DRIVER = Path(__file__).parent / "lua" / "typing_driver.lua"
DST_DIR = Path(__file__).resolve().parents[2] / "adapters" / "dst"
needs_lua = pytest.mark.skipif(NO_LUA or not has_luasocket(), reason="needs lua5.1 and lua-socket")


def http_url(ws_url: str) -> str:
    """The server's POST /v1/http address beside its WebSocket one."""
    return ws_url.replace("ws://", "http://", 1) + "/http"


@needs_lua
async def test_the_dst_client_sends_a_bounded_number_of_hints(tmp_path: Path) -> None:
    """The DST client under lua5.1, pumped every 250 ms of the driver's clock as the mod's static
    task pumps it, against the real server: a burst of keys then a pause is one hint, the same
    draft or the same text retyped is none, six IME phrases 400 ms apart are three."""
    async with running(tmp_path / "data", overrides=EMBED) as h:
        args = ["lua5.1", str(LUA_DRIVER), str(DST_DIR), http_url(h.url), TOKEN, "world-a"]
        with anyio.fail_after(120):
            result = await anyio.run_process(args, check=False)
    out = result.stdout.decode()
    assert result.returncode == 0, out + result.stderr.decode()
    lines = out.splitlines()
    found = [(HINT.match(line), n) for n, line in enumerate(lines)]
    sent = [(int(m[1]), m[2], n) for m, n in found if m]
    steps = {line: n for n, line in enumerate(lines) if line.startswith("step ")}
    long_text = "阿比盖尔" * 15
    burst = [(at, d) for at, d, n in sent if n < steps["step burst"]]
    repeats = [d for _, d, n in sent if steps["step burst"] < n < steps["step repeats"]]
    ime = [(at, d) for at, d, n in sent if steps["step repeats"] < n < steps["step phrases"]]
    # 60 keys 20 ms apart, the last at 1,180 ms: the first beat 300 ms after it is 1,500.
    assert burst == [(1500, long_text)]
    assert repeats == []
    # Commits at 10,200 + 400 k, beats at 250 k: the first paused at 10,500 (hinted); the
    # fourth (11,400) paused at 11,750, over a second later (hinted); the sixth (12,200)
    # paused at 12,500, held by the interval to 12,750.
    assert ime == [
        (10500, "今天"),
        (11750, "今天去矿洞之前要不要"),
        (12750, "今天去矿洞之前要不要带点吃的"),
    ]
    assert "chat.typing frames 4" in out  # on the wire: the hints, nothing else
    assert "refused" not in out


@needs_lua
async def test_the_dst_mod_hints_the_question_typed_and_its_turn_reuses_it(
    tmp_path: Path,
) -> None:
    """The DST mod (scripts/xty/mod.lua in the shim's world, real time): the player types the
    question into the mod's chat box and pauses; the hint reaches the server and is embedded
    before the question is sent, and the turn finds the memory by that vector."""
    store = tmp_path / "persistent"
    store.mkdir()
    (store / "xiaotangyuan_salt").write_text(OLD_SALT)  # so the test knows the saveId
    save = derive_save_id({"session": "A1B2C3D4E5F60789", "seed": "1714700000"}, OLD_SALT)
    port = free_port()
    overrides = {**EMBED, "server.port": port, "server.ui_port": 0}
    async with running(tmp_path / "data", overrides=overrides) as h:
        scope = Scope("dont-starve-together", save)
        abigail = h.store.upsert_event(scope, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        async with dst_game(tmp_path, port, store=store) as game:
            await game.expect("session open")
            await idle(h)
            background = len(embedded_texts(h))
            game.do(f"type {QUESTION}")
            await until(lambda: QUESTION in embedded_texts(h)[background:], timeout=60)
            h.fake.enqueue(Reply(text="紫水晶"))
            game.do(f"chat {QUESTION}")
            await game.expect("reply: 紫水晶")
            await idle(h)
        assert embedded_texts(h)[background:] == [QUESTION]  # once, by the hint
        assert injected(h)[-1] == {abigail.id: "vectors"}
        assert "refused" not in game.output
