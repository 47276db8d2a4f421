"""The game glossary over the real server: names meet across languages, a
player's glossary file is read at start (a bad one stops the start), the injection
log says how each memory matched."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import TOKEN, chat, model_context, running, send
from xtyeval.scoring import message_text
from xtyserver.clock import ManualClock
from xtyserver.config import load_settings
from xtyserver.errors import UsageError
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.server import serving
from xtyserver.session.prompt import MEMORY_HEAD
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")
OTHER = Scope("stardew-valley", "farm-b")
NO_EXTRACTION = {"memory.extraction": False}
ABIGAIL = "阿比盖尔已经四颗心了, 她最喜欢紫水晶"
SOPHIA = "索菲亚说她想要一束向日葵"


def memory_block(h: Any) -> str:
    """The last turn's memory layer: its "你记得的事" block, wherever the prompt puts it."""
    request = h.fake.chat_requests[-1].json
    texts = [message_text(m) for m in request["messages"]]
    blocks = [t[t.index(MEMORY_HEAD) :] for t in texts if MEMORY_HEAD in t]
    assert len(blocks) <= 1
    return blocks[0] if blocks else ""


async def injections(h: Any) -> list[dict[str, Any]]:
    with anyio.fail_after(10):
        await h.server.working.wait_written()
    path = Path(h.settings.data_path) / "profiles" / "default" / "injections.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _setup(h: Any) -> dict[str, int]:
    ids = {
        "abigail": h.store.upsert_event(
            FARM, NewEvent(kind="relationship", subject="阿比盖尔", summary=ABIGAIL), 0
        ).id,
        "sophia": h.store.upsert_event(
            FARM, NewEvent(kind="event", subject="索菲亚", summary=SOPHIA), 0
        ).id,
        # Another save's memory of the same entity is never found.
        "other": h.store.upsert_event(
            OTHER, NewEvent(kind="relationship", subject="Abigail", summary="Abigail: 8 hearts"), 0
        ).id,
    }
    # Enough unrelated memories that "recent and important" does not take them by chance.
    for n in range(8):
        h.store.upsert_event(
            FARM,
            NewEvent(
                kind="event", subject=f"杂事{n}", summary=f"第{n}天去镇上卖了防风草", importance=5
            ),
            h.clock.now(),
        )
    return ids


async def test_an_english_name_finds_a_chinese_memory_and_a_player_entry_is_used(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "glossary"
    folder.mkdir()
    (folder / "sve.toml").write_text(
        'game = "stardew-valley"\n[npc]\n'
        'sophia = { en = "Sophia", zh = "索菲亚", ids = ["SophiaSVE"] }\n',
        encoding="utf-8",
    )
    async with running(tmp_path, overrides=NO_EXTRACTION) as h:
        ids = _setup(h)
        async with h.adapter() as ws:
            for question, key in (
                ("What gift does Abigail like?", "abigail"),
                ("那个紫发女孩爱收什么？", "abigail"),
            ):
                h.fake.enqueue(Reply(text="紫水晶！"))
                _, done = await chat(ws, question, chat_id=f"c-{key}-{len(question)}")
                assert done["type"] == "chat.done", done
                block = memory_block(h)
                assert ABIGAIL in block and "8 hearts" not in block
            # A mod's id from the player's own glossary file, only in the modelContext.
            h.fake.enqueue(Reply(text="向日葵吧"))
            context = model_context(h.clock, nearby=[{"kind": "npc", "name": "SophiaSVE"}])
            await send(ws, {"type": "state.update", "modelContext": context})
            _, done = await chat(ws, "接下来干嘛？", chat_id="c-sophia")
            assert done["type"] == "chat.done", done
            assert SOPHIA in memory_block(h)
        records = await injections(h)
        via = [{m["id"]: m.get("via", "") for m in r["memories"]} for r in records]
        assert via[0][ids["abigail"]] == "glossary"
        assert via[1][ids["abigail"]] == "glossary"
        assert via[2][ids["sophia"]] == "glossary"
        assert all(ids["other"] not in v for v in via)
    shown = subprocess.run(
        [sys.executable, "-m", "xtyserver", "why", "--last", "3"],
        env={**os.environ, "XTY_DATA_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    ).stdout
    assert f"#{ids['abigail']} relevant" in shown and "via glossary" in shown


async def test_without_the_glossary_the_same_question_misses(tmp_path: Path) -> None:
    async with running(tmp_path, overrides={**NO_EXTRACTION, "memory.glossary": False}) as h:
        _setup(h)
        async with h.adapter() as ws:
            h.fake.enqueue(Reply(text="嗯"))
            _, done = await chat(ws, "那个紫发女孩爱收什么？")
            assert done["type"] == "chat.done", done
            assert ABIGAIL not in memory_block(h)


async def test_a_bad_glossary_file_stops_the_start(tmp_path: Path) -> None:
    folder = tmp_path / "glossary"
    folder.mkdir()
    (folder / "bad.toml").write_text(
        'game = "stardew-valley"\n[npc]\nbob = { en = "Bob" }\n', encoding="utf-8"
    )
    settings = load_settings(None, env={}, overrides={"data_dir": str(tmp_path), "server.port": 0})
    with pytest.raises(UsageError, match=r"bad\.toml: entry npc\.bob: field 'zh' is missing"):
        async with serving(settings, token=TOKEN, clock=ManualClock(0)):
            pass
    # nothing was opened: no store was created
    assert not (tmp_path / "profiles").exists()
