"""The example mods in adapters/csharp/examples/ compile against stand-ins of the game API
surface they use (the games' DLLs cannot be fetched here), and the SMAPI one plays a turn.

`examples/standins/` hold exactly the SMAPI/Stardew and ONI/Harmony/Unity types the examples
touch; `test/SmapiHost.cs` loads the SMAPI mod DLL as SMAPI does and runs its events on one
main thread against a real `xtyserver serve` and the scripted model.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.adapter.mono import CSHARP, NO_MONO, NO_MONO_REASON, compile_cs
from tests.conftest import TOKEN, ServerProcess
from xtyserver.testing import FakeModelServer, Reply

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
