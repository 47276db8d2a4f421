"""Running the evaluation set through the real turn path (a shell).

A fresh store in a temporary folder is loaded with the set (each event through
``MemoryStore.upsert_event`` at its age before the set's start, the profile
field by field). Then the scripted model server and the real server run over
loopback (``serving()``, what ``xtyserver serve`` runs) on a
:class:`~xtyserver.clock.ManualClock` standing at the set's start, and one
adapter connection per save (the adapter client) asks that save's questions in
order, each ``chat.send`` carrying the question's modelContext. The chat
request the scripted model recorded for each turn is what gets scored, so
every layer the server builds, the connection's history included, is measured.

Memories are loaded without search keys, as after an upgrade; the enrichment
job then asks the scripted model for them, which answers with the keys the set
gives each memory (``keys``: what an extraction call would return), before the
first question; with an embedding route (``--embeddings``) the memories' vectors
are formed before it too. Settings that would change the answers are pinned: background
extraction is off (the set stays fixed), the chat and frame buckets are large (the clock does
not move, so they would never refill), everything else is the default.
Latency is wall time measured here (``time.perf_counter``).
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio
import msgspec

from xtyeval.evalset import EvalSave, EvalSet, question_context
from xtyeval.scoring import Loaded, Turn
from xtyserver.adapter import AdapterClient, AdapterInfo, ChatDone, Identity
from xtyserver.clock import ManualClock
from xtyserver.config import load_settings
from xtyserver.memory.export import encode_document
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import PROFILE_FIELDS, SharedProfile
from xtyserver.serve.jobs import EnrichKeys
from xtyserver.serve.working import injection_log_path
from xtyserver.server import serving
from xtyserver.testing import FakeModelServer

TOKEN = "eval-token-not-a-secret-0123456789abcdef"
TURN_TIMEOUT = 30.0
CHAT_MODEL = "scripted-eval"


def load_store(evalset: EvalSet, store: MemoryStore) -> Loaded:
    """Write the set's profile and events into ``store``; what it then holds."""
    profile = store.get_profile()
    wanted, default = evalset.shared_profile(), SharedProfile()
    for name in PROFILE_FIELDS:
        if getattr(wanted, name) != getattr(default, name):
            profile = store.set_profile_field(name, getattr(wanted, name))
    events: dict[str, tuple[str, str]] = {}
    ids: dict[str, int] = {}
    for save in evalset.saves:
        for started, ended in save.plays:
            play = store.open_play_session(save.scope, evalset.start - started * 3600.0, "UTC")
            store.close_play_session(play, evalset.start - ended * 3600.0)
        for ev in save.events:
            at = evalset.start - ev.age_hours * 3600.0
            stored = store.upsert_event(save.scope, ev.new_event(), at)
            events[ev.key] = (save.label, stored.summary)
            ids[ev.key] = stored.id
    return Loaded(events=events, profile=profile, ids=ids)


def _stamp(when: float) -> str:
    return datetime.fromtimestamp(when, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


async def _ask_save(
    url: str, save: EvalSave, fake: FakeModelServer, clock: ManualClock
) -> list[Turn]:
    identity = Identity(game_id=save.game, save_id=save.save, save_name=save.name)
    turns: list[Turn] = []
    async with AdapterClient(
        url,
        token=TOKEN,
        identity=identity,
        adapter=AdapterInfo(name="xty-eval", version="1"),
        timezone="Asia/Shanghai",
        clock=clock,
        timeout=TURN_TIMEOUT,
    ) as client:
        for q in save.questions:
            context: dict[str, Any] = question_context(save, q)
            context["capturedAt"] = _stamp(clock.now())
            before = len(fake.chat_requests)
            start = time.perf_counter()
            first = None
            reply = await client.chat(q.text, model_context=context)
            async for _ in reply:
                if first is None:
                    first = time.perf_counter()
            with anyio.fail_after(TURN_TIMEOUT):
                outcome = await reply.result()
            done = time.perf_counter()
            # Only the turn's own call: a working-memory fold (past the window)
            # goes to the background model.
            requests = [r for r in fake.chat_requests[before:] if r.json.get("model") == CHAT_MODEL]
            error = None if isinstance(outcome, ChatDone) else f"{outcome.code}: {outcome.message}"
            if error is None and len(requests) != 1:
                error = f"{len(requests)} model requests for one turn"
            turns.append(
                Turn(
                    question=q.key,
                    request=requests[0].json if requests else None,
                    first_ms=((first or done) - start) * 1000.0,
                    done_ms=(done - start) * 1000.0,
                    error=error,
                )
            )
    return turns


def _import_cold(evalset: EvalSet, folder: Path, settings: Any, clock: ManualClock) -> Loaded:
    """The set written into a store of its own, exported, and brought into ``folder`` by the
    real ``xtyserver memory import`` (another process), as a player moving to a new PC."""
    source = folder / "exported-from"
    with MemoryStore.open_profile(source, settings.profile, clock=clock) as store:
        loaded = load_store(evalset, store)
        document = source / "export.json"
        document.write_bytes(encode_document(store.export()))
    command = [sys.executable, "-m", "xtyserver", "memory", "import", str(document)]
    done = subprocess.run(
        [*command, "--data-dir", str(settings.data_path), "--profile", settings.profile],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise RuntimeError(f"memory import failed: {done.stderr.strip()}")
    with MemoryStore.open_profile(settings.data_path, settings.profile, clock=clock) as store:
        ids = {(f"{e.game_id}/{e.save_id}", e.summary): e.id for e in store.export().events}
    # The imported rows keep their saves and texts; their ids are the target store's.
    return msgspec.structs.replace(
        loaded, ids={key: ids.get(loaded.events[key], i) for key, i in loaded.ids.items()}
    )


async def run_set(
    evalset: EvalSet,
    *,
    data_dir: Path | None = None,
    overrides: Mapping[str, Any] | None = None,
    cold: bool = False,
) -> tuple[Loaded, list[Turn]]:
    """Load the set into a fresh store and ask every question through the server.

    Args:
        data_dir: Folder for the store (default: a temporary one, removed afterwards).
        overrides: More settings (dotted keys), e.g. ``{"memory.glossary": False}``.
        cold: Bring the set in with ``xtyserver memory import`` and ask at once: no
            wait for search keys or vectors (what the server does by itself counts).
    """
    with tempfile.TemporaryDirectory(prefix="xty-eval-") as tmp:
        folder = data_dir or Path(tmp)
        clock = ManualClock(evalset.start)
        async with FakeModelServer() as fake:
            settings = load_settings(
                None,
                env={},
                overrides={
                    "data_dir": str(folder),
                    "server.port": 0,
                    "server.chat_burst": 100_000,
                    "server.frame_burst": 100_000,
                    "memory.extraction": False,
                    "model.base_url": fake.base_url,
                    "model.model": CHAT_MODEL,
                    "model.extraction_model": "scripted-background",
                    **(overrides or {}),
                },
            )
            if cold:
                loaded = _import_cold(evalset, folder, settings, clock)
            else:
                with MemoryStore.open_profile(
                    settings.data_path, settings.profile, clock=clock
                ) as store:
                    loaded = load_store(evalset, store)
            turns: list[Turn] = []
            # The scripted model writes each memory's keys when the enrichment job asks.
            fake.search_keys = {
                loaded.events[ev.key][1]: list(ev.keys)
                for save in evalset.saves
                for ev in save.events
                if ev.keys
            }
            async with serving(settings, token=TOKEN, clock=clock) as server:
                # One save's jobs at a time: a set of more saves than the job queue
                # holds would drop the rest, and their questions go without them.
                if server.jobs.enrich and not cold:
                    # Memories loaded without keys get them (as after an upgrade),
                    # before the first question.
                    for save in evalset.saves:
                        server.jobs.submit(EnrichKeys(save.scope))
                        await server.memory.wait_idle()
                if server.jobs.embed and not cold:
                    # With an embedding route, every memory has its vector first too.
                    for save in evalset.saves:
                        server.jobs.embed_later(save.scope)
                        await server.memory.wait_idle()
                for save in evalset.saves:
                    if not save.questions:  # a leak-bait save: nothing to ask it
                        continue
                    turns += await _ask_save(server.url, save, fake, clock)
                    await server.memory.wait_idle()
                await server.working.wait_written()
            turns = _with_paths(turns, injection_log_path(settings.data_path, settings.profile))
    return loaded, turns


def _with_paths(turns: list[Turn], log: Path) -> list[Turn]:
    """Each turn with how its memories matched, from the injection log (one record a turn)."""
    try:
        lines = log.read_text(encoding="utf-8").splitlines()
    except OSError:
        return turns
    records = [json.loads(line) for line in lines if line.strip()]
    if len(records) != len(turns):
        return turns  # a record lost (or a turn without one): no paths rather than wrong ones
    return [
        msgspec.structs.replace(
            turn, via={int(m["id"]): str(m.get("via", "")) for m in record.get("memories", ())}
        )
        for turn, record in zip(turns, records, strict=True)
    ]
