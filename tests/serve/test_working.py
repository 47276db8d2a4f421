"""The shell parts of working memory: parked sessions and the bounded injection log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from xtyserver.memory.types import Scope
from xtyserver.serve.working import (
    INJECTION_QUEUE,
    KEEP_TURNS,
    MAX_PARKED,
    InjectionLog,
    ParkedWork,
    WorkingShell,
)
from xtyserver.session.effects import RecordInjection
from xtyserver.session.events import Event
from xtyserver.session.layers import InjectionRecord, LayerCost
from xtyserver.session.working import SessionSummary, WorkingSnapshot

FARM = Scope("stardew-valley", "farm-a")
SNAP = WorkingSnapshot((("早", "早呀"),), (), SessionSummary())


def record(at: float) -> InjectionRecord:
    return InjectionRecord(
        at=at,
        game_id="g",
        save_id="s",
        layers=(LayerCost("identity", 10, 5),),
        memories=(),
        context="none",
        window_rounds=0,
        summary=False,
        image=False,
    )


def test_a_parked_session_resumes_at_exactly_the_resume_time_and_only_once() -> None:
    parked = ParkedWork(600.0)
    parked.park(FARM, SNAP, 1000.0)
    assert parked.take(Scope("stardew-valley", "farm-b"), 1000.0) is None
    assert parked.take(FARM, 1600.0) == SNAP
    assert parked.take(FARM, 1600.0) is None  # taken
    parked.park(FARM, SNAP, 1000.0)
    assert parked.take(FARM, 1600.001) is None  # too late


def test_parked_sessions_are_bounded_oldest_first() -> None:
    parked = ParkedWork(600.0)
    for n in range(MAX_PARKED + 1):
        parked.park(Scope("g", f"s{n}"), SNAP, 1.0)
    assert len(parked) == MAX_PARKED
    assert parked.take(Scope("g", "s0"), 1.0) is None
    assert parked.take(Scope("g", f"s{MAX_PARKED}"), 1.0) == SNAP


def test_the_injection_log_keeps_exactly_the_last_keep_turns(tmp_path: Path) -> None:
    log = InjectionLog(tmp_path / "injections.jsonl", keep=3)
    for n in range(3):
        log.append(record(float(n)))
    assert [r.at for r in log.last(10)] == [0.0, 1.0, 2.0]
    log.append(record(3.0))
    assert [r.at for r in log.last(10)] == [1.0, 2.0, 3.0]
    assert [r.at for r in log.last(1)] == [3.0] and log.last(0) == []
    assert (tmp_path / "injections.jsonl").stat().st_mode & 0o777 == 0o600
    again = InjectionLog(tmp_path / "injections.jsonl", keep=3)  # a restarted server
    again.append(record(4.0))
    assert [r.at for r in again.last(10)] == [2.0, 3.0, 4.0]
    assert KEEP_TURNS == 500


def injecting(at: float) -> RecordInjection:
    return RecordInjection(record(at))


@pytest.mark.anyio
async def test_injection_records_are_written_behind_in_order_by_one_writer(
    tmp_path: Path,
) -> None:
    log = InjectionLog(tmp_path / "injections.jsonl")
    jobs: Any = None  # the fold path is not used here
    shell = WorkingShell(ParkedWork(600.0), jobs, log, "m")

    async def no_reply(event: Event) -> None:
        raise AssertionError(event)

    for n in range(3):
        assert await shell.run(injecting(float(n)), no_reply) is None
    assert log.last(10) == []  # queued: the connection did not wait for the file
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(shell.write_injections)
            await shell.wait_written()
            assert [(r.at, r.model) for r in log.last(10)] == [(0.0, "m"), (1.0, "m"), (2.0, "m")]
            await shell.run(injecting(3.0), no_reply)
            shell.close_injections()  # the writer drains what is queued, then returns
    assert [r.at for r in log.last(10)] == [0.0, 1.0, 2.0, 3.0]


@pytest.mark.anyio
async def test_injection_records_past_the_queue_are_dropped_not_waited_for(
    tmp_path: Path,
) -> None:
    log = InjectionLog(tmp_path / "injections.jsonl")
    jobs: Any = None
    shell = WorkingShell(ParkedWork(600.0), jobs, log, "m")

    async def no_reply(event: Event) -> None:
        raise AssertionError(event)

    for n in range(INJECTION_QUEUE + 5):
        await shell.run(injecting(float(n)), no_reply)
    shell.close_injections()
    with anyio.fail_after(5):
        await shell.write_injections()
        await shell.wait_written()
    assert [r.at for r in log.last(1000)] == [float(n) for n in range(INJECTION_QUEUE)]
