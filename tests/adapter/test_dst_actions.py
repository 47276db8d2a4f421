"""The DST mod's actions in the lua5.1 shim's world, over POST /v1/http (v1.md "Actions").

scripts/xty/actions.lua declares point_to (look), craft (act) and drop_item (risky) in the
hello; the scripted model calls them; the mod checks each against its own world (menu,
nearby things, materials, inventory) and prints what it did. A risky drop waits for the
player's own yes to the server's question and never runs on a yes to another question.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.adapter.games import EVENING, NO_LUA, dst_game, free_port, has_luasocket, serve
from xtyserver.clock import ManualClock
from xtyserver.testing import Reply, ToolCallScript

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(NO_LUA or not has_luasocket(), reason="needs lua5.1 and lua-socket"),
]
DROP = ToolCallScript(name="game_drop_item", arguments={"item": "斧头"})
QUESTION = "要让小汤圆把物品栏里的东西丢到地上（item=斧头）吗？（说“好”就做，说“不”就不做）"


async def test_a_risky_drop_waits_for_the_players_yes_over_http(tmp_path: Path) -> None:
    port = free_port()
    async with serve(tmp_path, port, ManualClock(EVENING)) as h, dst_game(tmp_path, port) as world:
        await world.expect("session open")
        h.fake.enqueue(Reply(tool_calls=[DROP]), Reply(text="可以帮你把斧头丢掉。"))
        world.do("chat 帮我把斧头扔了")
        await world.expect(QUESTION)
        assert "DROPPED" not in world.output and "action drop_item" not in world.output
        tools = [t["function"]["name"] for t in h.fake.chat_requests[0].json["tools"]]
        assert tools == ["game_point_to", "game_craft", "game_drop_item"]
        # The player's own yes, the very next turn: the mod drops it (the request is confirmed).
        h.fake.enqueue(Reply(tool_calls=[DROP]), Reply(text="丢掉啦"))
        world.do("chat 好")
        await world.expect("reply: 丢掉啦")
        assert world.count("DROPPED 斧头 x1") == 1
        assert world.count("action drop_item: done 丢下了1个斧头") == 1


async def test_a_yes_to_another_question_drops_nothing_over_http(tmp_path: Path) -> None:
    port = free_port()
    async with serve(tmp_path, port, ManualClock(EVENING)) as h, dst_game(tmp_path, port) as world:
        await world.expect("session open")
        # The reply asks something else: the server's question lapses.
        h.fake.enqueue(Reply(tool_calls=[DROP]), Reply(text="要不要先去砍树？"))
        world.do("chat 帮我把斧头扔了")
        at = await world.expect("reply: 要不要先去砍树？")
        h.fake.enqueue(Reply(text="那我们去砍树"))
        world.do("chat 好")
        await world.expect("reply: 那我们去砍树", after=at)
        # 「好，扔吧」 asks for it again: the server asks again; nothing is dropped meanwhile.
        h.fake.enqueue(Reply(tool_calls=[DROP]), Reply(text="嗯"))
        world.do("chat 好，扔吧")
        await world.expect(QUESTION, after=at)
        assert "DROPPED" not in world.output
        assert "tools" not in h.fake.chat_requests[2].json


async def test_craft_and_point_check_the_world_and_say_why_not(tmp_path: Path) -> None:
    port = free_port()
    async with serve(tmp_path, port, ManualClock(EVENING)) as h, dst_game(tmp_path, port) as world:
        await world.expect("session open")
        craft = ToolCallScript(name="game_craft", arguments={"recipe": "torch"})
        point = ToolCallScript(name="game_point_to", arguments={"target": "Spider"})
        h.fake.enqueue(Reply(tool_calls=[craft]), Reply(text="草不够呢"))
        world.do("chat 帮我做个火把")
        await world.expect("reply: 草不够呢")
        assert world.count("action craft: refused 材料不够做火把：还差1个采下的草") == 1
        assert "BUILT" not in world.output
        h.fake.enqueue(Reply(tool_calls=[point]), Reply(text="蜘蛛在那边"))
        world.do("chat 蜘蛛在哪")
        await world.expect("reply: 蜘蛛在那边")
        assert world.count("POINTED Spider") == 1
        # With a menu open the mod refuses whatever is asked, and says why.
        world.do("menu open")
        await world.expect("> menu open")
        h.fake.enqueue(Reply(tool_calls=[point]), Reply(text="先关菜单"))
        world.do("chat 蜘蛛在哪")
        await world.expect("reply: 先关菜单")
        assert world.count("action point_to: refused 菜单开着，先关掉菜单") == 1
        last = h.fake.chat_requests[-1].json["messages"]
        assert "菜单开着" in [m["content"] for m in last if m["role"] == "tool"][-1]
