"""The page's actions tab in a real browser, over a real server and the Python adapter.

The mod declares walk_to (act) and highlight (look); 带我去鱼塘 walks there and
the page's action log says so. The player sets the game to "look only" on the
page: the next 带我去鱼塘 offers only highlight and a walk_to call is refused,
which the log shows with why, in Chinese and in English. "Off" offers nothing.
The switch is kept in the data folder and read again by the next server.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import msgspec
import pytest

from tests import browser
from tests.adapter.test_client import client
from tests.conftest import Harness, model_context, running
from tests.manage.test_browser import css, ready, wait
from xtyserver.adapter import ChatDone
from xtyserver.protocol.action_frames import ActionSpec
from xtyserver.protocol.frames import ActionRequest
from xtyserver.serve.action_modes import MAX_GAMES, ActionModes
from xtyserver.testing import Reply, ToolCallScript

pytestmark = pytest.mark.anyio
QUIET = {"memory.extraction": False, "server.heartbeat_ms": 600_000}
GAME = "stardew-valley"
SPECS = msgspec.convert(
    [
        {
            "name": "walk_to",
            "description": "带玩家走到一个地点",
            "descriptionEn": "walk the player to a place",
            "risk": "act",
            "parameters": {
                "properties": {"place": {"type": "string", "enum": ["鱼塘", "矿洞"]}},
                "required": ["place"],
            },
        },
        {
            "name": "highlight",
            "description": "高亮一个东西",
            "descriptionEn": "highlight a thing",
            "risk": "look",
            "parameters": {"properties": {"target": {"type": "string", "maxLength": 20}}},
        },
    ],
    list[ActionSpec],
)
WALK = ToolCallScript(name="game_walk_to", arguments={"place": "鱼塘"})


def _offered(h: Harness) -> list[str]:
    tools = h.turn_request().json.get("tools", [])
    return [t["function"]["name"] for t in tools if t["function"]["name"].startswith("game_")]


def _log_rows(d: Any) -> list[str]:
    return [r.text for r in css(d, "#action-log tr[data-action-event]")]


def open_actions(d: Any, h: Harness) -> None:
    d.get(h.server.ui_link)
    ready(d, "memory")
    css(d, "#tab-actions")[0].click()
    ready(d, "actions")


def choose(d: Any, mode: str, saved: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(css(d, f'select[data-game="{GAME}"]')[0]).select_by_value(mode)
    wait(d, lambda d: saved in css(d, "#status")[0].text)


def first_visit(h: Harness) -> None:
    with browser.chromium() as d:
        open_actions(d, h)
        [game] = [r.text for r in css(d, "#action-modes tr[data-action-game]")]
        assert "星露谷物语" in game and "带玩家走到一个地点（会改变游戏）" in game
        assert "高亮一个东西（查看）" in game
        rows = _log_rows(d)
        assert len(rows) == 2  # newest first: the result, then the request
        assert "walk_to" in rows[0] and "完成" in rows[0] and "开始走向鱼塘" in rows[0]
        assert "请游戏执行" in rows[1] and "place=鱼塘" in rows[1]
        choose(d, "look", "只做查看类动作")


def second_visit(h: Harness) -> None:
    with browser.chromium() as d:
        open_actions(d, h)
        rows = _log_rows(d)
        assert "没有执行：这个游戏只允许查看类动作" in rows[0]
        css(d, "#lang")[0].click()
        wait(d, lambda d: "not done: this game allows look actions only" in _log_rows(d)[0])
        assert "walk the player to a place (changes the game)" in " ".join(
            r.text for r in css(d, "#action-modes tr")
        )
        choose(d, "off", "do nothing")


@pytest.mark.skipif(browser.find() is None, reason=browser.MISSING)
async def test_the_player_sees_what_was_done_and_sets_look_only_then_off(tmp_path: Path) -> None:
    walked: list[ActionRequest] = []

    def act(request: ActionRequest) -> tuple[str, str]:
        walked.append(request)
        return "done", "开始走向鱼塘"

    async with (
        running(tmp_path, overrides=QUIET) as h,
        client(h, actions=SPECS, on_action=act) as mod,
    ):

        async def ask(text: str, *replies: Reply) -> ChatDone:
            h.clock.advance(5)
            h.fake.enqueue(*replies)
            reply = await mod.chat(text, model_context=model_context(h.clock))
            done = await reply.result()
            assert isinstance(done, ChatDone)
            await h.server.working.wait_written()  # the log the page reads
            return done

        await ask("带我去鱼塘", Reply(tool_calls=[WALK]), Reply(text="走啦"))
        assert [r.name for r in walked] == ["walk_to"]
        await anyio.to_thread.run_sync(first_visit, h)
        assert h.server.action_modes.mode(GAME) == "look"

        # Look only, from the very next turn of the open connection.
        await ask("带我去鱼塘", Reply(tool_calls=[WALK]), Reply(text="我只能帮你标出来"))
        assert _offered(h) == ["game_highlight"] and len(walked) == 1
        first = h.fake.chat_requests[-2].json
        assert [t["function"]["name"] for t in first["tools"]] == ["game_highlight"]
        await anyio.to_thread.run_sync(second_visit, h)

        # Off: no action is offered at all.
        await ask("带我去鱼塘", Reply(text="现在不能带路"))
        assert "tools" not in h.turn_request().json and len(walked) == 1
    # Kept in the data folder: the next server reads it again.
    assert ActionModes(h.settings.data_path).mode(GAME) == "off"


def test_the_switches_file_keeps_at_most_64_games_and_a_bad_file_counts_as_none(
    tmp_path: Path,
) -> None:
    modes = ActionModes(tmp_path)
    for n in range(MAX_GAMES):
        modes.set(f"game-{n}", "look")
    with pytest.raises(ValueError):
        modes.set("one-more", "off")
    modes.set("game-0", "off")  # a game already kept changes
    modes.set("game-1", "all")  # all is the default: its line goes, which frees one
    modes.set("one-more", "off")
    again = ActionModes(tmp_path)
    assert len(again.modes()) == MAX_GAMES
    assert again.mode("game-0") == "off" and again.mode("game-1") == "all"
    assert again.mode("never-seen") == "all"
    (tmp_path / "action_modes.json").write_text('{"a": "everything", "b": "look"', "utf-8")
    assert ActionModes(tmp_path).modes() == {}
    (tmp_path / "action_modes.json").write_text('{"a": "everything", "b": "look"}', "utf-8")
    assert ActionModes(tmp_path).modes() == {"b": "look"}
