"""The adapter client against the real server (real WebSocket, SQLite, scripted model)."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from tests.conftest import TOKEN, Harness, model_context, recv, running, send
from xtyserver.adapter import (
    CONNECTION_LOST,
    AdapterClient,
    AdapterInfo,
    Backoff,
    ChatDone,
    ChatError,
    Identity,
    Refused,
    captured_at,
)
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.protocol.frames import MemoryNotice
from xtyserver.testing import Reply, ToolCallScript

pytestmark = pytest.mark.anyio
FARM_A = Identity(game_id="stardew-valley", save_id="farm-a")
FARM_B = Identity(game_id="stardew-valley", save_id="farm-b")
ADAPTER = AdapterInfo(name="xty-stardew", version="0.1.0")


def client(h: Harness, **options: object) -> AdapterClient:
    kwargs: dict[str, object] = {
        "token": TOKEN,
        "identity": FARM_A,
        "adapter": ADAPTER,
        "timezone": "Asia/Shanghai",
        "clock": h.clock,
        "timeout": 10.0,
    }
    kwargs.update(options)
    return AdapterClient(h.url, **kwargs)  # type: ignore[arg-type]


def over_budget(h: Harness) -> dict[str, object]:
    return model_context(
        h.clock,
        world={"location": "x" * 201, "foo": 1},
        nearby=[{"kind": "npc", "name": f"n{i}"} for i in range(6)],
    )


async def test_hello_state_and_a_streamed_chat(tmp_path: Path) -> None:
    async with running(tmp_path) as h, client(h) as c:
        assert c.server_hello.heartbeat_ms == 5000
        await c.update_state(model_context(h.clock, world={"location": "Farm", "day": 5}))
        reply = await c.chat("今天适合钓鱼吗？", source="voice")
        pieces = [piece async for piece in reply]
        outcome = await reply.result()
        assert isinstance(outcome, ChatDone)
        assert len(pieces) > 1 and "".join(pieces) == outcome.text == reply.text
        assert outcome.text == "小汤圆收到：今天适合钓鱼吗？"
        assert outcome.context == "fresh"
        assert "Farm" in h.fake.chat_requests[0].text


async def test_state_is_refused_locally_with_the_servers_code_and_fields(tmp_path: Path) -> None:
    async with running(tmp_path) as h, client(h) as c:
        with pytest.raises(Refused) as local:
            await c.update_state(over_budget(h))
        assert local.value.local
        # The same frame over a raw socket: the server answers exactly the same.
        async with h.adapter() as ws:
            await send(ws, {"type": "state.update", "id": "s", "modelContext": over_budget(h)})
            answer = await recv(ws)
        assert answer["code"] == local.value.code == "invalid_frame"
        assert tuple(answer["fields"]) == local.value.fields
        assert "modelContext.world.foo" in local.value.fields
        assert c.refusals == type(c.refusals)()  # nothing went to the server


@pytest.mark.parametrize(
    ("location", "code"),
    [
        ("y" * 200, None),
        ("y" * 201, "budget_exceeded"),
        ("C:\\Users\\Ann\\save", "forbidden_content"),
    ],
)
async def test_string_budget_edges(tmp_path: Path, location: str, code: str | None) -> None:
    async with running(tmp_path) as h, client(h) as c:
        ctx = model_context(h.clock, world={"location": location})
        if code is None:
            await c.update_state(ctx)
            await c.stats()  # a barrier: the update was handled before it
            assert not c.refusals
        else:
            with pytest.raises(Refused) as refused:
                await c.update_state(ctx)
            assert (refused.value.code, refused.value.fields) == (
                code,
                ("modelContext.world.location",),
            )


def test_a_bad_identity_is_refused_before_connecting() -> None:
    with pytest.raises(Refused) as refused:
        AdapterClient(
            "ws://127.0.0.1:1/v1",
            token=TOKEN,
            identity=Identity(game_id="stardew-valley", save_id="76561198000000001"),
            adapter=ADAPTER,
        )
    assert refused.value.code == "forbidden_content"
    assert refused.value.fields == ("identity.saveId",)


async def test_wrong_token_in_hello_is_refused(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        with pytest.raises(Refused) as refused:
            async with client(h, token="wrong-token", token_in_hello=True):
                pass
        assert refused.value.code == "unauthorized"


async def test_heartbeat_loop_keeps_the_session_and_counts_play_time(tmp_path: Path) -> None:
    async with running(tmp_path) as h, client(h) as c:
        for _ in range(5):  # 25 s: past the 15 s heartbeat deadline
            await h.clock.wait_sleepers(2)  # the server's deadline and the client's beat
            h.clock.advance(5.0)
        await h.clock.wait_sleepers(2)
        stats = await c.stats()
        assert c.connected
        assert [s.active_ms for s in stats.saves] == [25_000]


async def test_cancel_ends_the_reply_with_cancelled(tmp_path: Path) -> None:
    async with running(tmp_path) as h, client(h) as c:
        h.fake.enqueue(Reply(text="never", first_delay=1e6))
        reply = await c.chat("慢慢说")
        await reply.cancel()
        outcome = await reply.result()
        assert isinstance(outcome, ChatError) and outcome.code == "cancelled"
        assert reply.text == ""


async def test_save_switch_while_streaming_is_refused_locally(tmp_path: Path) -> None:
    async with running(tmp_path) as h, client(h) as c:
        h.fake.enqueue(Reply(text="never", first_delay=1e6))
        reply = await c.chat("等等")
        with pytest.raises(Refused) as refused:
            await c.update_state(model_context(h.clock), identity=FARM_B)
        assert (refused.value.code, refused.value.fields) == ("reply_in_progress", ("identity",))
        assert c.identity == FARM_A
        await reply.cancel()
        await reply.result()
        await c.update_state(model_context(h.clock), identity=FARM_B)
        assert c.identity == FARM_B


async def test_management_frames(tmp_path: Path) -> None:
    async with running(tmp_path) as h, client(h) as c:
        result = await c.update_profile("nickname", "小明")
        assert result.profile["nickname"] == "小明"
        with pytest.raises(Refused) as refused:
            await c.update_profile("nickname", "x" * 33)
        assert (refused.value.code, refused.value.local) == ("invalid_memory", False)
        assert (await c.memory()).events == []
        preview = await c.forget_preview("profile")
        assert preview.profile_fields and preview.confirm_token
        assert (await c.memory()).profile["nickname"] == "小明"  # a preview deletes nothing
        assert (await c.forget(preview)).profile_cleared
        assert (await c.memory()).profile["nickname"] == ""
        assert [s.save_id for s in (await c.stats()).saves] == ["farm-a"]


async def test_reconnects_after_heartbeat_timeout_and_resumes(tmp_path: Path) -> None:
    backoff = Backoff(base=2.0, jitter=0.0, attempts=3)
    async with running(tmp_path) as h, client(h, heartbeat=False, backoff=backoff) as c:
        await c.update_state(model_context(h.clock, world={"location": "Mines"}))
        h.fake.enqueue(Reply(text="never", first_delay=1e6, match="在吗"))
        reply = await c.chat("在吗")
        await h.clock.wait_sleepers(1)
        h.clock.advance(15.0)  # no heartbeat: the server closes with 4003
        outcome = await reply.result()
        assert isinstance(outcome, ChatError) and outcome.code == CONNECTION_LOST
        await h.clock.wait_sleepers(1)  # the client waits its backoff on the clock
        h.clock.advance(2.0)
        await c.wait_connected()
        assert len(c.sessions) == 2 and c.sessions[0] != c.sessions[1]
        again = await c.chat("回来了")
        assert isinstance(await again.result(), ChatDone)
        # The last modelContext was sent again: the new session knows the location.
        assert "Mines" in h.turn_request().text


def test_captured_at_is_rfc3339_utc_with_z() -> None:
    class Fixed:
        def now(self) -> float:
            return 1_790_000_000.5

        async def sleep(self, seconds: float) -> None:
            await anyio.sleep(seconds)

    assert captured_at(Fixed()) == "2026-09-21T14:13:20.500Z"


async def test_the_confirm_dialog_and_the_notices(tmp_path: Path) -> None:
    """The client hands the server's question to the mod's dialog and shows each notice."""
    asked: list[str] = []
    shown: list[str] = []
    noticed = anyio.Event()

    def show(notice: MemoryNotice) -> None:
        shown.append(notice.text)
        noticed.set()

    async with running(tmp_path, overrides={"memory.extraction": False}) as h:
        farm = Scope("stardew-valley", "farm-a")
        plan = h.store.upsert_event(farm, NewEvent("goal", "社区中心", "完成鱼缸"), h.clock.now())
        call = ToolCallScript(
            name="xiaotangyuan_memory_forget", arguments={"target": "item", "item": plan.id}
        )
        h.fake.enqueue(Reply(tool_calls=[call]), Reply(text="这条会删掉。"))
        async with client(
            h,
            on_confirm=lambda r: asked.append(r.question or ""),
            on_notice=show,
        ) as c:
            outcome = await (await c.chat("删掉社区中心计划")).result()
            assert isinstance(outcome, ChatDone) and outcome.question
            [request] = c.confirms
            assert asked == [outcome.question] and outcome.text.endswith(outcome.question)
            forgotten = await c.answer_confirm(request.confirm_id, yes=True)
            assert forgotten is not None and forgotten.items == 1
            with anyio.fail_after(10):
                await noticed.wait()
            [notice] = c.notices
            assert notice.action == "forgotten" and notice.id == forgotten.id
            assert shown == [notice.text] and "恢复" in notice.text
            with pytest.raises(Refused):
                await c.answer_confirm(request.confirm_id, yes=True)  # used once
        assert h.store.load_scope(farm) == []
