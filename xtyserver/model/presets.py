"""Provider presets: base URL, model names and known capabilities in one line (pure data).

``preset = "ollama"`` in ``[model]`` (or a ``[models.*]`` route, or
``XTY_MODEL_PRESET``) fills every key it knows that the configuration does not
set itself; what the file, the environment or a flag sets wins. The
capabilities are what each provider documents for the named model; ``xtyserver
doctor`` checks them against the real thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

PRESETS: Mapping[str, Mapping[str, Any]] = {
    # DeepSeek's chat model is text-only; it supports JSON mode.
    "deepseek": {
        "base_url": "https://api.deepseek.com/v1",
        "model": "deepseek-chat",
        "vision": False,
        "json_mode": True,
    },
    # Alibaba Cloud Model Studio (DashScope), OpenAI-compatible mode.
    "qwen": {
        "base_url": "https://dashscope.aliyuncs.com/compatible-mode/v1",
        "model": "qwen-vl-plus",
        "extraction_model": "qwen-plus",
        "vision": True,
        "json_mode": True,
    },
    # Volcano Engine Ark (Doubao); the model may also be an endpoint id (ep-...).
    "doubao": {
        "base_url": "https://ark.cn-beijing.volces.com/api/v3",
        "model": "doubao-1-5-vision-pro-32k-250115",
        "vision": True,
        "json_mode": False,
    },
    "ollama": {
        "base_url": "http://127.0.0.1:11434/v1",
        "model": "qwen2.5vl",
        "vision": True,
        "json_mode": True,
    },
    "lmstudio": {
        "base_url": "http://127.0.0.1:1234/v1",
        "model": "qwen2.5-vl-7b-instruct",
        "vision": True,
        "json_mode": False,
    },
    # llama.cpp's llama-server (or llama-cpp-python's server); text-only without an mmproj.
    "llamacpp": {
        "base_url": "http://127.0.0.1:8080/v1",
        "model": "local",
        "vision": False,
        "json_mode": True,
    },
    "openai": {
        "base_url": "https://api.openai.com/v1",
        "model": "gpt-4o-mini",
        "vision": True,
        "json_mode": True,
        "token_field": "max_completion_tokens",
    },
}

KEY_PAGES: Mapping[str, str] = {
    # Where a player creates the provider's API key (the page links it under the provider).
    "deepseek": "https://platform.deepseek.com/api_keys",
    "qwen": "https://bailian.console.aliyun.com/?apiKey=1",
    "doubao": "https://console.volcengine.com/ark/region:ark+cn-beijing/apiKey",
    "openai": "https://platform.openai.com/api-keys",
}
"""A cloud preset's key page; the local servers (Ollama, LM Studio, llama.cpp) need no key."""

EMBEDDING_MODELS: Mapping[str, str] = {
    # Each provider's own embedding model, on the same base URL and key as its chat.
    "qwen": "text-embedding-v3",
    "doubao": "doubao-embedding-text-240715",
    "openai": "text-embedding-3-small",
    "ollama": "bge-m3",  # `ollama pull bge-m3` first
}
"""The embedding model a preset's provider offers: memory vectors where no in-process
model installs (Windows), with nothing else to configure."""


def embedding_model(preset: str, base_url: str) -> str:
    """The embedding model of the provider at ``base_url`` ("" when its preset names none).

    ``preset`` is the chat route's; without one (the settings page fills the base URL
    from a preset and stores no preset name) the preset whose base URL it is.
    """
    if not preset:
        wanted = base_url.strip().rstrip("/").lower()
        preset = next(
            (n for n, p in PRESETS.items() if str(p.get("base_url", "")).lower() == wanted), ""
        )
    return EMBEDDING_MODELS.get(preset, "")


ALIASES: Mapping[str, str] = {
    "dashscope": "qwen",
    "ark": "doubao",
    "volcengine": "doubao",
    "lm-studio": "lmstudio",
    "lm_studio": "lmstudio",
    "llama.cpp": "llamacpp",
    "llama-cpp": "llamacpp",
    "llama_cpp": "llamacpp",
}

ROUTE_KEYS = frozenset({"base_url", "model", "vision", "json_mode", "token_field"})
"""What a preset fills in a ``[models.*]`` route (the rest belongs to ``[model]``)."""


def preset_name(name: str) -> str | None:
    """The canonical preset name for ``name`` (case-insensitive, aliases known), or None."""
    key = name.strip().lower()
    key = ALIASES.get(key, key)
    return key if key in PRESETS else None


def fill(table: dict[str, Any], *, route: bool = False) -> str | None:
    """Fill a parsed ``[model]`` (or, ``route``, ``[models.*]``) table from its ``preset``.

    Changes ``table`` in place (a route only its :data:`ROUTE_KEYS`); returns an
    error text or None.
    """
    given = table.get("preset")
    if given is None or given == "":
        return None
    if not isinstance(given, str) or (name := preset_name(given)) is None:
        known = ", ".join(sorted(PRESETS))
        return f"unknown model preset {given!r}; known presets: {known}"
    table["preset"] = name
    for key, value in PRESETS[name].items():
        if route and key not in ROUTE_KEYS:
            continue
        table.setdefault(key, value)
    return None
