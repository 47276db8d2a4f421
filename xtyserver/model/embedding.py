"""Memory vectors from any OpenAI-compatible ``/v1/embeddings`` (shell).

The project's provider client, which never retries: a background batch
that fails is asked again the next time its save opens, and a turn's query
never waits longer than its latency budget (the caller's deadline). Vectors
come back as ``array('f')`` (float32), normalised to unit length, so a
dot product is the cosine (:mod:`xtyserver.memory.vectors`).
"""

from __future__ import annotations

from array import array
from collections.abc import Sequence
from typing import Literal, Protocol

import msgspec

from xtyserver.errors import ModelError
from xtyserver.memory.vectors import normalized
from xtyserver.model.bounds import is_loopback
from xtyserver.model.client import model_error
from xtyserver.model.provider_errors import ProviderAnswerError, ProviderError
from xtyserver.model.settings import ModelSettings
from xtyserver.protocol.frames import Usage

BATCH = 32
"""Texts one background request embeds at most."""


class Embedded:
    """The vectors of one request, in input order, and the tokens it cost."""

    __slots__ = ("usage", "vectors")

    def __init__(self, vectors: list[array[float]], usage: Usage | None) -> None:
        self.vectors = vectors
        self.usage = usage


EmbedderKind = Literal["in_process", "local", "cloud"]
"""Where an embedder runs: in this process, a server on this machine, a provider."""


QUERY_BUDGET_MS: dict[EmbedderKind, int] = {"in_process": 800, "local": 500, "cloud": 800}
"""How long a turn waits for its query's vector by default, counted from its ``chat.send``
(``memory.embedding_timeout_ms`` overrides): in this process the wait is CPU time, a
few ms on a quiet machine and a few hundred on a loaded one; a server on this machine
is one local hop; a provider is a round trip across the internet (100-400 ms)."""


class Embedder(Protocol):
    """What the turns and the background jobs embed with (a route, or the in-process model)."""

    @property
    def kind(self) -> EmbedderKind: ...

    @property
    def model(self) -> str: ...

    async def embed(self, texts: Sequence[str], *, query: bool = False) -> Embedded: ...

    async def aclose(self) -> None: ...


class EmbeddingClient:
    """Embeds texts with the ``[models.embedding]`` route (``timeout``: a backstop only)."""

    def __init__(self, settings: ModelSettings, *, timeout: float = 30.0) -> None:
        self.settings = settings
        self.model = settings.model
        # What latency budget a turn's query gets (memory.embedding_budget_ms): a server on
        # this machine answers sooner than a provider across the internet.
        self.kind: EmbedderKind = "local" if is_loopback(settings.base_url) else "cloud"
        from xtyserver.model.tls import provider_client  # httpx2: only with this route

        self._client = provider_client(settings.base_url, settings.api_key, timeout=timeout)

    async def embed(self, texts: Sequence[str], *, query: bool = False) -> Embedded:
        """One ``POST /embeddings`` for ``texts`` (at most :data:`BATCH`).

        ``query`` (a turn's search text) changes nothing here: the providers'
        embedding APIs take queries and passages alike.
        """
        body = {"model": self.model, "input": list(texts), "encoding_format": "float"}
        try:
            answer = _answer(await self._client.post_json("/embeddings", body))
        except ProviderError as err:
            raise model_error(err) from None
        data = sorted(answer.data, key=lambda d: d.index)
        if len(data) != len(texts):
            raise ModelError(
                f"the embedding model answered {len(data)} vectors for {len(texts)} texts"
            )
        vectors = [normalized(d.embedding) for d in data]
        if len({len(v) for v in vectors}) > 1 or any(not v for v in vectors):
            raise ModelError("the embedding model answered vectors of different sizes")
        usage = None
        if answer.usage is not None:
            tokens = answer.usage.prompt_tokens
            usage = Usage(prompt_tokens=tokens, completion_tokens=0, total_tokens=tokens)
        return Embedded(vectors, usage)

    async def aclose(self) -> None:
        await self._client.close()


class _Vector(msgspec.Struct):
    embedding: list[float]
    index: int = 0


class _Usage(msgspec.Struct):
    prompt_tokens: int = 0


class _Answer(msgspec.Struct):
    data: list[_Vector]
    usage: _Usage | None = None


def _answer(value: object) -> _Answer:
    """The ``/embeddings`` answer's parts this client reads, checked."""
    try:
        return msgspec.convert(value, _Answer)
    except msgspec.ValidationError:
        raise ProviderAnswerError("the embeddings answer has the wrong shape") from None
