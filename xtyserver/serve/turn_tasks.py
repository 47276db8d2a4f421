"""A turn's I/O work for one connection: memory read, screenshot, model call, memory tools.

A shell (v1.md "The model call"): each method runs as a task owned by the
connection's task group and posts the answer event back to the session; every
outcome, failure included, is an answer, so no turn is left hanging.
"""

from __future__ import annotations

import contextlib
import sys
from array import array
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from functools import partial
from typing import Any

import anyio
import anyio.lowlevel
import msgspec

from xtyserver import errors
from xtyserver.errors import StoreError
from xtyserver.memory.emoji import spell_emoji
from xtyserver.memory.focus import question_part
from xtyserver.memory.retrieval import SaveIndex
from xtyserver.memory.types import Scope
from xtyserver.memory.vectors import centroid, embedding_text, similarities
from xtyserver.model.client import Delta, Done
from xtyserver.model.embedding import QUERY_BUDGET_MS
from xtyserver.model.router import ModelRouter
from xtyserver.protocol.frames import Usage
from xtyserver.protocol.images import ImageLimits
from xtyserver.serve.image import BandHelper, check_and_prepare
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.meter import TokenMeter
from xtyserver.serve.store_lane import run_tool
from xtyserver.serve.vector_backlog import LOCAL_BATCH, embed_chatter
from xtyserver.session.events import (
    Event,
    ImageReady,
    ImageRefused,
    ModelDelta,
    ModelDone,
    ModelFailed,
    SaveMemory,
    ToolAnswered,
    TurnMemoryReady,
)
from xtyserver.session.tools import ToolFailure, ToolOp

RECENT_QUERIES = 16
"""Query vectors a connection keeps, by their text: a question asked again, or
embedded while the player typed it, costs no second embedding."""


def similar(
    query: array[float], vectors: Iterable[tuple[int, array[float]]]
) -> list[tuple[int, float]]:
    """:func:`~xtyserver.memory.vectors.similarities`, with numpy when it is loaded.

    The in-process embedder brings numpy: a save of 300 x 384 is then one matrix
    product, ~0.05 ms rather than ~3.5 ms of Python (docs/benchmarks.md). Without
    it (a provider's vectors) nothing imports numpy for this.
    """
    np: Any = sys.modules.get("numpy")
    if np is None:
        return similarities(query, vectors)
    size = len(query)
    kept = [(event_id, vec) for event_id, vec in vectors if len(vec) == size]
    if not kept:
        return []
    blob = b"".join(vec.tobytes() for _, vec in kept)
    matrix = np.frombuffer(blob, dtype=np.float32).reshape(len(kept), size)
    scores = matrix.astype(np.float64) @ np.asarray(query, dtype=np.float64)
    out = list(zip((event_id for event_id, _ in kept), scores.tolist(), strict=True))
    out.sort(key=lambda kv: (-kv[1], kv[0]))
    return out


def asked(query: str) -> str:
    """What a turn's query vector embeds: a long message's question, not its chatter
    (memory/focus.py), with 🐔 as 鸡; the same whether typed ahead (chat.typing) or not."""
    return spell_emoji(question_part(query))


CATCH_UP = 48
"""Memories without a vector a turn embeds itself, within its latency budget, when the
backlog has not reached its save yet (an import asked about at once); the rest wait."""


class TurnTasks:
    """The slow work of a turn, kept off the connection's read path.

    Args:
        meter: The token meter (every call billed; the day's budget read with the memory).
        post: Hands an answer event to the connection's session.
        bands: The server's band helper thread for large screenshots (None: none).
        embedding_timeout: Seconds a turn waits for its query's vector; None: by the
            embedder's kind.
    """

    def __init__(
        self,
        *,
        memory: MemoryService,
        model: ModelRouter,
        meter: TokenMeter,
        images: ImageLimits,
        post: Callable[[Event], Awaitable[None]],
        logger: Any,
        bands: BandHelper | None = None,
        embedding_timeout: float | None = None,
    ) -> None:
        self._embedding_timeout = embedding_timeout
        self._memory = memory
        self._model = model
        self._meter = meter
        self._images = images
        self._bands = bands
        self._post = post
        self._log = logger
        self._recent: OrderedDict[str, array[float]] = OrderedDict()
        # Everyday chatter's vectors and their centroid, made once they are embedded.
        self._centroid: tuple[tuple[array[float], ...], array[float]] = ((), array("f"))
        # chat.typing: the latest query hinted, and the one being embedded for it.
        self._wanted: str | None = None
        self._preparing: tuple[str, anyio.Event] | None = None

    def cached_memory(
        self, turn: int, save: Scope, read_memory: bool, query: str = ""
    ) -> TurnMemoryReady | None:
        """The answer of :meth:`load_memory` when everything is in memory already, else None.

        The connection feeds it at once, with no task or hop (the common turn).
        """
        memory = self._memory.cached_turn_memory(save) if read_memory else None
        if read_memory and memory is None:
            return None
        if memory is not None and self._embeds(memory.index, query):
            vector = self._recent.get(query)
            # A vector at hand (asked again, or embedded while typed) with numpy's
            # product is no work to speak of; anything else is a task's.
            if vector is None or memory.index is None or "numpy" not in sys.modules:
                return None
            self._recent.move_to_end(query)
            memory = self._scored(memory, memory.index, vector)
        spent = self._meter.cached_spent_today()
        if spent is None:
            return None
        return TurnMemoryReady(turn, memory, spent)

    def want_query(self, save: Scope, query: str) -> bool:
        """A chat.typing's query to embed ahead of its turn; True when a task must start
        (:meth:`prepare_queries`, one per connection at most).

        Only where embedding costs no tokens (the in-process model, a server on
        this machine) and the save's vectors are not known to be missing: a draft
        is embedded on the player's machine or not at all.
        """
        embedder = self._model.embedder
        if embedder is None or embedder.kind == "cloud" or not query.strip():
            return False
        cached = self._memory.cached_turn_memory(save)
        if not self._embeds(cached.index if cached else None, query) or query in self._recent:
            return False
        starting = self._wanted is None and self._preparing is None
        self._wanted = query  # a newer draft replaces one not yet started
        return starting

    async def prepare_queries(self) -> None:
        """Embed the latest hinted query until no newer one waits (one text at a time)."""
        embedder = self._model.embedder
        try:
            while embedder is not None and self._wanted is not None:
                query, self._wanted = self._wanted, None
                if query in self._recent:
                    continue
                self._preparing = (query, anyio.Event())
                try:
                    # What the turn would embed for it (asked), so its vector is the same.
                    done = await embedder.embed([asked(query)], query=True)
                except errors.ModelError as exc:
                    self._log.info("memory.embedding_skipped", reason=exc.code, typing=True)
                    continue
                finally:
                    self._preparing[1].set()
                    self._preparing = None
                self._keep(query, done.vectors[0])
        finally:
            self._wanted = None

    async def load_memory(self, turn: int, save: Scope, read_memory: bool, query: str = "") -> None:
        """Read the turn's memory and the day's bill while the query is embedded beside them.

        The turn waits for the vector until :meth:`query_budget`, counted from the
        task's start, is spent.
        """
        cached = self._memory.cached_turn_memory(save) if read_memory else None
        embed = read_memory and self._embeds(cached.index if cached else None, query)
        vector: list[array[float] | None] = [None]
        memory = None
        spent: int | None = None
        budget_end = anyio.current_time() + self.query_budget()
        async with anyio.create_task_group() as group:
            if embed:
                group.start_soon(self._query_vector, save, query, vector)
            if read_memory:
                try:
                    memory = await self._memory.turn_memory(save)
                except StoreError as exc:
                    # The store failing must not cost the player the conversation.
                    self._log.warning("store.failed", code=exc.code, effect="LoadTurnMemory")
                if embed and memory is not None and memory.index is not None:
                    group.start_soon(self._catch_up, save, memory.index, budget_end)
            try:  # read on its own: a failed memory read must not skip the budget
                spent = await self._meter.spent_today()
            except StoreError as exc:  # an unreadable bill must not cost the player the turn
                self._log.warning("store.failed", code=exc.code, effect="ReadUsage")
        query_vector = vector[0]
        index = memory.index if memory is not None else None
        if memory is not None and index is not None and embed:
            missing = len(index) - len(index.vectors())
            if missing:
                self._log.info("memory.vectors_missing", count=missing)
                memory = msgspec.structs.replace(memory, unembedded=missing)
        if memory is not None and query_vector is not None and index and index.has_vectors():
            # Dot products per vector: off the event loop (a few ms for 300 x 384
            # without numpy), in one hop.
            scored = partial(self._scored, memory, index, query_vector)
            memory = await anyio.to_thread.run_sync(scored)
        await self._post(TurnMemoryReady(turn, memory, spent))

    def _scored(self, memory: SaveMemory, index: SaveIndex, query: array[float]) -> SaveMemory:
        """``memory`` with the query's cosines, its nearness to chatter and each memory's
        genericness: what the vectors' ranking and the small-talk judgement read."""
        vectors = index.vectors()
        return msgspec.structs.replace(
            memory,
            similar=tuple(similar(query, vectors)),
            chatter=self._chatter(query),
            generic=self._generic(vectors),
        )

    def _chatter(self, query: array[float]) -> float | None:
        """The query's best cosine with everyday chatter (None until it is embedded)."""
        found = similar(query, enumerate(self._memory.chatter))
        return found[0][1] if found else None

    def _generic(
        self, vectors: list[tuple[int, array[float]]]
    ) -> tuple[tuple[int, float], ...] | None:
        """Each memory's cosine with everyday chatter's centroid (None until it is
        embedded): how generic it reads (memory/vectors.py centered)."""
        chatter = self._memory.chatter
        if not chatter:
            return None
        if self._centroid[0] is not chatter:
            self._centroid = (chatter, centroid(chatter))
        return tuple(similar(self._centroid[1], vectors))

    def _embeds(self, index: SaveIndex | None, query: str) -> bool:
        """Whether the turn's query is embedded: a query, an embedder, and memories (an
        index not loaded yet may have them; those without a vector get one first)."""
        return (
            bool(query.strip())
            and self._model.embedder is not None
            and self._memory.vector_model is not None
            and (index is None or len(index) > 0)
        )

    async def _catch_up(self, save: Scope, index: SaveIndex, budget_end: float) -> None:
        """Vectors for up to :data:`CATCH_UP` memories of ``save`` that lack one, the most
        important first, until the turn's latency budget ends (after its query: the
        in-process model takes a waiting query first); what is left the backlog does."""
        embedder = self._model.embedder
        if embedder is None:
            return
        waiting = index.without_vector()[:CATCH_UP]
        if not self._memory.chatter and embedder.kind == "in_process":
            # What tells small talk (memory/smalltalk.py), if the backlog has not yet.
            with anyio.move_on_after(max(budget_end - anyio.current_time(), 0.0)):
                try:
                    await embed_chatter(self._memory, embedder)
                except errors.ModelError as exc:
                    self._log.info("memory.embedding_skipped", reason=exc.code)
                    return
        if not waiting:
            return
        step = LOCAL_BATCH if embedder.kind == "in_process" else CATCH_UP
        with anyio.move_on_after(max(budget_end - anyio.current_time(), 0.0)):
            for at in range(0, len(waiting), step):
                events = waiting[at : at + step]
                texts = [embedding_text(event) for event in events]
                try:
                    done = await embedder.embed(texts)
                except errors.ModelError as exc:
                    self._log.info("memory.embedding_skipped", reason=exc.code)
                    return
                with anyio.CancelScope(shield=True):  # formed: kept, whatever the deadline
                    if done.usage is not None:
                        await self._bill(save, done.usage)
                    found = list(zip((ev.id for ev in events), texts, done.vectors, strict=True))
                    vectors = {event_id: vector for event_id, _, vector in found}
                    for event_id in await self._memory.set_vectors(save, found):
                        index.set_vector(event_id, vectors[event_id])

    def query_budget(self) -> float:
        """Seconds a turn waits for its query's vector: as configured, else by the
        embedder's kind (:data:`~xtyserver.model.embedding.QUERY_BUDGET_MS`)."""
        if self._embedding_timeout is not None:
            return self._embedding_timeout
        embedder = self._model.embedder
        kind = embedder.kind if embedder is not None else "cloud"
        return QUERY_BUDGET_MS[kind] / 1000.0

    async def _query_vector(self, save: Scope, query: str, out: list[array[float] | None]) -> None:
        """This turn's query vector into ``out[0]``; nothing past the budget or on failure."""
        embedder = self._model.embedder
        if embedder is None:  # checked by _embeds; narrows the type
            return
        started = anyio.current_time()
        with anyio.move_on_after(self.query_budget()) as deadline:
            if self._preparing is not None and self._preparing[0] == query:
                await self._preparing[1].wait()  # typed: its embedding is under way
            known = self._recent.get(query)
            if known is not None:
                self._recent.move_to_end(query)
                out[0] = known
                return
            try:
                done = await embedder.embed([asked(query)], query=True)
            except errors.ModelError as exc:
                self._log.info("memory.embedding_skipped", reason=exc.code)
                return
        waited = round((anyio.current_time() - started) * 1000)
        if deadline.cancelled_caught:
            self._log.info("memory.embedding_skipped", reason="timeout", waited_ms=waited)
            return
        self._log.debug("memory.query_embedded", waited_ms=waited, kind=embedder.kind)
        if done.usage is not None:
            with anyio.CancelScope(shield=True):
                await self._bill(save, done.usage)
        out[0] = self._keep(query, done.vectors[0])

    def _keep(self, query: str, vector: array[float]) -> array[float]:
        """``vector`` among the connection's :data:`RECENT_QUERIES`, the oldest let go."""
        self._recent[query] = vector
        self._recent.move_to_end(query)
        while len(self._recent) > RECENT_QUERIES:
            self._recent.popitem(last=False)
        return vector

    async def run_tool(self, turn: int, call_id: str, op: ToolOp) -> None:
        """Run one memory tool operation; every outcome is an answer (v1.md "Memory tools")."""
        try:
            answer = await run_tool(self._memory, op)
        except errors.XtyError as exc:
            self._log.info("tool.failed", code=exc.code, op=type(op).__name__)
            answer = ToolFailure(exc.code, exc.message)
        except Exception:  # a bug of ours must not leave the turn hanging
            self._log.exception("tool.crashed", op=type(op).__name__)
            answer = ToolFailure("store_error", "内部错误")
        self._log.info("tool.ran", op=type(op).__name__)
        await self._post(ToolAnswered(turn, call_id, answer))

    async def prepare_image(self, turn: int, mime: str, data: str) -> None:
        try:
            executor = self._bands.executor if self._bands is not None else None
            prepare = partial(check_and_prepare, bands=executor)
            prepared = await anyio.to_thread.run_sync(prepare, mime, data, self._images)
        except errors.PeerError as exc:
            self._log.info("image.refused", code=exc.code)
            await self._post(ImageRefused(turn, exc))
        else:
            await self._post(ImageReady(turn, prepared))

    async def model_call(
        self,
        cancel_scope: anyio.CancelScope,
        turn: int,
        messages: list[dict[str, object]],
        image_sent: bool,
        tools: list[dict[str, object]] | None,
        save: Scope | None,
    ) -> None:
        """Stream one model call into ModelDelta... then ModelDone or ModelFailed; bill it."""
        started = anyio.current_time()
        first: float | None = None
        outcome = "done"
        done: Done | None = None
        with cancel_scope:
            try:
                chat = self._model.stream_chat(messages, image=image_sent, tools=tools)
                async with contextlib.aclosing(chat) as stream:
                    async for event in stream:
                        match event:
                            case Delta(text=text):
                                opening = first is None
                                if opening:
                                    first = anyio.current_time()
                                await self._post(ModelDelta(turn, text))
                                if opening:
                                    # The first piece goes on the wire before reading on.
                                    await anyio.lowlevel.checkpoint()
                            case Done():
                                done = event
                                if save is not None:  # billed before the turn ends
                                    with anyio.CancelScope(shield=True):
                                        await self._bill(save, event.usage)
                                # The session's event has the client's fields and the turn.
                                await self._post(ModelDone(turn, **msgspec.structs.asdict(event)))
            except errors.ModelError as exc:
                outcome = exc.code
                await self._post(ModelFailed(turn, exc.code))
            except Exception:  # a bug of ours or the client's: never a hung turn
                outcome = "model_error"
                self._log.exception("model.unexpected")
                await self._post(ModelFailed(turn, "model_error"))
        if cancel_scope.cancelled_caught:
            outcome = "cancelled"
        usage = done.usage if done is not None else None
        self._log.info(
            "model.call",
            outcome=outcome,
            first_token_ms=None if first is None else round((first - started) * 1000),
            total_ms=round((anyio.current_time() - started) * 1000),
            image=image_sent,
            model=self._model.chat_model(image=image_sent),
            prompt_tokens=usage.prompt_tokens if usage else None,
            completion_tokens=usage.completion_tokens if usage else None,
        )

    async def _bill(self, save: Scope, usage: Usage | None) -> None:
        try:
            await self._meter.record(save, "chat", usage)
        except StoreError as exc:  # the day's total could not be read
            self._log.warning("store.failed", code=exc.code, effect="ReadUsage")
