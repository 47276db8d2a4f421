"""Local access: a local process without the token cannot keep the mod out,
a rotated token takes effect on the running server, wrong tokens are slowed, and a
weak configured token is refused at start. Real server, real sockets, real token file.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
import structlog
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
            # The pool keeps at most 8 waiting: the older squatters were dropped (each
            # joins it once its first message has had its chance to come).
            assert h.server.seats.waiting <= 8
            with anyio.fail_after(10):
                while sum(ws.close_code is not None for ws in squatters) < 40 - 8:
                    await anyio.sleep(0.05)
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
        with structlog.testing.capture_logs() as logs:
            for _ in range(5):
                with pytest.raises(InvalidStatus):
                    async with connect(h.url, **wrong):
                        pass
        assert token_delays(logs) == [0.05, 0.1, 0.2, 0.4, 0.8]
        with structlog.testing.capture_logs() as logs:
            async with h.client(**BEARER) as ws:
                await send(ws, hello_frame())
                assert (await recv(ws))["type"] == "server.hello"
        assert token_delays(logs) == []  # the right token waits for nothing


def token_delays(logs: list[dict[str, Any]]) -> list[float]:
    """The waits the gate decided for wrong tokens, in the order it served them."""
    return [e["delay_s"] for e in logs if e["event"] == "gate.token_delayed"]


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


@pytest.mark.parametrize(
    ("value", "refusal"),
    [
        ("Kq3vX9pL2mZ8rT5wY7nB4cD6fG1hJ0s", "at least 32"),  # 31 random characters
        ("Kq3vX9pL2mZ8rT5wY7nB4cD6fG1hJ0sA", None),  # 32 random ones: about 160 bits
        ("0" * 32, "too regular"),
        ("x" * 64, "too regular"),
        ("ab" * 16, "too regular"),
        ("0123456789abcdef" * 2, "too regular"),  # 64 bits: a pattern twice
        ("abcabcabcabcabcabcabcabcabcabcabcx", "too regular"),  # three letters and one more
    ],
)
def test_a_configured_token_that_is_short_or_regular_is_refused_at_start(
    tmp_path: Path, value: str, refusal: str | None
) -> None:
    env = {**os.environ, "XTY_TOKEN": value, "XTY_DATA_DIR": str(tmp_path)}
    if refusal is not None:
        result = subprocess.run(
            [sys.executable, "-m", "xtyserver", "serve", "--port", "0"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert result.returncode != 0
        assert refusal in result.stderr
        assert "Traceback" not in result.stderr
    else:
        assert tokens.load_or_create(tmp_path, env_token=value)[0] == value


def test_the_tokens_the_server_makes_and_the_suites_token_pass_the_entropy_rule() -> None:
    assert tokens.estimated_bits(TOKEN) >= tokens.MIN_TOKEN_BITS
    made = [secrets.token_urlsafe(tokens.TOKEN_BYTES) for _ in range(200)]
    assert min(tokens.estimated_bits(t) for t in made) >= tokens.MIN_TOKEN_BITS


# --- nobody without the token keeps a mod out or stalls the server --------------------------


SQUATTERS = 24


async def _squat(url: str, stop: anyio.Event) -> None:
    """Open tokenless connections that never speak, as fast as the server takes them."""
    held = []
    try:
        while not stop.is_set():
            with contextlib.suppress(OSError, InvalidStatus, TimeoutError):
                held.append(await connect(url, open_timeout=5))
            held = [ws for ws in held if ws.close_code is None][-64:]
    finally:
        for ws in held:
            await ws.close()


@contextlib.asynccontextmanager
async def flooded_pool(h: Any) -> AsyncIterator[None]:
    """Squatters keep the pre-auth pool full (each new one drops the oldest waiting)."""
    stop = anyio.Event()
    async with anyio.create_task_group() as tg:
        for _ in range(SQUATTERS):
            tg.start_soon(_squat, h.url, stop)
        with anyio.fail_after(20):
            while h.server.seats.waiting < 8:
                await anyio.sleep(0.01)
        try:
            yield
        finally:
            stop.set()


async def test_a_hello_with_the_token_is_seated_while_tokenless_connections_flood_the_pool(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h, flooded_pool(h):
        answers = []
        for n in range(16):
            async with h.client() as ws:  # the token in the hello only, sent as it connects
                await send(ws, hello_frame(save=f"farm-{n}"))
                answers.append((await recv(ws))["type"])
        assert answers == ["server.hello"] * 16


async def test_an_http_first_call_with_the_token_is_seated_while_the_pool_is_flooded(
    tmp_path: Path,
) -> None:
    from tests.serve.test_http_transport import call

    async with running(tmp_path) as h, flooded_pool(h):
        kinds = []
        for n in range(16):
            answer = await call(h, None, [hello_frame(save=f"dst-{n}")])
            kinds.append(answer["frames"][0]["type"])
        assert kinds == ["server.hello"] * 16


async def test_a_huge_tokenless_http_body_does_not_stall_the_live_mod(tmp_path: Path) -> None:
    from tests.serve.test_http_transport import post
    from xtyserver.serve.http_transport import BODY_MAX_BYTES

    many = (BODY_MAX_BYTES - 64) // 3  # 3.7 million empty frames: just under the size limit
    body = b'{"session":null,"frames":[' + b"{}," * (many - 1) + b"{}]}"
    async with running(tmp_path) as h, h.adapter() as mod:
        async with anyio.create_task_group() as tg:
            answer: list[tuple[int, Any]] = []

            async def big() -> None:
                answer.append(await post(h, body))

            tg.start_soon(big)
            for n in range(3):  # the mod goes on being answered meanwhile
                await send(mod, {"type": "heartbeat"})
                await send(mod, {"type": "stats.get", "id": f"s{n}"})
                with anyio.fail_after(5):  # liveness: the heartbeat deadline is 15 s
                    assert (await recv(mod))["type"] == "stats.result"
        [(status, error)] = answer
        assert status == 400
        assert error["fields"] == ["frames"] and "256" in error["message"]


async def test_parallel_wrong_tokens_from_one_address_are_answered_one_after_another(
    tmp_path: Path,
) -> None:
    delays = [0.05, 0.1, 0.2, 0.2, 0.2, 0.2, 0.2, 0.2]  # doubling from 50 ms, capped at 0.2 s
    async with running(tmp_path, overrides={"server.fail_delay_max": 0.2}) as h:
        wrong = {"additional_headers": {"Authorization": "Bearer " + "y" * 43}}

        async def guess() -> None:
            with pytest.raises(InvalidStatus):
                async with connect(h.url, open_timeout=30, **wrong):
                    pass

        with structlog.testing.capture_logs() as logs:
            async with anyio.create_task_group() as tg:
                for _ in delays:
                    tg.start_soon(guess)
        # One after another (each behind the ones queued before it), not side by side.
        served = [e for e in logs if e["event"] == "gate.token_delayed"]
        assert [e["delay_s"] for e in served] == delays
        assert max(e["queued"] for e in served) > 1
        async with h.client(**BEARER) as ws:  # the right token is not held up
            await send(ws, hello_frame())
            assert (await recv(ws))["type"] == "server.hello"


async def test_idle_connections_cannot_hold_the_memory_page(tmp_path: Path) -> None:
    from tests.manage.ui_fixtures import http

    def still_open(sock: socket.socket) -> bool:
        try:
            return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
        except BlockingIOError:
            return True

    async with running(tmp_path) as h:
        port = h.server.ui_port
        idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(40)]
        try:
            with anyio.fail_after(20):
                while h.server.ui.reading < 40:  # all accepted, none sent a byte
                    await anyio.sleep(0.01)
            answer = await http(port, "GET", "/ui/", [("Host", f"127.0.0.1:{port}")])
            assert answer.status == 200
            # Answered at once, not once idle connections gave their slots up.
            assert all(still_open(sock) for sock in idle)
            with anyio.fail_after(20):  # and they do not stay: no head, no connection
                while any(still_open(sock) for sock in idle):
                    await anyio.sleep(0.05)
        finally:
            for sock in idle:
                sock.close()
