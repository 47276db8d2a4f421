"""The DST adapter's findings through play (lua5.1, the shim's DST world, the real server).

The server runs in the test's process on a ManualClock (tests/adapter/games.py); the mod runs
on its own real-time clock; every wait is on a condition (a line the mod printed, a heartbeat
the store counted). The pause, restart and quit lifecycles are in test_lifecycles.py.
"""

from __future__ import annotations

from pathlib import Path

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
