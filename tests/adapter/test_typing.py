"""The reference clients send ``chat.typing`` (v1.md "chat.typing") as the player types, and the
turn that follows finds its query's vector ready: the C# library in Probe.cs's game loop on Mono,
the SMAPI example's chat box in SmapiHost's 60 Hz loop, the DST client under lua5.1; every one
against the real server, whose scripted embedding model shows what was embedded and when.

What a burst of keys sends is decided on a clock the test moves (Probe.cs ``--typing-clock``,
the Lua driver's own clock) and counted on the wire; nothing here bounds elapsed time.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.adapter.games import Game, game_process
from tests.adapter.mono import NO_MONO, NO_MONO_REASON
from tests.conftest import TOKEN, running
from tests.test_server_embeddings import (
    ABIGAIL,
    EMBED,
    FARM,
    QUESTION,
    embedded_texts,
    idle,
    injected,
)
from tests.test_server_query_vectors import embedded
from xtyserver.memory.types import NewEvent
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
needs_mono = pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON)
HINT = re.compile(r"^hint at (\d+): (.*)$")


def hints(game: Game, after: int = 0) -> list[tuple[int, str]]:
    """The hints the C# client queued, (time on its clock, draft), from the probe's lines."""
    found = [HINT.match(line) for line in game.lines[after:]]
    return [(int(m[1]), m[2]) for m in found if m]


async def step(game: Game, n: int) -> int:
    """The index of the probe's ``n``-th "idled" line (its ``n``-th idle command done)."""
    at = -1
    for _ in range(n):
        at = await game.expect("idled", after=at + 1)
    return at


def probe_game(tmp_path: Path, probe: Path, url: str) -> Any:
    """Probe.exe's game loop on the test's typing clock, for the farm of FARM's save."""
    control = tmp_path / "control.txt"
    args = ["mono", str(probe), "session", url, TOKEN, "--save", FARM.save_id]
    args += ["--save-name", "Sunny Farm", "--control", str(control), "--typing-clock"]
    return game_process(args, control)


@needs_mono
async def test_a_question_typed_in_a_burst_is_hinted_once_at_the_pause_and_its_turn_reuses_it(
    tmp_path: Path, probe: Path
) -> None:
    """The player types the question a key every 50 ms (no pause: no hint), stops, and 300 ms
    later the one hint goes out; the server embeds it before the send, the chat.send of the
    same text embeds nothing more, and the memory is found by that vector."""
    async with running(tmp_path / "data", overrides=EMBED) as h:
        abigail = h.store.upsert_event(FARM, NewEvent("relationship", "阿比盖尔", ABIGAIL), 0)
        async with probe_game(tmp_path, probe, h.url) as game:
            await game.expect("session open")
            await idle(h)
            background = len(embedded_texts(h))
            game.do(f"keys 50 {QUESTION}")
            typed = await game.expect(f"typed {QUESTION}")
            assert hints(game) == []  # a key every 50 ms is no pause
            game.do("idle 400")
            await game.expect("idled", after=typed)
            # The 23rd key at 1,100 ms on the probe's clock; the first tick 300 ms after it
            # (ticks of 16 ms from 1,150, where the burst's own wait ended) is at 1,406.
            assert hints(game) == [(1406, QUESTION)]
            await embedded(h, background + 1)  # embedded while the player "paused"
            h.fake.enqueue(Reply(text="紫水晶"))
            game.do(f"chat {QUESTION}")
            await game.expect("chat end done 紫水晶")
            await idle(h)
            game.do("count")
            await game.expect("chat.typing frames 1")
        assert embedded_texts(h)[background:] == [QUESTION]  # once, by the hint
        assert injected(h)[-1] == {abigail.id: "vectors"}
        assert "refused" not in game.output


@needs_mono
async def test_keys_repeats_and_ime_phrases_send_a_bounded_number_of_hints(
    tmp_path: Path, probe: Path
) -> None:
    """On the test's clock: 60 keys 20 ms apart, then a pause: one hint. The same draft again,
    or retyped key by key: none. A Chinese IME committing six phrases 400 ms apart (a pause
    after each): one hint a second at most, so three, the last the whole sentence."""
    long_text = "阿比盖尔" * 15
    phrases = ["今天", "去矿洞", "之前", "要不要", "带点", "吃的"]
    async with running(tmp_path / "data", overrides=EMBED) as h:
        async with probe_game(tmp_path, probe, h.url) as game:
            await game.expect("session open")
            game.do(f"keys 20 {long_text}")
            game.do("idle 1000")
            await step(game, 1)
            assert [d for _, d in hints(game)] == [long_text]
            game.do(f"type {long_text}")
            game.do("idle 1000")
            game.do(f"keys 100 {long_text}")
            game.do("idle 1000")
            second = await step(game, 3)
            assert len(hints(game)) == 1, game.output  # nothing new to hint
            game.do(f"phrases 400 {'|'.join(phrases)}")
            game.do("idle 1000")
            await step(game, 4)
            ime = hints(game, second)
            # Commits at 0, 400, ... 2000 ms, the loop ticking every 16 ms from each: a pause is
            # seen 304 ms after its commit, but a hint waits 1000 ms after the one before it:
            # 304, then 1504 (the fourth commit's pause), then the first tick from 2504 (2512).
            start = ime[0][0] - 304
            assert [(at - start, draft) for at, draft in ime] == [
                (304, "今天"),
                (1504, "今天去矿洞之前要不要"),
                (2512, "".join(phrases)),
            ]
            game.do("count")
            await game.expect("chat.typing frames 4")  # on the wire: every hint, nothing else
        assert "refused" not in game.output
