"""ManualClock: deadlines move only when told, and tests can wait for one to be armed."""

from __future__ import annotations

import anyio
import pytest

from xtyserver.clock import ManualClock

pytestmark = pytest.mark.anyio


async def test_wait_deadline_returns_once_a_sleep_due_then_or_later_waits() -> None:
    clock = ManualClock(100.0)
    woke: list[float] = []

    async def sleeper(seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(clock.now())

    async with anyio.create_task_group() as tg:
        tg.start_soon(sleeper, 15.0)
        await clock.wait_deadline(115.0)  # exactly at the deadline: armed
        with anyio.move_on_after(0.05) as late:
            await clock.wait_deadline(115.001)  # later than any sleep: not yet
        assert late.cancelled_caught
        clock.advance(14.999)
        assert woke == []
        clock.advance(0.001)
    assert woke == [115.0]
