"""The trash's purge job: forgotten memory past its window goes for good.

A shell: after the start's purge (``serving``), this task purges every
``memory.trash_purge_every`` seconds and at once whenever the window changes,
whatever the window (no change needs a restart). The store decides what expired
on the injected clock; the pause is the event loop's own time, so the job is no
sleeper of a test's manual clock. Expired entries are never restorable anyway:
the job only frees the space.
"""

from __future__ import annotations

import anyio

from xtyserver import log
from xtyserver.errors import StoreError
from xtyserver.serve.memory_service import MemoryService


async def purge_trash_every(memory: MemoryService, every: float) -> None:
    """Purge the trash every ``every`` seconds and when its window changes, until cancelled."""
    logger = log.get("xtyserver.memory")
    changed = anyio.Event()

    def wake() -> None:
        changed.set()  # the event of the wait to come, or of the one under way

    memory.on_trash_window = wake
    try:
        while True:
            with anyio.move_on_after(every):
                await changed.wait()
            # A fresh event before purging: a change during the purge wakes the next wait.
            changed = anyio.Event()
            try:
                purged = await memory.purge_trash()
            except StoreError as exc:
                logger.warning("store.failed", code=exc.code, effect="PurgeTrash")
                continue
            if purged:
                logger.info("memory.trash_purged", entries=purged)
    finally:
        memory.on_trash_window = None
