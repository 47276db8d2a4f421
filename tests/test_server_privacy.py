"""Issue 17 parts 4 and 5 over a real loopback server and the scripted model.

Part 4: the player's words reach the model request, memory and save names as
typed (only invisible characters removed). Part 5: spellings that used to get
through reach neither the model request nor the SQLite file.
"""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from tests.conftest import NO_GRACE, TOKEN, Harness, chat, model_context, recv, running, send
from xtyserver.memory.sqlite.store import DB_FILE_NAME
from xtyserver.memory.types import Scope
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio

FARM = Scope("stardew-valley", "farm-a")


async def _jobs(h: Harness) -> None:
    with anyio.fail_after(10):
        await h.server.memory.wait_idle()


def _database_bytes(data_dir: Path) -> bytes:
    """The SQLite file and its write-ahead log, as they are on disk."""
    files = sorted(data_dir.rglob(f"{DB_FILE_NAME}*"))
    assert files, "no SQLite file"
    return b"".join(p.read_bytes() for p in files)


async def test_the_players_question_reaches_the_model_request_exactly_as_typed(
    tmp_path: Path,
) -> None:
    text = "今天适合去钓鱼吗？（认真的）"
    async with running(tmp_path, overrides={"memory.extraction": False}) as h:
        async with h.adapter() as ws:
            _, done = await chat(ws, text)
            assert done["type"] == "chat.done", done
        request = h.turn_request()
        assert request.json["messages"][-1] == {"role": "user", "content": text}
        assert text in json.loads(request.body)["messages"][-1]["content"]
        # Full-width punctuation, ～, …, ①, emoji, kana and full-width letters too.
        more = "好的～明天见…① 😀 ｶﾀｶﾅ ＡＢＣ！"
        async with h.adapter() as ws:
            _, done = await chat(ws, f"{more}\u200b")
            assert done["type"] == "chat.done", done
        assert h.turn_request().json["messages"][-1]["content"] == more


async def test_a_save_name_and_a_memory_are_stored_with_their_full_width_punctuation(
    tmp_path: Path,
) -> None:
    name = "星露谷（春）！第一年～"
    answer = {
        "profile": None,
        "events": [
            {
                "kind": "goal",
                "subject": "社区中心计划！",
                "summary": "先做鱼缸，再去钓鱼～",
                "importance": 4,
            }
        ],
    }
    async with running(tmp_path, overrides=NO_GRACE) as h:  # the extraction is awaited
        h.fake.enqueue(Reply(text=json.dumps(answer, ensure_ascii=False), match="玩家说"))
        async with h.adapter(
            identity={"gameId": "stardew-valley", "saveId": "farm-a", "saveName": name}
        ) as ws:
            _, done = await chat(ws, "我要先做鱼缸，再去钓鱼～")
            assert done["type"] == "chat.done", done
            await _jobs(h)
        assert h.store.overview().names[FARM] == name
        events = h.store.load_scope(FARM)
        assert ("社区中心计划！", "先做鱼缸，再去钓鱼～") in {
            (e.subject, e.summary) for e in events
        }
    stored = _database_bytes(tmp_path)
    assert name.encode() in stored
    assert "社区中心计划！".encode() in stored


# Each used to reach the model request and the SQLite file.
NEW_SPELLINGS = {
    "٧٦٥٦١١٩٨٠١٢٣٤٥٦٧٨": "٧٦٥٦١١٩٨",  # a Steam id in Arabic-Indic digits
    "7656 1198 0123 4567 8": "0123 4567",  # ... in groups
    "bоb@exаmple.com": "exаmple",  # Cyrillic look-alikes
    "carol [at] example [dot] com": "carol",
    "C盘/用户/张伟/文档": "张伟",
    "//NAS/home/wangfang": "wangfang",
    "S-1-5-21-3623811015-3361044348-30300820-1013": "3623811015",
    "DESKTOP-7KQ2M3P": "7KQ2M3P",
    "192.168.31.77": "192.168.31.77",
    "13812345678": "13812345678",
    "11010519491231002X": "11010519491231002X",
    "QQ 987654321": "987654321",
    TOKEN: TOKEN,
}


async def test_new_spellings_reach_neither_the_model_request_nor_the_sqlite_file(
    tmp_path: Path,
) -> None:
    text = "帮我记一下：" + "、".join(NEW_SPELLINGS) + "。好吗？"
    # A careless extraction model proposes them for memory: the store refuses them.
    answer = {
        "profile": {"field": "nickname", "value": "QQ 987654321"},
        "events": [
            {
                "kind": "event",
                "subject": "联系方式",
                "summary": "手机 13812345678",
                "importance": 3,
            },
            {"kind": "event", "subject": "电脑", "summary": "DESKTOP-7KQ2M3P", "importance": 3},
        ],
    }
    async with running(tmp_path, overrides=NO_GRACE) as h:  # the extraction is awaited
        h.fake.enqueue(Reply(text=json.dumps(answer, ensure_ascii=False), match="玩家说"))
        async with h.adapter() as ws:
            _, done = await chat(ws, text)
            assert done["type"] == "chat.done", done
            await _jobs(h)
        prompt = h.turn_request().json["messages"][-1]["content"]
        assert prompt.startswith("帮我记一下：") and prompt.endswith("。好吗？")
        for kind in ("账号", "邮箱", "路径", "设备名", "网络地址", "手机号", "证件号", "密钥"):
            assert f"[已隐去:{kind}]" in prompt, kind
        bodies = [r.body.decode("utf-8") for r in h.fake.requests]
        decoded = [json.dumps(r.json, ensure_ascii=False) for r in h.fake.chat_requests]
        for secret in NEW_SPELLINGS.values():
            for body in bodies[:1] + decoded[:1]:  # the turn's request
                assert secret not in body, secret
    stored = _database_bytes(tmp_path)
    for secret in NEW_SPELLINGS.values():
        assert secret.encode() not in stored, secret


@pytest.mark.parametrize(
    ("where", "value"),
    [
        ("location", "١٩٢.١٦٨.٠.٥"),  # IPv4 in Arabic-Indic digits
        ("location", "C盘/用户/张伟"),
        ("location", TOKEN),
        ("saveName", "QQ 987654321 的农场"),
        ("saveName", "DESKTOP-7KQ2M3P"),
    ],
)
async def test_new_spellings_in_a_model_context_or_save_name_are_refused(
    tmp_path: Path, where: str, value: str
) -> None:
    async with running(tmp_path, overrides={"memory.extraction": False}) as h:
        async with h.adapter() as ws:
            frame: dict[str, object] = {
                "type": "state.update",
                "modelContext": model_context(h.clock, world={"location": "Farm"}),
            }
            if where == "location":
                frame["modelContext"] = model_context(h.clock, world={"location": value})
                field = "modelContext.world.location"
            else:
                frame["identity"] = {
                    "gameId": "stardew-valley",
                    "saveId": "farm-b",
                    "saveName": value,
                }
                field = "identity.saveName"
            await send(ws, frame)
            error = await recv(ws)
            assert (error["type"], error["code"], error["fields"]) == (
                "error",
                "forbidden_content",
                [field],
            )
            _, done = await chat(ws, "我在哪")
            assert done["type"] == "chat.done", done
        assert value not in h.turn_request().body.decode("utf-8")
    assert value.encode() not in _database_bytes(tmp_path)
