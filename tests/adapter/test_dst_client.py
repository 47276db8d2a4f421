"""The DST adapter's findings through play (lua5.1, the shim's DST world, the real server).

The server runs in the test's process on a ManualClock (tests/adapter/games.py); the mod runs
on its own real-time clock; every wait is on a condition (a line the mod printed, a heartbeat
the store counted). The pause, restart and quit lifecycles are in test_lifecycles.py.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.adapter.games import (
    EVENING,
    NO_LUA,
    dst_game,
    free_port,
    has_luasocket,
    heartbeats_counted,
    save_stats,
    serve,
    until,
)
from xtyserver.clock import ManualClock

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(NO_LUA or not has_luasocket(), reason="needs lua5.1 and lua-socket"),
]
DST = "dont-starve-together"


async def test_the_game_started_before_the_server_makes_its_salt_and_connects_later(
    tmp_path: Path,
) -> None:
    port = free_port()
    async with dst_game(tmp_path, port) as game:
        # First run: the salt is made and kept (the default "" crashed saveid.derive).
        await game.expect("persisted xiaotangyuan_salt")
        save_line = game.lines[await game.expect("[xty] saveId ")]
        await game.expect("[xty] no server at http://127.0.0.1:")
        # A chat while nothing listens ends at once, and the player is told why.
        game.do("chat 你好")
        await game.expect("said (no_server): 小汤圆没连上：请先启动小汤圆（xtyserver）")
        # The mod keeps trying (with backoff) without logging each failure.
        await until(lambda: game.count("query failed (0)") >= 3)
        async with serve(tmp_path, port, ManualClock(EVENING)) as h:
            opened = await game.expect("session open")
            game.do("chat 附近危险吗？")
            await game.expect("reply: 小汤圆收到：附近危险吗？", after=opened)
            assert game.count("no server at") == 1, game.output
            assert game.count("server reachable again") == 1
            save = save_stats(h, DST)
            assert (save.sessions, save.days, save.save_name) == (1, 1, "Wilson's world")
    # The next run reads the same salt: the same saveId, nothing persisted again.
    async with dst_game(tmp_path, port) as game:
        assert game.lines[await game.expect("[xty] saveId ")] == save_line
        game.do("quit")
        await game.expect("> quit")
        assert game.count("persisted") == 0


async def test_a_network_blip_through_a_server_restart_opens_a_new_session(
    tmp_path: Path,
) -> None:
    port = free_port()
    clock = ManualClock(EVENING)
    async with dst_game(tmp_path, port) as game:
        async with serve(tmp_path, port, clock) as h:
            await game.expect("session open")
            await heartbeats_counted(h)
            # The network drops; a chat sent now ends within the outage bound and says why.
            game.do("blip 600")
            await game.expect("query failed (no network)")
            game.do("chat 还在吗？")
            await game.expect("said (no_server): 小汤圆没连上")
        # The server restarts while the mod cannot reach it: its handle is dead (404).
        async with serve(tmp_path, port, clock) as h:
            mark = len(game.lines)
            game.do("blip 0")
            await game.expect("session unknown to the server; opening a new one", after=mark)
            await game.expect("session open", after=mark)
            await heartbeats_counted(h)
            game.do("chat 附近危险吗？")
            await game.expect("reply: 小汤圆收到：附近危险吗？", after=mark)
            save = save_stats(h, DST)
            assert (save.sessions, save.days) == (2, 1)
            assert game.count("no server at") == 1, game.output


KEY = "k" * 43


class PairingTransport:
    """POST /v1/http's side of pairing as v1.md "Pairing" fixes it, scripted: pair.pending to the
    first call, pair.granted in the next poll, then server.hello to a hello with the key."""

    def __init__(self) -> None:
        self.calls: list[dict[str, Any]] = []
        self.granted = False

    def answer(self, call: dict[str, Any]) -> dict[str, Any]:
        self.calls.append(call)
        frames: list[dict[str, Any]] = []
        for frame in call["frames"]:
            if frame["type"] == "adapter.pair":
                pending = {"type": "pair.pending", "replyTo": frame["id"], "code": "4821"}
                frames.append(pending | {"expiresInSeconds": 120})
            elif frame["type"] == "adapter.hello":
                assert frame["token"] == KEY, frame
                frames.append({"type": "server.hello", "replyTo": frame["id"], "protocol": "v1"})
                frames[-1] |= {"sessionId": "s-1", "heartbeatMs": 5000}
        if call.get("session") is not None and not self.granted:
            self.granted = True
            frames.append({"type": "pair.granted", "replyTo": "pair-1", "key": KEY})
        return {"session": "S" * 24, "frames": frames}


class OldServerTransport(PairingTransport):
    """A server from before v1.md "Keys per install": installId is an unknown field to it."""

    def answer(self, call: dict[str, Any]) -> dict[str, Any]:
        for frame in call["frames"]:
            if frame["type"] == "adapter.pair" and "installId" in frame:
                self.calls.append(call)
                refusal = {"type": "error", "code": "invalid_frame", "id": frame["id"]}
                refusal |= {"message": "installId: unknown field", "fields": ["installId"]}
                return {"session": "O" * 24, "frames": [refusal]}
        return super().answer(call)


@contextmanager
def pairing_server(transport: PairingTransport) -> Iterator[int]:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers["Content-Length"]))
            # DST's JSON: \' in strings and {} for an empty list (v1.md "HTTP transport").
            call = json.loads(body.replace(b"\\'", b"'"))
            call["frames"] = call["frames"] or []
            answer = json.dumps(transport.answer(call)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        thread.join()


async def test_a_mod_without_a_key_pairs_and_keeps_the_key(tmp_path: Path) -> None:
    transport = PairingTransport()
    with pairing_server(transport) as port:
        async with dst_game(tmp_path, port, token="") as game:
            await game.expect("said: 在小汤圆页面上确认配对码 4821 / Confirm code 4821")
            await game.expect("persisted xiaotangyuan_key")
            await game.expect("session open")
    first = transport.calls[0]
    assert first.get("session") is None
    (pair,) = first["frames"]
    # This install's random id, kept beside the key (v1.md "Keys per install").
    install = (tmp_path / "persistent" / "xiaotangyuan_install").read_text()
    assert len(install) == 32 and int(install, 16) >= 0
    assert pair == {
        "type": "adapter.pair",
        "id": "pair-1",
        "adapter": {"name": "XTY DST", "version": "0.1.0"},
        "gameId": DST,
        "installId": install,
    }
    hello = next(f for c in transport.calls for f in c["frames"] if f["type"] == "adapter.hello")
    assert hello["token"] == KEY
    assert (tmp_path / "persistent" / "xiaotangyuan_key").read_text() == KEY
    # Nothing but polls went between the pair request and the key.
    granted_at = next(i for i, c in enumerate(transport.calls) if c["frames"] and i > 0)
    assert all(not c["frames"] for c in transport.calls[1:granted_at])


async def test_a_server_older_than_install_ids_is_asked_again_without_one(tmp_path: Path) -> None:
    transport = OldServerTransport()
    with pairing_server(transport) as port:
        async with dst_game(tmp_path, port, token="") as game:
            await game.expect("the server does not know installId: pairing without it")
            await game.expect("said: 在小汤圆页面上确认配对码 4821 / Confirm code 4821")
            await game.expect("persisted xiaotangyuan_key")
            await game.expect("session open")
    pairs = [f for c in transport.calls for f in c["frames"] if f["type"] == "adapter.pair"]
    assert ["installId" in f for f in pairs] == [True, False]
