"""A turn's memory and budget straight from memory, when nothing must be read.

``MemoryService.cached_turn_memory`` and ``TokenMeter.cached_spent_today`` let
the connection answer ``LoadTurnMemory`` at once, with no task, thread or hop.
They must give exactly what the reading path gives, and nothing (None, so the
reading path runs) whenever a read is due: a save not loaded yet, another
process's change to the store, a new local day.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import next_midnight
from xtyserver.clock import ManualClock
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.protocol.frames import Usage
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.meter import TokenMeter

pytestmark = pytest.mark.anyio

FARM = Scope("stardew-valley", "farm-a")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_the_cached_turn_memory_is_the_read_one_and_none_when_a_read_is_due(
    tmp_path: Path,
) -> None:
    with MemoryStore(tmp_path / "memory.sqlite3", clock=ManualClock()) as store:
        store.upsert_event(FARM, NewEvent("goal", "温室", "约好先修好温室"), 0.0)
        service = MemoryService(store)
        async with service.lease(FARM):
            assert service.cached_turn_memory(FARM) is None  # nothing read yet
            read = await service.turn_memory(FARM)
            cached = service.cached_turn_memory(FARM)
            assert cached is not None
            assert cached.profile == read.profile and cached.index is read.index
            assert service.cached_turn_memory(Scope("stardew-valley", "farm-b")) is None

            # Another process (the CLI, ``xtyserver mcp``) forgets the memory.
            with MemoryStore(store.path, clock=ManualClock()) as other:
                [event] = other.load_scope(FARM)
                forget = ForgetSpec(
                    kind="item", game_id=FARM.game_id, save_id=FARM.save_id, item_id=event.id
                )
                other.forget(forget)
            assert service.cached_turn_memory(FARM) is None  # the change must be read
            reread = await service.turn_memory(FARM)
            assert reread.index is not None and reread.index.events() == []
            again = service.cached_turn_memory(FARM)
            assert again is not None and again.index is reread.index
        assert service.cached_turn_memory(FARM) is None  # the lease ended: not loaded


async def test_the_cached_spent_tokens_hold_until_local_midnight(tmp_path: Path) -> None:
    clock = ManualClock()
    with MemoryStore(tmp_path / "memory.sqlite3", clock=clock) as store:
        meter = TokenMeter(MemoryService(store), clock, timezone="Asia/Shanghai")
        assert meter.cached_spent_today() is None  # today's bill not read yet
        assert await meter.spent_today() == 0
        await meter.record(FARM, "chat", Usage(prompt_tokens=70, completion_tokens=30))
        assert meter.cached_spent_today() == 100 == await meter.spent_today()
        midnight = next_midnight(clock.now(), "Asia/Shanghai")
        clock.advance(midnight - clock.now() - 1)
        assert meter.cached_spent_today() == 100  # one second before local midnight
        clock.advance(1)
        assert meter.cached_spent_today() is None  # a new day: its bill must be read
        assert await meter.spent_today() == 0
        assert meter.cached_spent_today() == 0
