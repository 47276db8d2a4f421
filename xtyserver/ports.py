"""The adapter port, the memory page and what they share: the :class:`Server` facade.

:func:`xtyserver.server.serving` builds the services; :class:`Server` builds the
two ports over them, takes changed settings while running and says where it listens.
"""

from __future__ import annotations

import os
import secrets
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path

import anyio
import anyio.abc
import msgspec
from anyio.streams.stapled import MultiListener

from xtyserver import log
from xtyserver.clock import Clock
from xtyserver.config import Settings
from xtyserver.manage.access import open_link
from xtyserver.manage.actions import PageActions
from xtyserver.manage.http import UiHttp
from xtyserver.manage.pairing import PagePairing
from xtyserver.manage.settings import PageSettings
from xtyserver.manage.voice import PageVoice
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.model.router import ModelRouter
from xtyserver.model.routing import resolve
from xtyserver.replay.recorder import Recorder
from xtyserver.serve.action_modes import ActionModes
from xtyserver.serve.connection import Peer, Services
from xtyserver.serve.gate import Seats
from xtyserver.serve.image import BandHelper
from xtyserver.serve.jobs import MemoryJobs
from xtyserver.serve.localzone import detect_local_timezone, server_zone
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.meter import TokenMeter
from xtyserver.serve.on_demand import Gauge
from xtyserver.serve.paired_keys import PairedKeys
from xtyserver.serve.pairing import PairingDesk
from xtyserver.serve.player_settings import PlayerSettings
from xtyserver.serve.runtime_settings import (
    daily_budget,
    gate_limits,
    runtime_limits,
    session_settings,
    voice_options,
    voice_rules,
    wire_limits,
)
from xtyserver.serve.wire.adapter_port import AdapterPort, Gate
from xtyserver.serve.wire.sessions import Sessions
from xtyserver.serve.working import InjectionLog, ParkedWork, WorkingShell, injection_log_path
from xtyserver.token import TokenSource
from xtyserver.voice.service import VoiceService


class Server:
    """The xtyserver server: the adapter port, the memory page and what they share.

    Args:
        clock: The wall clock (injected so tests control time).
        recorder: Records every connection (``serve --record``), or None.
        token_file: The token's file: a rotated token takes effect at once.
        page_secret: What ``xtyserver ui`` proves to open the page (not the token);
            "": a random one nobody can read (a server in a test, opened by ``ui_link``).
    """

    def __init__(
        self,
        settings: Settings,
        *,
        memory: MemoryService,
        jobs: MemoryJobs,
        model: ModelRouter,
        meter: TokenMeter,
        token: str,
        clock: Clock,
        recorder: Recorder | None = None,
        voice: VoiceService | None = None,
        token_file: Path | None = None,
        player: PlayerSettings | None = None,
        env: Mapping[str, str] | None = None,
        page_secret: str = "",
    ) -> None:
        self.settings = settings
        self.memory = memory
        self.jobs = jobs
        self.model = model
        self.meter = meter
        self.voice = voice
        tokens = TokenSource(token, token_file)
        if recorder is not None:
            recorder.follow(tokens.current)  # a rotated token is blanked out too
        srv = settings.server
        # Paired mods' keys (v1.md "Pairing"), and the open connections of each.
        self.pairing = PairingDesk(PairedKeys(settings.data_path, clock), clock)
        # The player's per-game switch of game actions (the page's actions view).
        self.action_modes = ActionModes(settings.data_path)
        self._log = log.get("xtyserver.server")
        local = detect_local_timezone()
        configured_zone = settings.server.default_timezone
        if local is None and not configured_zone:
            self._log.warning("timezone.unknown", hint="set server.default_timezone")
        default_zone = server_zone(configured_zone) if configured_zone else ""
        settings = msgspec.structs.replace(
            settings,
            server=msgspec.structs.replace(settings.server, default_timezone=default_zone),
        )
        injections = InjectionLog(injection_log_path(settings.data_path, settings.profile))
        self.working = WorkingShell(
            ParkedWork(settings.server.resume_within), jobs, injections, settings.model.model
        )
        self.bands = BandHelper()  # its thread is a task of serve()
        self.sessions = Sessions(
            gate_limits(settings),
            session_settings(
                settings,
                model_configured=model.configured,
                local_timezone=local or "UTC",
                vision=model.routing.chat.vision or model.routing.vision.vision,
            ),
            Services(
                memory=memory,
                jobs=jobs,
                model=model,
                meter=meter,
                images=settings.images,
                clock=clock,
                runtime=runtime_limits(settings),
                working=self.working,
                bands=self.bands,
                recorder=recorder,
                voice=voice,
            ),
            tokens=tokens,
            pairing=self.pairing,
            action_mode=self.action_modes.mode,
        )
        self.adapters = AdapterPort(
            Gate(srv.host, srv.allowed_origins),
            wire_limits(settings),
            self.sessions,
            hello_wait=settings.server.hello_timeout + 1.0,
        )
        self.ui = UiHttp(
            memory,
            bind_host=settings.server.host,
            secret=page_secret or secrets.token_urlsafe(32),
            key_ttl=settings.server.page_key_ttl,
            punish=self.sessions.failed.punish,
            clock=clock,
            timezone=default_zone or local or "UTC",
        )
        self.ui.page_texts = settings.console.page_texts
        self.ui.pairing = PagePairing(
            self.pairing,
            self.sessions.revoke_key,
            self.sessions.connected,
            self.sessions.keys_in_use,
        )
        if voice is not None:
            sessions = self.sessions
            self.ui.voice = PageVoice(
                voice,
                lambda: sessions.session_settings.voice.enabled,
                settings.texts.voice,
            )
        self.ui.actions = PageActions(self.action_modes, injections, self.sessions.declared_actions)
        if player is not None:
            self.ui.settings = PageSettings(
                player,
                lambda s: self.apply_settings(s, env),
                env,
                configured=lambda: self.model.configured,
                embedder=lambda: self.model.embedder,
                secrets=lambda: (tokens.current(),),
            )

    @property
    def store(self) -> MemoryStore:
        return self.memory.store

    @property
    def seats(self) -> Seats[Peer]:
        return self.adapters.seats

    @property
    def connections(self) -> Gauge:
        return self.adapters.connections

    @property
    def port(self) -> int | None:
        return self.adapters.port

    @property
    def addresses(self) -> tuple[str, ...]:
        return self.adapters.addresses

    @property
    def stopping_at(self) -> float | None:
        return self.adapters.stopping_at

    @property
    def url(self) -> str:
        return self.adapters.url

    @property
    def ui_port(self) -> int:
        """The memory page's port (its own listener; docs/memory-page.md "Memory page")."""
        assert self.ui.port is not None
        return self.ui.port

    @property
    def ui_link(self) -> str:
        """A link that opens the memory page once: each read mints a fresh single-use key.

        Show it only locally (``xtyserver serve`` prints one at start).
        """
        return open_link(self.settings.server.host, self.ui_port, self.ui.mint_key())

    async def apply_settings(
        self, settings: Settings, env: Mapping[str, str] | None = None
    ) -> None:
        """Take changed model settings, the daily budget, the speak-up and the voice settings for
        the next turn, event or utterance, without a restart.

        Open sessions learn whether a model is configured and takes images; turns
        under way finish on the client they started on (:meth:`ModelRouter.reroute`).
        """
        routing = resolve(settings.model, settings.models, os.environ if env is None else env)
        await self.model.reroute(routing)
        vision = routing.chat.vision or routing.vision.vision
        configured = self.model.configured
        budget = daily_budget(settings)
        self.sessions.reconfigure(
            model_configured=configured,
            vision=vision,
            daily_budget=budget,
            speakup=settings.speakup,
            voice=voice_rules(settings),
        )
        if self.voice is not None:
            self.voice.reconfigure(voice_options(settings))
        self.jobs.set_budget(budget)
        self.memory.set_trash_window(settings.memory.trash_window)
        self._log.info("settings.applied", model_configured=configured, vision=vision)

    async def wait_connections(self, at_most: int) -> None:
        """Return once at most ``at_most`` connections are open."""
        await self.connections.wait_at_most(at_most)

    async def serve(
        self,
        sockets: Sequence[socket.socket],
        page: MultiListener[anyio.abc.SocketStream] | None = None,
        *,
        task_status: anyio.abc.TaskStatus[str] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen on ``sockets`` (the adapter port) and on the page's port until cancelled.

        ``page``: the page's listener, bound by the caller (``UiHttp.listen``); None: bound here.
        """
        if page is None:
            page = await self.ui.listen(self.settings.server.page_port)
        async with anyio.create_task_group() as tg:
            url = await tg.start(self.adapters.serve, sockets)
            await tg.start(self.bands.run)
            await tg.start(self.ui.serve, page)
            task_status.started(url)

    def log_stopped(self) -> None:
        """One line once everything is closed: how long the stop took."""
        if self.stopping_at is not None:
            took = anyio.current_time() - self.stopping_at
            self._log.info("server.stopped", seconds=round(took, 3))
