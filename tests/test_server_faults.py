"""Faults around a turn and the server process."""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import apsw
import pytest
from websockets.asyncio.client import connect

from tests.conftest import NO_GRACE, ServerProcess, chat, hello_frame, recv, running, send
from xtyserver.clock import SystemClock
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio


async def test_stream_cut_mid_reply_stores_nothing_of_the_partial_reply(tmp_path: Path) -> None:
    # The cut turn forms no job; the next one's extraction is awaited: no grace.
    async with running(tmp_path, overrides=NO_GRACE) as h, h.adapter() as ws:
        h.fake.enqueue(Reply(chunks=["部分", "回复", "不该", "被记住"], cut_after=2, match="断线"))
        deltas, end = await chat(ws, "断线测试")
        assert end["type"] == "chat.error" and end["code"] == "model_stream_cut"
        assert [d["text"] for d in deltas] == ["部分", "回复"]  # shown once, never retried
        cut_requests = [r for r in h.fake.chat_requests if "断线测试" in r.text]
        assert len(cut_requests) == 1
        # The next turn works, and its extraction sees only that turn.
        _, done = await chat(ws, "再来一次", chat_id="c2")
        assert done["type"] == "chat.done"
        with anyio.fail_after(10):
            await h.server.memory.wait_idle()
        extraction = [r for r in h.fake.chat_requests if "玩家说" in r.text]
        assert len(extraction) == 1 and "部分回复" not in extraction[0].text
        assert all("部分" not in e.summary for e in h.store.load_scope(_farm()))


def _farm():  # type: ignore[no-untyped-def]
    from xtyserver.memory.types import Scope

    return Scope("stardew-valley", "farm-a")


async def test_server_killed_mid_writes_reopens_clean_and_closes_the_crashed_session(
    tmp_path: Path,
) -> None:
    server = ServerProcess(tmp_path)
    proc, url = server.proc, server.url
    acknowledged: list[dict[str, object]] = []

    async def adapter(n: int) -> None:
        try:
            async with connect(url) as ws:
                await send(ws, hello_frame(save=f"save-{n}"))
                assert (await recv(ws))["type"] == "server.hello"
                for i in range(1_000_000):
                    await send(ws, {"type": "heartbeat"})
                    await send(ws, {"type": "stats.get", "id": f"{n}-{i}"})
                    # Everything in this answer was committed before it was sent.
                    acknowledged.append(await recv(ws))
        except (OSError, ConnectionError, TimeoutError, ValueError):
            pass  # the connection dies with the server: that is the point
        except Exception as exc:  # websockets' ConnectionClosed
            if "ConnectionClosed" not in type(exc).__name__:
                raise

    try:
        async with anyio.create_task_group() as tg:
            for n in range(3):
                tg.start_soon(adapter, n)
            with anyio.fail_after(20):
                while len(acknowledged) < 60:
                    await anyio.sleep(0.001)
            proc.send_signal(signal.SIGKILL)  # mid-writes: heartbeats are in flight
            proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == -signal.SIGKILL
    db = tmp_path / "profiles" / "default" / "memory-v1.sqlite"
    conn = apsw.Connection(str(db))
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    open_rows = conn.execute("SELECT count(*) FROM play_session WHERE ended_at IS NULL").fetchall()
    conn.close()
    assert open_rows[0][0] >= 1  # the crash left sessions open
    # Every session the server acknowledged is there, with at least the time it reported.
    last = {}
    for answer in acknowledged:
        for row in answer.get("saves", []):
            last[row["saveId"]] = max(last.get(row["saveId"], 0), row["activeMs"])
    store = MemoryStore.open_profile(tmp_path, "default", clock=SystemClock())
    try:
        recovered = store.recover_open_sessions()
        assert recovered == open_rows[0][0]
        stats = {s.save_id: s for s in store.stats().saves}
        for save, active in last.items():
            assert stats[save].sessions >= 1 and stats[save].active_ms >= active
    finally:
        store.close()
    # A restarted server recovers cleanly and serves.
    server2 = ServerProcess(tmp_path)
    url2 = server2.url
    try:
        async with connect(url2) as ws:
            await send(ws, hello_frame(save="save-0"))
            assert (await recv(ws))["type"] == "server.hello"
            await send(ws, {"type": "stats.get", "id": "after"})
            stats_after = await recv(ws)
        rows = {r["saveId"]: r for r in stats_after["saves"]}
        assert rows["save-0"]["sessions"] >= 2
    finally:
        server2.stop()
    assert len(acknowledged) >= 60
