"""`xtyserver mcp` driven by the `mcp` package's own client over stdio, beside a running server."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types
from mcp.types import TextContent
from websockets.asyncio.client import connect

from tests.conftest import TOKEN, ServerProcess, hello_frame, recv, send
from xtyserver.clock import SystemClock
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")
TOOLS = {
    "xiaotangyuan_memory_view",
    "xiaotangyuan_memory_correct_shared",
    "xiaotangyuan_memory_forget",
    "xiaotangyuan_memory_forget_name",
}


def text(result: Any) -> str:
    [content] = result.content
    assert isinstance(content, TextContent)
    return content.text


async def call(session: ClientSession, name: str, **arguments: Any) -> Any:
    result = await session.call_tool(name, arguments)
    assert not result.is_error, text(result)
    return json.loads(text(result))


async def _player_agrees(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
    """The person at the assistant says yes when asked (MCP asks them)."""
    assert "删除" in params.message
    return types.ElicitResult(action="accept", content={"delete": True})


def seed(data_dir: Path) -> list[int]:
    with MemoryStore.open_profile(data_dir, "default", clock=SystemClock()) as store:
        store.set_profile_field("nickname", "小明")
        play = store.open_play_session(FARM, 1.0, "UTC", save_name="阳光农场")
        store.close_play_session(play, 61.0)
        ids = []
        for subject, summary in (("鱼缸", "完成鱼缸收集包"), ("温室", "修好温室")):
            ids.append(store.upsert_event(FARM, NewEvent("goal", subject, summary), 1.0).id)
        store.learn_alias(FARM, "大棚", "温室", 1.0)
        return ids


async def test_the_three_tools_over_stdio_while_the_server_runs(tmp_path: Path) -> None:
    ids = seed(tmp_path)
    server = ServerProcess(tmp_path)
    try:
        async with connect(server.url) as ws:  # an adapter plays (and writes) meanwhile
            await send(ws, hello_frame())
            assert (await recv(ws))["type"] == "server.hello"
            # The adapter's play session is stored in the store lane's order: once the
            # server answers a stats.get sent after the hello, the MCP process sees it too.
            await send(ws, {"type": "stats.get", "id": "seen"})
            while (answer := await recv(ws))["type"] != "stats.result":
                pass
            assert [row["sessions"] for row in answer["saves"]] == [2]
            params = StdioServerParameters(
                command=sys.executable,
                args=[
                    "-m",
                    "xtyserver",
                    "mcp",
                    "--data-dir",
                    str(tmp_path),
                    "--profile",
                    "default",
                ],
                env={"XTY_TOKEN": TOKEN, "PYTHONPATH": os.getcwd()},
            )
            with anyio.fail_after(60):
                async with (
                    stdio_client(params) as (read, write),
                    ClientSession(read, write, elicitation_callback=_player_agrees) as s,
                ):
                    await s.initialize()
                    listed = await s.list_tools()
                    assert {t.name for t in listed.tools} == TOOLS
                    assert (await s.list_resources()).resources == []  # nothing pushed as context

                    # The in-game view's parts: profile, each save's memories by
                    # readable name, the statistics; RFC 3339 times.
                    overview = await call(s, "xiaotangyuan_memory_view")
                    assert overview["profile"]["nickname"] == "小明"
                    [save] = overview["saves"]
                    assert (save["gameId"], save["saveId"], save["saveName"]) == (
                        "stardew-valley",
                        "farm-a",
                        "阳光农场",
                    )
                    assert {e["id"] for e in save["events"]} == set(ids)
                    assert {e["summary"] for e in save["events"]} == {"完成鱼缸收集包", "修好温室"}
                    assert all(e["updatedAt"].endswith("Z") for e in save["events"])
                    [stats] = overview["stats"]["saves"]
                    # the seeded session and the adapter playing now
                    assert (stats["saveName"], stats["sessions"]) == ("阳光农场", 2)
                    assert overview["stats"]["games"][0]["lastPlayed"].endswith("Z")
                    one = await call(
                        s, "xiaotangyuan_memory_view", gameId="stardew-valley", saveId="farm-a"
                    )
                    assert [v["saveId"] for v in one["saves"]] == ["farm-a"]
                    none = await call(s, "xiaotangyuan_memory_view", gameId="oxygen-not-included")
                    assert none["saves"] == []
                    # The player's own names, and deleting one.
                    [name] = overview["names"]
                    assert (name["saveId"], name["name"], name["means"]) == (
                        "farm-a",
                        "大棚",
                        "温室",
                    )
                    farm = {"gameId": "stardew-valley", "saveId": "farm-a"}
                    await call(s, "xiaotangyuan_memory_forget_name", **farm, nameId=name["id"])
                    assert (await call(s, "xiaotangyuan_memory_view"))["names"] == []
                    gone = await s.call_tool(
                        "xiaotangyuan_memory_forget_name", {**farm, "nameId": name["id"]}
                    )
                    assert gone.is_error and "no name" in text(gone)

                    profile = await call(
                        s, "xiaotangyuan_memory_correct_shared", field="nickname", value="阿明"
                    )
                    assert profile["nickname"] == "阿明"
                    bad = await s.call_tool(
                        "xiaotangyuan_memory_correct_shared", {"field": "salary", "value": "1"}
                    )
                    assert bad.is_error and "unknown shared field" in text(bad)

                    await send(ws, {"type": "heartbeat"})  # the server writes between our writes
                    target = {
                        "target": "item",
                        "gameId": "stardew-valley",
                        "saveId": "farm-a",
                        "eventId": ids[0],
                    }
                    preview = await call(s, "xiaotangyuan_memory_forget", **target)
                    assert [e["id"] for e in preview["saves"][0]["events"]] == [ids[0]]
                    assert preview["statsSaves"] == [] and preview["expiresInMs"] == 120_000
                    token = preview["confirmToken"]
                    other = await s.call_tool(
                        "xiaotangyuan_memory_forget",
                        {**target, "eventId": ids[1], "confirmToken": token},
                    )
                    assert other.is_error and "another target" in text(other)
                    done = await call(s, "xiaotangyuan_memory_forget", **target, confirmToken=token)
                    assert done["items"] == 1 and done["statsSaves"] == 0
                    again = await s.call_tool(
                        "xiaotangyuan_memory_forget", {**target, "confirmToken": token}
                    )
                    assert again.is_error and "already used" in text(again)

            # The running server sees the changes in its own store.
            await send(ws, {"type": "memory.get", "id": "m"})
            result = await recv(ws)
            assert result["profile"]["nickname"] == "阿明"
            assert [e["id"] for e in result["events"]] == [ids[1]]
    finally:
        server.stop()
