"""Chat turns over a real loopback WebSocket against the scripted model server."""

from __future__ import annotations

import base64
import io
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from websockets.asyncio.client import ClientConnection

from tests.conftest import Harness, chat, model_context, png_b64, recv, running, send
from xtyserver.protocol.limits import IMAGE_MAX_BYTES
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def serve(tmp_path: Path, **overrides: Any) -> AsyncIterator[Harness]:
    """A server whose model sees only the player's turns (background extraction off)."""
    # Heartbeat deadlines run on the test's clock: these tests move it by tens of
    # seconds without heartbeats, so the deadline is set beyond their reach.
    values: dict[str, Any] = {"memory.extraction": False, "server.heartbeat_ms": 600_000}
    values.update({key.replace("__", "."): value for key, value in overrides.items()})
    async with running(tmp_path, overrides=values) as h:
        yield h


def state(h: Harness, age: float = 0.0, **parts: Any) -> dict[str, Any]:
    return {"type": "state.update", "modelContext": model_context(h.clock, age=age, **parts)}


def last_prompt(h: Harness) -> str:
    return h.turn_request().text


def user_content(h: Harness) -> Any:
    messages = h.turn_request().json["messages"]
    return messages[-1]["content"]


async def next_chat_works(ws: ClientConnection, chat_id: str = "next") -> None:
    _, done = await chat(ws, "再试一次", chat_id)
    assert done["type"] == "chat.done", done
    assert done["text"]


async def refused_chat(ws: ClientConnection, frame: dict[str, Any]) -> dict[str, Any]:
    await send(ws, frame)
    error = await recv(ws)
    assert error["type"] == "error", error
    return error


def chat_frame(text: str = "你好", chat_id: str = "c1", **extra: Any) -> dict[str, Any]:
    return {"type": "chat.send", "id": chat_id, "text": text, "source": "text", **extra}


# -- the turn itself ---------------------------------------------------------------------


async def test_chat_streams_deltas_then_done_with_whole_text_and_usage(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        h.fake.enqueue(Reply(chunks=["今天", "适合", "钓鱼。"]))
        deltas, done = await chat(ws, "今天干什么", "c1")
        assert [d["text"] for d in deltas] == ["今天", "适合", "钓鱼。"]
        assert done == {
            "type": "chat.done",
            "id": "c1",
            "text": "今天适合钓鱼。",
            "context": "none",
            "usage": done["usage"],
        }
        assert done["usage"]["completionTokens"] > 0
        request = h.turn_request().json
        assert request["stream"] is True
        assert request["messages"][0]["role"] == "system"
        assert request["messages"][-1] == {"role": "user", "content": "今天干什么"}


async def test_chat_accepts_voice_source_and_refuses_raw_audio(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        _, done = await chat(ws, "语音转写的话", source="voice")
        assert done["type"] == "chat.done"
        error = await refused_chat(ws, chat_frame(source="audio"))
        assert error["fields"] == ["source"]
        error = await refused_chat(ws, chat_frame(audio="UklGRg=="))
        assert error["fields"] == ["audio"]


async def test_chat_accepts_2000_chars_and_refuses_2001(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        _, done = await chat(ws, "字" * 2000, "c1")
        assert done["type"] == "chat.done"
        assert "字" * 2000 in last_prompt(h)
        error = await refused_chat(ws, chat_frame("字" * 2001, "c2"))
        assert error["code"] == "budget_exceeded"
        assert error["fields"] == ["text"]
        assert error["id"] == "c2"
        error = await refused_chat(ws, chat_frame("", "c3"))
        assert error["fields"] == ["text"]
        assert len(h.fake.chat_requests) == 1


async def test_chat_text_with_key_and_path_is_redacted_before_the_model(tmp_path: Path) -> None:
    key = "sk-proj-CANARY1234567890abcdefXYZ"
    path = "C:\\Users\\CanaryUser\\AppData\\Roaming\\StardewValley"
    async with serve(tmp_path) as h, h.adapter() as ws:
        _, done = await chat(ws, f"我的密钥是 {key}，存档在 {path} 里")
        assert done["type"] == "chat.done"
        body = h.fake.requests[-1].body.decode()
        assert "CANARY1234567890" not in body
        assert "CanaryUser" not in body
        assert "CanaryUser" not in done["text"]
        prompt = last_prompt(h)
        assert "[已隐去:密钥]" in prompt
        assert "[已隐去:路径]" in prompt


async def test_look_alike_secrets_and_a_crash_log_are_redacted_before_the_model(
    tmp_path: Path,
) -> None:
    """The issue's rows and a pasted crash-log line, typed into chat (v1.md "Normalisation")."""
    text = (
        "我的 steam ７６５６１１９８０００００００００１，邮箱 bob＠example.com，"
        "另一个 76561198\u200b000000001 和 bob@exam\u200bple.com，"
        "存档在 Ｃ：＼Ｕｓｅｒｓ＼ａｌｉｃｅ，密钥 ｓｋ－ｐｒｏｊ－ABCDEFGHIJKLMNOPQRSTUVWX\n"
        '[ERROR] pid=4242 Traceback (most recent call last): File "C:\\Users\\alice\\game.py", '
        "line 3\n这是什么意思？"
    )
    async with serve(tmp_path) as h, h.adapter() as ws:
        _, done = await chat(ws, text)
        assert done["type"] == "chat.done"
        body = h.fake.requests[-1].body.decode("utf-8")
        for secret in ("7656119", "bob", "000000001", "alice", "ABCDEFGHIJKLMNOP", "4242"):
            assert secret not in body, secret
        for secret in ("Traceback", "game.py", "\u200b", "ｓｋ", "＠"):
            assert secret not in body, secret
        prompt = last_prompt(h)
        for kind in ("账号", "邮箱", "路径", "密钥", "日志"):
            assert f"[已隐去:{kind}]" in prompt, kind
        assert "这是什么意思？" in prompt  # the question itself reaches the model, as typed


# -- modelContext freshness and choice -------------------------------------------------------


async def test_fresh_context_goes_into_the_prompt(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        await send(ws, state(h, world={"location": "Pelican Town", "day": 12}))
        _, done = await chat(ws, "我在哪")
        assert done["context"] == "fresh"
        assert "Pelican Town" in last_prompt(h)
        assert "可能已过时" not in last_prompt(h)


async def test_context_captured_6_s_ago_is_injected_marked_stale(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        await send(ws, state(h, age=6, world={"location": "Cindersap Forest"}))
        _, done = await chat(ws, "我在哪")
        assert done["context"] == "stale"
        assert "Cindersap Forest" in last_prompt(h)
        assert "可能已过时" in last_prompt(h)


async def test_context_at_5_s_is_still_fresh(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        await send(ws, state(h, age=5, world={"location": "Beach"}))
        _, done = await chat(ws, "我在哪")
        assert done["context"] == "fresh"


async def test_context_aging_on_the_server_clock_turns_stale_then_dropped(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        await send(ws, state(h, world={"location": "Mines"}))
        h.clock.advance(6)
        _, done = await chat(ws, "我在哪", "c1")
        assert done["context"] == "stale"
        h.clock.advance(25)  # 31 s old now
        _, done = await chat(ws, "我在哪", "c2")
        assert done["context"] == "dropped"
        assert "Mines" not in last_prompt(h)


async def test_context_captured_31_s_ago_is_dropped_from_the_prompt(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        await send(ws, state(h, age=31, world={"location": "Skull Cavern"}))
        _, done = await chat(ws, "我在哪")
        assert done["context"] == "dropped"
        assert "Skull Cavern" not in last_prompt(h)
        assert "Skull Cavern" not in h.turn_request().body.decode()


async def test_only_the_newest_context_goes_into_a_request(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        await send(ws, state(h, world={"location": "OldPlace"}))
        await send(ws, state(h, world={"location": "NewerPlace"}))
        await chat(ws, "我在哪", "c1")
        assert "NewerPlace" in last_prompt(h)
        assert "OldPlace" not in last_prompt(h)
        # A context carried by chat.send replaces the state.update one.
        ctx = model_context(h.clock, world={"location": "ChatPlace"})
        await chat(ws, "现在呢", "c2", context={"modelContext": ctx})
        assert "ChatPlace" in last_prompt(h)
        assert "NewerPlace" not in last_prompt(h)
        assert last_prompt(h).count("当前游戏状态") == 1


async def test_observation_is_accepted_but_never_reaches_the_model(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        observation = {"log": ["[12:00] CANARY-OBSERVATION joined"], "tiles": [[1, 2], [3, 4]]}
        _, done = await chat(ws, "看看周围", context={"observation": observation})
        assert done["type"] == "chat.done"
        assert "CANARY-OBSERVATION" not in h.turn_request().body.decode()


async def test_observation_over_16_kib_is_refused(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        observation = {"blob": "o" * (16 * 1024)}
        error = await refused_chat(ws, chat_frame(context={"observation": observation}))
        assert error["code"] == "budget_exceeded"
        assert error["fields"] == ["context.observation"]
        assert not h.fake.chat_requests


# -- save switch -------------------------------------------------------------------------


async def test_state_update_with_other_identity_switches_save(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter(save="farm-a") as ws:
        await send(ws, state(h, world={"location": "FarmA-House"}))
        h.clock.advance(5)
        await send(ws, {"type": "heartbeat"})
        switch = state(h, world={"location": "FarmB-Barn"})
        switch["identity"] = {"gameId": "stardew-valley", "saveId": "farm-b"}
        await send(ws, switch)
        _, done = await chat(ws, "我在哪")
        assert done["type"] == "chat.done"
        assert "FarmB-Barn" in last_prompt(h)
        assert "FarmA-House" not in last_prompt(h)
        # Asked as an adapter would: the connection's store requests run in order,
        # so the switch's play accounting is written before this answer.
        saves = await save_stats(ws)
        assert set(saves) == {"farm-a", "farm-b"}
        assert saves["farm-a"]["sessions"] == 1
        assert saves["farm-a"]["activeMs"] == 5_000
        assert saves["farm-b"]["sessions"] == 1
        # The same identity again is no switch.
        await send(ws, switch)
        await chat(ws, "还在吗", "c2")
        assert (await save_stats(ws))["farm-b"]["sessions"] == 1


async def save_stats(ws: Any) -> dict[str, dict[str, Any]]:
    """``stats.result`` rows by save id, asked over the connection."""
    await send(ws, {"type": "stats.get", "id": "stats"})
    answer = await recv(ws)
    assert answer["type"] == "stats.result", answer
    return {row["saveId"]: row for row in answer["saves"]}


async def test_chat_context_identity_switches_save_and_drops_old_context(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter(save="farm-a") as ws:
        await send(ws, state(h, world={"location": "FarmA-House"}))
        context = {"identity": {"gameId": "stardew-valley", "saveId": "farm-c"}}
        _, done = await chat(ws, "我在哪", context=context)
        assert done["context"] == "none"
        assert "FarmA-House" not in last_prompt(h)
        # Asked as an adapter would: store requests of a connection run in order,
        # so the switch's play session is there for a stats.get sent after it.
        await send(ws, {"type": "stats.get", "id": "q"})
        stats = await recv(ws)
        assert {s["saveId"] for s in stats["saves"]} == {"farm-a", "farm-c"}


# -- busy and cancel ----------------------------------------------------------------------


async def test_second_chat_while_streaming_gets_busy_and_first_completes(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        h.fake.enqueue(Reply(text="慢慢回答", first_delay=0.5))
        await send(ws, chat_frame("第一句", "c1"))
        await send(ws, chat_frame("第二句", "c2"))
        busy = await recv(ws)
        assert (busy["type"], busy["id"], busy["code"]) == ("chat.error", "c2", "busy")
        while (frame := await recv(ws))["type"] == "chat.delta":
            assert frame["id"] == "c1"
        assert (frame["type"], frame["id"], frame["text"]) == ("chat.done", "c1", "慢慢回答")
        assert len(h.fake.chat_requests) == 1
        await next_chat_works(ws)


async def test_chat_cancel_ends_turn_with_cancelled_and_next_chat_works(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        # Matched to this turn only: a cancel may beat the request to the model server.
        h.fake.enqueue(Reply(text="永远不来", first_delay=30, match="第一句"))
        await send(ws, chat_frame("第一句", "c1"))
        await send(ws, {"type": "chat.cancel", "id": "c1"})
        error = await recv(ws)
        assert (error["type"], error["id"], error["code"]) == ("chat.error", "c1", "cancelled")
        await next_chat_works(ws)


async def test_chat_cancel_mid_stream_stops_the_deltas(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        h.fake.enqueue(Reply(chunks=["一", "二", "三", "四"], chunk_delay=0.3))
        await send(ws, chat_frame("数数", "c1"))
        first = await recv(ws)
        assert first == {"type": "chat.delta", "id": "c1", "text": "一"}
        await send(ws, {"type": "chat.cancel", "id": "c1"})
        while (frame := await recv(ws))["type"] == "chat.delta":
            pass
        assert (frame["type"], frame["code"]) == ("chat.error", "cancelled")
        await next_chat_works(ws)


# -- provider faults ---------------------------------------------------------------------


async def test_429_is_retried_and_the_reply_arrives(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        h.fake.enqueue(Reply(status=429, retry_after=0.05), Reply(text="等了一下"))
        _, done = await chat(ws, "你好")
        assert (done["type"], done["text"]) == ("chat.done", "等了一下")
        assert len(h.fake.chat_requests) == 2


@pytest.mark.parametrize(
    ("replies", "code"),
    [
        ([Reply(status=429, retry_after=0.01)] * 3, "model_rate_limited"),
        ([Reply(status=500)] * 3, "model_unavailable"),
        ([Reply(status=503)] * 3, "model_unavailable"),
        ([Reply(status=401)], "model_auth_failed"),
        ([Reply(status=400)], "model_bad_request"),
        ([Reply(text="一二三四五六七八", cut_after=1)], "model_stream_cut"),
    ],
)
async def test_provider_fault_ends_in_chat_error_and_next_chat_works(
    tmp_path: Path, replies: list[Reply], code: str
) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        h.fake.enqueue(*replies)
        _, error = await chat(ws, "你好", "c1")
        assert (error["type"], error["id"], error["code"]) == ("chat.error", "c1", code)
        assert error["message"]
        assert h.fake.queued == 0
        await next_chat_works(ws)


async def test_auth_failure_message_never_contains_the_key(tmp_path: Path) -> None:
    async with (
        serve(tmp_path, model__api_key="sk-CANARYKEY0123456789abcdef") as h,
        h.adapter() as ws,
    ):
        h.fake.enqueue(Reply(status=401))
        _, error = await chat(ws, "你好")
        assert error["code"] == "model_auth_failed"
        assert "CANARYKEY" not in error["message"]


async def test_first_token_that_never_comes_ends_in_model_timeout(tmp_path: Path) -> None:
    async with serve(tmp_path, model__first_token_timeout=0.3) as h, h.adapter() as ws:
        h.fake.enqueue(Reply(text="太迟了", first_delay=1e6))
        _, error = await chat(ws, "你好", "c1")
        assert (error["type"], error["code"]) == ("chat.error", "model_timeout")
        await next_chat_works(ws)


async def test_chat_without_model_answers_model_not_configured(tmp_path: Path) -> None:
    async with running(tmp_path, model=False) as h, h.adapter() as ws:
        await send(ws, chat_frame("你好", "c1"))
        error = await recv(ws)
        assert (error["type"], error["id"], error["code"]) == (
            "chat.error",
            "c1",
            "model_not_configured",
        )
        assert "「设置」" in error["message"]
        # The server keeps serving everything else.
        await send(ws, {"type": "stats.get", "id": "s"})
        assert (await recv(ws))["type"] == "stats.result"
        assert not h.fake.requests


# -- screenshots ---------------------------------------------------------------------------


def image_part(h: Harness) -> Image.Image:
    content = user_content(h)
    assert isinstance(content, list)
    [part] = [p for p in content if p.get("type") == "image_url"]
    url = part["image_url"]["url"]
    prefix = "data:image/png;base64,"
    assert url.startswith(prefix)
    return Image.open(io.BytesIO(base64.b64decode(url[len(prefix) :])))


async def test_png_reaches_the_model_as_image_part_downscaled(tmp_path: Path) -> None:
    async with serve(tmp_path, images__max_side=32) as h, h.adapter() as ws:
        image = {"mime": "image/png", "data": png_b64(64, 48)}
        _, done = await chat(ws, "看图", image=image)
        assert done["type"] == "chat.done"
        assert done["imageSent"] is True
        sent = image_part(h)
        assert sent.format == "PNG"
        assert sent.size == (32, 24)
        content = user_content(h)
        assert {"type": "text", "text": "看图"} in content


def _band_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("xty-image-band")]


async def test_a_large_screenshot_uses_the_servers_band_thread_which_ends_with_the_server(
    tmp_path: Path,
) -> None:
    """The image helper thread is the server's (a task of its task group), not the process's."""
    assert _band_threads() == []
    async with serve(tmp_path) as h:
        async with h.adapter() as ws:
            big = {"mime": "image/png", "data": png_b64(1920, 1080)}
            _, done = await chat(ws, "看图", image=big)
            assert done["imageSent"] is True
        assert image_part(h).size == (1568, 882)
        assert h.server.bands.executor is not None
        assert len(_band_threads()) == 1  # the top band was resized on it
    assert h.server.bands.executor is None
    assert _band_threads() == []


async def test_png_within_max_side_keeps_its_size(tmp_path: Path) -> None:
    async with serve(tmp_path) as h, h.adapter() as ws:
        _, done = await chat(ws, "看图", image={"mime": "image/png", "data": png_b64(64, 48)})
        assert done["imageSent"] is True
        assert image_part(h).size == (64, 48)


async def test_image_with_lying_mime_is_refused_as_invalid_image(tmp_path: Path) -> None:
    buf = io.BytesIO()
    Image.new("RGB", (8, 8)).save(buf, format="JPEG")
    jpeg = base64.b64encode(buf.getvalue()).decode()
    async with serve(tmp_path) as h, h.adapter() as ws:
        error = await refused_chat(ws, chat_frame(image={"mime": "image/png", "data": jpeg}))
        assert (error["code"], error["id"]) == ("invalid_image", "c1")
        assert error["fields"] == ["image.mime"]
        fake_png = base64.b64encode(b"GIF89a" + b"\0" * 64).decode()
        error = await refused_chat(ws, chat_frame(image={"mime": "image/png", "data": fake_png}))
        assert error["code"] == "invalid_image"
        assert error["fields"] == ["image.data"]
        assert not h.fake.chat_requests
        await next_chat_works(ws)


async def test_image_over_8_mib_is_refused_as_image_too_large(tmp_path: Path) -> None:
    data = b"\x89PNG\r\n\x1a\n" + b"\0" * (IMAGE_MAX_BYTES + 1 - 8)
    async with serve(tmp_path) as h, h.adapter() as ws:
        frame = chat_frame(image={"mime": "image/png", "data": base64.b64encode(data).decode()})
        error = await refused_chat(ws, frame)
        assert error["code"] == "image_too_large"
        assert error["fields"] == ["image.data"]
        assert not h.fake.chat_requests
        await next_chat_works(ws)


async def test_model_without_vision_gets_the_turn_without_the_image(tmp_path: Path) -> None:
    async with serve(tmp_path, model__vision=False) as h, h.adapter() as ws:
        _, done = await chat(ws, "看图", image={"mime": "image/png", "data": png_b64()})
        assert done["type"] == "chat.done"
        assert done.get("imageSent", False) is False
        assert user_content(h) == "看图"
        assert "image_url" not in h.turn_request().body.decode()
