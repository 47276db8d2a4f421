"""Memory vectors as a backlog: every memory gets its vector, however it came (shell).

The backlog is the store itself: the memories without a vector from the current
embedder (``memory_vector``). What this keeps in memory is only the saves known
to have some, in order, one entry per save however many memories wait, so it is
bounded by the saves, never by the memories, and nothing is ever dropped: a
start reads the saves from the store (an import, a restore or a merge done while
the server was stopped, or a backlog a stop cut short, resumes there), and every
change after that names its save again (:meth:`VectorBacklog.want`).

One task works through it, one batch of one save at a time, and yields to the
player: before each unit of work (one memory's passage in process, one request
on a route) it waits until no chat is waiting or streaming on any lane
(:meth:`~xtyserver.model.scheduler.Scheduler.wait_no_chat`) and the player is
neither typing nor waiting for a turn's reply (memory/backlog_pace.py: a unit
under way cannot be stopped, so a turn meets at most the one that was under way
when the player began), and the in-process embedder lets a turn's query go
before its next passage. With the in-process model a full batch's passages run
in a worker process (serve/passage_worker.py) that is suspended while the
backlog is held (a turn until its reply ends, the player typing), so even the
passage under way when an untyped turn arrives leaves it the cores; a worker
that crashes or hangs is started again, or after
:data:`~xtyserver.memory.backlog_pace.WORKER_FAILURES` in a row the passages go
back to the embedder's own thread, and the passage is redone (the store still
lists it). The worker ends when no save waits. Everyday chatter's
vectors come first (a turn needs them to tell small talk). A save a
player opens goes to the front. A batch that fails leaves its save out until it
is named again (its next opening, change or the next start), so a broken
embedder is not asked in a loop; nothing it lacked is lost, the store still
says so.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable

import anyio

from xtyserver import errors, log
from xtyserver.clock import Clock, SystemClock
from xtyserver.memory.backlog_pace import BacklogPace, Reason, WorkerWatch
from xtyserver.memory.smalltalk import CHATTER
from xtyserver.memory.tokens import DailyBudget
from xtyserver.memory.types import Scope
from xtyserver.memory.vectors import embedding_text
from xtyserver.model import embedding
from xtyserver.model.embedding import Embedder
from xtyserver.model.local_embedding import LocalEmbedder
from xtyserver.model.router import ModelRouter
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.meter import TokenMeter
from xtyserver.serve.passage_worker import PassageWorker, WorkerFailed

LOCAL_BATCH = 8
"""Memories the in-process backlog reads and stores at a time (their passages are formed
one at a time, a look at the player before each: about 50 ms of CPU each, one memory's
subject, summary and keys, bounded by their lengths); a route takes
:data:`~xtyserver.model.embedding.BATCH` a request."""


async def embed_chatter(
    memory: MemoryService, embedder: Embedder, stop: Callable[[], bool] = lambda: False
) -> None:
    """Everyday chatter's vectors (memory/smalltalk.py) into ``memory.chatter``, once per
    process, :data:`LOCAL_BATCH` texts at a time until ``stop()``: the in-process
    model's (free; a route's embedder forms none, its turns go without the small-talk
    judgement). Nothing when they are there or being formed (by the backlog or a turn).

    Raises:
        ModelError: The embedder failed (the next caller tries again).
    """
    if memory.chatter or memory.chatter_lock.locked() or embedder.kind != "in_process":
        return
    async with memory.chatter_lock:
        vectors: list[array[float]] = []
        for at in range(0, len(CHATTER), LOCAL_BATCH):
            if stop():  # a shutdown waits for one batch, not all of them
                return
            vectors += (await embedder.embed(CHATTER[at : at + LOCAL_BATCH])).vectors
        memory.chatter = tuple(vectors)


class VectorBacklog:
    """The saves whose memories still lack vectors, worked through in the background.

    Args:
        memory: The memory service (the store's one door).
        model: The router: its embedder and the scheduler whose chats it yields to.
        meter: The bill of an embedding route's tokens.
        budget: The daily budget (a route's tokens count; the in-process model's do not).
        clock: The time the player's moves are noted at and their holds end by.
    """

    def __init__(
        self,
        memory: MemoryService,
        model: ModelRouter,
        meter: TokenMeter,
        budget: DailyBudget | None = None,
        clock: Clock | None = None,
    ) -> None:
        self._memory = memory
        self._model = model
        self._meter = meter
        self.budget = budget or DailyBudget()
        self._clock = clock or SystemClock()
        self.pace = BacklogPace()
        self._moved = anyio.Event()  # set when the player moves (a hold may change)
        self.held: Reason | None = None  # what holds the next unit back, while it waits
        self.units = 0  # units of work begun since the start (passages, requests)
        self._log = log.get("xtyserver.memory")
        self._saves: dict[Scope, None] = {}  # in order; the first is worked on next
        self._wake = anyio.Event()
        self._rescan = False  # the store is read at the start and after bulk changes
        self._closed = False
        self._waiting = anyio.CancelScope()
        self.embedded = 0  # vectors stored since the start
        self._chatter_tried = False
        # The passages' worker process (a full batch's passages, in process), its watch,
        # and whether it failed too often (the passages on the embedder's thread then).
        self.worker: PassageWorker | None = None
        self.watch = WorkerWatch()
        self.in_thread = False
        self.workers = 0  # worker processes started since the start
        self._changed = anyio.Event()  # set when the worker's watch changes (its deadline)
        self.rescan()

    @property
    def active(self) -> bool:
        """Whether vectors are formed at all (an embedder and memory on)."""
        return self._model.embedder is not None and self._memory.vector_model is not None

    @property
    def pending(self) -> tuple[Scope, ...]:
        """The saves waiting, next first."""
        return tuple(self._saves)

    def want(self, save: Scope, *, first: bool = False) -> None:
        """Note that ``save`` may have memories without vectors (``first``: a player is
        on it, so it goes before the others)."""
        if not self.active or self._closed:
            return
        if save in self._saves:
            if first:
                self._saves.pop(save)
                self._saves = {save: None, **self._saves}
            return
        self._memory.job_queued()  # counted until done, so wait_idle waits for it
        if first:
            self._saves = {save: None, **self._saves}
        else:
            self._saves[save] = None
        self._wake.set()

    def player_typing(self) -> None:
        """The player is typing or speaking to the companion: a turn is near."""
        self.pace.typing(self._clock.now())
        self._player_moved()

    def turn_began(self) -> None:
        """The player sent a turn."""
        self.pace.turn_began(self._clock.now())
        self._player_moved()

    def reply_ended(self) -> None:
        """A reply's model call ended: what held the backlog for the player lets go."""
        self.pace.reply_ended(self._clock.now())
        self._player_moved()

    def _player_moved(self) -> None:
        self._moved.set()
        self._moved = anyio.Event()
        self._apply_stop()

    def _apply_stop(self) -> float:
        """Suspend or resume the worker as the pace says now; seconds until that changes
        with no move of the player (``inf``: only a move changes it)."""
        now = self._clock.now()
        stopped, left = self.pace.stopped(now)
        worker = self.worker
        if worker is None or stopped == worker.suspended:
            return left
        if stopped:
            worker.suspend()
            self.watch.suspended(now)
        else:
            worker.resume()
            self.watch.resumed(now)
        self._worker_changed()
        return left

    async def _keep_pace(self) -> None:
        """Resume the worker when a turn's hold ends with no reply (a refused turn); the
        player's moves apply their own decisions as they come."""
        while not self._closed:
            moved = self._moved
            left = self._apply_stop()
            if math.isinf(left):
                await moved.wait()
            else:
                with self._clock.move_on_at(self._clock.deadline(left)):
                    await moved.wait()

    async def _ready(self) -> None:
        """Until the next unit may start: no chat on any lane, and the player neither
        typing nor waiting for a turn (:class:`BacklogPace`), or the backlog closed."""
        while not self._closed:
            await self._model.scheduler.wait_no_chat()
            wait, reason = self.pace.held(self._clock.now())
            if reason is None:
                return
            self.held = reason
            try:
                with self._clock.move_on_at(self._clock.deadline(wait)):
                    await self._moved.wait()
            finally:
                self.held = None

    def rescan(self) -> None:
        """Read the store again for saves with memories lacking vectors (a restore, or
        another process's import: the memory service's ``on_bulk_change``)."""
        if self.active and not self._closed and not self._rescan:
            self._memory.job_queued()  # a start's wait_idle waits for the read too
            self._rescan = True
            self._wake.set()

    def close(self) -> None:
        """Stop after the batch under way; what is left stays in the store for the next start."""
        self._closed = True
        self._worker_changed()  # the watch ends
        self._waiting.cancel()  # a model still loading is not waited for
        self._wake.set()
        self._player_moved()  # nor the player's hold
        if self.worker is not None:
            self.worker.close()  # resumed, its pipe closed: it ends after its passage

    async def run(self) -> None:
        """Read the backlog from the store, then work through it until :meth:`close`."""
        if not self.active:
            return
        try:
            async with anyio.create_task_group() as group:
                group.start_soon(self._keep_pace)
                group.start_soon(self._watch_worker)
                await self._work()
                group.cancel_scope.cancel()
        finally:
            for save in list(self._saves):
                self._done(save, failed=False)
            if self._rescan:
                self._rescan = False
                self._memory.job_finished(failed=False)
            await self._end_worker()

    async def _work(self) -> None:
        with anyio.CancelScope() as self._waiting:
            await self._model.wait_warm()
        while not self._closed:
            if self._rescan:
                try:
                    await self._scan()
                finally:
                    self._rescan = False
                    self._memory.job_finished(failed=False)
                continue
            if not self._chatter_tried:  # before the saves (no job of its own)
                self._chatter_tried = not await self._chatter()
                continue
            if not self._saves:
                await self._end_worker()  # its memory back while nothing waits
                await self._wake.wait()
                self._wake = anyio.Event()
                continue
            save = next(iter(self._saves))
            more, failed = False, True
            try:
                more, failed = await self._batch(save), False
            except errors.XtyError as exc:
                self._log.info("memory.embedding_failed", code=exc.code)
            except Exception:
                # A bug of ours must not stop the backlog; log the kind, not the data.
                self._log.exception("memory.job_crashed")
            if not more and save in self._saves:
                self._done(save, failed=failed)

    async def _chatter(self) -> bool:
        """The chatter's vectors, so turns can tell small talk; whether to try again (a
        turn was forming them, and gives up when its latency budget ends).

        First, before any save: until they are formed every turn forms them itself
        within its budget, all or nothing, and 66 passages beside a backlog's take
        longer than that on a busy machine, so each turn waited its whole budget
        (0.8 s) for nothing while the backlog lasted (scripts/bench/backlog.py).
        """
        embedder = self._model.embedder
        if embedder is None or embedder.kind != "in_process":
            return False
        await self._ready()
        async with self._memory.chatter_lock:  # a turn forming them: until it ends
            pass
        try:
            await embed_chatter(self._memory, embedder, lambda: self._closed)
        except errors.ModelError as exc:
            self._log.info("memory.embedding_failed", code=exc.code)
            return False
        return not self._memory.chatter and not self._closed

    async def _scan(self) -> None:
        try:
            found = await self._memory.saves_without_vectors()
        except errors.StoreError as exc:
            self._log.warning("store.failed", code=exc.code, effect="VectorBacklog")
            return
        for save in found:
            self.want(save)
        if found:
            self._log.info("memory.vector_backlog", saves=len(found))

    def _done(self, save: Scope, *, failed: bool) -> None:
        del self._saves[save]
        self._memory.job_finished(failed=failed)

    async def _batch(self, save: Scope) -> bool:
        """Vectors for one batch of ``save``'s memories without one; whether more may wait."""
        embedder = self._model.embedder
        if embedder is None:
            return False
        await self._ready()
        if self._closed:
            return False
        local = embedder.kind == "in_process"
        size = LOCAL_BATCH if local else embedding.BATCH
        batch = await self._memory.without_vectors(save, size)
        if not batch:
            return False
        if not local and not await self._budget_allows():
            return False
        texts = [embedding_text(event) for event in batch]
        vectors: list[array[float]] = []
        # In process a unit is one passage (a request on a route): the player is looked
        # at before each, and a stop stores what is formed. A full batch (a backlog, not
        # one new memory) goes to the worker, or to the one already running.
        unit = 1 if local else len(texts)
        worker = isinstance(embedder, LocalEmbedder) and (
            self.worker is not None or len(batch) == size
        )
        for at in range(0, len(texts), unit):
            if at:
                await self._ready()
                if self._closed:
                    break
            self.units += 1
            if worker and not self.in_thread:
                assert isinstance(embedder, LocalEmbedder)
                vector = await self._passage(embedder, texts[at])
                if vector is None:  # the worker ended with the server: stored what is formed
                    break
                vectors.append(vector)
                continue
            done = await embedder.embed(texts[at : at + unit])
            if done.usage is not None:
                # Billed with the background calls (the bill has no purpose of its own).
                await self._meter.record(save, "extraction", done.usage)
            vectors += done.vectors
        found = [
            (event.id, text, vector)
            for event, text, vector in zip(batch, texts, vectors, strict=False)
        ]
        stored = await self._memory.set_vectors(save, found)
        self.embedded += len(stored)
        self._log.debug("memory.embedded", count=len(stored))
        # None stored: every one changed meanwhile; the change names the save again.
        return bool(stored) and len(batch) == size and len(found) == len(batch)

    async def _passage(self, embedder: LocalEmbedder, text: str) -> array[float] | None:
        """``text``'s passage from the worker (started first when none runs); a failed
        worker is replaced and the passage redone, or after too many failures in a row
        formed on the embedder's own thread. None: the backlog closed meanwhile."""
        while not self.in_thread and not self._closed:
            try:
                worker = self._started_worker(embedder)
                self.watch.sent(self._clock.now())
                self._worker_changed()  # the watch starts counting
                vector = await worker.passage(text)
                self.watch.answered()
                return vector
            except WorkerFailed as exc:
                await self._end_worker()
                if self._closed:
                    return None
                failures = self.watch.failures + 1
                after = self.watch.failed()
                self._worker_changed()
                if after == "in_thread":
                    self.in_thread = True
                    self._log.warning(
                        "memory.passage_worker_off", reason=str(exc), failures=failures
                    )
                else:
                    self._log.warning(
                        "memory.passage_worker_restarted", reason=str(exc), failures=failures
                    )
        if self._closed:
            return None
        return (await embedder.embed([text])).vectors[0]

    def _started_worker(self, embedder: LocalEmbedder) -> PassageWorker:
        """The worker, started now when none runs (suspended at once during a turn).

        Raises:
            WorkerFailed: It could not be started.
        """
        if self.worker is None:
            worker = PassageWorker(embedder.engine, embedder.file)
            worker.start()
            self.worker = worker
            self.workers += 1
            self._log.info("memory.passage_worker", pid=worker.pid, engine=embedder.engine)
            self._apply_stop()
        return self.worker

    async def _watch_worker(self) -> None:
        """End the worker when its passage has run (not suspended) past
        :data:`~xtyserver.memory.backlog_pace.PASSAGE_STUCK_S`: the passage then fails.
        One task for the backlog's life (not one a passage: nothing to collect after each)."""
        while not self._closed:
            changed = self._changed
            left = self.watch.until_stuck(self._clock.now())
            worker = self.worker
            if left <= 0:
                if worker is not None:
                    self._log.warning("memory.passage_worker_stuck", pid=worker.pid)
                    worker.kill()  # its passage fails, and the watch with it
                await changed.wait()
            elif math.isinf(left):  # none in flight, or suspended: until either changes
                await changed.wait()
            else:
                with self._clock.move_on_at(self._clock.deadline(left)):
                    await changed.wait()

    def _worker_changed(self) -> None:
        """A passage was sent or failed, or the worker suspended or resumed: the watch's
        deadline moved."""
        self._changed.set()
        self._changed = anyio.Event()

    async def _end_worker(self) -> None:
        """End the worker (resumed, its pipe closed; killed if it does not exit)."""
        worker, self.worker = self.worker, None
        if worker is not None:
            await worker.aclose()

    async def _budget_allows(self) -> bool:
        if not self.budget.limited:
            return True
        spent = await self._meter.spent_today()
        if self.budget.allows_background(spent):
            return True
        state = self.budget.state(spent)
        self._log.info("memory.job_skipped", reason="token_budget", budget=state)
        return False
