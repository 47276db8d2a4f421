"""The trash's purge job: forgotten memory past its window goes for good (issue 17 §1).

A shell: at start the server purges once (``serving``), then this task purges
every ``memory.trash_purge_every`` seconds (600). What has expired is decided
by the store on the injected clock; the pause between two purges is the event
loop's own time, so the job is no sleeper of a test's manual clock (tests
count those to know a deadline is armed). Entries past their window are never
restorable even before the job reaches them (the store reads by time), so the
job only frees the space.
"""

from __future__ import annotations

import anyio

from xtyserver import log
from xtyserver.errors import StoreError
from xtyserver.serve.memory_service import MemoryService

EVERY = 600.0


async def purge_trash_every(memory: MemoryService, every: float = EVERY) -> None:
    """Purge the trash every ``every`` seconds until cancelled; a store error is logged."""
    logger = log.get("xtyserver.memory")
    while True:
        await anyio.sleep(every)
        try:
            purged = await memory.purge_trash()
        except StoreError as exc:
            logger.warning("store.failed", code=exc.code, effect="PurgeTrash")
            continue
        if purged:
            logger.info("memory.trash_purged", entries=purged)
