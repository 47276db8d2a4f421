"""The shell side of working memory and the injection log (v1.md "Working memory").

:class:`ParkedWork` keeps ended saves' working memory in this process, for a
reconnect within ``resume_within`` seconds. :class:`InjectionLog` keeps the last
:data:`KEEP_TURNS` turns' sizes, memory ids and scores (never the player's text
or the reply) for ``xtyserver why``, written behind by one task in turn order.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from pathlib import Path

import anyio
import msgspec

from xtyserver import log
from xtyserver.memory.types import Scope
from xtyserver.serve.jobs import MemoryJobs, Reply
from xtyserver.serve.on_demand import Gauge
from xtyserver.session.actions import ActionRecord
from xtyserver.session.effects import (
    FoldWorking,
    ParkWorking,
    RecordAction,
    RecordInjection,
    ResumeWorking,
)
from xtyserver.session.events import Event, WorkingFolded, WorkingResumed
from xtyserver.session.layers import InjectionRecord
from xtyserver.session.working import WorkingSnapshot

WORKING_EFFECTS = (FoldWorking, ParkWorking, ResumeWorking, RecordInjection, RecordAction)
# An action's line in the injection log starts so (ActionRecord's first field is ``at``;
# its ``kind`` tells it from a turn's line, which has none).
_ACTION_KIND = b'"kind":"action"'
"""The effects :class:`WorkingShell` carries out."""

KEEP_TURNS = 500
"""Turns the injection log keeps per profile."""

INJECTION_QUEUE = 64
"""Injection records that may wait for the writer; more are dropped with a log line."""

MAX_PARKED = 32
"""Saves whose working memory is kept for a reconnect at once (the oldest goes first)."""


class ParkedWork:
    """Working memory of ended sessions, by save, for ``resume_within`` seconds."""

    def __init__(self, resume_within: float) -> None:
        self._within = resume_within
        self._parked: OrderedDict[Scope, tuple[WorkingSnapshot, float]] = OrderedDict()

    def park(self, save: Scope, snapshot: WorkingSnapshot, at: float) -> None:
        self._parked.pop(save, None)
        self._parked[save] = (snapshot, at)
        while len(self._parked) > MAX_PARKED:
            self._parked.popitem(last=False)

    def take(self, save: Scope, now: float) -> WorkingSnapshot | None:
        """The save's parked working memory if parked at most ``resume_within`` ago (once)."""
        entry = self._parked.pop(save, None)
        if entry is None:
            return None
        snapshot, at = entry
        return snapshot if 0 <= now - at <= self._within else None

    def __len__(self) -> int:
        return len(self._parked)


class InjectionLog:
    """The bounded per-profile injection log (JSON lines)."""

    def __init__(self, path: Path, keep: int = KEEP_TURNS) -> None:
        self.path = path
        self._keep = keep
        self._lines: int | None = None

    def append(self, record: InjectionRecord | ActionRecord) -> None:
        """Append ``record``; past ``keep`` lines, rewrite the file with the last ``keep``."""
        line = msgspec.json.encode(record) + b"\n"
        if self._lines is None:
            self._lines = len(self._read_lines())
        fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "ab") as out:
            out.write(line)
        self._lines += 1
        if self._lines > self._keep:
            kept = self._read_lines()[-self._keep :]
            tmp = self.path.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.writelines(kept)
            os.replace(tmp, self.path)
            self._lines = len(kept)

    def _read_lines(self) -> list[bytes]:
        try:
            return self.path.read_bytes().splitlines(keepends=True)
        except FileNotFoundError:
            return []

    def last(self, n: int) -> list[InjectionRecord]:
        """The last ``n`` turn records, oldest first (unreadable lines are skipped)."""
        lines = [line for line in self._read_lines() if _ACTION_KIND not in line]
        records: list[InjectionRecord] = []
        for line in lines[-max(n, 0) :] if n > 0 else []:
            try:
                records.append(msgspec.json.decode(line, type=InjectionRecord))
            except msgspec.DecodeError:
                continue
        return records

    def actions(self, n: int) -> list[ActionRecord]:
        """The last ``n`` action records (v1.md "Actions"), oldest first."""
        lines = [line for line in self._read_lines() if _ACTION_KIND in line]
        records: list[ActionRecord] = []
        for line in lines[-max(n, 0) :] if n > 0 else []:
            try:
                records.append(msgspec.json.decode(line, type=ActionRecord))
            except msgspec.DecodeError:
                continue
        return records


def injection_log_path(data_dir: Path, profile: str) -> Path:
    return data_dir / "profiles" / profile / "injections.jsonl"


class WorkingShell:
    """Carries out the core's working-memory and injection-log effects for every connection.

    Args:
        parked: Working memory of ended sessions.
        jobs: The background worker (fold calls).
        injections: The injection log.
        model: The model name recorded in the injection log.
    """

    def __init__(
        self, parked: ParkedWork, jobs: MemoryJobs, injections: InjectionLog, model: str
    ) -> None:
        self.parked = parked
        self.injections = injections
        self._jobs = jobs
        self._model = model
        self._log = log.get("xtyserver.working")
        self._records_in, self._records_out = anyio.create_memory_object_stream[
            InjectionRecord | ActionRecord
        ](INJECTION_QUEUE)
        self._pending = Gauge()  # records queued and not written yet

    async def run(
        self,
        effect: FoldWorking | ParkWorking | ResumeWorking | RecordInjection | RecordAction,
        reply: Reply,
    ) -> Event | None:
        """Carry out one effect; return an event to feed at once, if any."""
        match effect:
            case FoldWorking():
                if not self._jobs.submit(effect, reply):
                    return WorkingFolded(effect.generation, None)
            case ParkWorking(save=save, snapshot=snapshot, at=at):
                self.parked.park(save, snapshot, at)
            case ResumeWorking(save=save, at=at):
                return WorkingResumed(save, self.parked.take(save, at))
            case RecordInjection(record=record):
                self._queue(msgspec.structs.replace(record, model=self._model))
            case RecordAction(record=action):
                self._queue(action)
        return None

    def _queue(self, record: InjectionRecord | ActionRecord) -> None:
        try:
            self._records_in.send_nowait(record)
        except anyio.WouldBlock:
            self._log.warning("injections.dropped", reason="queue full")
            return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return  # shutting down
        self._pending.add(1)

    async def write_injections(self) -> None:
        """Append queued injection records in order until :meth:`close_injections`."""
        async with self._records_out:
            async for record in self._records_out:
                try:
                    await anyio.to_thread.run_sync(self.injections.append, record)
                except OSError as exc:
                    self._log.error(
                        "effect.failed", effect="RecordInjection", error=type(exc).__name__
                    )
                finally:
                    self._pending.add(-1)

    def close_injections(self) -> None:
        """Accept no more records; :meth:`write_injections` returns once the queued are written."""
        self._records_in.close()

    async def wait_written(self) -> None:
        """Return once every queued injection record is in the log."""
        await self._pending.wait_at_most(0)
