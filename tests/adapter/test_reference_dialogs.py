"""The reference adapters show the server's confirmation dialog and its notices.

The C# client (adapters/csharp/src/MemoryDialog.cs) compiled with Mono's mcs and run with mono,
and the DST one (adapters/dst/scripts/xty/memory_dialog.lua) run with lua5.1 over POST /v1/http,
against a real `xtyserver serve` and the scripted model: a chat that previews a forget brings a
``memory.confirm.request`` with the server's question; answering it yes deletes and brings
``memory.notice``.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from tests.adapter.test_reference_adapters import CSHARP, NO_MONO, needs_lua, needs_mono
from tests.conftest import TOKEN, ServerProcess
from xtyserver.testing import FakeModelServer, Reply, ToolCallScript

DRIVER = Path(__file__).parent / "csharp" / "DialogProgram.cs"
FORGET_PROFILE = ToolCallScript(name="xiaotangyuan_memory_forget", arguments={"target": "profile"})


@pytest.fixture(scope="module")
def dialog_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if NO_MONO:
        pytest.skip("needs Mono's C# compiler and runtime (apt-get install mono-mcs mono-runtime)")
    out = tmp_path_factory.mktemp("csharp") / "XtyDialog.exe"
    sources = sorted(str(p) for p in (CSHARP / "src").glob("*.cs"))
    result = subprocess.run(
        ["mcs", "-warnaserror+", "-r:System.Core.dll", f"-out:{out}", *sources, str(DRIVER)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return out


QUESTION = "要清空共同记忆（1 项）吗？（确定的话请一字不差地说“确认清空共同记忆”，说别的都不删）"
"""The server's question (the profile holds one field: the game the hello recorded)."""
DST = CSHARP.parent / "dst"
LUA_DRIVER = Path(__file__).parent / "lua" / "dialog_driver.lua"


async def _drive(tmp_path: Path, command: Callable[[str], list[str]]) -> str:
    """Run ``command(ws_url)`` against a server whose model previews forgetting the profile."""
    async with FakeModelServer() as fake:
        fake.enqueue(Reply(tool_calls=[FORGET_PROFILE]), Reply(text="共同记忆会清空。"))
        server = ServerProcess(
            tmp_path / "data", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
        )
        try:
            with anyio.fail_after(120):
                result = await anyio.run_process(command(server.url), check=False)
        finally:
            server.stop()
    out = result.stdout.decode()
    assert result.returncode == 0, out + result.stderr.decode()
    return out


@needs_mono
@pytest.mark.anyio
async def test_csharp_shows_the_dialog_answers_it_and_shows_the_notice(
    dialog_exe: Path, tmp_path: Path
) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    out = await _drive(tmp_path, lambda url: ["mono", str(dialog_exe), url, str(token_file)])
    assert f"question {QUESTION}\n" in out
    assert f"done True: 共同记忆会清空。  {QUESTION}\n" in out
    assert "answer memory.forgotten profile" in out
    assert "notice forgotten profile: 已删除共同记忆" in out


@needs_lua
@pytest.mark.anyio
async def test_lua_shows_the_dialog_answers_it_and_shows_the_notice(tmp_path: Path) -> None:
    def command(url: str) -> list[str]:
        http_url = url.replace("ws://", "http://") + "/http"
        return ["lua5.1", str(LUA_DRIVER), str(DST), http_url, TOKEN]

    out = await _drive(tmp_path, command)
    assert f"question {QUESTION}\n" in out
    assert "notice forgotten profile: 已删除共同记忆。24 小时内可以恢复" in out
