"""The names a game shows (``player.heldItemName``) over the real server: a held item's
shown name finds the memories that say it, and for the rest of the session on that save it
is an alias of the glossary entry its id names (both ways), never on another connection."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import chat, model_context, running, send
from tests.test_server_glossary import NO_EXTRACTION, memory_block
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")
# One memory in the words the game shows, one in the glossary's English.
SHOWN = "银光鱼只在下雨的夜里出现"
ENGLISH = "Golden Carp sells for 500g at Willy's shop"
SILVER = {"heldItem": "Mod.Silverscale", "heldItemName": "银光鱼"}
GOLDEN = {"heldItem": "Mod.GoldenCarp", "heldItemName": "黄金鲤"}
# A mod's items whose glossary Chinese names are not the ones the game shows.
ENTRIES = (
    'game = "stardew-valley"\n[item]\n'
    'golden_carp = { en = "Golden Carp", zh = "金鲤鱼", ids = ["Mod.GoldenCarp"] }\n'
    'silverscale = { en = "Silverscale", zh = "银鳞鱼", ids = ["Mod.Silverscale"] }\n'
)


def _memories(h: object) -> None:
    store = h.store  # type: ignore[attr-defined]
    clock = h.clock  # type: ignore[attr-defined]
    store.upsert_event(FARM, NewEvent(kind="event", subject="钓鱼", summary=SHOWN), 0)
    store.upsert_event(FARM, NewEvent(kind="event", subject="Fish", summary=ENGLISH), 0)
    # Enough newer, important memories that "recent and important" never takes them by chance.
    for n in range(8):
        store.upsert_event(
            FARM,
            NewEvent(
                kind="event", subject=f"杂事{n}", summary=f"第{n}天去镇上卖了防风草", importance=5
            ),
            clock.now(),
        )


async def held(h: object, ws: object, player: dict[str, str] | None) -> None:
    context = model_context(h.clock, **({"player": player} if player else {}))  # type: ignore[attr-defined]
    await send(ws, {"type": "state.update", "modelContext": context})  # type: ignore[arg-type]


async def ask(h: object, ws: object, text: str, chat_id: str) -> str:
    h.fake.enqueue(Reply(text="嗯"))  # type: ignore[attr-defined]
    _, done = await chat(ws, text, chat_id=chat_id)  # type: ignore[arg-type]
    assert done["type"] == "chat.done", done
    return memory_block(h)


async def test_a_held_items_shown_name_finds_its_memories_and_is_an_alias_that_session(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "glossary"
    folder.mkdir()
    (folder / "mod.toml").write_text(ENTRIES, encoding="utf-8")
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        _memories(h)
        async with h.adapter() as ws:
            # Held, its id alone names no word of the memory: the shown name does.
            await held(h, ws, {"heldItem": SILVER["heldItem"]})
            assert SHOWN not in await ask(h, ws, "这个好钓吗？", "c-id")
            await held(h, ws, SILVER)
            assert SHOWN in await ask(h, ws, "这个好钓吗？", "c-held")
            request = h.fake.chat_requests[-1].json["messages"][-1]["content"]
            assert "手持：银光鱼（Mod.Silverscale）" in request
            # Held once, then put away: the shown name names the entry, both ways.
            await held(h, ws, GOLDEN)
            await held(h, ws, None)
            assert ENGLISH in await ask(h, ws, "黄金鲤能卖多少钱？", "c-price")
            assert SHOWN in await ask(h, ws, "When does the Silverscale show up?", "c-when")
        # Another connection has not seen the game show that name: no alias there.
        async with h.adapter() as ws:
            assert ENGLISH not in await ask(h, ws, "黄金鲤能卖多少钱？", "c-new")
