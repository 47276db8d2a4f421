"""The Python adapter client's game actions against the real server (v1.md "Actions").

The client declares the actions in its hello and answers each ``action.request`` with its
``on_action`` hook, which checks the request against the adapter's own world first.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from tests.adapter.test_client import client
from tests.conftest import model_context, running
from xtyserver.adapter import ChatDone
from xtyserver.protocol.action_frames import ActionSpec
from xtyserver.protocol.frames import ActionRequest
from xtyserver.testing import Reply, ToolCallScript

pytestmark = pytest.mark.anyio
QUIET = {"memory.extraction": False, "server.heartbeat_ms": 600_000}
SPECS = msgspec.convert(
    [
        {
            "name": "drop_item",
            "description": "丢掉物品",
            "risk": "risky",
            "parameters": {
                "properties": {"item": {"type": "string", "maxLength": 40}},
                "required": ["item"],
            },
        },
        {"name": "wave", "description": "挥挥手", "risk": "look"},
    ],
    list[ActionSpec],
)


async def test_the_python_adapter_drops_only_after_the_players_yes(tmp_path: Path) -> None:
    bag = {"斧头": 1}

    def act(request: ActionRequest) -> tuple[str, str]:
        item = str(request.args.get("item"))
        if not request.confirmed:
            return "refused", "没有得到玩家的同意"
        if bag.get(item, 0) < 1:
            return "refused", f"背包里没有{item}"
        bag[item] -= 1
        return "done", f"丢下了{item}"

    drop = ToolCallScript(name="game_drop_item", arguments={"item": "斧头"})
    async with (
        running(tmp_path, overrides=QUIET) as h,
        client(h, actions=SPECS, on_action=act) as mod,
    ):
        context = model_context(h.clock)
        h.fake.enqueue(Reply(tool_calls=[drop]), Reply(text="我可以丢掉它。"))
        first = await (await mod.chat("把斧头丢了吧", model_context=context)).result()
        assert isinstance(first, ChatDone) and first.question
        assert bag == {"斧头": 1} and not mod.action_requests
        # A yes to that question runs it once; the model asked again with the same call.
        h.clock.advance(5)
        h.fake.enqueue(Reply(tool_calls=[drop]), Reply(text="丢好了"))
        done = await (await mod.chat("好的", model_context=model_context(h.clock))).result()
        assert isinstance(done, ChatDone) and done.text == "丢好了"
        assert bag == {"斧头": 0}
        [request] = mod.action_requests
        assert request.confirmed and request.name == "drop_item"
        # A look-only action declared later replaces the set whole.
        declared = await mod.declare_actions(SPECS[1:])
        assert declared.names == ["wave"]


async def test_a_hook_that_raises_answers_failed_and_the_reader_goes_on(tmp_path: Path) -> None:
    def act(request: ActionRequest) -> tuple[str, str]:
        raise RuntimeError("the game's own bug")

    wave = ToolCallScript(name="game_wave", arguments={})
    async with (
        running(tmp_path, overrides=QUIET) as h,
        client(h, actions=SPECS, on_action=act) as mod,
    ):
        h.fake.enqueue(Reply(tool_calls=[wave]), Reply(text="没挥成"))
        reply = await mod.chat("挥挥手给我看看", model_context=model_context(h.clock))
        done = await reply.result()
        assert isinstance(done, ChatDone) and done.text == "没挥成"
        tool = [m["content"] for m in h.turn_request().json["messages"] if m["role"] == "tool"]
        assert any("失败" in t and "RuntimeError" in t for t in tool)
        # The connection goes on: the next turn is an ordinary one.
        h.fake.enqueue(Reply(text="在的"))
        again = await (await mod.chat("你还在吗", model_context=model_context(h.clock))).result()
        assert isinstance(again, ChatDone) and again.text == "在的"


async def test_a_client_without_a_hook_refuses_every_request(tmp_path: Path) -> None:
    wave = ToolCallScript(name="game_wave", arguments={})
    async with running(tmp_path, overrides=QUIET) as h, client(h, actions=SPECS) as mod:
        h.fake.enqueue(Reply(tool_calls=[wave]), Reply(text="这个模组不让我动"))
        reply = await mod.chat("挥挥手给我看看", model_context=model_context(h.clock))
        done = await reply.result()
        assert isinstance(done, ChatDone)
        tool = [m["content"] for m in h.turn_request().json["messages"] if m["role"] == "tool"]
        assert any("拒绝" in t and "this mod runs no actions" in t for t in tool)
        assert [r.name for r in mod.action_requests] == ["wave"]


async def test_a_yes_to_the_models_other_question_never_runs_the_risky_action(
    tmp_path: Path,
) -> None:
    """The model asks something else before the player's yes: that yes runs nothing."""
    bag = {"斧头": 1}

    def act(request: ActionRequest) -> tuple[str, str]:
        bag[str(request.args["item"])] -= 1
        return "done", "丢下了"

    drop = ToolCallScript(name="game_drop_item", arguments={"item": "斧头"})
    async with (
        running(tmp_path, overrides=QUIET) as h,
        client(h, actions=SPECS, on_action=act) as mod,
    ):

        async def say(text: str, *replies: Reply) -> ChatDone:
            h.clock.advance(5)
            h.fake.enqueue(*replies)
            reply = await mod.chat(text, model_context=model_context(h.clock))
            done = await reply.result()
            assert isinstance(done, ChatDone)
            return done

        # In the same reply: the model's own question makes the server's lapse.
        asked = await say("把斧头丢了吧", Reply(tool_calls=[drop]), Reply(text="要不要先去钓鱼？"))
        assert asked.question is None
        # The reply asked something: the bare yes is offered the actions again, and the
        # drop is only asked about once more, never run.
        again = await say("好", Reply(tool_calls=[drop]), Reply(text="好嘞"))
        assert again.question and "丢掉物品" in again.question
        assert bag == {"斧头": 1} and not mod.action_requests
        # A no to that: nothing.
        await say("不要", Reply(text="好的，不丢"))

        # A turn between: the server asked, the player asked something else, the model
        # asked its own question, and the player's yes answers that one.
        asked = await say("把斧头丢了吧", Reply(tool_calls=[drop]), Reply(text="可以丢。"))
        assert asked.question and "丢掉物品" in asked.question
        await say("鱼塘在哪", Reply(text="在东边，要我带你去吗？"))
        await say("好", Reply(tool_calls=[drop]), Reply(text="走吧"))
        assert bag == {"斧头": 1} and not mod.action_requests
        await h.server.working.wait_written()
        events = [r.event for r in h.server.working.injections.actions(20)]
        assert events == ["asked"] * 4  # asked each time, run never
