"""The Python adapter client reports game events and hears the companion speak up (docs/speakup.md).

Real server (real WebSocket, SQLite file, the scripted model), the server's clock a ManualClock:
an event makes one line with why, the player's next turn sees it; typed words cut a line that
streams and are answered at once; a stale event is refused naming its field; hundreds of events
a second lose the excess, never the connection.
"""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.adapter.test_client import client
from tests.conftest import Harness, model_context, running
from xtyserver.adapter import ChatDone, ChatError, CompanionLine, Refused, captured_at
from xtyserver.clock import ManualClock
from xtyserver.session.settings import Texts
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
ON = {
    "speakup.games.stardew-valley.enabled": True,
    "speakup.games.stardew-valley.cooldown_minutes": 10,
}
LINE = "体力快没了，歇一会儿再干吧！"


def lines_asked(h: Harness) -> int:
    cue = Texts().speakup_cue
    return sum(1 for r in h.fake.chat_requests if r.json["messages"][-1]["content"].endswith(cue))


class Heard:
    """The companion's lines as the adapter's callback gets them, awaitable."""

    def __init__(self) -> None:
        self.lines: list[CompanionLine] = []
        self._changed = anyio.Event()

    def __call__(self, line: CompanionLine) -> None:
        self.lines.append(line)
        self._changed.set()
        self._changed = anyio.Event()

    async def count(self, n: int) -> CompanionLine:
        with anyio.fail_after(30):
            while len(self.lines) < n:
                await self._changed.wait()
        return self.lines[n - 1]


async def test_an_event_speaks_once_with_why_and_the_players_answer_sees_it(tmp_path: Path) -> None:
    heard = Heard()
    async with (
        running(tmp_path, clock=ManualClock(), overrides=ON) as h,
        client(h, on_companion=heard) as c,
    ):
        await c.update_state(model_context(h.clock, world={"location": "Farm", "day": 5}))
        h.fake.enqueue(Reply(text=LINE, match="游戏里刚发生"))
        facts = {"value": 20, "maxValue": 270}
        await c.event("stamina_low", facts, captured_at=captured_at(h.clock))
        line = await heard.count(1)
        assert (line.id, line.text) == ("companion-1", LINE)
        assert isinstance(line.outcome, ChatDone) and line.outcome.origin == "companion"
        assert line.why is not None and "你的体力快用完了" in line.why and "主动说话" in line.why
        # Again within the cooldown: nothing is asked; the player's answer is an ordinary
        # turn that sees the line as the round before.
        h.clock.advance(5)  # within a heartbeat's deadline, and the cooldown's
        await c.event("stamina_low", facts, captured_at=captured_at(h.clock))
        reply = await c.chat("好，我去睡觉")
        outcome = await reply.result()
        assert isinstance(outcome, ChatDone) and outcome.origin == "player"
        assert lines_asked(h) == 1 and len(heard.lines) == 1
        contents = [m["content"] for m in h.fake.chat_requests[-1].json["messages"]]
        assert LINE in contents


async def test_typed_words_cut_a_streaming_line_and_are_answered_at_once(tmp_path: Path) -> None:
    heard = Heard()
    async with (
        running(tmp_path, clock=ManualClock(), overrides=ON) as h,
        client(h, on_companion=heard) as c,
    ):
        await c.update_state(model_context(h.clock, world={"location": "Farm", "day": 5}))
        pieces = ["天", "快", "黑", "了", "，", "回", "家", "吧"]
        h.fake.enqueue(Reply(chunks=pieces, chunk_delay=2.0, match="游戏里刚发生"))
        await c.event("night_falling", captured_at=captured_at(h.clock))
        with anyio.fail_after(30):
            while not h.fake.chat_requests:
                await anyio.sleep(0.02)
        reply = await c.chat("等一下，先别说")
        outcome = await reply.result()
        assert isinstance(outcome, ChatDone)  # never "busy": the player wins
        line = await heard.count(1)
        assert isinstance(line.outcome, ChatError)
        assert (line.outcome.code, line.outcome.origin, line.why) == (
            "cancelled",
            "companion",
            None,
        )


async def test_a_stale_event_is_refused_and_a_flood_loses_only_its_excess(tmp_path: Path) -> None:
    refused: list[Refused] = []
    heard = Heard()
    async with (
        running(tmp_path, clock=ManualClock(), overrides=ON) as h,
        client(h, on_companion=heard, on_error=refused.append) as c,
    ):
        await c.update_state(model_context(h.clock, world={"location": "Farm", "day": 5}))
        old = captured_at(ManualClock(h.clock.now() - 6))
        await c.event("stamina_low", captured_at=old)
        with pytest.raises(Refused) as local:
            await c.event("dragon_near")  # not a kind: refused here, never sent
        assert local.value.fields == ("kind",)
        h.fake.enqueue(Reply(text=LINE, match="游戏里刚发生"))
        for _ in range(300):  # one instant of the server's clock
            await c.event("stamina_low", captured_at=captured_at(h.clock))
        await heard.count(1)
        # The connection goes on: a chat is answered after the flood.
        outcome = await (await c.chat("还在吗？")).result()
        assert isinstance(outcome, ChatDone) and c.connected
        codes = [r.code for r in refused]
        assert codes[0] == "stale_event" and refused[0].fields == ("capturedAt",)
        assert "rate_limited" in codes and len(heard.lines) == 1 and lines_asked(h) == 1
