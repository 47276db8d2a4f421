"""Background jobs: extraction after a reply, a summary when a session ends, session folds,
search keys for memories without them; memory vectors are the backlog beside them
(:mod:`xtyserver.serve.vector_backlog`), which the store keeps and nothing drops.

One worker runs the jobs one at a time, never blocking a player (v1.md
"Memory"); a job that does not fit the bounded queue is dropped with a log line.
Each model call yields to chat through :mod:`xtyserver.model.scheduler` (aborted
and asked again, so a job stores its result once), goes on the player's bill,
and is skipped once the daily token budget runs low.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable

import anyio
import msgspec

from xtyserver import errors, log
from xtyserver.clock import Clock
from xtyserver.config import MemorySettings
from xtyserver.memory import enrichment, extraction
from xtyserver.memory.accounting import local_date
from xtyserver.memory.tokens import DailyBudget
from xtyserver.memory.types import MemoryEvent, NewEvent, Scope
from xtyserver.model.router import ModelRouter
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.meter import TokenMeter
from xtyserver.serve.vector_backlog import VectorBacklog
from xtyserver.session import fold
from xtyserver.session.effects import FoldWorking, Job, Remember, Summarize
from xtyserver.session.events import Event, WorkingFolded

Reply = Callable[[Event], Awaitable[None]]
"""Where a job's answer goes (a fold's summary goes back to its connection)."""

DEFAULT_QUEUE = MemorySettings().job_queue
"""``memory.job_queue``'s default."""
ENRICH_BATCHES = 8
"""Calls one enrichment job makes at most (8 x 8 memories); the rest waits for the next."""


class EnrichKeys(msgspec.Struct, frozen=True):
    """Give search keys to the memories of ``save`` without them (the stored keys are the
    progress, :mod:`xtyserver.memory.enrichment`)."""

    save: Scope


AnyJob = Job | EnrichKeys
_Queued = tuple[AnyJob, Reply | None]


class MemoryJobs:
    """The background worker and its bounded queue.

    Args:
        model: The model router (``complete`` calls go to the quick model).
        meter: The token meter (the bill; what was spent today).
        budget: The daily budget: a job runs only while it is ``ok``.
        queue_size: Jobs that may wait; more are dropped.
        clock: The vector backlog's (when the player's holds end).
    """

    def __init__(
        self,
        memory: MemoryService,
        model: ModelRouter,
        meter: TokenMeter,
        budget: DailyBudget | None = None,
        *,
        queue_size: int = DEFAULT_QUEUE,
        enrich: bool = False,
        timezone: str = "UTC",
        clock: Clock | None = None,
    ) -> None:
        self.enrich = enrich
        self._timezone = timezone  # the local date relative dates are resolved against
        self._memory = memory
        self._model = model
        self._meter = meter
        self._budget = budget or DailyBudget()
        self._log = log.get("xtyserver.memory")
        self._in, self._out = anyio.create_memory_object_stream[_Queued](queue_size)
        self.vectors = VectorBacklog(memory, model, meter, self._budget, clock)

    @property
    def embed(self) -> bool:
        """Whether memory vectors are formed (an embedder and memory on)."""
        return self.vectors.active

    def embed_later(self, save: Scope, *, first: bool = False) -> None:
        """Put ``save`` on the vector backlog (``first``: a player opened it)."""
        self.vectors.want(save, first=first)

    def set_budget(self, budget: DailyBudget) -> None:
        """The daily budget changed (the settings page): the next job decides by it."""
        self._budget = budget
        self.vectors.budget = budget

    def submit(self, job: AnyJob, reply: Reply | None = None) -> bool:
        """Queue ``job`` without waiting; False (and a log line) when it was dropped.

        ``reply`` gets the job's answer event (a fold's ``WorkingFolded``) before
        the job counts as finished.
        """
        try:
            self._in.send_nowait((job, reply))
        except anyio.WouldBlock:
            reason = "queue full"
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            reason = "shutting down"
        else:
            self._memory.job_queued()
            return True
        self._memory.job_dropped()
        self._log.warning("memory.job_dropped", reason=reason, job=type(job).__name__)
        return False

    def close(self) -> None:
        """Accept no more jobs; :meth:`run` returns once the queued ones are done (the
        vector backlog stops after its batch: the store keeps the rest)."""
        self._in.close()
        self.vectors.close()

    async def run(self) -> None:
        """Run queued jobs one at a time until :meth:`close`."""
        async with self._out:
            async for job, reply in self._out:
                failed = True
                try:
                    if isinstance(job, Remember):
                        await self._remember(job)
                    elif isinstance(job, FoldWorking):
                        await self._fold(job, reply)
                    elif isinstance(job, EnrichKeys):
                        await self._enrich(job)
                    else:
                        await self._summarize(job)
                    failed = False
                except errors.XtyError as exc:
                    self._log.info("memory.job_failed", code=exc.code)
                except Exception:
                    # A bug of ours must not stop the worker; log the kind, not the data.
                    self._log.exception("memory.job_crashed")
                finally:
                    self._memory.job_finished(failed=failed)

    async def _may_run(self) -> bool:
        if not self._model.quick_configured:
            return False
        return await self._budget_allows()

    async def _remember(self, job: Remember) -> None:
        if not await self._may_run():
            return
        profile = await self._memory.profile()
        today = self._today(job.at)
        messages = extraction.build_extraction_messages(
            job.player_text, job.reply, today=today, day=job.day
        )
        done = await self._model.complete(messages)
        await self._meter.record(job.save, "extraction", done.usage)
        answer = done.text
        events = await self._held(job.save)
        save_texts = [t for e in events for t in (e.subject, e.summary)]
        result = extraction.parse_extraction(
            answer,
            profile=profile,
            day=job.day,
            save_texts=[*save_texts, *job.context_names],
            today=today,
            held=events,
        )
        if result.refused is not None:
            # The kind of refusal only: the value itself may be private.
            self._log.info("memory.shared_refused", reason=result.refused)
        for reason in result.events_refused:
            self._log.info("memory.event_refused", reason=reason)
        deliberate = extraction.is_deliberate(job.player_text)
        await self._store(job.save, result.events, job.at, deliberate=deliberate)
        if result.profile is not None and profile.auto_shared:
            name, value = extraction.profile_update(profile, result.profile)
            await self._memory.set_profile_field(name, value)

    async def _summarize(self, job: Summarize) -> None:
        turns = [extraction.Turn(player, reply) for player, reply in job.turns]
        if len(turns) < extraction.MIN_SUMMARY_TURNS or not await self._may_run():
            return
        held, today = await self._held(job.save), self._today(job.at)
        messages = extraction.build_summary_messages(turns, held, today=today, day=job.day)
        if messages is None:
            return
        done = await self._model.complete(messages)
        await self._meter.record(job.save, "summary", done.usage)
        found = extraction.parse_summary(done.text, day=job.day, today=today, held=held)
        await self._store(job.save, found, job.at)

    async def _held(self, save: Scope) -> list[MemoryEvent]:
        """What ``save`` already holds (the summariser updates it rather than repeat it)."""
        index = (await self._memory.turn_memory(save)).index
        return index.events() if index is not None else []

    def _today(self, at: float) -> dt.date | None:
        try:
            return dt.date.fromisoformat(local_date(at, self._timezone))
        except errors.UsageError:
            return None

    async def _fold(self, job: FoldWorking, reply: Reply | None) -> None:
        """A stateless call that sees only the previous summary and the rounds to fold."""
        summary = None
        try:
            if await self._may_run():
                messages = fold.build_fold_messages(job.previous, job.rounds)
                done = await self._model.complete(messages)
                await self._meter.record(job.save, "summary", done.usage)
                summary = fold.parse_fold(done.text, job.previous)
                if summary is None:
                    self._log.info("session.fold_unreadable")
        finally:
            if reply is not None:
                with anyio.CancelScope(shield=True):
                    await reply(WorkingFolded(job.generation, summary))

    async def _enrich(self, job: EnrichKeys) -> None:
        """Search keys for up to ENRICH_BATCHES x BATCH memories of one save without them."""
        for _ in range(ENRICH_BATCHES):
            batch = await self._memory.without_search_keys(job.save, enrichment.BATCH)
            if not batch or not await self._may_run():
                return
            messages = enrichment.build_enrichment_messages(job.save.game_id, batch)
            done = await self._model.complete(messages)
            await self._meter.record(job.save, "extraction", done.usage)
            keys = enrichment.parse_enrichment(done.text, [e.id for e in batch])
            if not keys:
                self._log.info("memory.enrichment_unreadable")
                return  # asked again next time
            await self._memory.set_search_keys(job.save, keys)
            self.embed_later(job.save)  # their text changed: vectors follow

    async def _budget_allows(self) -> bool:
        if not self._budget.limited:
            return True
        spent = await self._meter.spent_today()
        if not self._budget.allows_background(spent):
            state = self._budget.state(spent)
            self._log.info("memory.job_skipped", reason="token_budget", budget=state)
            return False
        return True

    async def _store(
        self, save: Scope, events: tuple[NewEvent, ...], at: float, *, deliberate: bool = False
    ) -> None:
        for event in events:
            await self._memory.remember(save, event, at, deliberate=deliberate)
        if events:
            self.embed_later(save)
