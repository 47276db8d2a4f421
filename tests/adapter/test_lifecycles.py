"""A mod's life against the real server, driven by the reference clients themselves.

The C# client runs in test/Probe.cs's game loop on Mono (over WebSocket), the DST mod in the
lua5.1 shim's DST world (over POST /v1/http); both play at once against one in-process server
on a ManualClock. Play is counted in minutes of the server's clock, a heartbeat of each mod
waited for at every minute (tests/adapter/games.py `play`), so a pause of five minutes takes
about a second. Each lifecycle ends by checking the play statistics a player would read
(`xtyserver stats`: sessions, days, active time per save).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc
import pytest

from tests.adapter.games import (
    DEADLINE_S,
    EVENING,
    NO_LUA,
    Game,
    csharp_game,
    dst_game,
    free_port,
    has_luasocket,
    play,
    save_stats,
    serve,
    until,
)
from tests.adapter.mono import NO_MONO, NO_MONO_REASON
from tests.conftest import Harness
from xtyserver.clock import ManualClock

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON),
    pytest.mark.skipif(NO_LUA or not has_luasocket(), reason="needs lua5.1 and lua-socket"),
]
STARDEW, DST = "stardew-valley", "dont-starve-together"
FARM = "5qerlvpodf25qawmxprrvkd4qe"
MINUTE = 60_000


def ws_url(port: int) -> str:
    return f"ws://127.0.0.1:{port}/v1"


@asynccontextmanager
async def both_playing(tmp_path: Path, probe: Path) -> AsyncIterator[tuple[Harness, Game, Game]]:
    """The server, then the C# farm and the DST world, both in session."""
    port = free_port()
    async with (
        serve(tmp_path, port, ManualClock(EVENING)) as h,
        csharp_game(tmp_path, probe, ws_url(port), save=FARM, name="Sunny Farm") as farm,
        dst_game(tmp_path, port) as world,
    ):
        await farm.expect("session open")
        await world.expect("session open")
        yield h, farm, world


def figures(h: Harness, game: str, save: str | None = None) -> tuple[int, int, int]:
    """(sessions, days, active minutes) of one save."""
    s = save_stats(h, game, save)
    return s.sessions, s.days, s.active_ms // MINUTE


async def test_game_before_server(tmp_path: Path, probe: Path) -> None:
    port = free_port()
    async with (
        csharp_game(tmp_path, probe, ws_url(port), save=FARM, name="Sunny Farm") as farm,
        dst_game(tmp_path, port) as world,
    ):
        # The line names the address it tried (a wrong port is seen at once).
        await farm.expect(f"[xty] no server yet at {ws_url(port)}, trying again with backoff")
        await world.expect("[xty] no server at")
        async with serve(tmp_path, port, ManualClock(EVENING)) as h:
            await farm.expect("session open")
            await world.expect("session open")
            await play(h, 10, saves=2)
            farm.do("leave")
            await farm.expect("left")
            world.do("leave")
            assert figures(h, STARDEW) == (1, 1, 10)
            assert figures(h, DST) == (1, 1, 10)
            # Said once per outage, however many attempts it took.
            assert farm.count("no server yet") == 1 and world.count("no server at") == 1


async def test_server_restarted_mid_session(tmp_path: Path, probe: Path) -> None:
    port, clock = free_port(), ManualClock(EVENING)
    async with (
        csharp_game(tmp_path, probe, ws_url(port), save=FARM, name="Sunny Farm") as farm,
        dst_game(tmp_path, port) as world,
    ):
        async with serve(tmp_path, port, clock) as h:
            await farm.expect("session open")
            await world.expect("session open")
            await play(h, 4, saves=2)
        # The shutdown's close (1001) was answered; both come back to the new server.
        await farm.expect("[xty] closed 1001")
        async with serve(tmp_path, port, clock) as h:
            await until(
                lambda: farm.count("session open") == 2 and world.count("session open") == 2
            )
            await play(h, 6, saves=2)
            assert figures(h, STARDEW) == (2, 1, 10)
            assert figures(h, DST) == (2, 1, 10)


async def test_pause_of_five_minutes(tmp_path: Path, probe: Path) -> None:
    async with both_playing(tmp_path, probe) as (h, farm, world):
        await play(h, 2, saves=2)
        farm.do("pause")
        world.do("pause")
        await farm.expect("> pause")
        await world.expect("> pause")
        # Five minutes paused: the heartbeats come from C#'s timer and DST's static scheduler
        # (DST's world scheduler is stopped); a missing one times play() out.
        await play(h, 5, saves=2)
        farm.do("resume")
        world.do("resume")
        world.do("chat 附近危险吗？")
        await world.expect("reply: 小汤圆收到：附近危险吗？")
        await play(h, 1, saves=2)
        assert figures(h, STARDEW) == (1, 1, 8)
        assert figures(h, DST) == (1, 1, 8)
        assert "closed" not in farm.output and "session closed" not in world.output


class Proxy:
    """A TCP relay between a client and the server whose connections the test can cut."""

    def __init__(self, target: int) -> None:
        self.target = target
        self.streams: list[anyio.abc.SocketStream] = []
        self.port = 0

    async def _relay(self, client: anyio.abc.SocketStream) -> None:
        async with client, await anyio.connect_tcp("127.0.0.1", self.target) as server:
            self.streams += [client, server]

            async def pipe(a: anyio.abc.SocketStream, b: anyio.abc.SocketStream) -> None:
                # The upgrade names the relay's port as Host; the server wants its own.
                here, there = f"127.0.0.1:{self.port}".encode(), f"127.0.0.1:{self.target}".encode()
                try:
                    async for chunk in a:
                        await b.send(chunk.replace(here, there) if a is client else chunk)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass
                await b.aclose()

            async with anyio.create_task_group() as tg:
                tg.start_soon(pipe, client, server)
                tg.start_soon(pipe, server, client)

    async def cut(self) -> None:
        """The network drops: every relayed connection ends without a close frame."""
        for stream in self.streams:
            await stream.aclose()
        self.streams.clear()


@asynccontextmanager
async def proxy(target: int) -> AsyncIterator[Proxy]:
    relay = Proxy(target)
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    relay.port = int(listener.extra(anyio.abc.SocketAttribute.local_port))
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, relay._relay)
        yield relay
        tg.cancel_scope.cancel()


async def test_network_blip(tmp_path: Path, probe: Path) -> None:
    port = free_port()
    async with (
        serve(tmp_path, port, ManualClock(EVENING)) as h,
        proxy(port) as relay,
        csharp_game(tmp_path, probe, ws_url(relay.port), save=FARM, name="Sunny Farm") as farm,
        dst_game(tmp_path, port) as world,
    ):
        await farm.expect("session open")
        await world.expect("session open")
        await play(h, 3, saves=2)
        # The WebSocket drops (1006): the C# client reconnects, a second play session.
        await relay.cut()
        world.do("blip 2")
        await farm.expect("[xty] closed 1006")
        await until(lambda: farm.count("session open") == 2)
        # DST's calls fail for two seconds; its session outlives the blip (no new hello).
        await world.expect("server reachable again")
        await play(h, 3, saves=2)
        assert figures(h, STARDEW) == (2, 1, 6)
        assert figures(h, DST) == (1, 1, 6)
        assert world.count("session open") == 1


async def test_quit_without_a_close(tmp_path: Path, probe: Path) -> None:
    async with both_playing(tmp_path, probe) as (h, farm, world):
        await play(h, 7, saves=2)
        farm.do("quit")
        world.do("quit")
        await until(lambda: farm.proc.returncode is not None and world.proc.returncode is not None)
        # The WebSocket's end is seen at once; the HTTP session only by its heartbeat deadline.
        await until(lambda: h.server.connections.value == 1)
        h.clock.advance(DEADLINE_S + 1)
        await until(lambda: h.server.connections.value == 0)
        # Both sessions end at their last heartbeat: the silent minutes are not play.
        assert figures(h, STARDEW) == (1, 1, 7)
        assert figures(h, DST) == (1, 1, 7)


async def test_many_saves_in_one_evening(tmp_path: Path, probe: Path) -> None:
    port = free_port()
    farms = [("aaaaaaaaaaaaaaaaaaaaaaaaaa", "Farm A"), ("bbbbbbbbbbbbbbbbbbbbbbbbbb", "Farm B")]
    async with serve(tmp_path, port, ManualClock(EVENING)) as h:
        # Two farms, two worlds, then the first farm again: one evening, one date.
        for save, name in [*farms, farms[0]]:
            async with csharp_game(tmp_path, probe, ws_url(port), save=save, name=name) as farm:
                opened = await farm.expect("session open")
                await play(h, 3)
                farm.do("leave")
                await farm.expect("left", after=opened)
        for seed in ("1714700000", "1714800000"):
            async with dst_game(tmp_path, port, seed=seed) as world:
                await world.expect("session open")
                await play(h, 4)
                world.do("leave")
        h.clock.advance(DEADLINE_S + 1)  # the last world's session ends at its deadline
        await until(lambda: h.server.connections.value == 0)
        assert figures(h, STARDEW, farms[0][0]) == (2, 1, 6)
        assert figures(h, STARDEW, farms[1][0]) == (1, 1, 3)
        worlds = [s for s in h.store.stats().saves if s.game_id == DST]
        assert sorted((s.sessions, s.days, s.active_ms // MINUTE) for s in worlds) == [
            (1, 1, 4),
            (1, 1, 4),
        ]
        games = {g.game_id: g for g in h.store.stats().games}
        assert (games[STARDEW].sessions, games[STARDEW].days) == (3, 1)
        assert (games[DST].sessions, games[DST].days) == (2, 1)
        assert games[STARDEW].active_ms == 9 * MINUTE and games[DST].active_ms == 8 * MINUTE
