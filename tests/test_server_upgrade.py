"""Raw HTTP upgrades: repeated security headers are refused, not guessed at."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import anyio
import pytest

from tests.conftest import TOKEN, running

pytestmark = pytest.mark.anyio


async def raw_upgrade(url: str, headers: list[str]) -> bytes:
    host, port = url.removeprefix("ws://").split("/")[0].rsplit(":", 1)
    key = base64.b64encode(os.urandom(16)).decode()
    lines = [
        "GET /v1 HTTP/1.1",
        *headers,
        "Upgrade: websocket",
        "Connection: Upgrade",
        f"Sec-WebSocket-Key: {key}",
        "Sec-WebSocket-Version: 13",
    ]
    async with await anyio.connect_tcp(host, int(port)) as stream:
        await stream.send(("\r\n".join(lines) + "\r\n\r\n").encode())
        with anyio.fail_after(5):
            answer = b""
            while b"\r\n" not in answer:
                answer += await stream.receive()
    return answer.split(b"\r\n", 1)[0]


@pytest.mark.parametrize(
    ("extra", "status"),
    [
        ([], b"101"),
        (["Host: evil.example:{port}"], b"403"),  # a second Host
        (["Origin: http://a.example", "Origin: http://b.example"], b"403"),
        ([f"Authorization: Bearer {TOKEN}", f"Authorization: Bearer {TOKEN}"], b"401"),
    ],
)
async def test_server_refuses_repeated_security_headers(
    tmp_path: Path, extra: list[str], status: bytes
) -> None:
    async with running(tmp_path) as h:
        port = h.url.removeprefix("ws://").split("/")[0].rsplit(":", 1)[1]
        headers = [f"Host: 127.0.0.1:{port}", *(e.format(port=port) for e in extra)]
        line = await raw_upgrade(h.url, headers)
        assert line.split(b" ")[1] == status, line


@pytest.mark.parametrize(
    ("host", "status"),
    [
        ("127.0.0.1:{port}", b"101"),
        ("[::1]:{port}", b"101"),
        ("localhost:{port}", b"101"),
        ("127.0.0.1:{other}", b"403"),  # loopback, but another port: a rebinding page's guess
        ("[::1]:{other}", b"403"),
        ("localhost", b"403"),
    ],
)
async def test_server_checks_the_port_of_a_loopback_host(
    tmp_path: Path, host: str, status: bytes
) -> None:
    async with running(tmp_path) as h:
        port = int(h.url.removeprefix("ws://").split("/")[0].rsplit(":", 1)[1])
        line = await raw_upgrade(h.url, [f"Host: {host.format(port=port, other=port + 1)}"])
        assert line.split(b" ")[1] == status, line
