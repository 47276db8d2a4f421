"""The composition root: lock, bind, build the services, start the listeners, stop in order.

:func:`serving` is the one place that wires the shells together: ``xtyserver
serve``, the demo and the tests all start the server through it. The two
ports and what they share are :class:`~xtyserver.ports.Server`.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path

import anyio
import anyio.abc
import anyio.to_thread

from xtyserver import __version__, log
from xtyserver.clock import Clock
from xtyserver.config import Settings
from xtyserver.errors import StoreError
from xtyserver.files import tighten_data_dir
from xtyserver.manage.access import open_link
from xtyserver.manage.page_secret import new_page_secret
from xtyserver.memory.glossary import Glossary
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.model.router import ModelRouter
from xtyserver.model.routing import resolve
from xtyserver.model.scheduler import Scheduler
from xtyserver.ports import Server
from xtyserver.replay.recorder import Recorder
from xtyserver.serve.glossary import GlossaryOnce, has_player_files, load_glossary
from xtyserver.serve.instance import (
    ServerFile,
    hold_instance,
    now_iso,
    remove_server_file,
    write_server_file,
)
from xtyserver.serve.jobs import MemoryJobs
from xtyserver.serve.localzone import server_zone
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.meter import TokenMeter
from xtyserver.serve.player_settings import PlayerSettings
from xtyserver.serve.runtime_settings import daily_budget, voice_options
from xtyserver.serve.trash_purge import purge_trash_every
from xtyserver.serve.warm import warm
from xtyserver.serve.wire.adapter_port import AFTER_ABORT
from xtyserver.token import token_path
from xtyserver.voice.asr import Recognizer
from xtyserver.voice.service import VoiceService


@asynccontextmanager
async def serving(
    settings: Settings,
    *,
    token: str,
    clock: Clock,
    record: Path | None = None,
    record_images: bool = False,
    env: Mapping[str, str] | None = None,
    token_file: Path | None = None,
    tighten: bool = False,
    player: PlayerSettings | None = None,
    recognizer: Callable[[], Recognizer] | None = None,
) -> AsyncIterator[Server]:
    """Open the profile's store and the model client, and run a :class:`Server`.

    The server listens once this is entered and stops when it is left, within
    ``server.stop_timeout`` whatever the peers do: connections close, then queued
    memory jobs get ``memory.drain_timeout`` (or what is left of the bound), then
    the client and the store close. ``record``: every connection written to a
    JSON-lines file there (:mod:`xtyserver.replay.recorder`). ``env``: where the
    routed models' keys are read (None: the process environment). ``tighten``
    (``xtyserver serve``): the data folder made owner-only. ``recognizer``: builds the
    speech recogniser (tests share one loaded model; None: faster-whisper on first use).

    Raises:
        NotStarted: another server holds the data folder or the port is busy
            (:mod:`xtyserver.serve.instance`); nothing was changed.
    """
    data, srv, mem = settings.data_path, settings.server, settings.memory
    page = _page_url(srv.host, srv.page_port)
    held = hold_instance(data, srv.host, srv.port, ipv6_loopback=srv.ipv6_loopback, page=page)
    with held as sockets:
        if tighten:
            for path in tighten_data_dir(data):
                log.get("xtyserver.server").warning("data_dir.tightened", path=path.name)
        # Written only by the server that holds the lock: `xtyserver ui` reads it.
        page_secret = new_page_secret(data)
        # A player's own glossary file is checked before anything opens: a bad one stops
        # the start. The packaged files alone are read once listening (GlossaryOnce).
        glossary: Glossary | GlossaryOnce = Glossary()
        if mem.glossary and has_player_files(data):
            glossary = load_glossary(data)
        elif mem.glossary:
            glossary = GlossaryOnce(partial(load_glossary, data))
        store = MemoryStore.open_profile(
            data,
            settings.profile,
            clock=clock,
            busy_timeout_ms=mem.busy_timeout_ms,
            trash_window=mem.trash_window,
        )
        try:  # at start; then every 10 minutes (serve/trash_purge.py)
            purged = store.purge_trash()
        except StoreError as exc:  # a locked store must not keep the server from starting
            log.get("xtyserver.memory").warning("store.failed", code=exc.code, effect="PurgeTrash")
        else:
            if purged:
                log.get("xtyserver.memory").info("memory.trash_purged", entries=purged)
        routing = resolve(settings.model, settings.models, os.environ if env is None else env)
        model = ModelRouter(
            routing,
            Scheduler(grace=mem.background_grace),
            local_embedding=mem.enabled and mem.local_embedding,
            provider_embedding=mem.enabled and mem.provider_embedding,
            local_engine=mem.local_engine,
            models=data / "models",
            indexes=mem.embedding_indexes,
        )
        memory = MemoryService(
            store,
            enabled=mem.enabled,
            soft_cap=mem.soft_cap,
            glossary=glossary,
            search_keys=mem.search_keys,
            spelling=mem.spelling,
            vector_model=model.embedder.model
            if model.embedder is not None and mem.enabled
            else None,
        )
        meter = TokenMeter(memory, clock, timezone=server_zone(srv.default_timezone))
        jobs = MemoryJobs(
            memory,
            model,
            meter,
            daily_budget(settings),
            queue_size=mem.job_queue,
            enrich=mem.enabled and mem.search_keys and mem.enrich_keys,
            timezone=server_zone(srv.default_timezone),
            clock=clock,
        )
        # Always there (the page may turn voice on); it imports no speech library until a
        # mod's voice.start, the page's test or a model fetch needs one.
        voice = VoiceService(voice_options(settings), clock, recognizer)
        memory.on_bulk_change = jobs.vectors.rescan
        recorder = None
        if record is not None:
            recorder = Recorder(record, clock=clock, token=token, keep_images=record_images)
        server = Server(
            settings,
            memory=memory,
            jobs=jobs,
            model=model,
            meter=meter,
            token=token,
            clock=clock,
            recorder=recorder,
            voice=voice,
            token_file=token_file,
            # The page's settings view: the player's stored choices under the rest.
            player=player or PlayerSettings(data, env=os.environ if env is None else env),
            env=env,
            page_secret=page_secret,
        )
        try:
            # Bound before any task group: a busy page port is one PortBusy for the
            # player's console (nothing was served yet), not a group of errors.
            page_listener = await server.ui.listen(srv.page_port)
            async with anyio.create_task_group() as background:
                background.start_soon(jobs.run)
                background.start_soon(memory.write_touches)
                background.start_soon(meter.write_bills)
                background.start_soon(server.working.write_injections)
                # Whatever the window: the page may raise it from 0 while running.
                background.start_soon(purge_trash_every, memory, mem.trash_purge_every)
                background.start_soon(voice.run)
                try:
                    async with anyio.create_task_group() as listener:
                        await listener.start(server.serve, sockets, page_listener)
                        # After the listener: importing numpy holds the GIL.
                        background.start_soon(model.warm_embedder)
                        # The memories without vectors, as the store holds them.
                        background.start_soon(jobs.vectors.run)
                        chat = routing.chat.base_url if routing.chat.configured else ""
                        background.start_soon(warm, glossary, chat)
                        pid = os.getpid()
                        write_server_file(
                            data,
                            ServerFile(
                                url=server.url,
                                port=server.port or 0,
                                addresses=server.addresses,
                                ui_port=server.ui_port,
                                page_url=_page_url(srv.host, server.ui_port),
                                token_file=str(token_file) if token_file else _token_file(settings),
                                pid=pid,
                                started_at=now_iso(),
                                version=__version__,
                            ),
                        )
                        try:
                            yield server
                        finally:
                            remove_server_file(data, pid)
                        listener.cancel_scope.cancel()
                finally:
                    with anyio.CancelScope(shield=True):
                        jobs.close()
                        memory.close_touches()
                        server.working.close_injections()
                        voice.close()
                        model.scheduler.stopping()  # the connections are closed: no chat follows
                        with anyio.move_on_after(_drain_time(settings, server.stopping_at)):
                            await memory.wait_idle()
                            meter.close()
                            await meter.wait_written()
                            await server.working.wait_written()
                        background.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(AFTER_ABORT):
                await model.aclose()
            store.close()
            server.log_stopped()


def _page_url(host: str, port: int) -> str:
    """The memory page's address without a launch key (``xtyserver ui`` mints one)."""
    return open_link(host, port, "").split("#", 1)[0]


def _token_file(settings: Settings) -> str | None:
    """The token file a mod reads, or None when the token came from ``XTY_TOKEN``."""
    path = token_path(settings.data_path)
    return None if settings.token or not path.exists() else str(path)


def _drain_time(settings: Settings, stopping_at: float | None) -> float:
    """Seconds queued memory jobs may still take: ``memory.drain_timeout``, within the stop's bound.

    The bound counts from the connections' close; a second is kept for closing
    the model clients and the store.
    """
    drain = settings.memory.drain_timeout
    if stopping_at is None:
        return drain
    left = settings.server.stop_timeout - (anyio.current_time() - stopping_at) - 2 * AFTER_ABORT
    return max(0.0, min(drain, left))
