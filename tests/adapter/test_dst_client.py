"""The DST adapter through real play (lua5.1, the shim's DST world, the real server).

The server runs in the test's process on a ManualClock: the test moves the server's time (a
pause of minutes, heartbeat by heartbeat) while the mod runs on its own real-time clock, and
every wait is on a condition (a line the mod printed, a heartbeat the store counted).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import pytest

from tests.adapter.dst_game import NO_LUA, dst_game, free_port, has_luasocket
from tests.conftest import NO_GRACE, Harness, running
from xtyserver.clock import ManualClock
from xtyserver.memory.types import SavePlayStats

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(NO_LUA or not has_luasocket(), reason="needs lua5.1 and lua-socket"),
]

EVENING = datetime(2026, 6, 1, 20, 0, tzinfo=ZoneInfo("Asia/Shanghai")).timestamp()
# The mod beats every 0.2 s of its own time; the server's deadline (0.2 s x 1500 = 300 s of
# server time) is far enough that only the test's clock steps decide what a heartbeat counts.
FAST_BEATS: dict[str, Any] = {
    "server.heartbeat_ms": 200,
    "server.heartbeat_misses": 1500,
    "memory.extraction": False,
    **NO_GRACE,
}
DST = "dont-starve-together"


async def until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.02)


def dst_save(h: Harness) -> SavePlayStats:
    (save,) = [s for s in h.store.stats().saves if s.game_id == DST]
    return save


async def heartbeat_counted(h: Harness) -> None:
    """Wait until a heartbeat came in at the server's current time."""
    now = h.clock.now()
    await until(lambda: any(s.last_played == now for s in h.store.stats().saves))


def serve(tmp: Path, port: int, clock: ManualClock) -> Any:
    return running(tmp / "data", clock=clock, overrides={**FAST_BEATS, "server.port": port})


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
            save = dst_save(h)
            assert (save.sessions, save.days, save.save_name) == (1, 1, "Wilson's world")
    # The next run reads the same salt: the same saveId, nothing persisted again.
    async with dst_game(tmp_path, port) as game:
        assert game.lines[await game.expect("[xty] saveId ")] == save_line
        game.do("quit")
        await game.expect("> quit")
        assert game.count("persisted") == 0


async def test_a_pause_of_five_minutes_keeps_the_session_and_counts_as_play(
    tmp_path: Path,
) -> None:
    port = free_port()
    async with serve(tmp_path, port, ManualClock(EVENING)) as h, dst_game(tmp_path, port) as game:
        await game.expect("session open")
        await heartbeat_counted(h)
        game.do("pause")
        await game.expect("> pause")
        # Five minutes of server time, one heartbeat a minute: each must come from the static
        # scheduler (the world's one is stopped); a missing one times the wait out.
        for _ in range(5):
            h.clock.advance(60)
            await heartbeat_counted(h)
        game.do("resume")
        game.do("chat 附近危险吗？")
        await game.expect("reply: 小汤圆收到：附近危险吗？")
        save = dst_save(h)
        assert save.sessions == 1 and save.days == 1
        assert save.active_ms >= 300_000
        assert "session closed" not in game.output


async def test_a_network_blip_through_a_server_restart_opens_a_new_session(
    tmp_path: Path,
) -> None:
    port = free_port()
    clock = ManualClock(EVENING)
    async with dst_game(tmp_path, port) as game:
        async with serve(tmp_path, port, clock) as h:
            await game.expect("session open")
            await heartbeat_counted(h)
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
            await heartbeat_counted(h)
            game.do("chat 附近危险吗？")
            await game.expect("reply: 小汤圆收到：附近危险吗？", after=mark)
            save = dst_save(h)
            assert (save.sessions, save.days) == (2, 1)
            assert game.count("no server at") == 1, game.output
