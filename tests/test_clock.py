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


async def test_a_deadline_scope_is_cancelled_when_the_clock_passes_it_and_counts_as_armed() -> None:
    clock = ManualClock(100.0)
    got: list[str] = []
    send, receive = anyio.create_memory_object_stream[str](1)

    async def waiter() -> None:
        with clock.move_on_at(clock.deadline(10.0)) as scope:
            got.append(await receive.receive())
        got.append("late" if scope.cancelled_caught else "in time")

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await clock.wait_deadline(110.0)
        assert clock.sleepers == 1
        clock.advance(9.999)
        await send.send("frame")
    assert got == ["frame", "in time"]

    async with anyio.create_task_group() as tg:
        tg.start_soon(waiter)
        await clock.wait_sleepers(1)
        clock.advance(10.0)
    assert got[2:] == ["late"] and clock.sleepers == 0

    with clock.move_on_at(clock.deadline(0.0)) as scope:  # already due: cancelled at once
        await anyio.sleep_forever()
    assert scope.cancelled_caught
