"""The token meter (shell): records each call's tokens and counts today's.

Every model call's reported usage goes into ``token_usage`` under the local
date of the server's timezone (v1.md "Token bill"); whether a call may run is
the core's :class:`~xtyserver.memory.tokens.DailyBudget`. The day's total is
read once a date and then kept, and rows are written behind, so a locked
database never delays a reply.
"""

from __future__ import annotations

import anyio

from xtyserver import log
from xtyserver.clock import Clock
from xtyserver.errors import StoreError
from xtyserver.memory.accounting import local_date
from xtyserver.memory.tokens import Purpose
from xtyserver.memory.types import Scope
from xtyserver.protocol.frames import Usage
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.on_demand import Gauge

BILL_QUEUE = 256
_Bill = tuple[str, Scope, Purpose, int, int]


class TokenMeter:
    """Counts tokens per day and save.

    Args:
        timezone: The IANA zone whose midnight starts a new day.
    """

    def __init__(self, memory: MemoryService, clock: Clock, *, timezone: str) -> None:
        self._memory = memory
        self._clock = clock
        self._tz = timezone
        self._date = ""
        self._spent = 0
        self._log = log.get("xtyserver.tokens")
        self._in, self._out = anyio.create_memory_object_stream[_Bill](BILL_QUEUE)
        self._pending = Gauge()  # rows queued and not written yet

    async def _today(self) -> str:
        date = local_date(self._clock.now(), self._tz)
        if date != self._date:
            self._spent = await self._memory.tokens_spent(date)
            self._date = date
        return date

    async def record(self, save: Scope, purpose: Purpose, usage: Usage | None) -> None:
        """Add one call's tokens (nothing when the provider reported no usage)."""
        if usage is None:
            return
        prompt = max(0, usage.prompt_tokens or 0)
        completion = max(0, usage.completion_tokens or 0)
        date = await self._today()
        self._spent += prompt + completion  # counts at once; the row is written behind
        try:
            self._in.send_nowait((date, save, purpose, prompt, completion))
        except (anyio.WouldBlock, anyio.ClosedResourceError, anyio.BrokenResourceError):
            self._log.warning("tokens.bill_dropped", purpose=purpose)
            return
        self._pending.add(1)

    async def write_bills(self) -> None:
        """Write the queued bill rows until :meth:`close`."""
        async with self._out:
            async for date, save, purpose, prompt, completion in self._out:
                try:
                    await self._memory.record_usage(date, save, purpose, prompt, completion)
                except StoreError as exc:
                    self._log.warning("store.failed", code=exc.code, effect="RecordUsage")
                finally:
                    self._pending.add(-1)

    async def wait_written(self) -> None:
        """Return once every recorded call's row is in the store."""
        await self._pending.wait_at_most(0)

    def close(self) -> None:
        """Accept no more rows; :meth:`write_bills` returns once the queued ones are written."""
        self._in.close()

    def cached_spent_today(self) -> int | None:
        """:meth:`spent_today` when today's count is already known, else None (it must read)."""
        return self._spent if local_date(self._clock.now(), self._tz) == self._date else None

    async def spent_today(self) -> int:
        """Every token counted on today's local date (read from the store once a day).

        Raises:
            StoreError: The day's bill could not be read.
        """
        await self._today()
        return self._spent
