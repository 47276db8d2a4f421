"""An idle connection keeps two tasks, and its writer and store lane come back with work."""

from __future__ import annotations

import asyncio
from pathlib import Path

import anyio
import pytest

from tests.conftest import recv, running, send

pytestmark = pytest.mark.anyio

WRITER = "xtyserver.serve.connection.Connection._writer"
LANE = "xtyserver.serve.store_lane.StoreLane._run"


def _tasks(name: str) -> int:
    return sum(task.get_name().startswith(name) for task in asyncio.all_tasks())


async def _until_idle() -> None:
    """Wait (bounded) until no writer and no store lane task runs: both ended when idle."""
    with anyio.fail_after(30):
        while _tasks(WRITER) or _tasks(LANE):
            await anyio.sleep(0.1)


async def test_an_idle_connection_has_no_writer_or_store_lane_and_answers_after(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        # The hello was answered (the writer) and the save opened (the store lane).
        base = len(asyncio.all_tasks())
        await _until_idle()
        assert len(asyncio.all_tasks()) < base
        # A frame that needs both: the store lane reads the stats, the writer sends them.
        await send(ws, {"type": "stats.get", "id": "s1"})
        answer = await recv(ws)
        assert answer["type"] == "stats.result" and answer["id"] == "s1", answer
        await _until_idle()
        await send(ws, {"type": "stats.get", "id": "s2"})
        assert (await recv(ws))["id"] == "s2"
        # The heartbeat deadline is no task either: the driver waits on it.
        with anyio.fail_after(10):
            await h.clock.wait_sleepers(1)
