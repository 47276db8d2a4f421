"""The player's own names for things, learnt per save, over a real server socket.

The player says "我管暖石叫小暖" in one session; a later session on the same save
asks with the nickname and the prompt the scripted model receives carries the
memory about 暖石; another save does not. The name shows on the memory page's
API and in ``xtyserver memory view``; deleting it (page, CLI, or the player's
own words) works. Real server, real WebSocket, real SQLite file, real CLI.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import anyio
import pytest

from tests.cli.test_main import xty
from tests.conftest import Harness, chat, running
from tests.manage.test_http import Page
from xtyserver.errors import StoreContentError
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.testing.model_server import Reply

pytestmark = pytest.mark.anyio
DST = "dont-starve-together"
WORLD_A = Scope(DST, "world-a")
WORLD_B = Scope(DST, "world-b")
STONE = "暖石收在基地门口的箱子里"
STONE_B = "暖石掉在了沼泽边上"
QUIET = {"memory.extraction": False}


async def until(predicate: Callable[[], object], timeout: float = 10.0) -> None:
    """Wait for the real server's store lane (a condition, not a sleep)."""
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.01)


def _learnt(h: Harness, scope: Scope) -> bool:
    """The store holds a name on ``scope`` and so does the index the next turn would use
    (the one still loaded for an open session, if any)."""
    cached = h.server.memory.cached_turn_memory(scope)
    index = cached.index if cached is not None else None
    return bool(h.store.aliases(scope)) and (index is None or bool(index.aliases))


def _seed(h: Harness) -> None:
    """Each save: the stone's memory, old and unimportant, behind two recent important ones
    (so "recent and important" never shows it: only a match does)."""
    now = h.clock.now()
    long_ago = now - 1000 * 3600
    for scope, stone in ((WORLD_A, STONE), (WORLD_B, STONE_B)):
        h.store.upsert_event(scope, NewEvent("event", "暖石", stone, importance=1), long_ago)
        for subject, summary in (("猪王", "和猪王换了金块"), ("蜘蛛巢", "清理了蜘蛛巢")):
            h.store.upsert_event(scope, NewEvent("event", subject, summary, importance=4), now)


async def _ask(h: Harness, save: str, text: str) -> str:
    """One turn on ``save`` of a new session; the turn's request text."""
    async with h.adapter(game=DST, save=save) as ws:
        h.fake.enqueue(Reply(text="嗯"))
        _, done = await chat(ws, text)
        assert done["type"] == "chat.done", done
    return h.turn_request().text


async def test_a_name_said_in_one_session_finds_the_memory_later_on_that_save_only(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=QUIET) as h:
        _seed(h)
        assert STONE not in await _ask(h, "world-a", "小暖放哪了？")  # no name known yet
        async with h.adapter(game=DST, save="world-a") as ws:
            h.fake.enqueue(Reply(text="好的，记住了"))
            await chat(ws, "以后我管暖石叫小暖")
            await until(lambda: _learnt(h, WORLD_A))
        [name] = h.store.aliases(WORLD_A)
        assert (name.alias, name.means) == ("小暖", "暖石")
        assert h.store.aliases(WORLD_B) == []

        asked = await _ask(h, "world-a", "小暖放哪了？")
        assert STONE in asked and STONE_B not in asked
        assert "【玩家的叫法】小暖 = 暖石" in asked  # the model reads the name too
        assert STONE_B not in await _ask(h, "world-b", "小暖放哪了？")  # another save: no name

        # Visible on the page and in the CLI, by save.
        page = Page(h)
        await page.open()
        view = await page.get("view")
        assert [(n["saveId"], n["name"], n["means"]) for n in view["names"]] == [
            ("world-a", "小暖", "暖石")
        ]
        table = xty(tmp_path, "memory", "view", "--game", DST, "--save", "world-a")
        assert table.returncode == 0, table.stderr
        assert f"{name.id}" in table.stdout and "小暖 -> 暖石" in table.stdout

        # Deleted from the page: the next question with the name finds nothing.
        await page.post("forget-name", gameId=DST, saveId="world-a", nameId=name.id)
        assert (await page.get("view"))["names"] == []
        missing = await page.post("forget-name", 404, gameId=DST, saveId="world-a", nameId=name.id)
        assert missing["fields"] == ["nameId"]
        assert STONE not in await _ask(h, "world-a", "小暖放哪了？")


async def test_the_player_renames_and_unnames_by_talking_and_the_cli_deletes(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=QUIET) as h:
        _seed(h)
        async with h.adapter(game=DST, save="world-a") as ws:
            for text in ("我管暖石叫小暖", "I call the crock pot 'big pot'", "小暖是我的猪王"):
                h.fake.enqueue(Reply(text="好"))
                await chat(ws, text)
            await until(
                lambda: {a.means for a in h.store.aliases(WORLD_A)} == {"猪王", "crock pot"}
            )
            # The same name said again means the new thing; then taken back in words.
            h.fake.enqueue(Reply(text="好"))
            await chat(ws, "别再把猪王叫小暖了")
            await until(lambda: [a.alias for a in h.store.aliases(WORLD_A)] == ["big pot"])
            h.fake.enqueue(Reply(text="好"))
            # A model's reply naming something teaches nothing.
            h.fake.enqueue(Reply(text="我管你的狗叫旺财"))
            await chat(ws, "你好")
        [pot] = h.store.aliases(WORLD_A)
        listed = json.loads(xty(tmp_path, "memory", "view", "--json").stdout)
        assert [(n["name"], n["means"]) for n in listed["names"]] == [("big pot", "crock pot")]
        args = ("memory", "forget-name", "--game", DST, "--save", "world-a", "--name", str(pot.id))
        assert xty(tmp_path, *args).returncode == 0
        assert h.store.aliases(WORLD_A) == []
        assert xty(tmp_path, *args).returncode == 1  # nothing left to delete


async def test_forbidden_names_are_not_stored_and_a_save_keeps_32(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=QUIET) as h:
        async with h.adapter(game=DST, save="world-a") as ws:
            h.fake.enqueue(Reply(text="好"))
            await chat(ws, "我管76561198012345678叫小号")
            h.fake.enqueue(Reply(text="好"))
            await chat(ws, "我管暖石叫小暖")
            await until(lambda: h.store.aliases(WORLD_A))
        assert [a.alias for a in h.store.aliases(WORLD_A)] == ["小暖"]
        with pytest.raises(StoreContentError):
            h.store.learn_alias(WORLD_A, "小号", "76561198012345678", h.clock.now())
        for n in range(40):
            h.store.learn_alias(WORLD_A, f"名字{n}", f"东西{n}", h.clock.now() + n)
        kept = h.store.aliases(WORLD_A)
        assert len(kept) == 32 and kept[0].alias == "名字8" and kept[-1].alias == "名字39"
        # Forgetting the save takes its names (into the trash); a restore brings them back.
        spec_save = h.store.forget(ForgetSpec(kind="save", game_id=DST, save_id="world-a"))
        assert h.store.aliases(WORLD_A) == []
        assert spec_save.trash_id is not None
        h.store.restore(spec_save.trash_id)
        assert len(h.store.aliases(WORLD_A)) == 32
