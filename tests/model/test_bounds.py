"""Issue 18 section 1: every model call is bounded, whatever the provider does.

The real openai client against the scripted model server over loopback; the
scripted model ignores ``max_tokens``, streams forever, sends one huge SSE
line, answers only reasoning, or makes thousands of tool calls.
"""

from __future__ import annotations

import contextlib
import resource
from collections.abc import AsyncIterator
from typing import Any

import anyio
import pytest
import structlog

from xtyserver.errors import ModelError
from xtyserver.model.bounds import (
    LINE_BYTES,
    REPLY_CHARS,
    REPLY_SECONDS,
    TOOL_CALLS,
    OversizedLine,
    ReplyCap,
    SseLines,
    ThinkFilter,
    image_refused,
    is_loopback,
    time_left,
    token_limits,
)
from xtyserver.model.client import Delta, Done, ModelClient, ModelSettings
from xtyserver.testing import FakeModelServer, Reply, ToolCallScript


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def fake() -> AsyncIterator[FakeModelServer]:
    async with FakeModelServer() as server:
        yield server


@contextlib.asynccontextmanager
async def client_for(fake: FakeModelServer, **overrides: Any) -> AsyncIterator[ModelClient]:
    values: dict[str, Any] = {
        "base_url": fake.base_url,
        "model": "fake-vl",
        "first_token_timeout": 5.0,
        "idle_timeout": 5.0,
        "max_retries": 0,
    }
    values.update(overrides)
    client = ModelClient(ModelSettings(**values))
    try:
        yield client
    finally:
        await client.aclose()


pytestmark = pytest.mark.anyio

USER = [{"role": "user", "content": "你好"}]


async def run(
    client: ModelClient, **kwargs: Any
) -> tuple[list[str], Done | None, ModelError | None]:
    deltas: list[str] = []
    done: Done | None = None
    try:
        async with contextlib.aclosing(client.stream_chat(USER, **kwargs)) as events:
            async for event in events:
                if isinstance(event, Delta):
                    deltas.append(event.text)
                else:
                    done = event
    except ModelError as err:
        return deltas, done, err
    return deltas, done, None


# -- max_tokens on every request --------------------------------------------------------------


async def test_chat_and_background_requests_carry_their_token_limits(
    fake: FakeModelServer,
) -> None:
    async with client_for(fake) as client:
        await run(client)
        await client.complete_done(USER)
    chat, background = (r.json for r in fake.chat_requests)
    assert chat["max_tokens"] == 400 and "max_completion_tokens" not in chat
    assert background["max_tokens"] == 300
    assert "response_format" not in background, "JSON mode is off for an unknown provider"


async def test_token_field_and_json_mode_follow_the_route(fake: FakeModelServer) -> None:
    async with client_for(
        fake, token_field="max_completion_tokens", max_tokens=123, json_mode=True
    ) as client:
        await run(client)
        await client.complete_done(USER)
    chat, background = (r.json for r in fake.chat_requests)
    assert chat["max_completion_tokens"] == 123 and "max_tokens" not in chat
    assert "response_format" not in chat, "JSON mode is for background calls only"
    assert background["max_completion_tokens"] == 300
    assert background["response_format"] == {"type": "json_object"}
    assert token_limits("both", 7) == {"max_tokens": 7, "max_completion_tokens": 7}


# -- truncated: finish_reason length and the character cap -------------------------------------


async def test_finish_reason_length_is_a_truncated_reply(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(text="一二三四", finish_reason="length"))
    async with client_for(fake) as client:
        _deltas, done, err = await run(client)
    assert err is None and done is not None
    assert done.truncated and not done.incomplete and done.text == "一二三四"


async def test_a_reply_of_exactly_8000_chars_is_whole(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(chunks=["好" * 4000, "的" * 4000]))
    async with client_for(fake) as client:
        _deltas, done, _err = await run(client)
    assert done is not None and not done.truncated and len(done.text) == REPLY_CHARS == 8000


async def test_a_reply_over_8000_chars_is_cut_at_8000_and_the_stream_closed(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["好" * 4000, "的" * 4000, "多"], chunk_delay=0.0))
    async with client_for(fake) as client:
        deltas, done, err = await run(client)
    assert err is None and done is not None and done.truncated
    assert "".join(deltas) == done.text and len(done.text) == 8000 and "多" not in done.text
    # An endless stream is cut the same way and its upstream is closed.
    fake.enqueue(Reply(chunks=["啊" * 1000], endless=True))
    async with client_for(fake) as client:
        deltas, done, err = await run(client)
        assert done is not None and done.truncated and len(done.text) == 8000
        with anyio.fail_after(5):
            await fake.wait_open_streams(0)


# -- the seconds cap and the idle timeout ------------------------------------------------------


def test_the_reply_deadline_is_60_seconds_at_the_edge() -> None:
    assert REPLY_SECONDS == 60.0
    assert time_left(100.0, 159.999) > 0.0 and time_left(100.0, 160.0) == 0.0
    assert time_left(100.0, 130.0) == 30.0 and time_left(100.0, 170.0) == 0.0


async def test_an_endless_slow_stream_ends_truncated_at_the_reply_deadline(
    fake: FakeModelServer,
) -> None:
    """The deadline is configurable downwards, so the real path is tested in 1 s, not 60."""
    fake.enqueue(Reply(chunks=["嗯"], chunk_delay=0.05, endless=True))
    async with client_for(fake, reply_seconds=1.0, idle_timeout=5.0) as client:
        with structlog.testing.capture_logs() as logs:
            deltas, done, err = await run(client)
        assert err is None and done is not None
        assert done.truncated and not done.incomplete and done.text == "".join(deltas)
        # What ended it was the deadline: not the character cap, not a finish_reason.
        [bounded] = [e for e in logs if e["event"] == "model.reply_bounded"]
        assert bounded["truncated"] and bounded["finish_reason"] is None
        assert bounded["chars"] == len(done.text) < REPLY_CHARS
        with anyio.fail_after(5):
            await fake.wait_open_streams(0)


async def test_a_silence_after_text_ends_incomplete_with_the_text_so_far(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["我看到", "了"], chunk_delay=1e6))
    async with client_for(fake, idle_timeout=0.3) as client:
        deltas, done, err = await run(client)
    assert err is None and done is not None
    assert done.incomplete and not done.truncated and done.text == "我看到" == "".join(deltas)


async def test_a_background_answer_that_falls_silent_is_a_timeout(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(chunks=['{"events":', "[]}"], chunk_delay=1e6))
    async with client_for(fake, idle_timeout=0.3) as client:
        with pytest.raises(ModelError) as caught:
            await client.complete_done(USER)
    assert caught.value.code == "model_timeout"


# -- the SSE line cap --------------------------------------------------------------------------


def test_sse_lines_accept_a_line_of_64_kib_and_refuse_one_byte_more() -> None:
    assert LINE_BYTES == 65536
    ok = SseLines()
    line = b"data: " + b"x" * (LINE_BYTES - 6)
    assert len(line) == LINE_BYTES
    (event,) = list(ok.feed(line + b"\n\n"))
    assert len(event.data) == LINE_BYTES - 6
    over = SseLines()
    with pytest.raises(OversizedLine):
        list(over.feed(line + b"x"))  # no newline yet: refused before it ends


def test_sse_lines_split_crlf_cr_and_lf_across_chunks_and_skip_comments() -> None:
    decoder = SseLines()
    stream = b": ping\r\ndata: a\r\n\r\ndata: b\r\rdata: c\n\nevent: e\ndata: d\n"
    events = []
    for i in range(len(stream)):
        events += list(decoder.feed(stream[i : i + 1]))
    events += list(decoder.finish())
    assert [(e.event, e.data) for e in events] == [
        (None, "a"),
        (None, "b"),
        (None, "c"),
        ("e", "d"),
    ]


def test_an_event_of_many_small_lines_is_capped_too() -> None:
    decoder = SseLines(cap=1024)
    with pytest.raises(OversizedLine):
        list(decoder.feed(b"data: xxxxxxxxxx\n" * 200))


async def test_a_256_mb_line_is_never_held_and_ends_the_call(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(chunks=[], line_bytes=256 * 1024 * 1024))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    async with client_for(fake) as client:
        with anyio.fail_after(10):
            deltas, _done, err = await run(client)
        assert err is not None and err.code == "model_error" and not deltas
        with anyio.fail_after(5):
            await fake.wait_open_streams(0)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024, f"peak memory grew by {grown_kib} KiB"
    assert fake.bytes_streamed < 64 * 1024 * 1024, "the client stopped reading early"


async def test_an_oversized_line_after_text_ends_the_reply_truncated(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["先说", "后面"], line_bytes=LINE_BYTES), Reply(text="下一次"))
    async with client_for(fake) as client:
        deltas, done, err = await run(client)
        assert err is None and done is not None and done.truncated
        assert deltas == ["先说"] and done.text == "先说"
        deltas, done, err = await run(client)
    assert done is not None and done.text == "下一次", "the next call works"


# -- tool calls --------------------------------------------------------------------------------


@pytest.mark.parametrize(("sent", "kept"), [(4, 4), (5, 4), (10_000, 4)])
async def test_at_most_four_tool_calls_are_kept_per_answer(
    fake: FakeModelServer, sent: int, kept: int
) -> None:
    calls = [ToolCallScript(name="xiaotangyuan_memory_view", arguments={}) for _ in range(sent)]
    fake.enqueue(Reply(tool_calls=calls))
    async with client_for(fake, first_token_timeout=120.0) as client:
        _deltas, done, err = await run(client)
    assert err is None and done is not None
    assert TOOL_CALLS == 4 and len(done.tool_calls) == kept
    assert [c.id for c in done.tool_calls] == [f"call_{i}" for i in range(1, kept + 1)]


def test_reply_cap_counts_characters_at_the_edge() -> None:
    cap = ReplyCap(chars=10)
    assert cap.take("0123456789") == "0123456789" and not cap.reached
    assert cap.take("") == "" and not cap.reached
    assert cap.take("x") == "" and cap.reached


# -- reasoning ---------------------------------------------------------------------------------


async def test_reasoning_never_becomes_a_delta(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(reasoning="玩家在问天气，我应该……", text="晴天！"))
    async with client_for(fake) as client:
        deltas, done, _err = await run(client)
    assert done is not None and done.reasoned
    assert "".join(deltas) == done.text == "晴天！"


async def test_a_reasoning_only_answer_is_an_empty_done_marked_reasoned(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(reasoning="让我想想……", chunks=[]))
    async with client_for(fake) as client:
        deltas, done, err = await run(client)
    assert err is None and deltas == [] and done is not None
    assert done.text == "" and done.reasoned


async def test_a_leading_think_block_in_content_is_kept_from_the_player(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["<th", "ink>想一想", "……</thi", "nk>\n\n你好呀", "！"]))
    async with client_for(fake) as client:
        deltas, done, _err = await run(client)
    assert done is not None and done.text == "你好呀！" == "".join(deltas) and done.reasoned


def test_think_filter_passes_ordinary_text_and_a_late_think_tag() -> None:
    f = ThinkFilter()
    assert f.feed("<") == "" and f.feed("b>粗体</b> <think>") == "<b>粗体</b> <think>"
    g = ThinkFilter()
    assert g.feed("<thi") == "" and g.flush() == "<thi"


# -- pure helpers ------------------------------------------------------------------------------


def test_image_refusal_is_a_400_naming_the_image() -> None:
    assert image_refused(
        400, "Invalid content type. image_url is only supported by certain models."
    )
    assert image_refused(400, "This model does not support vision")
    assert not image_refused(400, "Unknown model qwen9")
    assert not image_refused(500, "image service down")


def test_loopback_base_urls() -> None:
    assert is_loopback("http://127.0.0.1:11434/v1") and is_loopback("http://localhost:8080/v1")
    assert is_loopback("http://[::1]:1234/v1") and is_loopback("http://127.9.9.9/v1")
    assert not is_loopback("https://api.deepseek.com/v1")
    assert not is_loopback("http://192.168.1.5:11434/v1")
