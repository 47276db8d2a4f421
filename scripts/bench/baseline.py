"""A baseline commit's package for the benchmarks that compare two servers side by side.

``git archive REF xtyserver`` unpacked into a folder; a child process that has
that folder first on ``sys.path`` (``PYTHONPATH``) imports the baseline's
``xtyserver`` and, from the same interpreter, the same packages as the
candidate. Not a benchmark itself.
"""

from __future__ import annotations

import io
import subprocess
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def export_tree(ref: str, into: Path) -> Path:
    """``git archive REF xtyserver`` unpacked into ``into``: the baseline's package."""
    data = subprocess.run(
        ["git", "-C", str(ROOT), "archive", ref, "xtyserver"], capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")
    return into
