"""Local access (issue 17 §6): a local process without the token cannot keep the mod out,
a rotated token takes effect on the running server, wrong tokens are slowed, and a
weak configured token is refused at start. Real server, real sockets, real token file.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from tests.conftest import TOKEN, hello_frame, recv, running, send
from tests.test_server_security import close_code, refused_status
from xtyserver import token as tokens
from xtyserver.clock import SystemClock
from xtyserver.config import load_settings
from xtyserver.serve.gate import FailedTokens, GateLimits, Seats
from xtyserver.server import serving

pytestmark = pytest.mark.anyio

BEARER = {"additional_headers": {"Authorization": f"Bearer {TOKEN}"}}


async def test_forty_tokenless_connections_do_not_keep_the_mod_out(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        squatters = []
        for _ in range(40):
            ws = await connect(h.url, open_timeout=5)
            squatters.append(ws)
        try:
            with anyio.fail_after(2):  # both kinds of mod get server.hello within 2 s
                async with h.client(**BEARER) as by_header:
                    await send(by_header, hello_frame(save="farm-h"))
                    assert (await recv(by_header))["type"] == "server.hello"
                async with h.client() as by_hello:
                    await send(by_hello, hello_frame(save="farm-i"))
                    assert (await recv(by_hello))["type"] == "server.hello"
            # The pool keeps at most 8 waiting: the older squatters were dropped.
            assert h.server.seats.waiting <= 8
            dropped = [ws for ws in squatters if ws.close_code is not None]
            assert len(dropped) >= 40 - 8
        finally:
            for ws in squatters:
                await ws.close()


async def test_a_tokenless_connection_has_two_seconds_to_prove_the_token(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        await h.clock.wait_sleepers(1)
        h.clock.advance(1.999)
        await send(ws, {"type": "heartbeat", "id": "early"})
        assert (await recv(ws))["code"] == "hello_required"  # still open
        h.clock.advance(0.001)
        assert await close_code(ws) == 4002


async def test_tokenless_connections_do_not_count_against_max_connections(
    tmp_path: Path,
) -> None:
    limit = {"server.max_connections": 1}
    async with running(tmp_path, overrides=limit) as h:
        first, second, mod = h.client(), h.client(), h.client(**BEARER)
        async with first, second, mod as ws:
            await send(ws, hello_frame())
            assert (await recv(ws))["type"] == "server.hello"


async def test_a_rotated_token_takes_effect_on_the_running_server(tmp_path: Path) -> None:
    data = tmp_path / "data"
    old, path = tokens.load_or_create(data)
    settings = load_settings(None, env={}, overrides={"data_dir": str(data), "server.port": 0})
    async with serving(settings, token=old, clock=SystemClock(), token_file=path) as server:
        async with connect(server.url, additional_headers={"Authorization": f"Bearer {old}"}):
            pass
        new = tokens.rotate(data)  # what `xtyserver token rotate` does
        assert (
            await refused_status(server.url, additional_headers={"Authorization": f"Bearer {old}"})
            == 401
        )
        async with connect(server.url) as ws:  # the old token in a hello: 4001
            await send(ws, hello_frame(token=old))
            assert (await recv(ws))["code"] == "unauthorized"
        async with connect(server.url, additional_headers={"Authorization": f"Bearer {new}"}) as ws:
            await send(ws, hello_frame(token=new))
            assert (await recv(ws))["type"] == "server.hello"


async def test_wrong_tokens_are_answered_ever_slower_and_the_right_one_at_once(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h:
        wrong = {"additional_headers": {"Authorization": "Bearer " + "x" * 43}}
        started = anyio.current_time()
        for _ in range(5):
            with pytest.raises(InvalidStatus):
                async with connect(h.url, **wrong):
                    pass
        # 0.05 + 0.1 + 0.2 + 0.4 + 0.8 s at least
        assert anyio.current_time() - started >= 1.5
        started = anyio.current_time()
        async with h.client(**BEARER) as ws:
            await send(ws, hello_frame())
            assert (await recv(ws))["type"] == "server.hello"
        assert anyio.current_time() - started < 1.0


def test_the_guess_delay_doubles_up_to_the_cap_and_starts_over_later() -> None:
    failed = FailedTokens(GateLimits(fail_delay_first=0.05, fail_delay_max=1.0))
    delays = [failed.delay("127.0.0.1", 100.0) for _ in range(8)]
    assert delays == [0.05, 0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0]
    assert failed.delay("::1", 100.0) == 0.05  # per remote
    assert failed.delay("127.0.0.1", 100.0 + 61) == 0.05  # forgotten after 60 s


def test_the_pool_drops_the_oldest_and_seats_stop_at_the_limit() -> None:
    seats = Seats(GateLimits(max_connections=2, preauth_pool=2))
    assert [seats.wait(k) for k in ("a", "b", "c", "d")] == [None, None, "a", "b"]
    assert seats.waiting == 2
    assert (seats.take(), seats.take(), seats.take()) == (True, True, False)
    seats.release()
    assert seats.take()


@pytest.mark.parametrize(("value", "refused"), [("x" * 31, True), ("x" * 32, False)])
def test_a_configured_token_shorter_than_32_characters_is_refused_at_start(
    tmp_path: Path, value: str, refused: bool
) -> None:
    env = {**os.environ, "XTY_TOKEN": value, "XTY_DATA_DIR": str(tmp_path)}
    if refused:
        result = subprocess.run(
            [sys.executable, "-m", "xtyserver", "serve", "--port", "0"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode != 0
        assert "at least 32" in result.stderr
        assert "Traceback" not in result.stderr
    else:
        assert tokens.load_or_create(tmp_path, env_token=value)[0] == value
