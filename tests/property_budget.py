"""How many examples a property test draws: the suite's short run or the fuzz script's long one.

Each property test states the number of examples its requirement asks for; the
suite draws a tenth of it (at least 50), and ``scripts/fuzz_properties.py``
(run by ``.ci/run`` after the suite) sets ``XTY_PROPERTY_SCALE=1`` to draw them
all. Hypothesis's database is off in CI, so every run draws new examples.
"""

from __future__ import annotations

import os

SCALE = float(os.environ.get("XTY_PROPERTY_SCALE", "0.1"))
FLOOR = 50


def examples(stated: int) -> int:
    """The examples to draw for a test whose requirement states ``stated``."""
    return max(min(stated, FLOOR), round(stated * SCALE))
