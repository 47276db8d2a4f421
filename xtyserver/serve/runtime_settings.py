"""The Structs the server runs by, each derived from the one :class:`~xtyserver.config.Settings`.

Nothing else builds one from the configuration, so each default lives only in
its Settings field (docs/configuration.md "Configuration"); no part reads the configuration.
"""

from __future__ import annotations

import msgspec

from xtyserver import __version__
from xtyserver.config import Settings
from xtyserver.memory.retrieval import MemoryBudget
from xtyserver.memory.tokens import ContextBudget, DailyBudget, budget_for
from xtyserver.protocol.frames import ServerInfo
from xtyserver.protocol.limits import Limits
from xtyserver.serve.connection import RuntimeLimits
from xtyserver.serve.gate import GateLimits
from xtyserver.serve.wire.limits import WireLimits
from xtyserver.session.settings import SessionSettings
from xtyserver.session.voice import VoiceRules
from xtyserver.session.working import WorkingSettings
from xtyserver.voice.service import VoiceOptions


def _rate(value: float) -> int | float:
    """A rate as sent: a whole number when it is one, else the fraction (never cut)."""
    return int(value) if float(value).is_integer() else float(value)


def protocol_limits(settings: Settings) -> Limits:
    """The one limits Struct: what ``server.hello`` reports and the session enforces."""
    srv = settings.server
    return Limits(
        context_stale_after_ms=round(srv.stale_after * 1000),
        context_drop_after_ms=round(srv.drop_after * 1000),
        image_max_bytes=settings.images.max_decoded_bytes,
        image_max_side_px=settings.images.max_side,
        chat_per_minute=_rate(srv.chats_per_minute),
        chat_burst=srv.chat_burst,
        frames_per_second=_rate(srv.frames_per_second),
        frame_burst=srv.frame_burst,
        heartbeat_misses=srv.heartbeat_misses,
        voice_utterance_max_seconds=_rate(settings.voice.max_seconds),
    )


def daily_budget(settings: Settings) -> DailyBudget:
    """The one daily budget the sessions and the background jobs decide by."""
    model = settings.model
    return DailyBudget(model.daily_token_budget, model.budget_low_share)


def context_fit(settings: Settings) -> ContextBudget:
    """What the chat model's context window leaves for the window, the summary and the memory."""
    chat_route = settings.models.chat
    window = chat_route.context_window if chat_route is not None else None
    return budget_for(window or settings.model.context_window)


def working_settings(settings: Settings) -> WorkingSettings:
    """Working memory's sizes; a small context window shrinks the window and the summary."""
    srv, fit = settings.server, context_fit(settings)
    return WorkingSettings(
        window=min(srv.history_turns, fit.window_rounds),
        fold_every=srv.summary_every,
        fold_tokens=srv.summary_tokens,
        summary_chars=min(srv.summary_chars, fit.summary_tokens * 4 // 3),
        resume_within=srv.resume_within,
    )


def memory_budget(settings: Settings) -> MemoryBudget:
    """One turn's memory budget; a small context window shrinks its characters."""
    budget, fit = settings.memory.budget, context_fit(settings)
    if budget.total_chars > fit.memory_chars:
        return msgspec.structs.replace(budget, total_chars=fit.memory_chars)
    return budget


def session_settings(
    settings: Settings,
    *,
    model_configured: bool,
    local_timezone: str = "UTC",
    vision: bool | None = None,
) -> SessionSettings:
    """What every session of this server is told (its own frozen Struct).

    Args:
        local_timezone: This machine's zone, for ``server.default_timezone = ""``.
        vision: Whether any routed model takes images; None: ``model.vision``.
    """
    srv, memory = settings.server, settings.memory
    return SessionSettings(
        hello_timeout=srv.hello_timeout,
        preauth_hello_timeout=srv.preauth_hello_timeout,
        heartbeat_ms=srv.heartbeat_ms,
        flood_refusals=srv.flood_refusals,
        working=working_settings(settings),
        default_timezone=srv.default_timezone or local_timezone,
        model_configured=model_configured,
        vision=settings.model.vision if vision is None else vision,
        memory=memory.enabled,
        extraction=memory.enabled and memory.extraction,
        daily_budget=daily_budget(settings),
        budget=memory_budget(settings),
        limits=protocol_limits(settings),
        server=ServerInfo(name="xtyserver", version=__version__),
        texts=settings.texts,
        voice=voice_rules(settings),
        speakup=settings.speakup,
    )


def voice_rules(settings: Settings) -> VoiceRules:
    """What the sessions decide voice by."""
    voice = settings.voice
    return VoiceRules(enabled=voice.enabled, max_seconds=voice.max_seconds, speak=voice.speak)


def voice_options(settings: Settings) -> VoiceOptions:
    """What the voice shell runs by."""
    v = settings.voice
    return VoiceOptions(
        data_dir=settings.data_path,
        input_device=v.input_device,
        output_device=v.output_device,
        language=v.language,
        model_dir=v.model_dir,
        threads=v.threads,
        beam_size=v.beam_size,
        partial_every=v.partial_every,
        idle_release=v.idle_release,
        max_seconds=v.max_seconds,
        tts_engine=v.tts_engine,
        tts_voice=v.tts_voice,
        speed=v.speed,
        muted=not v.speak,
    )


def gate_limits(settings: Settings) -> GateLimits:
    """Who may hold a connection open: the seats, the pre-auth pool, the wrong tokens' delay."""
    srv = settings.server
    return GateLimits(
        max_connections=srv.max_connections,
        preauth_pool=srv.preauth_pool,
        fail_delay_max=srv.fail_delay_max,
    )


def runtime_limits(settings: Settings) -> RuntimeLimits:
    """One connection's queue and deadlines."""
    timeout_ms = settings.memory.embedding_timeout_ms
    return RuntimeLimits(
        send_timeout=settings.server.send_timeout,
        write_queue=settings.server.write_queue_frames,
        embedding_timeout=None if timeout_ms is None else timeout_ms / 1000.0,
    )


def wire_limits(settings: Settings) -> WireLimits:
    """The adapter port's transport limits (``[server]``)."""
    srv = settings.server
    return WireLimits(
        open_timeout=srv.open_timeout,
        close_timeout=srv.close_timeout,
        stop_timeout=srv.stop_timeout,
    )
