"""A baseline commit's package for the benchmarks that compare two servers side by side.

``git archive REF xtyserver`` unpacked into a folder; a child process that has
that folder first on ``sys.path`` (``PYTHONPATH``) imports the baseline's
``xtyserver`` and, from the same interpreter, the same packages as the
candidate. Not a benchmark itself.
"""

from __future__ import annotations

import functools
import io
import json
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


# Run by the tree's own code: its decoder and store (``memory/sqlite/`` since the
# store moved there, ``memory/store.py`` before), reading the document from stdin
# and printing how many events the store then holds.
SEED = """
import sys
from xtyserver.clock import SystemClock
from xtyserver.memory.export import decode_document
try:
    from xtyserver.memory.sqlite.store import MemoryStore
except ImportError:
    from xtyserver.memory.store import MemoryStore
document = decode_document(sys.stdin.buffer.read())
with MemoryStore.open_profile({folder!r}, "default", clock=SystemClock()) as store:
    store.import_document(document)
    print(len(store.export().events))
"""
# The fields of a version-1 export document, which every tree since then decodes
# (the later fields, empty here, would be unknown to an older tree's decoder).
V1_FIELDS = ("format", "version", "exportedAt", "profile", "events", "sessions", "days")


@functools.cache
def _document(saves: int, per_save: int) -> bytes:
    """``retrieval.build_document`` as version-1 JSON, the same bytes for every tree."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from retrieval import build_document

    from xtyserver.memory.export import encode_document

    whole = json.loads(encode_document(build_document(saves, per_save)))
    return json.dumps({k: whole[k] for k in V1_FIELDS}, ensure_ascii=False).encode()


def seed_store(folder: Path, saves: int, per_save: int, tree: Path | None = None) -> None:
    """A store of ``saves`` x ``per_save`` events in ``folder``, written by ``tree``'s code
    (this checkout's without one).

    One document (built by this checkout) is imported by a child process with
    ``tree`` first on its path: a baseline older than the candidate's schema
    refuses a store the candidate wrote, and one from before ``memory/sqlite/``
    has its store elsewhere. Raises ``SystemExit`` unless the store then holds
    every event.
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tree) if tree is not None else str(ROOT), env.get("PYTHONPATH", "")]
    )
    code = SEED.format(folder=str(folder))
    # -P: not the current folder first on the path (a checkout would shadow ``tree``).
    done = subprocess.run(
        [sys.executable, "-P", "-c", code],
        env=env,
        input=_document(saves, per_save),
        stdout=subprocess.PIPE,
        check=True,
    )
    held = int(done.stdout.split()[-1])
    if held != saves * per_save:
        raise SystemExit(f"{folder}: {held} events after the import, not {saves * per_save}")
