"""MCP asks the person, not the assistant, in process with the `mcp` client.

Where the client declares elicitation, the confirming call asks its user and
only their yes deletes; where it does not, the confirm must come at least 5 s
after its preview (on the injected clock) and quote the preview's target back.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, types
from mcp.types import TextContent

from xtyserver.clock import ManualClock
from xtyserver.manage.mcp import build
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.serve.memory_service import MemoryService

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")
FORGET = "xiaotangyuan_memory_forget"


def _text(result: Any) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


def _target(event_id: int) -> dict[str, Any]:
    return {"target": "item", "gameId": "stardew-valley", "saveId": "farm-a", "eventId": event_id}


async def _preview(client: Client, event_id: int) -> dict[str, Any]:
    result = await client.call_tool(FORGET, _target(event_id))
    assert not result.is_error, _text(result)
    preview: dict[str, Any] = json.loads(_text(result))
    return preview


def _setup(tmp_path: Path, clock: ManualClock) -> tuple[MemoryStore, int, Any]:
    store = MemoryStore(tmp_path / "m.sqlite", clock=clock)
    plan = store.upsert_event(FARM, NewEvent("goal", "鱼缸", "完成鱼缸收集包"), clock.now()).id
    return store, plan, build(MemoryService(store), clock)


async def test_without_elicitation_the_confirm_waits_5_s_and_quotes_the_target(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    store, plan, server = _setup(tmp_path, clock)
    with store:
        async with Client(server, mode="legacy") as client:
            preview = await _preview(client, plan)
            quote = preview["quote"]
            assert quote == f"item stardew-valley farm-a #{plan}"
            assert preview["confirmAfterSeconds"] == 5
            confirm = {**_target(plan), "confirmToken": preview["confirmToken"]}
            # Back to back, as an assistant alone would: refused, nothing deleted.
            fast = await client.call_tool(FORGET, {**confirm, "quote": quote})
            assert fast.is_error and "too soon" in _text(fast)
            clock.advance(4.999)
            early = await client.call_tool(FORGET, {**confirm, "quote": quote})
            assert early.is_error and "too soon" in _text(early)
            clock.advance(0.001)  # 5 s: long enough, but the quote is still needed
            unquoted = await client.call_tool(FORGET, confirm)
            assert unquoted.is_error and "quote" in _text(unquoted)
            wrong = await client.call_tool(FORGET, {**confirm, "quote": "item farm-b"})
            assert wrong.is_error and "quote" in _text(wrong)
            assert [e.id for e in store.load_scope(FARM)] == [plan]
            done = await client.call_tool(FORGET, {**confirm, "quote": quote.upper()})
            assert not done.is_error and json.loads(_text(done))["items"] == 1
            again = await client.call_tool(FORGET, {**confirm, "quote": quote})
            assert again.is_error and "already used" in _text(again)
        assert store.load_scope(FARM) == []


async def test_with_elicitation_the_person_answers(tmp_path: Path) -> None:
    clock = ManualClock()
    store, plan, server = _setup(tmp_path, clock)
    asked: list[str] = []
    answers = [False, True]

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"delete": answers.pop(0)})

    with store:
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            preview = await _preview(client, plan)
            confirm = {**_target(plan), "confirmToken": preview["confirmToken"]}
            no = await client.call_tool(FORGET, confirm)  # at once, no quote: the person decides
            assert no.is_error and "did not agree" in _text(no)
            assert [e.id for e in store.load_scope(FARM)] == [plan]
            yes = await client.call_tool(FORGET, confirm)
            assert not yes.is_error and json.loads(_text(yes))["items"] == 1
        assert len(asked) == 2 and preview["quote"] in asked[0]
        assert store.load_scope(FARM) == []


async def test_a_declined_ask_deletes_nothing_whatever_the_time_and_quote(
    tmp_path: Path,
) -> None:
    clock = ManualClock()
    store, plan, server = _setup(tmp_path, clock)

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    with store:
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            preview = await _preview(client, plan)
            clock.advance(60)  # time and the quote do not stand in for the person
            confirm = {
                **_target(plan),
                "confirmToken": preview["confirmToken"],
                "quote": preview["quote"],
            }
            declined = await client.call_tool(FORGET, confirm)
            assert declined.is_error and "did not agree" in _text(declined)
        assert [e.id for e in store.load_scope(FARM)] == [plan]


def _seed_many(store: MemoryStore, clock: ManualClock, saves: int, per_save: int) -> None:
    now = clock.now()
    store.set_profile_field("nickname", "小明")
    for s in range(saves):
        scope = Scope("stardew-valley", f"farm-{s}")
        play = store.open_play_session(scope, now - 600, "UTC")
        store.close_play_session(play, now - 300)
        for i in range(per_save):
            store.upsert_event(scope, NewEvent("event", f"事{s}-{i}", "一件事"), now)


BROAD = [
    {"target": "save", "gameId": "stardew-valley", "saveId": "farm-0"},
    {"target": "game", "gameId": "stardew-valley"},
    {"target": "profile"},
    {"target": "all"},
    {"target": "save", "gameId": "stardew-valley", "saveId": "farm-0", "includeStats": True},
    {"target": "game", "gameId": "stardew-valley", "includeStats": True},
    {"target": "all", "includeStats": True},
]


async def test_an_agent_alone_cannot_delete_broadly_or_statistics(tmp_path: Path) -> None:
    """As measured: an agent waits past 5 s, quotes, and tries everything and the statistics."""
    clock = ManualClock()
    store = MemoryStore(tmp_path / "m.sqlite", clock=clock, trash_window=24 * 3600)
    _seed_many(store, clock, saves=4, per_save=3)
    server = build(MemoryService(store), clock)
    with store:
        async with Client(server, mode="legacy") as client:
            for target in BROAD:
                result = await client.call_tool(FORGET, target)
                assert result.is_error, target
                assert "needs the player's own answer" in _text(result)
                assert "confirmToken" not in _text(result)
            # A single item still goes through the gate, into the trash.
            [first] = [e.id for e in store.load_scope(Scope("stardew-valley", "farm-0"))][:1]
            preview = await _preview_item(client, first)
            clock.advance(5.2)
            confirm = {**_target(first), "saveId": "farm-0"}
            done = await client.call_tool(
                FORGET,
                {**confirm, "confirmToken": preview["confirmToken"], "quote": preview["quote"]},
            )
            assert not done.is_error and json.loads(_text(done))["trashId"] is not None
        kept = sum(len(store.load_scope(Scope("stardew-valley", f"farm-{s}"))) for s in range(4))
        assert kept == 11 and store.get_profile().nickname == "小明"
        assert len(store.stats().saves) == 4


async def _preview_item(client: Client, event_id: int) -> dict[str, Any]:
    result = await client.call_tool(FORGET, {**_target(event_id), "saveId": "farm-0"})
    assert not result.is_error, _text(result)
    preview: dict[str, Any] = json.loads(_text(result))
    return preview


async def test_the_person_answering_an_elicitation_may_delete_everything(tmp_path: Path) -> None:
    clock = ManualClock()
    store = MemoryStore(tmp_path / "m.sqlite", clock=clock, trash_window=24 * 3600)
    _seed_many(store, clock, saves=2, per_save=2)
    server = build(MemoryService(store), clock)
    asked: list[str] = []

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"delete": True})

    with store:
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            preview = await client.call_tool(FORGET, {"target": "all"})
            assert not preview.is_error, _text(preview)
            token = json.loads(_text(preview))["confirmToken"]
            done = await client.call_tool(FORGET, {"target": "all", "confirmToken": token})
            assert not done.is_error and json.loads(_text(done))["items"] == 4
        assert len(asked) == 1 and "all" in asked[0]
        assert store.get_profile().nickname == ""


async def test_statistics_the_person_deletes_wait_in_the_trash(tmp_path: Path) -> None:
    clock = ManualClock()
    store = MemoryStore(tmp_path / "m.sqlite", clock=clock, trash_window=24 * 3600)
    _seed_many(store, clock, saves=3, per_save=1)
    server = build(MemoryService(store), clock)

    async def person(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"delete": True})

    before = store.stats()
    with store:
        async with Client(server, mode="legacy", elicitation_callback=person) as client:
            target = {"target": "game", "gameId": "stardew-valley", "includeStats": True}
            token = json.loads(_text(await client.call_tool(FORGET, target)))["confirmToken"]
            done = json.loads(
                _text(await client.call_tool(FORGET, {**target, "confirmToken": token}))
            )
            assert done["statsSaves"] == 3 and done["trashId"] is not None
        assert store.stats().saves == [] and store.stats().games == []
        clock.advance(24 * 3600)  # restorable for 24 h, like memories
        restored = store.restore(done["trashId"])
        assert restored.stats_saves == 3 and restored.items == 3
        assert store.stats().saves == before.saves


async def test_an_agent_alone_deletes_at_most_3_items_an_hour_even_across_restarts(
    tmp_path: Path,
) -> None:
    """S5-4 as measured: preview all 12 items, wait once, echo each quote: 3 go, not 12."""
    clock = ManualClock()
    store = MemoryStore(tmp_path / "m.sqlite", clock=clock, trash_window=24 * 3600)
    _seed_many(store, clock, saves=1, per_save=12)
    farm = Scope("stardew-valley", "farm-0")
    ids = [e.id for e in store.load_scope(farm)]
    assert len(ids) == 12

    async def sweep(server: Any) -> list[str]:
        async with Client(server, mode="legacy") as client:
            kept = [i for i in ids if _kept(store, farm, i)]
            previews = [await _preview_item(client, i) for i in kept]
            clock.advance(5.0)
            answers = []
            for preview, event_id in zip(previews, kept, strict=True):
                confirm = {**_target(event_id), "saveId": "farm-0"}
                result = await client.call_tool(
                    FORGET,
                    {**confirm, "confirmToken": preview["confirmToken"], "quote": preview["quote"]},
                )
                answers.append("error: " + _text(result) if result.is_error else "deleted")
            return answers

    with store:
        answers = await sweep(build(MemoryService(store), clock))
        assert answers.count("deleted") == 3 and len(store.load_scope(farm)) == 9
        assert all("at most 3 items an hour" in a for a in answers if a != "deleted")
        # A new `xtyserver mcp` process (a new server over the same store) starts no new hour.
        clock.advance(3590)
        again = await sweep(build(MemoryService(store), clock))
        assert "deleted" not in again and len(store.load_scope(farm)) == 9
        clock.advance(10)  # an hour after the first three: three more
        later = await sweep(build(MemoryService(store), clock))
        assert later.count("deleted") == 3 and len(store.load_scope(farm)) == 6
        assert len(store.trash_entries()) == 6


def _kept(store: MemoryStore, scope: Scope, event_id: int) -> bool:
    return any(e.id == event_id for e in store.load_scope(scope))
