"""The property tests at the number of examples their requirements state.

The suite draws a tenth of each property test's stated examples
(``tests/property_budget.py``) to stay within its time; this script runs the
same tests drawing all of them, as ``.ci/run`` does after the suite.

    .venv/bin/python scripts/fuzz_properties.py [--scale 1] [pytest args ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def property_tests() -> list[str]:
    """The test files that size their examples with ``examples()``."""
    return sorted(
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("test_*.py")
        if "from tests.property_budget import examples" in path.read_text(encoding="utf-8")
    )


def main(argv: list[str] | None = None) -> int:
    """Run the property tests at ``--scale`` of their stated examples."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="share of the stated examples")
    args, rest = parser.parse_known_args(argv)
    env = {**os.environ, "XTY_PROPERTY_SCALE": str(args.scale)}
    command = [sys.executable, "-m", "pytest", *property_tests(), *rest]
    return subprocess.call(command, cwd=ROOT, env=env)


if __name__ == "__main__":
    sys.exit(main())
