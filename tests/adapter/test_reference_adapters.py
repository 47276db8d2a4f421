"""The reference adapters against a real `xtyserver serve` and the scripted model.

The C# one (adapters/csharp/) compiled with Mono's mcs and run with mono over WebSocket; the
DST one (adapters/dst/) run with lua5.1 over POST /v1/http through a QueryServer shim.

Also: the adapters' copies of the projection rules equal xtyserver/adapter/projection.json,
and their projection and saveId agree with the Python ones.
"""

from __future__ import annotations

import json
import runpy
import shutil
import subprocess
from pathlib import Path

import anyio
import pytest
from PIL import Image

from tests.adapter.mono import compile_cs
from tests.adapter.observations import OBSERVATIONS
from tests.adapter.test_projection import TABLE
from tests.adapter.test_saveid import FEATURES, SALT, VECTOR, VECTORS
from tests.conftest import TOKEN, ServerProcess
from xtyserver.adapter.projection import project
from xtyserver.testing import FakeModelServer, Reply

ROOT = Path(__file__).resolve().parents[2]
CSHARP = ROOT / "adapters" / "csharp"
NO_MONO = shutil.which("mcs") is None or shutil.which("mono") is None
needs_mono = pytest.mark.skipif(
    NO_MONO, reason="needs Mono's C# compiler and runtime (apt-get install mono-mcs mono-runtime)"
)


def test_adapter_copies_of_the_rules_are_up_to_date() -> None:
    copies = runpy.run_path(str(ROOT / "scripts" / "gen_adapter_rules.py"), run_name="gen")
    hint = "run: python scripts/gen_adapter_rules.py"
    for path, text in copies["COPIES"].items():
        assert (ROOT / path).read_text(encoding="utf-8") == text(), f"{path}: {hint}"


@pytest.fixture(scope="module")
def example_exe(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if NO_MONO:
        pytest.skip("needs Mono's C# compiler and runtime (apt-get install mono-mcs mono-runtime)")
    out = tmp_path_factory.mktemp("csharp") / "XtyExample.exe"
    return compile_cs(out, CSHARP / "example" / "Program.cs")


def mono(exe: Path, *args: str) -> str:
    result = subprocess.run(["mono", str(exe), *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@needs_mono
def test_csharp_save_id_is_the_python_one(example_exe: Path) -> None:
    args = [f"{k}={v}" for k, v in FEATURES.items()]
    assert mono(example_exe, "--saveid", SALT, *args).strip() == VECTOR


@needs_mono
def test_csharp_save_ids_agree_on_the_eleven_vectors(example_exe: Path) -> None:
    """Issue 36 item 14: keys sorted by code point, not by UTF-16 unit (string.CompareOrdinal
    put an emoji before a full-width letter)."""
    for features, expected in VECTORS:
        args = [f"{k}={v}" for k, v in features.items()]
        assert mono(example_exe, "--saveid", SALT, *args).strip() == expected, features


@needs_mono
def test_csharp_projection_is_the_python_one(example_exe: Path, tmp_path: Path) -> None:
    cases = [(game, question) for game, question, *_ in TABLE[::3]] + [("stardew-valley", "你好")]
    for game, question in cases:
        path = tmp_path / "observation.json"
        path.write_text(json.dumps(OBSERVATIONS[game], ensure_ascii=False), encoding="utf-8")
        got = json.loads(mono(example_exe, "--project", str(path), question, game))
        assert got == project(OBSERVATIONS[game], question, game), (game, question)


@needs_mono
@pytest.mark.anyio
async def test_csharp_example_runs_a_session_against_xtyserver_serve(
    example_exe: Path, tmp_path: Path
) -> None:
    png = tmp_path / "shot.png"
    Image.new("RGB", (64, 48), (120, 200, 80)).save(png)
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    async with FakeModelServer() as fake:
        for attempt in range(2):
            fake.enqueue(Reply(chunks=["晴天，", "适合", "钓鱼！"], chunk_delay=0.05, match="钓鱼"))
            server = ServerProcess(
                tmp_path / f"data{attempt}", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
            )
            try:
                with anyio.fail_after(120):
                    result = await anyio.run_process(
                        [
                            "mono",
                            str(example_exe),
                            "--url",
                            server.url,
                            "--token-file",
                            str(token_file),
                            "--png",
                            str(png),
                        ],
                        check=False,
                    )
            finally:
                server.stop()
            # The example exits 0 or 1 itself; anything else is the Mono runtime
            # crashing at process exit (seen under heavy load): run it once more.
            if result.returncode in (0, 1):
                break
        out = result.stdout.decode()
        assert result.returncode == 0, out + result.stderr.decode()
        assert f"saveId {VECTOR}" in out
        assert "<- server.hello heartbeatMs 5000" in out
        assert "<- stats.result (the state.update was accepted)" in out
        assert out.count("<- chat.delta ") == 3
        assert "<- chat.done 3 deltas, context fresh, imageSent true: 晴天，适合钓鱼！" in out
        assert "refused locally: budget_exceeded modelContext" in out
        assert '<- error budget_exceeded ["modelContext"]' in out
        turn = next(r for r in fake.chat_requests if "image_url" in r.body.decode())
        prompt = turn.body.decode()
        assert "farm pond" in prompt and "Abigail" not in prompt  # the fishing projection


@needs_mono
def test_csharp_wrong_token_is_a_clear_refusal(example_exe: Path, tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("not-the-token")
    server = ServerProcess(tmp_path / "data")
    try:
        result = subprocess.run(
            [
                "mono",
                str(example_exe),
                "--url",
                server.url,
                "--token-file",
                str(token_file),
                "--png",
                "unused.png",
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        server.stop()
    assert result.returncode == 1
    assert "refused by the server: unauthorized" in result.stdout


# -- the DST adapter (adapters/dst/), run with lua5.1 ---------------------------------------

DST = ROOT / "adapters" / "dst"
SHIM = DST / "test" / "shim.lua"
NO_LUA = shutil.which("lua5.1") is None
needs_lua = pytest.mark.skipif(NO_LUA, reason="needs Lua 5.1 (apt-get install lua5.1)")


def lua(*args: str) -> str:
    result = subprocess.run(["lua5.1", *args], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@needs_lua
def test_lua_save_id_is_the_python_one() -> None:
    args = [f"{k}={v}" for k, v in FEATURES.items()]
    assert lua(str(SHIM), "saveid", SALT, *args).strip() == VECTOR


@needs_lua
def test_lua_save_ids_agree_on_the_eleven_vectors() -> None:
    """Issue 36 item 14: byte order of UTF-8 (code point order), whatever the C locale."""
    for features, expected in VECTORS:
        args = [f"{k}={v}" for k, v in features.items()]
        assert lua(str(SHIM), "saveid", SALT, *args).strip() == expected, features


@needs_lua
def test_lua_sha256_and_hmac_match_the_standard_vectors() -> None:
    code = (
        f'package.path = "{DST}/scripts/?.lua;" .. package.path\n'
        'local s = require("xty.sha256")\n'
        'print(s.hex(s.sha256("")))\n'
        'print(s.hex(s.sha256(string.rep("a", 1000))))\n'
        'print(s.hex(s.hmac_sha256(string.rep("k", 100), "The quick brown fox")))\n'
    )
    import hashlib
    import hmac

    lines = lua("-e", code).split()
    assert lines == [
        hashlib.sha256(b"").hexdigest(),
        hashlib.sha256(b"a" * 1000).hexdigest(),
        hmac.new(b"k" * 100, b"The quick brown fox", hashlib.sha256).hexdigest(),
    ]


@needs_lua
def test_lua_writes_json_as_dst_does() -> None:
    code = (
        f'package.path = "{DST}/scripts/?.lua;" .. package.path\n'
        'local j = require("xty.json")\n'
        'print(j.encode({frames = {}, name = "Wilson\'s"}, true))\n'
    )
    assert lua("-e", code).strip() == '{"frames":{},"name":"Wilson\\\'s"}'


@needs_lua
def test_lua_projection_is_the_python_one(tmp_path: Path) -> None:
    cases = [(game, question) for game, question, *_ in TABLE[1::3]] + [
        ("oxygen-not-included", "你好")
    ]
    for game, question in cases:
        path = tmp_path / "observation.json"
        path.write_text(json.dumps(OBSERVATIONS[game], ensure_ascii=False), encoding="utf-8")
        got = json.loads(lua(str(SHIM), "project", str(path), question, game))
        assert got == project(OBSERVATIONS[game], question, game), (game, question)


def _luasocket() -> bool:
    if NO_LUA:
        return False
    probe = subprocess.run(["lua5.1", "-e", 'require("socket.http")'], capture_output=True)
    return probe.returncode == 0


@needs_lua
@pytest.mark.skipif(
    not _luasocket(), reason="the shim's QueryServer needs LuaSocket (apt-get install lua-socket)"
)
@pytest.mark.anyio
async def test_lua_example_runs_a_session_over_http_against_xtyserver_serve(tmp_path: Path) -> None:
    async with FakeModelServer() as fake:
        fake.enqueue(Reply(chunks=["猎犬", "在", "附近！"], chunk_delay=0.4, match="危险"))
        server = ServerProcess(
            tmp_path / "data", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
        )
        http_url = server.url.replace("ws://", "http://") + "/http"
        try:
            with anyio.fail_after(120):
                result = await anyio.run_process(
                    ["lua5.1", str(SHIM), "run", http_url, TOKEN], check=False
                )
        finally:
            server.stop()
    out = result.stdout.decode()
    assert result.returncode == 0, out + result.stderr.decode()
    assert "<- server.hello heartbeatMs 5000" in out
    assert "<- stats.result 1 save(s)" in out
    assert "topics danger" in out
    assert out.count("<- chat.delta ") == 3
    assert "<- chat.done context fresh: 猎犬在附近！" in out
    turn = next(r for r in fake.chat_requests if "附近危险吗" in r.body.decode())
    prompt = turn.body.decode()
    # The held item as the game shows it, its prefab beside; the danger projection kept the
    # monsters.
    assert "手持：长矛（spear）" in turn.json["messages"][-1]["content"]
    assert "Spider" in prompt and "Berry Bush" not in prompt
