"""The example mods in adapters/csharp/examples/ compile against stand-ins of the game API
surface they use (the games' DLLs cannot be fetched here), and both play against the server.

`examples/standins/` hold exactly the SMAPI/Stardew and ONI/Harmony/Unity types the examples
touch; `test/SmapiHost.cs` loads the SMAPI mod DLL as SMAPI does and runs its events on one
main thread against a real `xtyserver serve` and the scripted model; `test/OniHost.cs` does the
same for the ONI mod (Unity's frame loop).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.adapter.games import EVENING, free_port, serve
from tests.adapter.mono import CSHARP, NO_MONO, NO_MONO_REASON, compile_cs
from tests.conftest import TOKEN, ServerProcess
from xtyserver.adapter.saveid import derive_save_id
from xtyserver.clock import ManualClock
from xtyserver.testing import FakeModelServer, Reply, ToolCallScript

pytestmark = pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON)
EXAMPLES = CSHARP / "examples"


def test_the_oni_mod_compiles_against_the_oni_surface(tmp_path: Path) -> None:
    game = compile_cs(tmp_path / "OniStandins.dll", EXAMPLES / "standins" / "Oni.cs", library=False)
    compile_cs(tmp_path / "XtyOni.dll", EXAMPLES / "oni" / "XtyMod.cs", refs=(f"-r:{game}",))


@pytest.mark.anyio
async def test_two_oni_colonies_of_one_name_are_two_saves(tmp_path: Path) -> None:
    """Issue 36 item 11: the ONI mod (OniHost.cs loads it as ONI does and runs Unity's frame
    loop) plays three colonies against the real server: "Bubbles" with seed 1845874684,
    another "Bubbles" with another seed, and the first again. Two saves, not one: each saveId
    is the colony's name and its world seed under the salt the mod keeps in mods/config, and
    the first colony's comes back the same, also after a mod update (item 9)."""
    host = compile_cs(
        tmp_path / "OniHost.exe",
        EXAMPLES / "standins" / "Oni.cs",
        CSHARP / "test" / "OniHost.cs",
        library=False,
    )
    mod = compile_cs(tmp_path / "XtyOni.dll", EXAMPLES / "oni" / "XtyMod.cs", refs=(f"-r:{host}",))
    mods = tmp_path / "Klei" / "OxygenNotIncluded" / "mods"
    folder, keep = mods / "Steam" / "2854869130", mods / "config" / "XiaoTangYuan"
    folder.mkdir(parents=True)
    keep.mkdir(parents=True)
    # An older version kept its salt and key in the mod's own folder.
    (folder / "xiaotangyuan-salt.txt").write_text(OLD_SALT)
    (folder / "xiaotangyuan-key.txt").write_text(TOKEN)  # paired before
    port = free_port()
    (folder / "xiaotangyuan-url.txt").write_text(f"ws://127.0.0.1:{port}/v1")
    seeds = ["1845874684", "20260601", "1845874684"]
    expected = {derive_save_id({"colony": "Bubbles", "seed": s}, OLD_SALT) for s in seeds}
    assert len(expected) == 2

    async def play(*colonies: str) -> str:
        args = ["mono", str(host), str(mod), str(folder), str(mods), "今天适合挖矿吗？"]
        with anyio.fail_after(180):
            result = await anyio.run_process([*args, *colonies], check=False)
        out = result.stdout.decode()
        assert result.returncode == 0, out + result.stderr.decode()
        return out

    async with serve(tmp_path, port, ManualClock(EVENING)) as h:
        out = await play(*(f"Bubbles:{s}" for s in seeds))
        for seed in seeds:
            assert f"answered in Bubbles (seed {seed})" in out
        assert "moved xiaotangyuan-salt out of the mod's folder" in out
        assert (keep / "xiaotangyuan-salt.txt").read_text(encoding="utf-8") == OLD_SALT
        # Item 9 on ONI: the update replaces the mod's folder (the address file with it); the
        # first colony is still the same save, with the kept key and the kept address.
        shutil.rmtree(folder)
        folder.mkdir()
        again = await play(f"Bubbles:{seeds[0]}")
        assert "answered in Bubbles (seed 1845874684)" in again
        assert "pair" not in again and "moved" not in again
        saves = [s for s in h.store.stats().saves if s.game_id == "oxygen-not-included"]
    assert {s.save_id for s in saves} == expected
    assert [s.save_name for s in saves] == ["Bubbles", "Bubbles"]


# Mono's reference assemblies of .NET Framework 4.7.1 (Debian's mono-devel installs them here).
NET471 = Path(os.environ.get("XTY_NET471_API", "/usr/lib/mono/4.7.1-api"))


def mcs_net471(out: Path, *sources: Path, refs: tuple[Path, ...] = ()) -> None:
    """mcs with only .NET Framework 4.7.1's API (no newer type or member compiles)."""
    std = [f"-r:{NET471 / name}" for name in ("mscorlib.dll", "System.dll", "System.Core.dll")]
    args = ["mcs", "-warnaserror+", "-nostdlib", "-noconfig", "-target:library", *std]
    args += [f"-r:{r}" for r in refs] + [f"-out:{out}", *map(str, sources)]
    result = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.skipif(
    not (NET471 / "mscorlib.dll").exists(),
    reason="needs .NET Framework 4.7.1 reference assemblies (mono-devel's /usr/lib/mono/4.7.1-api "
    "or XTY_NET471_API)",
)
def test_the_library_and_the_oni_mod_build_for_net471(tmp_path: Path) -> None:
    """ONI mods target net471: the library and the ONI mod compile against 4.7.1's API alone."""
    project = (CSHARP / "XiaoTangYuan.Adapter.csproj").read_text()
    assert "<TargetFrameworks>net471;net6.0</TargetFrameworks>" in project
    library = tmp_path / "XiaoTangYuan.Adapter.dll"
    mcs_net471(library, *sorted((CSHARP / "src").glob("*.cs")))
    game = tmp_path / "OniStandins.dll"
    mcs_net471(game, EXAMPLES / "standins" / "Oni.cs")
    mcs_net471(tmp_path / "XtyOni.dll", EXAMPLES / "oni" / "XtyMod.cs", refs=(library, game))


def smapi_build(tmp_path: Path) -> tuple[Path, Path]:
    """SmapiHost.exe (SMAPI's stand-in) and the example mod's DLL built against it."""
    host = compile_cs(
        tmp_path / "SmapiHost.exe",
        EXAMPLES / "standins" / "Smapi.cs",
        CSHARP / "test" / "SmapiHost.cs",
        library=False,
    )
    mod = compile_cs(
        tmp_path / "XtyStardew.dll", EXAMPLES / "smapi" / "ModEntry.cs", refs=(f"-r:{host}",)
    )
    return host, mod


async def play_smapi(
    host: Path, mod: Path, folder: Path, data: Path, question: str, scenario: str = ""
) -> str:
    """The game started with the mod in `folder`, a save loaded, one question, back to the title."""
    with anyio.fail_after(120):
        args = ["mono", str(host), str(mod), str(folder), question, str(data)]
        args += [scenario] if scenario else []
        result = await anyio.run_process(args, check=False)
    out = result.stdout.decode()
    assert result.returncode == 0, out + result.stderr.decode()
    assert "OFF THE MAIN THREAD" not in out  # every callback ran in UpdateTicked
    return out


@pytest.mark.anyio
async def test_the_smapi_mod_plays_a_turn_on_the_games_main_thread(tmp_path: Path) -> None:
    host, mod = smapi_build(tmp_path)
    folder = tmp_path / "Mods" / "XiaoTangYuan"
    folder.mkdir(parents=True)
    (folder / "xiaotangyuan-key.txt").write_text(TOKEN)
    data = tmp_path / "StardewValley"
    async with FakeModelServer() as fake:
        fake.enqueue(Reply(chunks=["矿洞", "里有", "史莱姆！"], chunk_delay=0.02))
        server = ServerProcess(
            tmp_path / "data", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
        )
        (folder / "xiaotangyuan-url.txt").write_text(server.url)
        try:
            out = await play_smapi(host, mod, folder, data, "附近有危险吗？")
        finally:
            server.stop()
        assert "[Info] XiaoTangYuan: 矿洞里有史莱姆！" in out
        assert "back at the title" in out
        # The salt was made on first run and kept in SMAPI's global data, not the mod's folder.
        kept = data / ".smapi" / "mod-data" / "xiaotangyuan.stardew"
        salt = json.loads((kept / "xiaotangyuan-salt.json").read_text())["Value"]
        assert len(salt) == 32 and not (folder / "xiaotangyuan-salt.txt").exists()
        turn = next(r for r in fake.chat_requests if "附近有危险吗" in r.body.decode())
        # The float stamina reached the model as the player's 72.3 (not 72.300003051757813),
        # the held item as the game shows it (Item.DisplayName) beside its qualified id.
        assert "体力：72.3；手持：河豚（(O)128）\n" in turn.json["messages"][-1]["content"]


async def _play(tmp_path: Path, question: str, scenario: str, *replies: Reply) -> tuple[str, Any]:
    """One question in the SMAPI host's world; the game's output and the scripted model."""
    host, mod = smapi_build(tmp_path)
    folder = tmp_path / "Mods" / "XiaoTangYuan"
    folder.mkdir(parents=True)
    (folder / "xiaotangyuan-key.txt").write_text(TOKEN)
    async with FakeModelServer() as fake:
        fake.enqueue(*replies)
        server = ServerProcess(
            tmp_path / "data", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
        )
        (folder / "xiaotangyuan-url.txt").write_text(server.url)
        try:
            out = await play_smapi(
                host, mod, folder, tmp_path / "StardewValley", question, scenario
            )
        finally:
            server.stop()
        return out, fake


def _tool_results(fake: Any) -> list[str]:
    """The tool results of the turn's second request (extraction may call the model after)."""
    turn = fake.chat_requests[1].json
    return [m["content"] for m in turn["messages"] if m["role"] == "tool"]


@pytest.mark.anyio
async def test_take_me_to_the_pond_walks_there_in_the_game_loop(tmp_path: Path) -> None:
    walk = ToolCallScript(name="game_walk_to", arguments={"place": "鱼塘"})
    out, fake = await _play(
        tmp_path,
        "带我去鱼塘",
        "farm",
        Reply(tool_calls=[walk]),
        Reply(chunks=["好，我们", "走去鱼塘！"]),
    )
    # The game's path finder now leads to the pond's tile, set on the main thread.
    assert "PATH TO 35,20" in out
    assert "[Info] action walk_to: done 开始走向鱼塘" in out
    assert "[Info] XiaoTangYuan: 好，我们走去鱼塘！" in out
    # The mod declared its three actions in the hello; the model was offered them.
    tools = [t["function"]["name"] for t in fake.chat_requests[0].json["tools"]]
    assert tools == ["game_highlight", "game_set_waypoint", "game_walk_to"]
    [result] = _tool_results(fake)
    assert "游戏执行了这个动作" in result and "开始走向鱼塘" in result


@pytest.mark.anyio
async def test_an_unreachable_pond_is_refused_by_the_mod_and_the_reply_says_why(
    tmp_path: Path,
) -> None:
    walk = ToolCallScript(name="game_walk_to", arguments={"place": "鱼塘"})
    out, fake = await _play(
        tmp_path,
        "带我去鱼塘",
        "walled",
        Reply(tool_calls=[walk]),
        Reply(text="鱼塘被围住了，走不过去！"),
    )
    assert "PATH TO" not in out
    assert "[Info] action walk_to: refused 走不到鱼塘：路被挡住了" in out
    assert "[Info] XiaoTangYuan: 鱼塘被围住了，走不过去！" in out
    [result] = _tool_results(fake)
    assert "游戏拒绝了这个动作" in result and "走不到鱼塘：路被挡住了" in result


OLD_SALT = "0123456789abcdef0123456789abcdef"


@pytest.mark.anyio
async def test_a_mod_update_keeps_the_saves_and_the_key(tmp_path: Path) -> None:
    """Issue 36 item 9: an older version kept the salt and key in the mod's folder; the player
    installs this version over it, plays, then updates the mod (SMAPI's way: the folder is
    replaced) and plays again. The saveId stays the one the old salt gave, and no pairing."""
    host, mod = smapi_build(tmp_path)
    folder = tmp_path / "Mods" / "XiaoTangYuan"
    folder.mkdir(parents=True)
    (folder / "xiaotangyuan-salt.txt").write_text(OLD_SALT)
    (folder / "xiaotangyuan-key.txt").write_text(TOKEN)
    data = tmp_path / "StardewValley"
    # Sunny Farm and the unique game id of SmapiHost's save, with the salt the old version made.
    save_id = derive_save_id({"farm": "Sunny Farm", "id": "18000000000000000001"}, OLD_SALT)
    async with FakeModelServer() as fake:
        server = ServerProcess(
            tmp_path / "data", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
        )
        try:
            (folder / "xiaotangyuan-url.txt").write_text(server.url)
            fake.enqueue(Reply(chunks=["早上", "好！"]))
            first = await play_smapi(host, mod, folder, data, "早上好")
            assert f"[Trace] saveId {save_id}" in first
            assert "moved xiaotangyuan-salt out of the mod's folder" in first
            assert "moved xiaotangyuan-key out of the mod's folder" in first
            assert sorted(p.name for p in folder.iterdir()) == ["xiaotangyuan-url.txt"]

            # The update: SMAPI's guide has the player delete the old folder and unzip the new one.
            shutil.rmtree(folder)
            folder.mkdir()
            fake.enqueue(Reply(chunks=["又见", "面了！"]))
            second = await play_smapi(host, mod, folder, data, "又见面了")
        finally:
            server.stop()
    assert f"[Trace] saveId {save_id}" in second  # the same save, the same memories
    assert "pair" not in second and "moved" not in second  # the kept key, the kept address
    assert "XiaoTangYuan: 又见面了！" in second and "back at the title" in second
