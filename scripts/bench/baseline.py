"""A baseline commit's package for the benchmarks that compare two servers side by side.

``git archive REF xtyserver`` unpacked into a folder; a child process that has
that folder first on ``sys.path`` (``PYTHONPATH``) imports the baseline's
``xtyserver`` and, from the same interpreter, the same packages as the
candidate. Not a benchmark itself.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
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


SEED = """
import sys
from xtyserver.clock import SystemClock
from xtyserver.memory.sqlite.store import MemoryStore
sys.path.insert(0, {bench!r})
from retrieval import build_document
with MemoryStore.open_profile({folder!r}, "default", clock=SystemClock()) as store:
    store.import_document(build_document({saves}, {per_save}))
"""


def seed_store(folder: Path, saves: int, per_save: int, tree: Path | None = None) -> None:
    """A store of ``saves`` x ``per_save`` events in ``folder``, written by ``tree``'s code
    (this checkout's without one).

    In a child process with ``tree`` first on its path: a baseline older than
    the candidate's schema refuses a store the candidate wrote.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tree) if tree is not None else str(ROOT), env.get("PYTHONPATH", "")]
    )
    bench = str(Path(__file__).resolve().parent)
    code = SEED.format(bench=bench, folder=str(folder), saves=saves, per_save=per_save)
    # -P: not the current folder first on the path (a checkout would shadow ``tree``).
    subprocess.run([sys.executable, "-P", "-c", code], env=env, check=True)
