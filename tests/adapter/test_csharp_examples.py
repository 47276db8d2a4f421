"""The example mods in adapters/csharp/examples/ compile against stand-ins of the game API
surface they use (the games' DLLs cannot be fetched here), and the SMAPI one plays a turn.

`examples/standins/` hold exactly the SMAPI/Stardew and ONI/Harmony/Unity types the examples
touch; `test/SmapiHost.cs` loads the SMAPI mod DLL as SMAPI does and runs its events on one
main thread against a real `xtyserver serve` and the scripted model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.adapter.mono import CSHARP, NO_MONO, NO_MONO_REASON, compile_cs
from tests.conftest import TOKEN, ServerProcess
from xtyserver.testing import FakeModelServer, Reply, ToolCallScript

pytestmark = pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON)
EXAMPLES = CSHARP / "examples"


def test_the_oni_mod_compiles_against_the_oni_surface(tmp_path: Path) -> None:
    game = compile_cs(tmp_path / "OniStandins.dll", EXAMPLES / "standins" / "Oni.cs", library=False)
    compile_cs(tmp_path / "XtyOni.dll", EXAMPLES / "oni" / "XtyMod.cs", refs=(f"-r:{game}",))


@pytest.mark.anyio
async def test_the_smapi_mod_plays_a_turn_on_the_games_main_thread(tmp_path: Path) -> None:
    host = compile_cs(
        tmp_path / "SmapiHost.exe",
        EXAMPLES / "standins" / "Smapi.cs",
        CSHARP / "test" / "SmapiHost.cs",
        library=False,
    )
    mod = compile_cs(
        tmp_path / "XtyStardew.dll", EXAMPLES / "smapi" / "ModEntry.cs", refs=(f"-r:{host}",)
    )
    folder = tmp_path / "Mods" / "XiaoTangYuan"
    folder.mkdir(parents=True)
    (folder / "xiaotangyuan-key.txt").write_text(TOKEN)
    async with FakeModelServer() as fake:
        fake.enqueue(Reply(chunks=["矿洞", "里有", "史莱姆！"], chunk_delay=0.02))
        server = ServerProcess(
            tmp_path / "data", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
        )
        (folder / "xiaotangyuan-url.txt").write_text(server.url)
        try:
            with anyio.fail_after(120):
                result = await anyio.run_process(
                    ["mono", str(host), str(mod), str(folder), "附近有危险吗？"], check=False
                )
        finally:
            server.stop()
        out = result.stdout.decode()
        assert result.returncode == 0, out + result.stderr.decode()
        assert "[Info] XiaoTangYuan: 矿洞里有史莱姆！" in out
        assert "back at the title" in out
        assert "OFF THE MAIN THREAD" not in out  # every callback ran in UpdateTicked
        # The salt was made on first run and kept in the mod's folder.
        assert len((folder / "xiaotangyuan-salt.txt").read_text()) == 32
        turn = next(r for r in fake.chat_requests if "附近有危险吗" in r.body.decode())
        # The float stamina reached the model as the player's 72.3 (not 72.300003051757813),
        # the held item as the game shows it (Item.DisplayName) beside its qualified id.
        assert "体力：72.3；手持：河豚（(O)128）\n" in turn.json["messages"][-1]["content"]


def _smapi(tmp_path: Path) -> tuple[Path, Path, Path]:
    """The SMAPI host, the mod DLL and the mod's folder (with the key)."""
    host = compile_cs(
        tmp_path / "SmapiHost.exe",
        EXAMPLES / "standins" / "Smapi.cs",
        CSHARP / "test" / "SmapiHost.cs",
        library=False,
    )
    mod = compile_cs(
        tmp_path / "XtyStardew.dll", EXAMPLES / "smapi" / "ModEntry.cs", refs=(f"-r:{host}",)
    )
    folder = tmp_path / "Mods" / "XiaoTangYuan"
    folder.mkdir(parents=True)
    (folder / "xiaotangyuan-key.txt").write_text(TOKEN)
    return host, mod, folder


async def _play(tmp_path: Path, question: str, scenario: str, *replies: Reply) -> tuple[str, Any]:
    """One question in the SMAPI host's world; the game's output and the scripted model."""
    host, mod, folder = _smapi(tmp_path)
    async with FakeModelServer() as fake:
        fake.enqueue(*replies)
        server = ServerProcess(
            tmp_path / "data", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
        )
        (folder / "xiaotangyuan-url.txt").write_text(server.url)
        try:
            with anyio.fail_after(120):
                result = await anyio.run_process(
                    ["mono", str(host), str(mod), str(folder), question, scenario], check=False
                )
        finally:
            server.stop()
        out = result.stdout.decode()
        assert result.returncode == 0, out + result.stderr.decode()
        assert "OFF THE MAIN THREAD" not in out
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
