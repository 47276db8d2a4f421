"""Percentiles for the benchmarks: the nearest-rank definition, one way for every script.

The q-th percentile of n samples is the ``ceil(q/100 * n)``-th smallest: of 100
samples the p99 is the 99th (the largest is the p100, which the scripts print
as "max" beside it), of 200 the 198th. Not a benchmark itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["machine", "nearest_rank"]


def nearest_rank(ordered: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0 < q <= 100) of ``ordered`` (sorted ascending, not empty)."""
    rank = max(1, math.ceil(q * len(ordered) / 100 - 1e-9))  # 99 * 100 / 100 is 99, not 100
    return ordered[min(rank, len(ordered)) - 1]


def machine() -> str:
    """This machine in a line: its cores, its CPU model and the load average now.

    The load average goes beside every figure: on a machine shared with other
    work the same code measures slower.
    """
    import os
    import platform

    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            model = next(
                (line.split(":", 1)[1].strip() for line in f if line.startswith("model name")),
                model,
            )
    except OSError:
        pass
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{os.cpu_count()} cores, {model}, Python {platform.python_version()}; load average {load}"
    )
