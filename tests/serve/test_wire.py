"""The adapter port's WebSocket on the wire: fragments, pings and the closing handshake.

A raw socket against the real server; the client side is written frame by
frame, as a mod's own WebSocket library might send them.
"""

from __future__ import annotations

import base64
import json
import os
import struct
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import anyio.abc
import pytest

from tests.conftest import TOKEN, hello_frame, running

pytestmark = pytest.mark.anyio


def frame(opcode: int, payload: bytes, *, fin: bool = True) -> bytes:
    """One masked client frame."""
    mask = os.urandom(4)
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([0x80 | n])
    else:
        head += bytes([0x80 | 126]) + struct.pack("!H", n)
    return head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))


async def read_frame(stream: anyio.abc.ByteStream, buffer: bytearray) -> tuple[int, bytes]:
    """One unmasked server frame: (opcode, payload)."""

    async def exactly(n: int) -> bytes:
        while len(buffer) < n:
            buffer.extend(await stream.receive())
        out = bytes(buffer[:n])
        del buffer[:n]
        return out

    first, second = await exactly(2)
    n = second & 0x7F
    if n == 126:
        (n,) = struct.unpack("!H", await exactly(2))
    elif n == 127:
        (n,) = struct.unpack("!Q", await exactly(8))
    return first & 0x0F, await exactly(n)


async def upgrade(url: str) -> tuple[anyio.abc.SocketStream, bytearray]:
    parts = urlsplit(url)
    assert parts.hostname is not None and parts.port is not None
    stream = await anyio.connect_tcp(parts.hostname, parts.port)
    key = base64.b64encode(os.urandom(16)).decode()
    await stream.send(
        (
            f"GET /v1 HTTP/1.1\r\nHost: 127.0.0.1:{parts.port}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n"
            f"Authorization: Bearer {TOKEN}\r\n\r\n"
        ).encode()
    )
    answer = bytearray()
    while b"\r\n\r\n" not in answer:
        answer.extend(await stream.receive())
    head, _, rest = bytes(answer).partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101 Switching Protocols"), head
    return stream, bytearray(rest)


async def test_a_fragmented_hello_with_a_ping_between_is_one_message(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        stream, buffer = await upgrade(h.url)
        async with stream:
            hello = json.dumps(hello_frame()).encode()
            third = len(hello) // 3
            # Three fragments, a ping between the first two, all in one write.
            await stream.send(
                frame(0x1, hello[:third], fin=False)
                + frame(0x9, b"are you there")
                + frame(0x0, hello[third : 2 * third], fin=False)
                + frame(0x0, hello[2 * third :])
            )
            with anyio.fail_after(10):
                assert await read_frame(stream, buffer) == (0xA, b"are you there")
                opcode, payload = await read_frame(stream, buffer)
            assert opcode == 0x1 and json.loads(payload)["type"] == "server.hello"


async def test_a_close_from_the_mod_is_answered_and_the_socket_ends(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        stream, buffer = await upgrade(h.url)
        async with stream:
            await stream.send(frame(0x1, json.dumps(hello_frame()).encode()))
            with anyio.fail_after(10):
                assert (await read_frame(stream, buffer))[0] == 0x1  # server.hello
                await stream.send(frame(0x8, struct.pack("!H", 1000) + b"bye"))
                assert await read_frame(stream, buffer) == (0x8, struct.pack("!H", 1000) + b"bye")
                with pytest.raises(anyio.EndOfStream):
                    await stream.receive()  # the server ends the TCP connection
            await h.server.wait_connections(0)


async def test_a_text_message_that_is_not_utf8_closes_1007(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        stream, buffer = await upgrade(h.url)
        async with stream:
            await stream.send(frame(0x1, b'{"type": "heartbeat", "x": "\xff"}'))
            with anyio.fail_after(10):
                opcode, payload = await read_frame(stream, buffer)
            assert opcode == 0x8
            assert struct.unpack("!H", payload[:2])[0] == 1007
            assert b"invalid start byte at position 28" in payload
