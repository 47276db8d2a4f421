"""Hostile peers over a real loopback WebSocket: origin, host, token, deadlines, caps."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

from tests.conftest import TOKEN, Harness, hello_frame, recv, running, send

pytestmark = pytest.mark.anyio


async def refused_status(url: str, **kwargs: Any) -> int:
    """Open an upgrade that the server must refuse; return the HTTP status."""
    with pytest.raises(InvalidStatus) as caught:
        async with connect(url, open_timeout=5, **kwargs):
            pass
    return caught.value.response.status_code


async def close_code(ws: ClientConnection, timeout: float = 5.0) -> int | None:
    """Read until the server closes; return the close code it sent."""
    with anyio.fail_after(timeout):
        try:
            while True:
                await ws.recv()
        except ConnectionClosed as closed:
            return closed.rcvd.code if closed.rcvd is not None else None


async def works(h: Harness, ws: ClientConnection) -> None:
    """The connection still answers a request frame."""
    await send(ws, {"type": "stats.get", "id": "s1"})
    answer = await recv(ws)
    assert answer["type"] == "stats.result", answer
    assert answer["id"] == "s1"


# -- Origin (cross-site WebSocket hijacking) ------------------------------------


@pytest.mark.parametrize("origin", ["http://evil.example", "null", "http://localhost.evil.example"])
async def test_server_refuses_upgrade_with_foreign_origin_with_403(
    tmp_path: Path, origin: str
) -> None:
    async with running(tmp_path) as h:
        assert await refused_status(h.url, origin=origin) == 403
        # Even with the right token: the web page must not get in.
        status = await refused_status(
            h.url, origin=origin, additional_headers={"Authorization": f"Bearer {TOKEN}"}
        )
        assert status == 403


async def test_server_accepts_upgrade_without_origin(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        await works(h, ws)


async def test_server_accepts_allow_listed_origin(tmp_path: Path) -> None:
    allowed = "http://127.0.0.1:9999"
    async with running(tmp_path, overrides={"server.allowed_origins": [allowed]}) as h:
        async with h.client(origin=allowed) as ws:
            await send(ws, hello_frame())
            assert (await recv(ws))["type"] == "server.hello"
        assert await refused_status(h.url, origin="http://127.0.0.1:9998") == 403


# -- Host (DNS rebinding) -------------------------------------------------------


@pytest.mark.parametrize(
    "host", ["evil.example", "127.0.0.1.evil.example", "localhost.evil.example"]
)
async def test_server_refuses_non_loopback_host_with_403_even_with_token(
    tmp_path: Path, host: str
) -> None:
    async with running(tmp_path) as h:
        port = urlsplit(h.url).port
        assert port is not None
        # The client dials loopback but says another Host, as a rebinding page would.
        sock = socket.create_connection(("127.0.0.1", port))
        try:
            status = await refused_status(
                f"ws://{host}:{port}/v1",
                sock=sock,
                additional_headers={"Authorization": f"Bearer {TOKEN}"},
            )
        finally:
            sock.close()
        assert status == 403


async def test_server_accepts_localhost_host(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        url = h.url.replace("127.0.0.1", "localhost")
        port = urlsplit(h.url).port
        assert port is not None
        sock = socket.create_connection(("127.0.0.1", port))
        async with connect(url, sock=sock) as ws:
            await send(ws, hello_frame())
            assert (await recv(ws))["type"] == "server.hello"


async def test_server_answers_404_for_other_paths(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        assert await refused_status(h.url.replace("/v1", "/v2")) == 404


# -- token ------------------------------------------------------------------------


async def test_server_closes_4001_after_hello_with_wrong_token(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        await send(ws, hello_frame(token="wrong-token-0123456789"))
        error = await recv(ws)
        assert error["type"] == "error"
        assert error["code"] == "unauthorized"
        assert TOKEN not in error["message"]
        assert await close_code(ws) == 4001


async def test_server_closes_4001_after_hello_without_token(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        frame = hello_frame()
        del frame["token"]
        await send(ws, frame)
        assert (await recv(ws))["code"] == "unauthorized"
        assert await close_code(ws) == 4001


async def test_server_accepts_bearer_header_without_hello_token(tmp_path: Path) -> None:
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    async with running(tmp_path) as h, h.client(additional_headers=bearer) as ws:
        frame = hello_frame()
        del frame["token"]
        await send(ws, frame)
        assert (await recv(ws))["type"] == "server.hello"
        await works(h, ws)


async def test_server_refuses_wrong_bearer_with_401(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        status = await refused_status(
            h.url, additional_headers={"Authorization": "Bearer not-the-token-0123456789"}
        )
        assert status == 401


# -- deadlines ---------------------------------------------------------------------


async def test_server_closes_4002_at_the_hello_deadline_and_not_before(tmp_path: Path) -> None:
    # The deadline runs on the injected clock: 10 s of it, whatever the machine's load,
    # for a connection whose upgrade carried the token.
    bearer = {"additional_headers": {"Authorization": f"Bearer {TOKEN}"}}
    async with running(tmp_path) as h, h.client(**bearer) as ws:
        await h.clock.wait_sleepers(1)
        h.clock.advance(9.999)
        await send(ws, {"type": "heartbeat", "id": "early"})
        assert (await recv(ws))["code"] == "hello_required"  # still open
        h.clock.advance(0.001)
        assert await close_code(ws, timeout=10) == 4002


async def test_server_closes_4003_three_heartbeats_after_the_last_one(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        async with h.adapter() as ws:
            for _ in range(3):
                h.clock.advance(14.9)  # just inside the 15 s deadline, every time
                await send(ws, {"type": "heartbeat"})
                await send(ws, {"type": "stats.get", "id": "barrier"})
                assert (await recv(ws))["id"] == "barrier"
            await h.clock.wait_sleepers(1)
            h.clock.advance(14.999)
            await send(ws, {"type": "stats.get", "id": "alive"})
            assert (await recv(ws))["id"] == "alive"
            h.clock.advance(0.001)
            assert await close_code(ws, timeout=10) == 4003
        assert [s.sessions for s in h.store.stats().saves] == [1]


async def test_server_keeps_session_while_heartbeats_come(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        for _ in range(24):  # two minutes of play, a heartbeat every 5 s
            h.clock.advance(5)
            await send(ws, {"type": "heartbeat"})
            await send(ws, {"type": "stats.get", "id": "barrier"})
            assert (await recv(ws))["id"] == "barrier"
        await works(h, ws)


# -- caps ---------------------------------------------------------------------------


async def test_server_answers_rate_limited_past_the_frame_burst(tmp_path: Path) -> None:
    # The injected clock stands still, so the bucket never refills: exactly
    # `frame_burst` frames pass (the hello is the first), then every frame is refused.
    overrides = {"server.frames_per_second": 1, "server.frame_burst": 4}
    async with running(tmp_path, overrides=overrides) as h, h.adapter() as ws:
        for n in range(3):
            await send(ws, {"type": "stats.get", "id": f"s{n}"})
            assert (await recv(ws))["type"] == "stats.result"
        await send(ws, {"type": "stats.get", "id": "over"})
        refused = await recv(ws)
        assert refused["type"] == "error"
        assert refused["code"] == "rate_limited"
        assert refused["id"] == "over"
        h.clock.advance(1.0)  # one token back
        await works(h, ws)


async def test_server_answers_rate_limited_past_the_chat_burst(tmp_path: Path) -> None:
    # Extraction off: only the player's turns reach the model.
    overrides = {"server.chats_per_minute": 1, "server.chat_burst": 2, "memory.extraction": False}
    async with running(tmp_path, overrides=overrides) as h, h.adapter() as ws:
        for n in range(2):
            await send(ws, {"type": "chat.send", "id": f"c{n}", "text": "你好", "source": "text"})
            while (frame := await recv(ws))["type"] == "chat.delta":
                pass
            assert frame["type"] == "chat.done"
        await send(ws, {"type": "chat.send", "id": "c2", "text": "你好", "source": "text"})
        refused = await recv(ws)
        assert (refused["type"], refused["code"], refused["id"]) == ("error", "rate_limited", "c2")
        assert len(h.fake.chat_requests) == 2


async def test_server_closes_4008_on_a_flood(tmp_path: Path) -> None:
    overrides = {"server.frames_per_second": 1, "server.frame_burst": 1, "server.flood_refusals": 5}
    async with running(tmp_path, overrides=overrides) as h, h.adapter() as ws:
        for _ in range(7):
            await send(ws, {"type": "heartbeat"})
        assert await close_code(ws) == 4008


async def test_server_refuses_connection_over_max_with_503_and_keeps_the_first(
    tmp_path: Path,
) -> None:
    bearer = {"additional_headers": {"Authorization": f"Bearer {TOKEN}"}}
    async with running(tmp_path, overrides={"server.max_connections": 1}) as h, h.adapter() as ws:
        assert await refused_status(h.url, **bearer) == 503
        # Without a token in the upgrade it waits in the pre-auth pool; its hello
        # proves the token but finds no seat: error server_full, close 1013.
        async with h.client() as late:
            await send(late, hello_frame())
            assert (await recv(late))["code"] == "server_full"
            assert await close_code(late) == 1013
        await works(h, ws)
