"""Which model does which call (pure); the roles are :class:`ModelRoutes`' fields.

With ``[model]`` alone everything uses that model. Unset fields of a route fall
back to ``[model]``, except the key: a route names the environment variable
holding its own (config files hold no secrets), and ``[model]``'s goes only to a
route at the same provider (:func:`origin`: scheme, host and port of the base URL).
"""

from __future__ import annotations

import ipaddress
import re
import urllib.parse
from collections.abc import Mapping
from typing import Annotated, Literal

import msgspec

from xtyserver.model.settings import ModelSettings

_Window = Annotated[int, msgspec.Meta(ge=2048)]
_EnvName = Annotated[str, msgspec.Meta(pattern=r"^([A-Za-z_][A-Za-z0-9_]{0,127})?$")]


class ModelRoute(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One named model: where it is, which variable holds its key, what it can take.

    Attributes:
        model: The model name at the provider.
        base_url: OpenAI-compatible base URL; "": ``model.base_url``.
        api_key_env: The NAME of the environment variable holding the key, never
            the key; "": the ``[model]`` key (``XTY_MODEL_API_KEY``), only at
            ``[model]``'s provider.
        context_window: Tokens the model accepts; unset: ``model.context_window``.
        vision: Whether it takes image parts.
        preset: The provider preset it is filled from (docs/configuration.md "Providers").
        max_tokens: A chat answer's token limit; unset: ``model.max_tokens``.
        background_max_tokens: A background answer's limit; unset: the ``[model]`` one.
        token_field: ``max_tokens``, ``max_completion_tokens`` or ``both``; unset: ``[model]``'s.
        json_mode: Ask for JSON mode on background calls; unset: ``[model]``'s at
            its provider, else false.
        max_concurrency: Calls its provider takes at once; unset: ``[model]``'s at
            its provider, else 1 for a loopback base URL and 4 otherwise.
    """

    model: str
    base_url: str = ""
    api_key_env: _EnvName = ""
    context_window: _Window | None = None
    vision: bool = False
    preset: str = ""
    max_tokens: Annotated[int, msgspec.Meta(ge=16, le=32_768)] | None = None
    background_max_tokens: Annotated[int, msgspec.Meta(ge=16, le=32_768)] | None = None
    token_field: Literal["max_tokens", "max_completion_tokens", "both"] | None = None
    json_mode: bool | None = None
    max_concurrency: Annotated[int, msgspec.Meta(ge=1, le=64)] | None = None


class ModelRoutes(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """The ``[models]`` table: optional chat, vision, quick and embedding models.

    Attributes:
        chat: The model of text turns; unset: ``[model]``'s.
        vision: The model of screenshot turns, when it takes images; unset: the
            chat model.
        quick: The model of background work (extraction, summaries, folds);
            unset: ``model.extraction_model``, else the chat model.
        embedding: Memory vectors from any OpenAI-compatible ``/v1/embeddings``
            (docs/memory.md "Memory vectors"); unset: the in-process model, else the
            provider's, else words alone.
    """

    chat: ModelRoute | None = None
    vision: ModelRoute | None = None
    quick: ModelRoute | None = None
    embedding: ModelRoute | None = None


class Routing(msgspec.Struct, frozen=True):
    """The resolved settings of each role (the same object where roles share a model)."""

    chat: ModelSettings
    vision: ModelSettings
    quick: ModelSettings
    embedding: ModelSettings | None = None


_DEFAULT_PORTS = {"http": 80, "https": 443}


def origin(url: str) -> str:
    """The provider a base URL names: ``scheme://host:port``, lower-case; "" when unreadable.

    A key belongs to one origin: the path, the query and any user part do not count.
    """
    try:
        parts = urllib.parse.urlsplit(url.strip())
        scheme, host, port = parts.scheme.lower(), (parts.hostname or "").lower(), parts.port
    except ValueError:
        return ""
    if scheme not in _DEFAULT_PORTS or not host:
        return ""
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port or _DEFAULT_PORTS[scheme]}"


_HOST = re.compile(r"[A-Za-z0-9._-]+|[0-9A-Fa-f:.]+")
_ENDPOINTS = ("/chat/completions", "/completions", "/embeddings", "/models")


def typed_base_url(text: str) -> str:
    """A base URL as a player types or pastes it, made whole; "" when it names no provider.

    ``api.deepseek.com/v1`` gets ``https://`` (``http://`` for this PC or a home
    network's address, where local servers run); a pasted endpoint
    (``…/v1/chat/completions``) loses the endpoint; a trailing ``/`` and any
    fragment go. Anything that is still no ``http(s)://host`` is "" (refused by
    the caller, never stored as typed to fail at the first turn).
    """
    url = text.strip()
    if not url or any(c.isspace() for c in url):
        return ""
    if "://" not in url:
        host = url.split("/", 1)[0].rsplit("@", 1)[-1]
        name = host[1 : host.find("]")] if host.startswith("[") else host.rsplit(":", 1)[0]
        if not (local_host(name) or "." in name):
            return ""  # a pasted key or a word, not a host
        url = f"{'http' if local_host(name) else 'https'}://{url}"
    try:
        parts = urllib.parse.urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return ""
    if not _HOST.fullmatch(host):
        return ""
    path = parts.path.rstrip("/")
    for tail in _ENDPOINTS:
        if path.lower().endswith(tail):
            path = path[: -len(tail)].rstrip("/")
            break
    whole = urllib.parse.urlunsplit((parts.scheme.lower(), parts.netloc, path, parts.query, ""))
    return whole if origin(whole) else ""


def local_host(name: str) -> bool:
    """This PC or a private network: where plain ``http://`` servers (Ollama...) live."""
    lowered = name.lower()
    if lowered == "localhost" or lowered.endswith((".local", ".lan", ".localhost")):
        return True
    try:
        address = ipaddress.ip_address(lowered)
    except ValueError:
        return False
    return address.is_loopback or address.is_private or address.is_link_local


def _settle(base: ModelSettings, route: ModelRoute, env: Mapping[str, str]) -> ModelSettings:
    base_url = route.base_url or base.base_url
    if route.api_key_env:
        key = env.get(route.api_key_env, "")
    else:  # [model]'s key, only for [model]'s provider
        key = base.api_key if origin(base_url) == origin(base.base_url) else ""
    same_provider = base_url == base.base_url
    return msgspec.structs.replace(
        base,
        base_url=base_url,
        api_key=key,
        model=route.model,
        vision=route.vision,
        context_window=route.context_window or base.context_window,
        extraction_model=None,
        preset=route.preset or base.preset,
        max_tokens=route.max_tokens or base.max_tokens,
        background_max_tokens=route.background_max_tokens or base.background_max_tokens,
        token_field=route.token_field or base.token_field,
        # Another provider's JSON mode and capacity are not known from [model]'s.
        json_mode=route.json_mode
        if route.json_mode is not None
        else (base.json_mode if same_provider else False),
        max_concurrency=route.max_concurrency or (base.max_concurrency if same_provider else None),
    )


def resolve(base: ModelSettings, routes: ModelRoutes, env: Mapping[str, str]) -> Routing:
    """Each role's settings, keys read from ``env`` by the names the routes give."""
    chat = _settle(base, routes.chat, env) if routes.chat else base
    vision = _settle(base, routes.vision, env) if routes.vision is not None else chat
    if routes.quick is not None:
        quick = _settle(base, routes.quick, env)
    elif chat.extraction_model:
        quick = msgspec.structs.replace(chat, model=chat.extraction_model, extraction_model=None)
    else:
        quick = chat
    embedding = _settle(base, routes.embedding, env) if routes.embedding is not None else None
    return Routing(chat=chat, vision=vision, quick=quick, embedding=embedding)
