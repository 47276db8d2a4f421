"""The DST adapter (scripts/xty/mod.lua) in the lua5.1 shim's small DST world, driven by a test.

`lua5.1 adapters/dst/test/shim.lua play ...` prints what the mod logs and what the player is
told; the test appends commands ("pause", "chat TEXT", "quit", ...) to its control file and
waits on the printed lines (conditions, never sleeps).
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import anyio.abc

from tests.conftest import TOKEN

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


class DstGame:
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
async def dst_game(
    tmp: Path, port: int, *, store: Path | None = None, token: str = TOKEN
) -> AsyncIterator[DstGame]:
    """Start the game (the mod loads with the world) and end it on leaving (like a crash)."""
    store = store or tmp / "persistent"
    store.mkdir(exist_ok=True)
    control = tmp / f"control-{len(list(tmp.glob('control-*')))}.txt"
    control.write_text("")
    args = ["lua5.1", str(SHIM), "play", "127.0.0.1", str(port), token, str(control), str(store)]
    async with await anyio.open_process(args, stderr=subprocess.STDOUT) as proc:
        game = DstGame(proc, control)
        async with anyio.create_task_group() as tg:
            tg.start_soon(game._read)
            try:
                yield game
            finally:
                if proc.returncode is None:
                    proc.kill()
                tg.cancel_scope.cancel()
