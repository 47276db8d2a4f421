"""``MemoryService``: every memory concern of the running server behind one async API.

It owns the store, the per-save indexes kept loaded by leases, the write-behind
of "used" marks (bounded, so a busy database never delays a reply) and the
counters of the background jobs (:mod:`xtyserver.serve.jobs`). Each store call
is one thread hop; a ``CapacityLimiter(1)`` makes this process's writes one at
a time. Connections never touch the store.
"""

from __future__ import annotations

from array import array
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import anyio
import msgspec

from xtyserver import log
from xtyserver.errors import StoreError
from xtyserver.memory.aliases import PlayerAlias, Unnaming, unnamed
from xtyserver.memory.commands import (
    Correct,
    Export,
    Forget,
    ForgetName,
    Import,
    MemoryCommand,
    Outcome,
    Pin,
    Preview,
    Search,
    View,
)
from xtyserver.memory.glossary import Glossary
from xtyserver.memory.manage import RestoreResult, TrashEntry
from xtyserver.memory.retrieval import KEY_WEIGHT, SaveIndex, search_memories
from xtyserver.memory.sqlite.store import DEFAULT_SOFT_CAP, MemoryStore
from xtyserver.memory.tokens import Purpose
from xtyserver.memory.types import (
    MemoryEvent,
    NewEvent,
    PlayStats,
    Scope,
    SharedProfile,
)
from xtyserver.memory.vectors import embedding_text
from xtyserver.serve.on_demand import Gauge, LazyLock
from xtyserver.session.events import SaveMemory

T = TypeVar("T")

TOUCH_QUEUE = 256
_Touch = tuple[Scope, tuple[int, ...], float]


class MemoryStatistics(msgspec.Struct):
    """What the memory service has done since it started (for tests and logs).

    Attributes:
        jobs_queued: Background jobs waiting or running now.
        jobs_done: Jobs finished (stored something or not).
        jobs_failed: Jobs that ended in an error (logged).
        jobs_dropped: Jobs refused because the queue was full or closing.
        touches_pending: "Used" marks not yet written.
        touches_dropped: "Used" marks dropped because their queue was full.
    """

    jobs_queued: int = 0
    jobs_done: int = 0
    jobs_failed: int = 0
    jobs_dropped: int = 0
    touches_pending: int = 0
    touches_dropped: int = 0


@dataclass(eq=False)
class _Cached:
    """One save's loaded index and how many leases hold it."""

    users: int = 0
    index: SaveIndex | None = None
    loading: LazyLock = field(default_factory=LazyLock)


class MemoryService:
    """The long-term memory and play statistics of one profile, for the async server.

    Args:
        store: The open store; the service does not close it.
        enabled: Whether long-term memory is read and written at all
            (play statistics are kept either way).
        soft_cap: Events per save past which ended, unimportant ones are merged.
        glossary: The game glossary, or what builds it when a save index first
            needs it (on a worker thread).
    """

    def __init__(
        self,
        store: MemoryStore,
        *,
        enabled: bool = True,
        soft_cap: int = DEFAULT_SOFT_CAP,
        glossary: Glossary | Callable[[], Glossary] | None = None,
        search_keys: bool = True,
        spelling: bool = True,
        vector_model: str | None = None,
    ) -> None:
        self.store = store
        # The [models.embedding] model whose vectors the indexes hold (None: no vectors).
        self.vector_model = vector_model
        # Everyday chatter's vectors from that model (memory/smalltalk.py), once embedded
        # (serve/vector_backlog.py embed_chatter): what tells small talk from a question.
        self.chatter: tuple[array[float], ...] = ()
        self.chatter_lock = anyio.Lock()
        self.enabled = enabled
        # A callable: the glossary built when first needed (``GlossaryOnce``).
        fixed = glossary if isinstance(glossary, Glossary) else Glossary()
        self._glossary: Callable[[], Glossary] = glossary if callable(glossary) else lambda: fixed
        self._key_weight = KEY_WEIGHT if search_keys else 0.0
        self._spelling = spelling
        self._soft_cap = soft_cap
        self._log = log.get("xtyserver.memory")
        self._writer = anyio.CapacityLimiter(1)
        self._saves: dict[Scope, _Cached] = {}
        self._profile: SharedProfile | None = None
        self._generation: int | None = None
        # Called when the trash window changes: the purge job's wake-up (serve/trash_purge.py).
        self.on_trash_window: Callable[[], None] | None = None
        # Called when memories may have come without vectors in bulk (a restore, another
        # process's import): the vector backlog reads the store again.
        self.on_bulk_change: Callable[[], None] | None = None
        self._count = MemoryStatistics()
        self._unfinished = Gauge()  # jobs queued or running, and "used" marks not written
        self._touch_in, self._touch_out = anyio.create_memory_object_stream[_Touch](TOUCH_QUEUE)

    # -- one hop to the store ------------------------------------------------------------

    async def _write(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(partial(fn, *args), limiter=self._writer)

    async def _read(self, fn: Callable[..., T], *args: Any) -> T:
        return await anyio.to_thread.run_sync(partial(fn, *args))

    # -- conditions -----------------------------------------------------------------------

    @property
    def statistics(self) -> MemoryStatistics:
        return msgspec.structs.replace(self._count)

    async def wait_idle(self) -> None:
        """Return once no job is queued or running and every "used" mark is written."""
        await self._unfinished.wait_at_most(0)

    def job_queued(self) -> None:
        self._count.jobs_queued += 1
        self._unfinished.add(1)

    def job_finished(self, *, failed: bool) -> None:
        self._count.jobs_queued -= 1
        self._count.jobs_done += 1
        self._count.jobs_failed += int(failed)
        self._unfinished.add(-1)

    def job_dropped(self) -> None:
        self._count.jobs_dropped += 1

    # -- leases and a turn's memory -----------------------------------------------------

    @asynccontextmanager
    async def lease(self, save: Scope) -> AsyncIterator[None]:
        """Keep ``save``'s index loaded while the block runs (a connection playing it).

        Raises:
            StoreError: The save's memory could not be read; nothing is held then.
        """
        if not self.enabled:
            yield
            return
        entry = self._saves.get(save)
        if entry is None:
            entry = self._saves[save] = _Cached()
        entry.users += 1
        try:
            await self._loaded(save, entry)
            yield
        finally:
            entry.users -= 1
            if entry.users == 0 and self._saves.get(save) is entry:
                del self._saves[save]

    async def _loaded(self, save: Scope, entry: _Cached) -> SaveIndex:
        async with entry.loading:
            if entry.index is None:
                entry.index = await self._read(self._build_index, save)
            return entry.index

    def _build_index(self, save: Scope) -> SaveIndex:
        # On a worker thread: tokenizing a whole save is too long for the event loop.
        glossary = self._glossary().for_game(save.game_id)
        events = self.store.load_scope(save)
        index = SaveIndex(
            save, events, glossary=glossary, key_weight=self._key_weight, spelling=self._spelling
        )
        if self.vector_model is not None:
            for event_id, vector in self.store.load_vectors(save, self.vector_model).items():
                index.set_vector(event_id, vector)
        index.aliases = tuple(self.store.aliases(save))
        index.sessions = tuple(self.store.ended_sessions(save))
        return index

    async def profile(self) -> SharedProfile:
        """The shared profile (cached; every change made through the service refreshes it)."""
        if self._profile is None:
            self._profile = await self._read(self.store.get_profile)
        return self._profile

    async def turn_memory(self, save: Scope) -> SaveMemory:
        """The profile and ``save``'s index for planning one turn.

        Raises:
            StoreError: The store could not be read.
        """
        await self._follow_other_processes()
        profile = await self.profile()
        entry = self._saves.get(save)
        if entry is not None:
            return SaveMemory(profile, await self._loaded(save, entry))
        return SaveMemory(profile, await self._read(self._build_index, save))

    def cached_turn_memory(self, save: Scope) -> SaveMemory | None:
        """:meth:`turn_memory` for the common turn, with no task, thread or lock; else None.

        None when anything would have to be read or reloaded, or the generation
        read met a lock or failed: :meth:`turn_memory` does that and logs it.
        """
        entry = self._saves.get(save)
        if self._profile is None or entry is None or entry.index is None:
            return None
        try:
            generation = self.store.generation(wait=False)
        except StoreError:
            return None
        if generation != self._generation:
            return None
        return SaveMemory(self._profile, entry.index)

    async def _follow_other_processes(self) -> None:
        """Drop cached memory when any process (``xtyserver mcp``, the CLI) changed it.

        Every management change bumps the store's generation. Its one-row WAL
        read is cheaper than a thread hop, so it runs on the event loop without
        waiting for a lock; should it meet one, a worker thread reads instead.
        """
        try:
            generation = self.store.generation(wait=False)
        except StoreError as exc:
            if exc.code != "store_busy":
                raise
            generation = await self._read(self.store.generation)
        if self._generation is not None and generation != self._generation:
            self._profile = None
            for save in list(self._saves):
                await self._reload(save)
            self._bulk_change()
        self._generation = generation

    def _bulk_change(self) -> None:
        if self.on_bulk_change is not None:
            self.on_bulk_change()

    def touch(self, save: Scope, ids: Iterable[int], at: float) -> None:
        """Mark memories as used now; the SQLite write follows in the background."""
        ids = tuple(ids)
        entry = self._saves.get(save)
        if entry is not None and entry.index is not None:
            entry.index.touch(ids, at)
        try:
            self._touch_in.send_nowait((save, ids, at))
        except anyio.WouldBlock:
            self._count.touches_dropped += 1
            self._log.warning("memory.touch_dropped", reason="queue full")
            return
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            return
        self._count.touches_pending += 1
        self._unfinished.add(1)

    async def write_touches(self) -> None:
        """Write queued "used" marks until the queue is closed (run by the service's owner)."""
        async with self._touch_out:
            async for save, ids, at in self._touch_out:
                try:
                    await self._write(self.store.touch, save, list(ids), at)
                except StoreError as exc:
                    self._log.info("memory.touch_failed", code=exc.code)
                finally:
                    self._count.touches_pending -= 1
                    self._unfinished.add(-1)

    def close_touches(self) -> None:
        self._touch_in.close()

    # -- changes ---------------------------------------------------------------------------

    async def remember(
        self, save: Scope, event: NewEvent, at: float, *, deliberate: bool = False
    ) -> MemoryEvent | None:
        """Store one extracted event and compact past the cap.

        The same subject and kind update in place. A subject the player had
        forgotten is refused (None) unless ``deliberate`` ("记住…"), which lifts
        its tombstone and pins the memory.
        """
        remember = partial(self.store.remember_candidate, deliberate=deliberate)
        stored = await self._write(remember, save, event, at)
        if stored is None:
            self._log.info("memory.tombstoned", kind=event.kind)
            return None
        entry = self._saves.get(save)
        if entry is not None and entry.index is not None:
            entry.index.upsert(stored)
            if len(entry.index) > self._soft_cap:
                compact = partial(self.store.compact_scope, cap=self._soft_cap)
                if await self._write(compact, save, at):
                    await self._reload(save)
        return stored

    async def without_search_keys(self, save: Scope, limit: int) -> list[MemoryEvent]:
        """Up to ``limit`` memories of ``save`` never given search keys."""
        return await self._read(self.store.without_search_keys, save, limit)

    async def set_search_keys(
        self, save: Scope, keys: dict[int, tuple[str, ...]]
    ) -> list[MemoryEvent]:
        """Store search keys of memories of ``save``; a loaded index takes them at once."""
        changed = await self._write(self.store.set_search_keys, save, keys)
        entry = self._saves.get(save)
        if entry is not None:
            # A load in flight may have read the rows before this write: wait for it.
            index = await self._loaded(save, entry)
            for event in changed:
                index.upsert(event)
        return changed

    async def without_vectors(self, save: Scope, limit: int) -> list[MemoryEvent]:
        """Up to ``limit`` memories of ``save`` with no vector from the embedding model."""
        if self.vector_model is None:
            return []
        return await self._read(self.store.without_vectors, save, self.vector_model, limit)

    async def saves_without_vectors(self) -> list[Scope]:
        """Every save with memories lacking a vector from the embedding model, largest first."""
        if self.vector_model is None:
            return []
        found = await self._read(self.store.saves_without_vectors, self.vector_model)
        return [save for save, _ in found]

    async def set_vectors(
        self, save: Scope, found: list[tuple[int, str, array[float]]]
    ) -> list[int]:
        """Store memory vectors ``(event id, text embedded, vector)``; a loaded index takes
        those stored at once (a memory forgotten or rewritten meanwhile gets none)."""
        if self.vector_model is None:
            return []
        stored = await self._write(self.store.set_vectors, save, self.vector_model, found)
        entry = self._saves.get(save)
        if entry is not None:
            index = await self._loaded(save, entry)
            by_id = {event_id: (text, vector) for event_id, text, vector in found}
            for event_id in stored:
                text, vector = by_id[event_id]
                event = index.get(event_id)
                if event is not None and embedding_text(event) == text:
                    index.set_vector(event_id, vector)
        return stored

    async def learn_alias(self, save: Scope, alias: str, means: str, at: float) -> PlayerAlias:
        """Keep the player's name ``alias`` of ``means`` on ``save``; a loaded index uses it
        from the next question on.

        Raises:
            StoreError: Refused (StoreContentError names the part) or not written.
        """
        stored, names = await self._write(self._learn_and_list, save, alias, means, at)
        await self._names_changed(save, names)
        return stored

    def _learn_and_list(
        self, save: Scope, alias: str, means: str, at: float
    ) -> tuple[PlayerAlias, list[PlayerAlias]]:
        return self.store.learn_alias(save, alias, means, at), self.store.aliases(save)

    def _forget_and_list(self, command: ForgetName) -> tuple[Outcome, list[PlayerAlias]]:
        return self.store.execute(command), self.store.aliases(command.scope)

    async def _names_changed(self, save: Scope, names: list[PlayerAlias]) -> None:
        # The names were read in the writer's own call and are set here before any other
        # task runs: a turn that starts once the store holds a name finds it in the index
        # (a second read, one thread hop later, once left a window where it did not).
        entry = self._saves.get(save)
        if entry is None:
            return
        if entry.index is not None:
            entry.index.aliases = tuple(names)
        # A load or reload in flight may have read the names before the write and put its
        # index in place after it (names bump no generation, so nothing would reload it
        # again): once it is done, the index reads them afresh.
        async with entry.loading:
            if entry.index is not None:
                entry.index.aliases = tuple(await self._read(self.store.aliases, save))

    async def set_profile_field(self, name: str, value: Any) -> SharedProfile:
        """Replace one shared-profile field.

        Raises:
            StoreError: Refused (StoreContentError names the field) or not written.
        """
        self._profile = await self._write(self.store.set_profile_field, name, value)
        return self._profile

    @property
    def trash_window(self) -> float:
        """Seconds a forget stays restorable (0: no trash)."""
        return self.store.trash_window

    def set_trash_window(self, seconds: float) -> None:
        """The trash window changed (the settings page); a change wakes the purge job."""
        changed = seconds != self.store.trash_window
        self.store.trash_window = seconds
        if changed and self.on_trash_window is not None:
            self.on_trash_window()

    async def trash_entries(self) -> list[TrashEntry]:
        """What the trash holds and can still restore, newest first (the page lists these)."""
        return await self._read(self.store.trash_entries)

    async def purge_trash(self) -> int:
        """Delete trash entries past their window (a job and the start do this)."""
        return await self._write(self.store.purge_trash)

    async def execute(self, command: MemoryCommand) -> Outcome:
        """The service's one door for memory commands, admitted by the caller
        (:func:`xtyserver.session.consent.admit`): a search over the save's index, anything
        else by the store's :meth:`~MemoryStore.execute`; the caches follow a change.

        Raises:
            UsageError: A command lacking a field its kind needs.
            StoreError: Refused (StoreContentError names the part), not found or not written.
        """
        match command:
            case Search(scope=scope, query=query, kind=kind, day=day, limit=limit):
                found = await self.turn_memory(scope)
                if found.index is None:
                    return None
                return search_memories(
                    found.profile, found.index, query, kind=kind, current_day=day, limit=limit
                )
            case ForgetName(scope=scope, alias=str() as alias):
                gone = unnamed(await self._read(self.store.aliases, scope), Unnaming(alias))
                command = ForgetName(scope=scope, ids=tuple(a.id for a in gone))
            case View() | Preview() | Export():
                return await self._read(self.store.execute, command)
        if isinstance(command, ForgetName):
            if not command.ids:
                return 0
            dropped, names = await self._write(self._forget_and_list, command)
            await self._names_changed(command.scope, names)
            return dropped
        outcome = await self._write(self.store.execute, command)
        match command, outcome:
            case Correct(), SharedProfile():
                self._profile = outcome
            case Pin(scope=scope), _:
                await self._reload(scope)
            case (Forget(target=spec), _) | (_, RestoreResult(spec=spec)):
                for each in list(self._saves):
                    if spec.kind == "all" or each.game_id == spec.game_id:
                        await self._reload(each)
                self._profile = None
                if isinstance(outcome, RestoreResult):
                    self._bulk_change()  # restored memories may lack vectors: the backlog looks
            case Import(), _:
                for each in list(self._saves):
                    await self._reload(each)
                self._profile = None
                self._bulk_change()  # imported memories come without vectors: the backlog looks
        return outcome

    async def _reload(self, save: Scope) -> None:
        entry = self._saves.get(save)
        if entry is not None:
            async with entry.loading:
                entry.index = await self._read(self._build_index, save)

    async def play_stats(self) -> PlayStats:
        return await self._read(self.store.stats)

    # -- play accounting --------------------------------------------------------------------

    async def recover_open_sessions(self) -> int:
        return await self._write(self.store.recover_open_sessions)

    async def open_play(
        self, save: Scope, at: float, timezone: str, save_name: str | None = None
    ) -> int:
        """Open a play session; the game joins the profile's ``games`` (one thread hop)."""

        def open_and_record() -> tuple[int, SharedProfile | None]:
            play = self.store.open_play_session(save, at, timezone, save_name=save_name)
            return play, self.store.record_game(save.game_id) if self.enabled else None

        play, profile = await self._write(open_and_record)
        if profile is not None:
            self._profile = profile
        return play

    async def record_usage(
        self, date: str, save: Scope, purpose: Purpose, prompt: int, completion: int
    ) -> None:
        await self._write(self.store.record_usage, date, save, purpose, prompt, completion)

    async def tokens_spent(self, date: str) -> int:
        return await self._read(self.store.tokens_spent, date)

    async def play_beat(self, play: int, at: float, timezone: str) -> None:
        await self._write(self.store.record_heartbeat, play, at, timezone)

    async def close_play(self, play: int, at: float) -> None:
        await self._write(self.store.close_play_session, play, at)
