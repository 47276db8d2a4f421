"""The reference clients as games a test drives: the DST mod (scripts/xty/mod.lua) in the lua5.1
shim's small DST world, and the C# client in test/Probe.cs's game loop on Mono.

Each prints what the mod logs and what the player is told; the test appends commands
("pause", "chat TEXT", "quit", ...) to its control file and waits on the printed lines
(conditions, never sleeps).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import anyio
import anyio.abc

from tests.conftest import NO_GRACE, TOKEN, Harness, running
from xtyserver.clock import ManualClock
from xtyserver.memory.types import SavePlayStats

ROOT = Path(__file__).resolve().parents[2]
SHIM = ROOT / "adapters" / "dst" / "test" / "shim.lua"
NO_LUA = shutil.which("lua5.1") is None


def has_luasocket() -> bool:
    if NO_LUA:
        return False
    probe = subprocess.run(["lua5.1", "-e", 'require("socket.http")'], capture_output=True)
    return probe.returncode == 0


def free_port() -> int:
    """A loopback port nothing listens on now (the server may take it later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class Game:
    """One running game with the mod: its output lines and its control file."""

    def __init__(self, proc: anyio.abc.Process, control: Path) -> None:
        self.proc = proc
        self.control = control
        self.lines: list[str] = []
        self._changed = anyio.Event()

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        buffer = b""
        async for chunk in self.proc.stdout:
            buffer += chunk
            *done, buffer = buffer.split(b"\n")
            self.lines.extend(line.decode() for line in done)
            self._changed.set()
            self._changed = anyio.Event()

    def do(self, command: str) -> None:
        with self.control.open("a", encoding="utf-8") as f:
            f.write(command + "\n")

    async def expect(
        self, match: str | Callable[[str], bool], *, after: int = 0, timeout: float = 60
    ) -> int:
        """Wait for a line (from index `after`) containing `match`; return its index."""
        test = match if callable(match) else (lambda line: match in line)
        with anyio.fail_after(timeout):
            while True:
                for i in range(after, len(self.lines)):
                    if test(self.lines[i]):
                        return i
                await self._changed.wait()

    def count(self, text: str, after: int = 0) -> int:
        return sum(text in line for line in self.lines[after:])

    @property
    def output(self) -> str:
        return "\n".join(self.lines)


@asynccontextmanager
async def game_process(args: list[str], control: Path, **options: Any) -> AsyncIterator[Game]:
    """Run a game (``options`` to ``anyio.open_process``: env, cwd); leaving kills it if it
    still runs (a crash: no goodbye)."""
    control.write_text("")
    async with await anyio.open_process(args, stderr=subprocess.STDOUT, **options) as proc:
        game = Game(proc, control)
        async with anyio.create_task_group() as tg:
            tg.start_soon(game._read)
            try:
                yield game
            finally:
                if proc.returncode is None:
                    proc.kill()
                tg.cancel_scope.cancel()


@asynccontextmanager
async def stdin_game(args: list[str]) -> AsyncIterator[tuple[anyio.abc.Process, bytearray]]:
    """A game driven on its standard input (SmapiHost's voice and typing scenarios): the
    process and its output so far; leaving kills it if it still runs."""
    async with await anyio.open_process(args) as proc:
        assert proc.stdin is not None and proc.stdout is not None
        out = bytearray()

        async def read() -> None:
            assert proc.stdout is not None
            async for chunk in proc.stdout:
                out.extend(chunk)

        async with anyio.create_task_group() as tg:
            tg.start_soon(read)
            try:
                yield proc, out
            finally:
                if proc.returncode is None:
                    proc.kill()
                    tg.cancel_scope.cancel()


def _control(tmp: Path) -> Path:
    return tmp / f"control-{len(list(tmp.glob('control-*')))}.txt"


def dst_game(
    tmp: Path, port: int, *, store: Path | None = None, token: str = TOKEN, seed: str = ""
) -> AbstractAsyncContextManager[Game]:
    """The DST game with the mod; `store` is TheSim's persistent strings, `seed` the world's."""
    store = store or tmp / "persistent"
    store.mkdir(exist_ok=True)
    control = _control(tmp)
    args = ["lua5.1", str(SHIM), "play", "127.0.0.1", str(port), token, str(control), str(store)]
    return game_process([*args, seed] if seed else args, control)


def csharp_game(
    tmp: Path, probe: Path, url: str, *, save: str, name: str, token: str = TOKEN
) -> AbstractAsyncContextManager[Game]:
    """A C# game (Probe.exe's loop) that calls Start() and obeys its control file."""
    control = _control(tmp)
    args = ["mono", str(probe), "session", url, token, "--save", save, "--save-name", name]
    return game_process([*args, "--control", str(control)], control)


# -- the server the games play against: in this process, on the test's clock --------------

EVENING = datetime(2026, 6, 1, 20, 0, tzinfo=ZoneInfo("Asia/Shanghai")).timestamp()
# The mods beat every 0.2 s of their own (real) time; the server's deadline, 0.2 s x 1500 =
# 300 s of server time, is far enough that only the test's clock steps decide what counts.
FAST_BEATS: dict[str, Any] = {
    "server.heartbeat_ms": 200,
    "server.heartbeat_misses": 1500,
    "memory.extraction": False,
    **NO_GRACE,
}
DEADLINE_S = 300


def serve(tmp: Path, port: int, clock: ManualClock) -> AbstractAsyncContextManager[Harness]:
    """The real server on `port` with the test's clock (the same data folder every time).

    The page takes any free port: ``port + 1`` may be another worker's.
    """
    overrides = {**FAST_BEATS, "server.port": port, "server.ui_port": 0}
    return running(tmp / "data", clock=clock, overrides=overrides)


async def until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.02)


def save_stats(h: Harness, game: str, save: str | None = None) -> SavePlayStats:
    """The one save of `game` (or the save `save`) in the store's play statistics."""
    (found,) = [s for s in h.store.stats().saves if s.game_id == game and save in (None, s.save_id)]
    return found


async def heartbeats_counted(h: Harness, saves: int = 1) -> None:
    """Wait until `saves` saves had a heartbeat at the server's current time."""
    now = h.clock.now()
    await until(lambda: sum(s.last_played == now for s in h.store.stats().saves) >= saves)


async def play(h: Harness, minutes: int, saves: int = 1) -> None:
    """`minutes` of play on the server's clock, a minute per step, each step's heartbeats
    waited for (a mod whose heartbeats stopped times the wait out)."""
    for _ in range(minutes):
        h.clock.advance(60)
        await heartbeats_counted(h, saves)
