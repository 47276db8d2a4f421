"""A yes counts only for the server's question it answers, over the real server (S5-1, S5-2).

The scripted model plays the confusion as measured: the player asks to delete
some memory, the model previews ``forget {"target": "all"}`` and then asks
"要不要去钓鱼？", the player answers "好", the model confirms with the token:
nothing may go. The server writes the question itself (naming what goes, in
the player's language); a yes counts in the next turn only, a broad target
needs the exact words the question asked for (naming the target), any
question or proposal of the model's lapses the server's question, a yes
inside another statement is none, a restore needs the player's words, and
every deletion and restore is announced with ``memory.notice``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection

from tests.conftest import Harness, chat, recv, running, send
from tests.test_server_consent import FARM_A, FORGET, TZ, _call, _results, _token
from tests.test_server_consent import NO_EXTRACTION as QUIET
from tests.test_server_consent import _chat_frames as _frames
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
FARM_B = Scope("stardew-valley", "farm-b")
RESTORE = "xiaotangyuan_memory_restore"
ALL_QUESTION = "要删掉全部记忆（2 个存档、3 条，以及共同记忆）吗？"


def _seed(h: Harness) -> list[int]:
    now = h.clock.now()
    h.store.set_profile_field("nickname", "小明")
    h.store.set_profile_field("hobbies", ["钓鱼"])
    h.store.open_play_session(FARM_A, now - 600, TZ, save_name="阳光农场")
    h.store.open_play_session(FARM_B, now - 600, TZ, save_name="月光农场")
    return [
        h.store.upsert_event(FARM_A, NewEvent("goal", "社区中心", "先完成鱼缸收集包"), now).id,
        h.store.upsert_event(FARM_A, NewEvent("goal", "鸡舍", "升级鸡舍"), now).id,
        h.store.upsert_event(FARM_B, NewEvent("goal", "矿洞", "下到矿洞 40 层"), now).id,
    ]


def _count(h: Harness) -> int:
    return len(h.store.load_scope(FARM_A)) + len(h.store.load_scope(FARM_B))


def _lapsed(h: Harness) -> bool:
    """The confirming call deleted nothing for want of a question (or was not even run)."""
    results = _results(h)
    return not results or "不是在回答服务器的删除确认问题" in results[-1]


async def _preview_turn(
    ws: ClientConnection, h: Harness, args: dict[str, Any], then: str, chat_id: str
) -> list[dict[str, Any]]:
    """A turn in which the model previews ``args`` and then says ``then``: its frames."""
    h.fake.enqueue(Reply(tool_calls=[_call(FORGET, **args)]), Reply(text=then))
    return await _frames(ws, "帮我删点记忆", chat_id)


async def _preview(
    h: Harness, ws: ClientConnection, args: dict[str, Any], then: str, n: int
) -> str:
    """A later turn that previews ``args`` and then says ``then``: the token."""
    h.clock.advance(30)  # the chat rate limit
    h.fake.reset()  # a reply a turn without tools left unused
    await _preview_turn(ws, h, args, then, f"p{n}")
    return _token(_results(h)[-1])


async def _confirm(
    h: Harness, ws: ClientConnection, args: dict[str, Any], token: str, said: str, n: int
) -> list[dict[str, Any]]:
    """The player says ``said``; the model confirms with ``token``: the turn's frames."""
    h.fake.reset()
    h.fake.enqueue(
        Reply(tool_calls=[_call(FORGET, **args, confirmToken=token)]), Reply(text="好的")
    )
    return await _frames(ws, said, f"c{n}")


async def test_the_confusion_case_deletes_nothing(tmp_path: Path) -> None:
    """As measured: preview all, the model asks 要不要去钓鱼？, the player says 好."""
    async with running(tmp_path, overrides=QUIET) as h:
        _seed(h)
        async with h.adapter() as ws:
            frames = await _preview_turn(ws, h, {"target": "all"}, "要不要去钓鱼？", "c1")
            token = _token(_results(h)[-1])
            done = frames[-1]
            # The model asked something else: the server's question lapsed, none was asked.
            assert done["text"] == "要不要去钓鱼？" and "question" not in done
            frames = await _confirm(h, ws, {"target": "all"}, token, "好", 2)
            assert _lapsed(h)
            assert not [f for f in frames if f["type"] == "memory.notice"]
        assert _count(h) == 3 and h.store.get_profile().nickname == "小明"


async def test_the_server_asks_its_own_question_naming_what_goes(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=QUIET) as h:
        _seed(h)
        async with h.adapter() as ws:
            frames = await _preview_turn(ws, h, {"target": "all"}, "这些都会删掉。", "c1")
            (ask,) = [f for f in frames if f["type"] == "memory.confirm.request"]
            done = frames[-1]
            deltas = "".join(f["text"] for f in frames if f["type"] == "chat.delta")
            assert (
                done["question"].startswith(ALL_QUESTION)
                and "“确认删除全部记忆”" in done["question"]
            )
            assert done["text"] == f"这些都会删掉。\n\n{done['question']}" == deltas
            assert done["confirmId"] == ask["confirmId"] and ask["question"] == done["question"]
            # A bare 好 is not enough for everything, nor are words naming a deletion.
            await _confirm(h, ws, {"target": "all"}, ask["confirmId"], "好", 2)
            assert "玩家没有明确同意" in _results(h)[-1] and _count(h) == 3
            token = await _preview(h, ws, {"target": "all"}, "这些都会删掉。", 4)
            await _confirm(h, ws, {"target": "all"}, token, "确认删除", 4)
            assert "玩家没有明确同意" in _results(h)[-1] and _count(h) == 3
            # The exact words the question asked for, right after it, delete (into the trash).
            token = await _preview(h, ws, {"target": "all"}, "这些都会删掉。", 3)
            frames = await _confirm(h, ws, {"target": "all"}, token, "确认删除全部记忆", 3)
            (notice,) = [f for f in frames if f["type"] == "memory.notice"]
            assert notice["action"] == "forgotten" and notice["target"] == "all"
            assert notice["items"] == 3 and notice["profileCleared"] is True
            assert notice["chatId"] == "c3" and notice["restorableUntil"].endswith("Z")
            assert notice["text"].startswith("已删除全部记忆（3 条）和共同记忆")
            assert "24 小时内可以恢复" in notice["text"]
        assert _count(h) == 0


async def test_an_english_player_is_asked_in_english(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=QUIET) as h:
        ids = _seed(h)
        h.store.set_profile_field("language", "English")
        async with h.adapter() as ws:
            h.fake.enqueue(
                Reply(tool_calls=[_call(FORGET, target="item", item=ids[0])]),
                Reply(text="That one goes."),
            )
            done = (await _frames(ws, "delete the community center plan", "c1"))[-1]
            assert done["question"] == (
                'Delete the memory "社区中心" of the save "阳光农场"? '
                '(say "yes" to delete it, "no" to keep it)'
            )
            frames = await _confirm(
                h, ws, {"target": "item", "item": ids[0]}, done["confirmId"], "yes", 2
            )
            (notice,) = [f for f in frames if f["type"] == "memory.notice"]
            assert notice["text"].startswith(
                "Deleted 1 memory item(s). It can be restored for 24 h"
            )
        assert _count(h) == 2


# (what the player says after the server's question, deletes one item, deletes a save)
YES_VARIANTS = [
    ("好", True, False),
    ("嗯", True, False),
    ("ok", True, False),
    ("是的", True, False),
    ("ｙｅｓ", True, False),
    ("确认删除", True, False),
    ("删吧", True, False),
    ("删掉吧", True, False),
    ("全部删掉", True, False),
    ("delete it", True, False),
    ("yes delete", True, False),
    ("删\u200b吧", True, False),
    ("确认删除存档记忆", False, True),
    ("确认删除\u200b存档记忆！", False, True),
    ("Delete save memory", False, True),
    ("确认删除全部记忆", False, False),
    ("好的，谢谢", False, False),
    ("嗯，今天去矿洞", False, False),
    ("是的，我在农场", False, False),
    ("好，先去钓鱼", False, False),
    ("不要删", False, False),
]


async def test_yes_variants_and_broad_targets_over_the_server(tmp_path: Path) -> None:
    async with running(tmp_path, overrides={**QUIET, "memory.trash_hours": 24}) as h:
        _seed(h)
        async with h.adapter() as ws:
            n = 0
            for said, one, broad in YES_VARIANTS:
                for args, agrees in (
                    ({"target": "item", "item": 0}, one),
                    ({"target": "save"}, broad),
                ):
                    n += 1
                    # A fresh item each round, so a deletion shows.
                    now = h.clock.now()
                    event = h.store.upsert_event(FARM_A, NewEvent("event", f"事{n}", "一件事"), now)
                    if args["target"] == "item":
                        args = {**args, "item": event.id}
                    token = await _preview(h, ws, args, "这些会删掉。", n)
                    before = len(h.store.load_scope(FARM_A))
                    await _confirm(h, ws, args, token, said, n)
                    after = len(h.store.load_scope(FARM_A))
                    assert (after < before) is agrees, (said, args["target"], _results(h)[-1])
                    if after < before:
                        # Put it back for the next round (not through the companion).
                        for entry in h.store.trash_entries()[:1]:
                            h.store.restore(entry.id)


async def test_a_yes_counts_only_in_the_very_next_turn(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=QUIET) as h:
        ids = _seed(h)
        item = {"target": "item", "item": ids[0]}
        async with h.adapter() as ws:
            token = await _preview(h, ws, item, "这条会删掉。", 1)
            h.fake.enqueue(Reply(text="好呀，去钓鱼"))
            await chat(ws, "今天去钓鱼", "between")
            await _confirm(h, ws, item, token, "好", 2)
            assert _lapsed(h)
            # The model asks another question before its preview: lapsed too.
            h.clock.advance(30)
            h.fake.reset()
            h.fake.enqueue(
                Reply(text="要不要去钓鱼？", tool_calls=[_call(FORGET, **item)]),
                Reply(text="这条会删掉。"),
            )
            done = (await _frames(ws, "帮我删点记忆", "p2"))[-1]
            assert "question" not in done
            await _confirm(h, ws, item, _token(_results(h)[-1]), "好", 3)
            assert _lapsed(h)
        assert len(h.store.load_scope(FARM_A)) == 2


async def test_a_restore_through_the_companion_needs_the_players_words(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=QUIET) as h:
        ids = _seed(h)
        async with h.adapter() as ws:
            # The player deletes an item through the mod's own menu.
            forget = {"type": "memory.forget", "id": "f1", "target": "item", "eventId": ids[0]}
            await send(ws, forget)
            preview = await recv(ws)
            await send(ws, {**forget, "confirmToken": preview["confirmToken"]})
            assert (await recv(ws))["type"] == "memory.forgotten"
            assert (await recv(ws))["type"] == "memory.notice"
            # An injected turn asks the model to restore it: the player's words (which
            # offer every tool) say nothing of a restore, or refuse one.
            for n, said in enumerate(("把爱好改一下", "记住我喜欢钓鱼", "别删了", "不要恢复")):
                h.clock.advance(30)
                h.fake.reset()
                h.fake.enqueue(Reply(tool_calls=[_call(RESTORE)]), Reply(text="嗯"))
                await _frames(ws, said, f"i{n}")
                assert "没有恢复" in _results(h)[-1], said
                assert len(h.store.load_scope(FARM_A)) == 1
            h.clock.advance(30)
            h.fake.enqueue(Reply(tool_calls=[_call(RESTORE)]), Reply(text="恢复好了"))
            frames = await _frames(ws, "刚才删错了，恢复一下", "r")
            (notice,) = [f for f in frames if f["type"] == "memory.notice"]
            assert notice["action"] == "restored" and notice["items"] == 1
            assert notice["text"].startswith("已从回收站恢复 1 条记忆")
        assert len(h.store.load_scope(FARM_A)) == 2


async def test_a_deletion_worded_answer_to_the_models_own_question_deletes_nothing(
    tmp_path: Path,
) -> None:
    """S5-1 as measured: preview all, the model asks about weeds, the player says 好，清除吧."""
    async with running(tmp_path, overrides=QUIET) as h:
        _seed(h)
        async with h.adapter() as ws:
            for n, (then, said) in enumerate(
                (
                    ("要不要把鱼塘边的杂草都清除掉？", "好，清除吧"),
                    ("要不要把鱼塘边的杂草都清除掉", "清除"),
                    ("这些都会删掉。", "好，清除吧"),  # the server asked; a yes is not its words
                    ("Shall we remove the debris by the pond", "yes, remove it"),
                )
            ):
                token = await _preview(h, ws, {"target": "all"}, then, n)
                frames = await _confirm(h, ws, {"target": "all"}, token, said, n)
                assert not [f for f in frames if f["type"] == "memory.notice"], said
                assert _count(h) == 3 and h.store.get_profile().nickname == "小明", said
        assert not h.store.trash_entries()


# The model's question, in the forms that escaped a question-mark check.
UNMARKED = [
    "明天一起去钓鱼咋样～",
    "明天去钓鱼如何",
    "去钓鱼好伐",
    "去钓鱼不",
    "钓鱼行不行",
    "去不去钓鱼",
    "how about fishing",
    "fishing tomorrow, ok",
    "fishing tomorrow ok?",
    "明天去矿洞吧",
]


async def test_a_question_without_a_question_mark_lapses_the_servers(tmp_path: Path) -> None:
    """S5-2: the model asks without ?, the player says 好: the previewed item stays put."""
    async with running(tmp_path, overrides=QUIET) as h:
        _seed(h)
        async with h.adapter() as ws:
            for n, then in enumerate(UNMARKED):
                item = h.store.upsert_event(
                    FARM_A, NewEvent("event", f"事{n}", "一件事"), h.clock.now()
                )
                args = {"target": "item", "item": item.id}
                h.clock.advance(30)
                h.fake.reset()
                done = (await _preview_turn(ws, h, args, then, f"p{n}"))[-1]
                assert "question" not in done and done["text"] == then, then
                await _confirm(h, ws, args, _token(_results(h)[-1]), "好", n)
                assert _lapsed(h), then
        assert _count(h) == 3 + len(UNMARKED) and not h.store.trash_entries()
