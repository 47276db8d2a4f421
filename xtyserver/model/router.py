"""The model router (shell): one :class:`ModelClient` per distinct routed model.

Chat turns go to the chat model, image turns to the vision model when one is
named, background work to the quick model (:mod:`xtyserver.model.routing`).
With only ``[model]`` configured all three are the same client. A
``[models.embedding]`` route adds an :class:`EmbeddingClient` (``embedder``).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping, Sequence
from typing import Any

from xtyserver.model.client import Done, ModelClient, ModelEvent
from xtyserver.model.embedding import EmbeddingClient
from xtyserver.model.routing import Routing, for_turn
from xtyserver.model.settings import ModelSettings


class ModelRouter:
    """Routes each call to its model's client.

    Args:
        routing: The resolved settings of each role.
    """

    def __init__(self, routing: Routing) -> None:
        self.routing = routing
        self._clients = self._build(routing)
        self._retired: list[ModelClient] = []
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
        closed with the router.
        """
        old = self._clients
        self._clients = self._build(routing)
        self.routing = routing
        self._retired += [client for _, client in old.values()]

    def _client(self, settings: ModelSettings) -> ModelClient:
        return self._clients[id(settings)][1]

    @property
    def configured(self) -> bool:
        """Whether the chat model is configured."""
        return self._client(self.routing.chat).configured

    @property
    def quick_configured(self) -> bool:
        """Whether the model for background work is configured."""
        return self._client(self.routing.quick).configured

    def chat_model(self, *, image: bool) -> str:
        """The name of the model a chat turn goes to."""
        return for_turn(self.routing, image=image).model

    def stream_chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        image: bool = False,
        tools: Sequence[Mapping[str, Any]] | None = None,
    ) -> AsyncGenerator[ModelEvent, None]:
        """Stream one chat turn from the chat model, or the vision model for ``image``."""
        return self._client(for_turn(self.routing, image=image)).stream_chat(messages, tools=tools)

    async def complete(self, messages: Sequence[Mapping[str, Any]]) -> Done:
        """Run one background call on the quick model; its ``Done`` (text and usage)."""
        return await self._client(self.routing.quick).complete_done(messages)

    async def aclose(self) -> None:
        for client in [*self._retired, *(c for _, c in self._clients.values())]:
            await client.aclose()
        if self.embedder is not None:
            await self.embedder.aclose()
