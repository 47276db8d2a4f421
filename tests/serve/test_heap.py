"""The C heap gives large freed buffers back (serve/heap.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from xtyserver.serve import heap

GLIBC = sys.platform.startswith("linux") and os.confstr("CS_GNU_LIBC_VERSION") is not None

# Allocate and free screenshot-sized buffers (4 MiB, touched; a small block stays
# after each) a few times and report how much of them stays resident: glibc's
# dynamic mmap threshold keeps every one after the first on the heap; a fixed
# threshold returns them all.
PROBE = """
import sys
from xtyserver.serve.heap import fix_mmap_threshold
def anon():
    for line in open("/proc/self/status"):
        if line.startswith("RssAnon:"):
            return int(line.split()[1])
if sys.argv[1] == "fixed":
    assert fix_mmap_threshold()
before = anon()
pinned = []
for _ in range(4):
    big = []
    for _ in range(3):
        big.append(bytearray(4 << 20))
        big[-1][::4096] = b"x" * len(big[-1][::4096])  # touch every page
        pinned.append(bytes(2048))  # a small block after it: the heap cannot shrink
    del big
print(anon() - before)
"""


@pytest.mark.skipif(not GLIBC, reason="glibc only")
def test_a_fixed_mmap_threshold_returns_large_freed_buffers() -> None:
    def grown(mode: str) -> int:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
        out = subprocess.run(
            [sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=env
        )
        assert out.returncode == 0, out.stderr
        return int(out.stdout)

    assert grown("dynamic") > 8 * 1024  # KiB: two or three buffers stay resident
    assert grown("fixed") < 2 * 1024


def test_the_environment_wins_and_other_platforms_are_left_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MALLOC_MMAP_THRESHOLD_", "131072")
    assert heap.fix_mmap_threshold() is False
    monkeypatch.delenv("MALLOC_MMAP_THRESHOLD_")
    monkeypatch.setattr(sys, "platform", "win32")
    assert heap.fix_mmap_threshold() is False


def test_settling_takes_what_exists_out_of_the_collectors_sight() -> None:
    """``settle_heap`` freezes the start's objects (in a child: tests start many servers)."""
    probe = (
        "import gc; from xtyserver.serve.heap import settle_heap\n"
        "before = gc.get_freeze_count(); settle_heap(); print(before, gc.get_freeze_count())"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    before, after = map(int, out.stdout.split())
    assert before == 0 < after
