"""Model routing and the player's token bill over the real server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import NO_GRACE, chat, next_midnight, png_b64, running, send
from xtyserver.memory.types import NewEvent, Scope

pytestmark = pytest.mark.anyio
FARM_A = Scope("stardew-valley", "farm-a")
SHANGHAI = {"server.default_timezone": "Asia/Shanghai"}


async def idle(h) -> None:  # type: ignore[no-untyped-def]
    with anyio.fail_after(10):
        await h.server.memory.wait_idle()
        await h.server.meter.wait_written()


def models_used(h) -> list[tuple[str, bool]]:  # type: ignore[no-untyped-def]
    """(model name, is a background call) of every chat-completions request, in order."""
    out = []
    for r in h.fake.chat_requests:
        body: dict[str, Any] = json.loads(r.body)
        out.append((body["model"], "玩家说" in r.text or "第1轮 玩家" in r.text))
    return out


async def stats(ws) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    await send(ws, {"type": "stats.get", "id": "s"})
    while True:
        frame = json.loads(await ws.recv())
        if frame["type"] == "stats.result":
            return frame  # type: ignore[no-any-return]


async def test_every_calls_tokens_are_billed_per_day_save_and_purpose(tmp_path: Path) -> None:
    async with running(tmp_path, overrides={**SHANGHAI, **NO_GRACE}) as h:  # jobs awaited
        async with h.adapter() as ws:
            for n in range(2):
                _, done = await chat(ws, f"第{n}句", chat_id=f"c{n}")
                assert done["type"] == "chat.done"
                await idle(h)
        await h.server.wait_connections(at_most=0)
        await idle(h)  # the end-of-session summary
        async with h.adapter(save="farm-b") as ws:
            result = await stats(ws)
        rows = {(t["saveId"], t["purpose"]): t for t in result["tokens"]}
        assert set(rows) == {("farm-a", "chat"), ("farm-a", "extraction"), ("farm-a", "summary")}
        assert rows[("farm-a", "chat")]["calls"] == 2
        assert rows[("farm-a", "extraction")]["calls"] == 2
        assert rows[("farm-a", "summary")]["calls"] == 1
        for row in rows.values():
            assert row["totalTokens"] == row["promptTokens"] + row["completionTokens"] > 0
            assert row["date"] == "2026-09-21" or row["date"].count("-") == 2
        assert len({t["date"] for t in result["tokens"]}) == 1


async def test_a_spent_budget_refuses_chat_until_local_midnight(tmp_path: Path) -> None:
    settings = {**SHANGHAI, "model.daily_token_budget": 100}
    async with running(tmp_path, overrides=settings) as h:
        async with h.adapter() as ws:
            _, done = await chat(ws, "你好", chat_id="c1")  # 0 spent: allowed
            assert done["type"] == "chat.done"
            calls = len(h.fake.chat_requests)
            _, refused = await chat(ws, "还在吗", chat_id="c2")
            assert refused["type"] == "chat.error"
            assert refused["code"] == "budget_exhausted"
            assert "午夜" in refused["message"]
            assert len(h.fake.chat_requests) == calls  # the model was not called
        await h.server.wait_connections(at_most=0)
        reset = next_midnight(h.clock.now(), "Asia/Shanghai")
        h.clock.advance(reset - h.clock.now() - 1)  # one second before local midnight
        async with h.adapter() as ws:
            _, still = await chat(ws, "还在吗", chat_id="c3")
            assert still["code"] == "budget_exhausted"
        await h.server.wait_connections(at_most=0)
        h.clock.advance(1)  # local midnight: a new day's budget
        async with h.adapter() as ws:
            _, again = await chat(ws, "早上好", chat_id="c4")
            assert again["type"] == "chat.done"


async def test_background_jobs_stop_first_when_the_budget_runs_low(tmp_path: Path) -> None:
    # Low once no more than 90% is left: any first chat makes it low, not spent.
    settings = {**SHANGHAI, "model.daily_token_budget": 100_000, "model.budget_low_share": 0.9999}
    async with running(tmp_path, overrides=settings) as h:
        async with h.adapter() as ws:
            _, done = await chat(ws, "你好", chat_id="c1")
            assert done["type"] == "chat.done"
            await idle(h)
            _, done = await chat(ws, "再聊一句", chat_id="c2")
            assert done["type"] == "chat.done"
            await idle(h)
        assert [background for _, background in models_used(h)] == [False, False]


ROUTED = {
    "model.model": "chat-model",
    "model.vision": False,
    # No base_url: the routes use [model]'s (the scripted server).
    "models.vision": {"model": "vision-model", "vision": True, "api_key_env": "XTY_VISION_KEY"},
    "models.quick": {"model": "quick-model"},
}


async def test_image_turns_go_to_the_vision_model_and_background_work_to_the_quick_one(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=ROUTED) as h:
        async with h.adapter() as ws:
            _, done = await chat(ws, "只是聊天", chat_id="c1")
            assert done["type"] == "chat.done"
            await idle(h)
            image = {"mime": "image/png", "data": png_b64(64, 48)}
            _, done = await chat(ws, "看图", chat_id="c2", image=image)
            assert done["type"] == "chat.done" and done["imageSent"] is True
            await idle(h)
        used = models_used(h)
        assert used == [
            ("chat-model", False),
            ("quick-model", True),
            ("vision-model", False),
            ("quick-model", True),
        ]
        image_request = h.fake.chat_requests[2].json
        assert "image_url" in json.dumps(image_request)


async def test_with_one_model_everything_uses_it(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        async with h.adapter() as ws:
            image = {"mime": "image/png", "data": png_b64(64, 48)}
            _, done = await chat(ws, "看图", image=image)
            assert done["type"] == "chat.done"
            await idle(h)
        assert {name for name, _ in models_used(h)} == {"fake-vl"}
        assert len(models_used(h)) == 2


async def memory_in_request(tmp_path: Path, overrides: dict[str, Any]) -> int:
    """How many characters of stored memory the first turn's request carries."""
    async with running(tmp_path, overrides=overrides) as h:
        for n in range(8):
            summary = f"第{n}个很长的目标" + "长" * 100
            event = NewEvent(kind="goal", subject=f"目标{n}", summary=summary, importance=5)
            h.store.upsert_event(FARM_A, event, h.clock.now())
        async with h.adapter() as ws:
            _, done = await chat(ws, "目标是什么", chat_id="c1")
            assert done["type"] == "chat.done"
        return h.fake.chat_requests[0].text.count("长")


async def test_a_4k_model_gets_a_smaller_memory_block(tmp_path: Path) -> None:
    default = await memory_in_request(tmp_path / "big", {})
    small = await memory_in_request(tmp_path / "4k", {"model.context_window": 4096})
    assert 0 < small < default
