"""The trash over the real server.

A forgotten item, save, game or profile is kept for ``memory.trash_hours``
(24; kept at exactly 24 h, gone after; 0: no trash); it is never injected or
exported, its tombstone still stops extraction, and it can be restored in
game (no confirmation), from the CLI, or through ``MemoryStore.restore`` (the
page). The purge job and the start remove what has expired.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.cli.test_main import xty
from tests.conftest import Harness, chat, recv, running, send
from tests.manage.test_http import Page
from xtyserver.clock import ManualClock, SystemClock
from xtyserver.errors import StoreError
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.testing import Reply, ToolCallScript

pytestmark = pytest.mark.anyio
FARM_A = Scope("stardew-valley", "farm-a")
DST = Scope("dont-starve-together", "world-a")
DAY = 24 * 3600.0
QUIET = {"memory.extraction": False, "server.heartbeat_ms": 600_000}
FORGET = "xiaotangyuan_memory_forget"
RESTORE = "xiaotangyuan_memory_restore"
PLAN = "计划先完成社区中心的鱼缸收集包"


def _seed(store: MemoryStore, now: float) -> int:
    store.set_profile_field("hobbies", ["钓鱼"])
    return store.upsert_event(FARM_A, NewEvent("goal", "社区中心", PLAN), now).id


def _call(name: str, **arguments: Any) -> ToolCallScript:
    return ToolCallScript(name=name, arguments=arguments)


def _results(h: Harness) -> list[str]:
    body = h.fake.chat_requests[-1].json
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def _item(plan: int) -> ForgetSpec:
    return ForgetSpec(kind="item", game_id=FARM_A.game_id, save_id=FARM_A.save_id, item_id=plan)


async def test_a_forgotten_item_waits_in_the_trash_and_is_restored_in_game(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=QUIET) as h:
        plan = _seed(h.store, h.clock.now())
        item = {"target": "item", "item": plan}
        async with h.adapter() as ws:
            h.fake.enqueue(Reply(tool_calls=[_call(FORGET, **item)]), Reply(text="这条会删掉。"))
            await chat(ws, "删掉社区中心计划", "c1")
            token = re.search(r"确认码[:：]\s*([b-z]+)", _results(h)[-1])
            assert token is not None
            h.fake.enqueue(
                Reply(tool_calls=[_call(FORGET, **item, confirmToken=token.group(1))]),
                Reply(text="删好了"),
            )
            await chat(ws, "好的，删吧", "c2")
            assert "回收站 #1" in _results(h)[-1]
            # In the trash: not in the store's memory, not injected, not exported.
            assert h.store.load_scope(FARM_A) == [] and h.store.trash_rows() == 1
            h.fake.enqueue(Reply(text="我们的计划？"))
            await chat(ws, "我们的计划是什么", "c3")
            assert PLAN not in json.dumps(h.turn_request().json, ensure_ascii=False)
            exported = json.dumps(msgspec_builtins(h.store.export()), ensure_ascii=False)
            assert PLAN not in exported and "社区中心" in exported  # only the tombstone
            # The tombstone still stops extraction while the item is in the trash.
            again = NewEvent("goal", "社区中心", "完成社区中心")
            assert (
                h.store.remember_candidate(FARM_A, again, h.clock.now(), deliberate=False) is None
            )
            # "刚才删错了，恢复一下": no confirmation needed.
            h.fake.enqueue(Reply(tool_calls=[_call(RESTORE)]), Reply(text="恢复好了"))
            _, done = await chat(ws, "刚才删错了，恢复一下", "c4")
            assert done["text"] == "恢复好了"
            assert "恢复 1 条记忆" in _results(h)[-1]
            h.fake.enqueue(Reply(text="社区中心的鱼缸"))
            await chat(ws, "我们的计划是什么", "c5")
            assert PLAN in json.dumps(h.turn_request().json, ensure_ascii=False)
        (back,) = h.store.load_scope(FARM_A)
        assert (back.id, back.summary) == (plan, PLAN)
        assert h.store.export().tombstones == [] and h.store.trash_rows() == 0


def msgspec_builtins(value: Any) -> Any:
    import msgspec

    return msgspec.to_builtins(value)


async def test_the_trash_keeps_24_hours_exactly_then_the_job_purges_it(tmp_path: Path) -> None:
    overrides = {**QUIET, "memory.trash_purge_every": 0.02}
    async with running(tmp_path, overrides=overrides) as h:
        plan = _seed(h.store, h.clock.now())
        first = h.store.forget(_item(plan))
        assert first.trash_id is not None
        h.clock.advance(DAY)  # restorable at exactly 24 h
        (entry,) = h.store.trash_entries()
        assert entry.expires_at == h.clock.now() and entry.item_count == 1
        assert h.store.restore(first.trash_id).items == 1
        second = h.store.forget(_item(plan))
        h.clock.advance(DAY + 0.001)  # ... and not after
        assert h.store.trash_entries() == []
        with pytest.raises(StoreError) as refused:
            h.store.restore(second.trash_id)
        assert refused.value.code == "not_found"
        with anyio.fail_after(10):  # the purge job frees it
            while h.store.trash_rows():
                await anyio.sleep(0.01)
        assert h.store.load_scope(FARM_A) == []


async def test_the_start_purges_what_expired_while_the_server_was_off(tmp_path: Path) -> None:
    clock = ManualClock()
    quiet = {**QUIET, "memory.trash_purge_every": 1e6}
    async with running(tmp_path, clock=clock, overrides=quiet) as h:
        h.store.forget(_item(_seed(h.store, clock.now())))
        h.store.forget(ForgetSpec(kind="profile"))
        assert h.store.trash_rows() == 2
    clock.advance(DAY - 1)
    async with running(tmp_path, clock=clock, overrides=quiet) as h:
        assert h.store.trash_rows() == 2  # not yet
    clock.advance(1.001)
    async with running(tmp_path, clock=clock, overrides=quiet) as h:
        assert h.store.trash_rows() == 0


async def test_no_trash_with_zero_hours(tmp_path: Path) -> None:
    async with running(tmp_path, overrides={**QUIET, "memory.trash_hours": 0}) as h:
        plan = _seed(h.store, h.clock.now())
        async with h.adapter() as ws:
            await send(ws, {"type": "memory.forget", "id": "f1", "target": "item", "eventId": plan})
            preview = await recv(ws)
            confirm = {"confirmToken": preview["confirmToken"], "eventId": plan}
            await send(ws, {"type": "memory.forget", "id": "f2", "target": "item", **confirm})
            forgotten = await recv(ws)
            assert forgotten["type"] == "memory.forgotten" and "trashId" not in forgotten
            notice = await recv(ws)
            assert notice["type"] == "memory.notice" and "restorableUntil" not in notice
            assert "不能恢复" in notice["text"]
        assert h.store.trash_rows() == 0


async def test_a_game_restores_only_its_own_trash_or_the_profile(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=QUIET) as h:
        now = h.clock.now()
        other = h.store.upsert_event(DST, NewEvent("goal", "过冬", "准备过冬的食物"), now)
        dst = h.store.forget(ForgetSpec(kind="save", game_id=DST.game_id, save_id=DST.save_id))
        assert other.id and dst.trash_id is not None
        async with h.adapter() as ws:  # a Stardew chat
            h.fake.enqueue(
                Reply(tool_calls=[_call(RESTORE, trash=dst.trash_id)]),
                Reply(tool_calls=[_call(RESTORE)]),  # the newest: nothing of this game
                Reply(text="好"),
            )
            await chat(ws, "刚才删错了，恢复一下", "c1")
            assert all("失败" in r and "恢复 " not in r for r in _results(h)), _results(h)
        assert h.store.load_scope(DST) == [] and h.store.trash_rows() == 1


def test_the_cli_lists_and_restores_the_trash_and_the_profile(tmp_path: Path) -> None:
    with MemoryStore.open_profile(tmp_path, "default", clock=SystemClock()) as store:
        plan = _seed(store, SystemClock().now())
        store.set_profile_field("nickname", "小明")
        item = store.forget(_item(plan))
        profile = store.forget(ForgetSpec(kind="profile"))
        assert store.get_profile().nickname == ""
    listed = xty(tmp_path, "memory", "restore", "--json")
    assert listed.returncode == 0, listed.stderr
    trash = json.loads(listed.stdout)["trash"]
    assert [e["trashId"] for e in trash] == [profile.trash_id, item.trash_id]
    assert trash[0]["profileFields"] == ["nickname", "hobbies"]
    assert trash[1]["saves"][0]["items"][0]["summary"] == PLAN
    text = xty(tmp_path, "memory", "restore")
    assert f"#{item.trash_id}" in text.stdout and "社区中心" in text.stdout
    for entry in (item.trash_id, profile.trash_id):
        done = xty(tmp_path, "memory", "restore", str(entry))
        assert done.returncode == 0 and "restored" in done.stdout, done.stderr
    again = xty(tmp_path, "memory", "restore", str(item.trash_id))
    assert again.returncode != 0
    with MemoryStore.open_profile(tmp_path, "default", clock=SystemClock()) as store:
        assert [e.summary for e in store.load_scope(FARM_A)] == [PLAN]
        assert store.get_profile().nickname == "小明" and store.get_profile().hobbies == ["钓鱼"]


def _forget_new(h: Harness, subject: str) -> int | None:
    """Remember a new item of farm-a, then forget it: its trash id (None: no trash)."""
    planted = h.store.upsert_event(
        FARM_A, NewEvent("goal", subject, f"{subject}的计划"), h.clock.now()
    )
    return h.store.forget(_item(planted.id)).trash_id


async def _trash_rows_become(h: Harness, rows: int) -> None:
    with anyio.fail_after(10):
        while h.store.trash_rows() != rows:
            await anyio.sleep(0.01)


async def test_the_window_raised_from_0_on_the_page_purges_without_a_restart(
    tmp_path: Path,
) -> None:
    """Raised from 0, lowered to 0 and raised again while running: the purge job follows."""
    overrides = {**QUIET, "memory.trash_hours": 0, "memory.trash_purge_every": 0.02}
    async with running(tmp_path, clock=ManualClock(), overrides=overrides) as h:
        page = Page(h)
        await page.open()
        for cycle in range(2):
            await page.post("settings", changes={"memory.trash_hours": 24})
            assert h.server.memory.trash_window == DAY
            older = _forget_new(h, f"鱼缸{cycle}")
            h.clock.advance(2 * 3600)
            newer = _forget_new(h, f"温室{cycle}")
            assert older is not None and newer is not None and h.store.trash_rows() == 2
            h.clock.advance(DAY - 2 * 3600 + 0.001)  # the older one is past its window only
            await _trash_rows_become(h, 1)  # the job purged it, and only it
            assert [e.id for e in h.store.trash_entries()] == [newer]
            await page.open()  # a day later: the page session (12 h) has ended, a new one
            await page.post("settings", changes={"memory.trash_hours": 0})
            await _trash_rows_become(h, 0)  # with no window nothing is kept
            assert _forget_new(h, f"矿洞{cycle}") is None and h.store.trash_rows() == 0


async def test_lowering_the_window_to_0_empties_the_trash_at_once(tmp_path: Path) -> None:
    """The job wakes at a change (its next round would be 10^6 s away here)."""
    overrides = {**QUIET, "memory.trash_purge_every": 1e6}
    async with running(tmp_path, clock=ManualClock(), overrides=overrides) as h:
        page = Page(h)
        await page.open()
        trashed = _forget_new(h, "鱼缸")
        assert trashed is not None and h.store.trash_rows() == 1
        h.clock.advance(1)
        await page.post("settings", changes={"memory.trash_hours": 0})
        await _trash_rows_become(h, 0)
        await page.post("settings", changes={"memory.trash_hours": 24})
        assert h.store.trash_entries() == []  # raised again, nothing comes back
