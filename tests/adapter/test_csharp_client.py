"""The C# client inside a game loop (adapters/csharp/test/Probe.cs on Mono).

Probe.exe is a game's main thread as Unity has it: a single-threaded synchronisation context
that runs only when the loop turns, and `client.Poll()` on every tick. It runs against a real
`xtyserver serve` with the scripted model, or, where the test must see the client's own frames
on the wire (its answer to a close, a voice chat), against a scripted WebSocket peer.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.asyncio.server import ServerConnection, serve

from tests.adapter.games import EVENING, free_port
from tests.adapter.mono import NO_MONO, NO_MONO_REASON
from tests.conftest import TOKEN, ServerProcess, running
from xtyserver.adapter.saveid import derive_save_id
from xtyserver.clock import ManualClock
from xtyserver.testing import FakeModelServer, Reply

pytestmark = pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON)


async def run_probe(exe: Path, *args: str) -> str:
    with anyio.fail_after(120):
        result = await anyio.run_process(["mono", str(exe), *args], check=False)
    out = result.stdout.decode()
    assert result.returncode == 0, out + result.stderr.decode()
    return out


def test_numbers_dictionaries_and_unsigned_values_are_written_as_json(probe: Path) -> None:
    out = subprocess.run(["mono", str(probe), "json"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    line, budget = out.stdout.splitlines()[:2]
    assert '"float":72.3,' in line  # not 72.300003051757813
    assert json.loads(line) == {
        "float": 72.3,
        "double": 72.3,
        "whole": 45,
        "uint": 4000000000,
        "ulong": 18446744073709551615,
        "ushort": 7,
        "dict": {"name": "Pip", "hearts": 3, "tags": ["pet"]},
        "strings": {"season": "spring"},
    }
    assert budget == "budget ok"


class ScriptedPeer:
    """A WebSocket server that says server.hello, records the client's frames and, on cue,
    closes with 1001; it keeps what the client answered to the close."""

    def __init__(self) -> None:
        self.frames: list[dict[str, Any]] = []
        self.close_answer: int | None = None
        self.closed = anyio.Event()
        self.close_after_chats = 1

    async def handler(self, ws: ServerConnection) -> None:
        async for raw in ws:
            frame = json.loads(raw)
            self.frames.append(frame)
            if frame["type"] == "adapter.hello":
                hello = {"type": "server.hello", "replyTo": frame["id"], "protocol": "v1"}
                hello |= {"sessionId": "s-1", "heartbeatMs": 5000, "limits": {}}
                await ws.send(json.dumps(hello))
            elif frame["type"] == "chat.send":
                for piece in ("晴天，", "适合钓鱼！"):
                    await ws.send(
                        json.dumps({"type": "chat.delta", "id": frame["id"], "text": piece})
                    )
                done = {"type": "chat.done", "id": frame["id"], "text": "晴天，适合钓鱼！"}
                await ws.send(json.dumps(done | {"context": "none", "imageSent": False}))
                if sum(f["type"] == "chat.send" for f in self.frames) >= self.close_after_chats:
                    # close() waits up to close_timeout for the client's own close frame.
                    await ws.close(1001, "server shutdown")
                    rcvd = ws.protocol.close_rcvd
                    self.close_answer = rcvd.code if rcvd is not None else None
                    self.closed.set()
                    return


@pytest.mark.anyio
async def test_the_client_answers_the_servers_close_and_sends_voice(probe: Path) -> None:
    peer = ScriptedPeer()
    async with serve(peer.handler, "127.0.0.1", 0, close_timeout=20) as server:
        port = server.sockets[0].getsockname()[1]
        out = await run_probe(
            probe,
            "session",
            f"ws://127.0.0.1:{port}/v1",
            TOKEN,
            "--chats",
            "1",
            "--voice",
            "--until-closed",
        )
        with anyio.fail_after(30):
            await peer.closed.wait()
    # The close handshake completed: the client sent its own close frame back (with the code).
    assert peer.close_answer == 1001, out
    assert "[xty] closed 1001 server shutdown" in out
    chat = next(f for f in peer.frames if f["type"] == "chat.send")
    assert chat["source"] == "voice"


@pytest.mark.anyio
async def test_callbacks_run_on_the_game_thread_and_a_throwing_one_ends_nothing(
    probe: Path, tmp_path: Path
) -> None:
    async with FakeModelServer() as fake:
        for _ in range(2):
            fake.enqueue(Reply(chunks=["晴天，", "适合", "钓鱼！"], chunk_delay=0.02))
        server = ServerProcess(
            tmp_path / "data", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
        )
        try:
            # ConnectAsync().Wait() on the loop's thread returns (no deadlock on its context).
            out = await run_probe(probe, "session", server.url, TOKEN, "--chats", "2", "--throw")
        finally:
            server.stop()
    assert "connected" in out.splitlines()
    assert "a callback threw: true" in out
    assert "[xty] a callback threw InvalidOperationException: the mod's bubble broke" in out
    # Both turns ended with their reply on the same connection: the receive loop lived on.
    assert "chat 1 done 晴天，适合钓鱼！ on main thread true" in out
    assert "chat 2 done 晴天，适合钓鱼！ on main thread true" in out
    assert "connection lost" not in out and "reconnect" not in out
    assert out.count("<- chat.delta ") == 6
    assert "callbacks off the main thread: false" in out


KEY = "k" * 43
OLD_SALT = "0123456789abcdef0123456789abcdef"


def keep(probe: Path, mod: Path, store: Path, data_home: Path | None = None) -> dict[str, str]:
    """ModFolder(mod, store) as a mod builds it at start: what moved, the saveId, the key, the
    address (XDG_DATA_HOME: where a running server's server.json would be)."""
    env = {**os.environ, "XDG_DATA_HOME": str(data_home or mod.parent / "no-server")}
    args = ["mono", str(probe), "keep", str(mod), str(store)]
    out = subprocess.run(args, capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    return dict(line.split(": ", 1) for line in out.stdout.splitlines())


def test_an_older_versions_salt_and_key_move_out_of_the_mods_folder(
    probe: Path, tmp_path: Path
) -> None:
    """ONI's way (a FolderStore in mods/config): moved once, the saveId unchanged, the mod's
    folder replaced by an update changes nothing; a value already kept wins over a stray file."""
    mod, store = tmp_path / "mods" / "Steam" / "123", tmp_path / "mods" / "config" / "XTY"
    mod.mkdir(parents=True)
    (mod / "xiaotangyuan-salt.txt").write_text(OLD_SALT)
    (mod / "xiaotangyuan-key.txt").write_text(KEY)
    save_id = derive_save_id({"colony": "Bubbles", "seed": "1845874684"}, OLD_SALT)
    first = keep(probe, mod, store)
    assert first == {
        "moved": "xiaotangyuan-salt,xiaotangyuan-key",
        "saveId": save_id,
        "key": KEY,
        "url": "ws://127.0.0.1:8765/v1",
    }
    assert list(mod.iterdir()) == []
    assert (store / "xiaotangyuan-salt.txt").read_text() == OLD_SALT
    mod.rmdir()  # the update replaces the mod's folder
    mod.mkdir()
    assert keep(probe, mod, store)["moved"] == ""
    assert keep(probe, mod, store)["saveId"] == save_id
    # A stray older salt in a copy's folder does not replace the kept one (nor is it deleted).
    (mod / "xiaotangyuan-salt.txt").write_text("f" * 32)
    assert keep(probe, mod, store)["saveId"] == save_id
    assert (mod / "xiaotangyuan-salt.txt").read_text() == "f" * 32


def test_the_address_is_the_players_file_else_the_running_servers(
    probe: Path, tmp_path: Path
) -> None:
    """A server started with --port is found through its server.json; a file the player wrote
    wins, and is kept when an update removes it."""
    mod, store, home = tmp_path / "mod", tmp_path / "keep", tmp_path / "home"
    mod.mkdir()
    (home / "xiaotangyuan").mkdir(parents=True)
    running = {"url": "ws://127.0.0.1:18765/v1", "port": 18765}
    (home / "xiaotangyuan" / "server.json").write_text(json.dumps(running))
    assert keep(probe, mod, store, home)["url"] == "ws://127.0.0.1:18765/v1"
    (mod / "xiaotangyuan-url.txt").write_text("ws://[::1]:8766/v1")
    assert keep(probe, mod, store, home)["url"] == "ws://[::1]:8766/v1"
    (mod / "xiaotangyuan-url.txt").unlink()  # the update replaced the folder
    assert keep(probe, mod, store, home)["url"] == "ws://[::1]:8766/v1"


class PairingPeer:
    """The server's side of pairing as v1.md "Pairing" fixes it, scripted: pair.pending at once,
    then pair.granted (or pair.denied and close 4001); the hello must carry the key."""

    def __init__(self, grant: bool, knows_install: bool = True) -> None:
        self.grant = grant
        self.knows_install = knows_install  # False: a server older than installId
        self.frames: list[dict[str, Any]] = []

    async def handler(self, ws: ServerConnection) -> None:
        assert ws.request is not None and "Authorization" not in ws.request.headers
        async for raw in ws:
            frame = json.loads(raw)
            self.frames.append(frame)
            if frame["type"] == "adapter.pair" and "installId" in frame and not self.knows_install:
                # What a server from before v1.md "Keys per install" answers, word for word.
                unknown = {"type": "error", "code": "invalid_frame", "id": frame["id"]}
                unknown |= {"message": "installId: unknown field", "fields": ["installId"]}
                await ws.send(json.dumps(unknown))
            elif frame["type"] == "adapter.pair":
                pending = {"type": "pair.pending", "replyTo": frame["id"], "code": "4821"}
                await ws.send(json.dumps(pending | {"expiresInSeconds": 120}))
                if not self.grant:
                    await ws.send(json.dumps({"type": "pair.denied", "replyTo": frame["id"]}))
                    await ws.close(4001, "pairing denied")
                    return
                granted = {"type": "pair.granted", "replyTo": frame["id"], "key": KEY}
                await ws.send(json.dumps(granted))
            elif frame["type"] == "adapter.hello":
                assert frame.get("token") == KEY, frame
                hello = {"type": "server.hello", "replyTo": frame["id"], "protocol": "v1"}
                await ws.send(json.dumps(hello | {"sessionId": "s-2", "heartbeatMs": 5000}))


@pytest.mark.anyio
@pytest.mark.parametrize(("grant", "knows_install"), [(True, True), (False, True), (True, False)])
async def test_a_mod_without_a_key_pairs_and_keeps_the_key(
    probe: Path, tmp_path: Path, grant: bool, knows_install: bool
) -> None:
    peer = PairingPeer(grant, knows_install)
    async with serve(peer.handler, "127.0.0.1", 0) as server:
        port = server.sockets[0].getsockname()[1]
        with anyio.fail_after(120):
            url = f"ws://127.0.0.1:{port}/v1"
            args = ["mono", str(probe), "session", url, "", "--pair", str(tmp_path)]
            result = await anyio.run_process(args, check=False)
    out = result.stdout.decode()
    first = peer.frames[0]
    # This install's random id, kept beside the key (v1.md "Keys per install").
    install = (tmp_path / "xiaotangyuan-install.txt").read_text()
    assert len(install) == 32 and int(install, 16) >= 0
    assert first == {
        "type": "adapter.pair",
        "id": first["id"],
        "adapter": {"name": "XTY Probe", "version": "0.1.0"},
        "gameId": "stardew-valley",
        "installId": install,
    }
    if not knows_install:  # an older server refused the field: the same request without it
        again = peer.frames.pop(1)
        assert again == {k: v for k, v in first.items() if k != "installId"} | {"id": again["id"]}
        assert "the server does not know installId: pairing without it" in out
    assert "pair code 4821 for 120 s" in out
    key_file = tmp_path / "xiaotangyuan-key.txt"
    if grant:
        assert result.returncode == 0, out
        assert "paired, key kept" in out and "connected" in out.splitlines()
        assert key_file.read_text() == KEY
        hello = peer.frames[1]
        assert hello["type"] == "adapter.hello" and hello["token"] == KEY
    else:
        assert result.returncode == 1, out
        assert "refused: pair_denied" in out
        assert not key_file.exists() and len(peer.frames) == 1


@pytest.mark.anyio
async def test_the_game_thread_never_touches_the_socket(probe: Path, tmp_path: Path) -> None:
    """Issue 36 item 10: Probe's game loop at 60 ticks a second calls Start(), Poll(), a state
    update every sixth tick, a question a second, stats and a cancel, from the game's thread and
    never awaited there, against the real server; the socket records the thread of every call
    into it. None came from the game's thread (the network is the client's own task's)."""
    async with FakeModelServer() as fake:
        for _ in range(6):
            fake.enqueue(Reply(chunks=["晴天，", "适合钓鱼！"], chunk_delay=0.02))
        server = ServerProcess(
            tmp_path / "data", XTY_MODEL_BASE_URL=fake.base_url, XTY_MODEL="fake-vl"
        )
        try:
            out = await run_probe(probe, "gameloop", server.url, TOKEN, "300")
        finally:
            server.stop()
    lines = out.splitlines()
    counts = next(line for line in lines if line.startswith("socket calls "))
    states = next(line for line in lines if line.startswith("state updates "))
    # Enough happened on the socket for the count to mean something: every state update and
    # question went out (a heartbeat or two besides), each question ended with its reply.
    sent = int(counts.split(", sends ")[1].split(",")[0])
    n_states = int(states.split()[2].rstrip(","))
    assert n_states >= 30 and sent >= n_states + 1, out
    assert states.endswith("calls failed 0"), out
    assert out.count("chat end done") >= 3, out
    assert counts.endswith("on the game thread 0 ()"), out
    assert "after close, on the game thread 0" in lines, out


@pytest.mark.anyio
async def test_a_stalled_network_fills_the_outbox_to_its_bound_and_never_waits(
    probe: Path, tmp_path: Path
) -> None:
    """Issue 36 item 10 at the outbox's edge (MaxQueuedFrames, 64), against the real server:
    the network stalls (the socket's send waits) with one state update on the wire; in one tick
    the game's thread calls UpdateStateAsync 65 times more. 64 are queued and waiting, the 65th
    is refused at once (send_queue_full, local), and every call returned while nothing moved.
    When the network comes back the 65 are written in order and the outbox takes frames again.
    The heartbeat is a minute apart, so no heartbeat takes a place in the outbox meanwhile."""
    port = free_port()
    overrides = {"server.port": port, "server.ui_port": 0, "server.heartbeat_ms": 60_000}
    async with running(tmp_path / "data", clock=ManualClock(EVENING), overrides=overrides):
        out = await run_probe(probe, "outbox", f"ws://127.0.0.1:{port}/v1", TOKEN)
    lines = out.splitlines()
    assert (
        "calls on the game thread 66, waiting 65, refused 1 send_queue_full local, on the wire 1"
        in lines
    ), out
    assert "written 65, in order true" in lines, out
    assert "after: RanToCompletion" in lines, out
