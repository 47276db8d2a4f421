"""The model router (shell): one :class:`ModelClient` per distinct routed model.

Chat turns go to the chat model, image turns to the vision model when one is
named, background work to the quick model (:mod:`xtyserver.model.routing`).
With only ``[model]`` configured all three are the same client. A
``[models.embedding]`` route adds an :class:`EmbeddingClient` (``embedder``).

Every call goes through the process's one :class:`~xtyserver.model.scheduler.Scheduler`
(chat first; background calls yield). Two things are learnt per route for the
rest of the process (issue 18):

* a provider that refuses an image part (HTTP 400 naming the image) has no
  vision: the turn is asked again once without the image (``Done.image_dropped``),
  and later turns of that route go without it;
* a provider that refuses JSON mode (``response_format``) is asked again
  without it, and no longer asked for it.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

import msgspec
import structlog

from xtyserver.errors import ModelError
from xtyserver.model.client import Delta, Done, ImageRefusedError, ModelClient, ModelEvent
from xtyserver.model.client import strip_images as _strip
from xtyserver.model.embedding import EmbeddingClient
from xtyserver.model.routing import Routing
from xtyserver.model.scheduler import Lane, Scheduler
from xtyserver.model.settings import ModelSettings

_log = structlog.get_logger("xtyserver.model.router")


class ModelRouter:
    """Routes each call to its model's client, through one scheduler.

    Args:
        routing: The resolved settings of each role.
        scheduler: The process's scheduler (a new one when None).
    """

    def __init__(self, routing: Routing, scheduler: Scheduler | None = None) -> None:
        self.routing = routing
        self.scheduler = scheduler or Scheduler()
        self._clients = self._build(routing)
        self._retired: list[ModelClient] = []
        self._blind: set[int] = set()  # routes whose provider refused an image
        self._no_json: set[int] = set()  # routes whose provider refused JSON mode
        # Memory vectors: only with a configured [models.embedding] route. Built once:
        # the stored vectors belong to its model, so a new route takes a restart.
        embedding = routing.embedding
        self.embedder: EmbeddingClient | None = (
            EmbeddingClient(embedding) if embedding is not None and embedding.configured else None
        )

    @staticmethod
    def _build(routing: Routing) -> dict[int, tuple[ModelSettings, ModelClient]]:
        clients: dict[int, tuple[ModelSettings, ModelClient]] = {}
        for settings in (routing.chat, routing.vision, routing.quick):
            if id(settings) not in clients:
                clients[id(settings)] = (settings, ModelClient(settings))
        return clients

    def reroute(self, routing: Routing) -> None:
        """Send the calls from now on by ``routing`` (settings changed while running).

        Calls under way finish on the clients they started on; those are
        closed with the router. What was learnt about the old routes is forgotten.
        """
        old = self._clients
        self._clients = self._build(routing)
        self.routing = routing
        self._blind.clear()
        self._no_json.clear()
        self._retired += [client for _, client in old.values()]

    def _client(self, settings: ModelSettings) -> ModelClient:
        return self._clients[id(settings)][1]

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
        return settings.vision and id(settings) not in self._blind

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
        client = self._client(settings)
        stripped, had_image = _strip(messages)
        async with self.scheduler.chat(self._lane(settings)):
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
                self._blind.add(id(settings))
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
        client = self._client(settings)
        json_mode = settings.json_mode and id(settings) not in self._no_json

        async def call() -> Done:
            try:
                return await client.complete_done(messages, json_mode=json_mode)
            except ModelError as exc:
                if not (json_mode and exc.code == "model_bad_request"):
                    raise
            self._no_json.add(id(settings))
            _log.warning("model.json_mode_off", model=settings.model, reason="refused")
            return await client.complete_done(messages, json_mode=False)

        return await self.scheduler.background(self._lane(settings), call)

    async def aclose(self) -> None:
        for client in [*self._retired, *(c for _, c in self._clients.values())]:
            await client.aclose()
        if self.embedder is not None:
            await self.embedder.aclose()


__all__ = ["Delta", "Done", "ModelRouter"]
