"""The C heap of a long-running server: give large freed buffers back to the system.

A shell. A screenshot turn allocates a few buffers of megabytes (the
frame's text, the decoded file, the decoded pixels, the request body).
glibc's malloc serves the first ones with ``mmap`` and returns them on free,
but then raises its mmap threshold to the size just freed ("dynamic
threshold"), so every later buffer of that size comes from the heap and stays
resident once freed, the heap fragmenting around the small blocks between
them (``scripts/bench/rss.py`` shows it in a server's RSS after screenshot
turns). Fixing the threshold at glibc's own initial value (128 KiB) turns the
dynamic raise off: a large buffer is always its own mapping, returned on free
and page-faulted in afresh next time.

The price is those faults, a few thousand per screenshot turn
(``scripts/bench/turn.py --baseline``, "faults/turn"). The dynamic threshold
with a ``malloc_trim(0)`` after the last screenshot keeps more resident and
costs the same faults whenever screenshots come seconds apart, as they do in
play. A higher fixed threshold saves few faults (they are the buffers of
megabytes, returned whatever the threshold below them) and keeps more;
``M_ARENA_MAX`` and ``malloc_trim(0)`` when idle change nothing once the
threshold is fixed, since glibc's heaps then hold live blocks only. Text
turns allocate nothing this large and pay nothing.

Only glibc has the knob (``mallopt``); on Windows, macOS and musl this does
nothing. ``MALLOC_MMAP_THRESHOLD_`` in the environment is left to win.
"""

from __future__ import annotations

import gc
import os
import sys
from typing import Final

__all__ = ["MMAP_THRESHOLD", "fix_mmap_threshold", "settle_heap"]

MMAP_THRESHOLD: Final = 128 * 1024
"""glibc's initial ``M_MMAP_THRESHOLD``, kept fixed."""

_M_MMAP_THRESHOLD: Final = -3  # <malloc.h>


def _glibc() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        return os.confstr("CS_GNU_LIBC_VERSION") is not None  # None or an error on musl
    except (ValueError, OSError):
        return False


def fix_mmap_threshold(threshold: int = MMAP_THRESHOLD) -> bool:
    """Fix glibc's mmap threshold (no dynamic raise); True when it was set."""
    if not _glibc() or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    import ctypes  # only on glibc

    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, threshold))
    except (OSError, AttributeError):
        return False


def settle_heap() -> None:
    """Take what exists now out of the garbage collector's sight (``xtyserver serve``).

    Called once the server is up: the imports, settings and server live as long
    as the process, and a full collection walking them is a pause in the middle
    of whichever turn it falls on. No collection first: it would lengthen the
    start for the little garbage the start leaves. Not called in tests, which
    start many servers in one process.

    From then on, glibc's malloc gives every large freed buffer back to the
    system (:func:`fix_mmap_threshold`): a screenshot turn leaves no decode
    buffer resident.
    """
    gc.freeze()
    fix_mmap_threshold()
