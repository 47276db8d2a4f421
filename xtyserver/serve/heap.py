"""The C heap of a long-running server: give large freed buffers back to the system.

A shell. A screenshot turn allocates a few buffers of megabytes. glibc's
malloc returns the first ones to the system on free, but then raises its mmap
threshold to the size just freed, so later ones stay resident and fragment the
heap (``scripts/bench/rss.py``). Fixing the threshold at glibc's initial
128 KiB keeps every large buffer its own mapping, for a few thousand page
faults per screenshot turn (``scripts/bench/turn.py --baseline``); a higher
threshold or ``malloc_trim`` keep more resident for the same faults.

Only glibc has the knob (``mallopt``); elsewhere this does nothing.
``MALLOC_MMAP_THRESHOLD_`` in the environment is left to win.
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


def fix_mmap_threshold() -> bool:
    """Fix glibc's mmap threshold (no dynamic raise); True when it was set."""
    if not _glibc() or "MALLOC_MMAP_THRESHOLD_" in os.environ:
        return False
    import ctypes  # only on glibc

    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))
    except (OSError, AttributeError):
        return False


def settle_heap() -> None:
    """Take what exists now out of the garbage collector's sight (``xtyserver serve``).

    The imports, settings and server live as long as the process; a full
    collection walking them would pause whichever turn it falls on. Also fixes
    the mmap threshold (:func:`fix_mmap_threshold`). Not called in tests.
    """
    gc.freeze()
    fix_mmap_threshold()
