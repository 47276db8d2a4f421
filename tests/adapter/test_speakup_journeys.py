"""The companion speaks up in the games' stand-in worlds (docs/speakup.md).

DST: the mod (scripts/xty/mod.lua) in the lua5.1 shim's world over POST /v1/http sees dusk
come and reports ``night_falling``; the server, on the test's clock, lets the companion
speak once, not again within the cooldown, again after it, and never when speaking up is
off (the default). The scripted model answers. "Not twice" is read after a chat the mod sent
behind the event, so the event was surely handled: no wait on time.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.adapter.games import (
    EVENING,
    FAST_BEATS,
    NO_LUA,
    Game,
    dst_game,
    free_port,
    has_luasocket,
    until,
)
from tests.conftest import Harness, running
from xtyserver.clock import ManualClock
from xtyserver.session.settings import Texts
from xtyserver.testing import Reply

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(NO_LUA or not has_luasocket(), reason="needs lua5.1 and lua-socket"),
]
DST = "dont-starve-together"


def has_browser() -> bool:
    from tests import browser

    return browser.find() is not None


LINE = "天黑了，快回火堆边吧！"


@asynccontextmanager
async def serve(tmp: Path, port: int, **overrides: Any) -> AsyncIterator[Harness]:
    """The real server on the test's clock, which runs at twice the speed of real time (the
    mod's frames, five heartbeats a second, need the rate buckets to refill); the test's
    own steps are the long ones."""
    values = {**FAST_BEATS, "server.port": port, "server.ui_port": 0, **overrides}
    async with (
        running(tmp / "data", clock=ManualClock(EVENING), overrides=values) as h,
        anyio.create_task_group() as tg,
    ):

        async def tick() -> None:
            while True:
                await anyio.sleep(0.1)
                h.clock.advance(0.2)

        tg.start_soon(tick)
        yield h
        tg.cancel_scope.cancel()


def lines_asked(h: Harness) -> list[str]:
    """The proactive lines the model was asked for: their last message asks for a line (a
    player's turn after a line has it in its history, not last)."""
    cue = Texts().speakup_cue
    return [r.text for r in h.fake.chat_requests if r.json["messages"][-1]["content"].endswith(cue)]


async def dusk_then_chat(world: Game, question: str) -> None:
    """Dusk comes and the mod reports it, then the player asks something: the chat goes
    behind the event, so its reply means the server has handled the event."""
    mark = len(world.lines)
    world.do("phase dusk")
    await world.expect("[xty] event night_falling", after=mark)
    world.do(f"chat {question}")
    await world.expect(f"reply: 小汤圆收到：{question}", after=mark)
    world.do("phase day")
    await world.expect("the mod sees day", after=mark)


async def minutes(h: Harness, count: int) -> None:
    """``count`` minutes of the server's clock, one at a time, each with a heartbeat after it
    (a longer step would outrun the heartbeat deadline)."""
    for _ in range(count):
        h.clock.advance(60)
        at = h.clock.now()
        await until(lambda at=at: any((s.last_played or 0) >= at for s in h.store.stats().saves))


async def test_dusk_in_dst_makes_the_companion_speak_once_within_its_cooldown(
    tmp_path: Path,
) -> None:
    port = free_port()
    on = {f"speakup.games.{DST}.enabled": True, f"speakup.games.{DST}.cooldown_minutes": 10}
    async with serve(tmp_path, port, **on) as h, dst_game(tmp_path, port) as world:
        await world.expect("session open")
        await world.expect("the mod sees day")  # what "before" is
        h.fake.enqueue(Reply(text=LINE, match="游戏里刚发生"))
        world.do("phase dusk")
        await world.expect(f"companion: {LINE}", timeout=20)
        [asked] = lines_asked(h)
        assert "天快黑了" in asked and "Forest" in asked
        # The next evening within ten minutes of the server's clock: no second line.
        mark = len(world.lines)
        world.do("phase day")
        await world.expect("the mod sees day", after=mark)
        await minutes(h, 9)  # a minute at a time: the heartbeats keep the session
        await dusk_then_chat(world, "今晚吃什么")
        assert len(lines_asked(h)) == 1 and world.count("companion:") == 1
        # Past the cooldown, the evening after speaks again.
        await minutes(h, 1)
        h.fake.enqueue(Reply(text="又到晚上了。", match="游戏里刚发生"))
        world.do("phase dusk")
        await world.expect("companion: 又到晚上了。")
        assert len(lines_asked(h)) == 2
        assert world.count("session open") == 1


async def test_dusk_says_nothing_when_speaking_up_is_off(tmp_path: Path) -> None:
    port = free_port()
    async with serve(tmp_path, port) as h, dst_game(tmp_path, port) as world:
        await world.expect("session open")
        await world.expect("the mod sees day")
        await dusk_then_chat(world, "天黑了吗")
        await dusk_then_chat(world, "还是黑的")
        assert lines_asked(h) == [] and world.count("companion:") == 0
        assert len(h.fake.chat_requests) == 2


def turn_on_dst_on_the_page(link: str) -> dict[str, bool]:
    """The player opens 设置 in chromium, sees 主动说话 off for each game, turns it on for
    Don't Starve Together at two lines an hour, and saves. Returns what the page showed."""
    from tests import browser
    from tests.manage.test_browser import css, ready, wait

    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        legends = [e.text for e in css(d, "#s-speakup-games legend")]
        assert legends == ["星露谷物语", "饥荒联机版", "缺氧"], legends
        shown = {
            game: css(d, f"#s-speakup-{game}-enabled")[0].is_selected()
            for game in ("stardew-valley", DST, "oxygen-not-included")
        }
        assert css(d, f"#s-speakup-{DST}-lines_per_hour")[0].get_attribute("value") == "4"
        css(d, f"#s-speakup-{DST}-enabled")[0].click()
        hour = css(d, f"#s-speakup-{DST}-lines_per_hour")[0]
        hour.clear()
        hour.send_keys("2")
        css(d, "#s-save-speakup")[0].click()
        wait(d, lambda d: css(d, "#status")[0].text == "已保存，从游戏里的下一件事起生效。")
        css(d, "#s-speakup")[0].location_once_scrolled_into_view  # noqa: B018 (scrolls)
        browser.screenshot(d, "ui-speakup-1280.png", 1280)
        # A number past its bound is refused, the field marked, nothing saved.
        hour = css(d, f"#s-speakup-{DST}-lines_per_hour")[0]
        hour.clear()
        hour.send_keys("99")
        css(d, "#s-save-speakup")[0].click()
        wait(d, lambda d: hour.get_attribute("aria-invalid") == "true")
        assert "超出了允许的范围" in css(d, "#status")[0].text
        # The same settings in English.
        css(d, "#lang")[0].click()
        ready(d, "settings")
        wait(d, lambda d: css(d, "#s-speakup-games legend")[0].text == "Stardew Valley")
        assert [e.text for e in css(d, "#s-speakup-games legend")][1:] == [
            "Don't Starve Together",
            "Oxygen Not Included",
        ]
        label = css(d, f"label:has(#s-speakup-{DST}-enabled)")[0].text
        assert label == "Let XiaoTangYuan speak up in this game"
        assert css(d, f"#s-speakup-{DST}-enabled")[0].is_selected()
        return shown


@pytest.mark.skipif(not has_browser(), reason="needs chromium and chromedriver")
async def test_the_player_turns_speaking_up_on_on_the_page_then_dusk_speaks(
    tmp_path: Path,
) -> None:
    port = free_port()
    async with serve(tmp_path, port) as h, dst_game(tmp_path, port) as world:
        await world.expect("session open")
        await world.expect("the mod sees day")
        await dusk_then_chat(world, "天黑了吗")
        assert lines_asked(h) == []  # off by default
        # The player chose the provider on this page before (a save applies the page's
        # whole choice, the model with it).
        assert h.server.ui.settings is not None
        chosen = {"model.base_url": h.fake.base_url, "model.model": "fake-vl"}
        h.server.ui.settings.player.write(chosen)
        shown = await anyio.to_thread.run_sync(turn_on_dst_on_the_page, h.server.ui_link)
        assert shown == {"stardew-valley": False, DST: False, "oxygen-not-included": False}
        stored = (h.settings.data_path / "settings.json").read_text(encoding="utf-8")
        assert f'"speakup.games.{DST}.enabled": true' in stored
        assert f'"speakup.games.{DST}.lines_per_hour": 2' in stored and "99" not in stored
        # The open session took it without a restart: the next dusk speaks, saying why.
        h.fake.enqueue(Reply(text=LINE, match="游戏里刚发生"))
        mark = len(world.lines)
        world.do("phase dusk")
        await world.expect(f"companion: {LINE}", after=mark, timeout=20)
        await world.expect("why: 小汤圆主动说话，因为天快黑了。", after=mark)
        assert len(lines_asked(h)) == 1
        assert world.count("session open") == 1
