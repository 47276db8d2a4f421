"""ModelClient against the real scripted model server over loopback, real openai client."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import anyio
import msgspec
import openai
import pytest
import structlog
from hypothesis import given
from hypothesis import strategies as st

from xtyserver.errors import ModelError
from xtyserver.model.client import (
    Delta,
    Done,
    ModelClient,
    ModelSettings,
    Usage,
    _Progress,
    strip_images,
)
from xtyserver.model.provider_errors import ProviderAnswerError
from xtyserver.model.request import RawChunk, chat_body, post_chat
from xtyserver.model.tls import provider_client
from xtyserver.session.tools import ToolCall
from xtyserver.testing import DEFAULT_MODEL, FakeModelServer, Reply

CANARY_KEY = "sk-test-CANARY123456789"
PNG_URL = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4"
    "DwABBAEAcCBlCwAAAABJRU5ErkJggg=="
)

FIRST_TOKEN_S = 0.5
IDLE_S = 0.5


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def fake() -> AsyncIterator[FakeModelServer]:
    async with FakeModelServer() as server:
        yield server


def settings_for(fake: FakeModelServer, **overrides: Any) -> ModelSettings:
    values: dict[str, Any] = {
        "base_url": fake.base_url,
        "api_key": CANARY_KEY,
        "model": DEFAULT_MODEL,
        "first_token_timeout": FIRST_TOKEN_S,
        "idle_timeout": IDLE_S,
        "max_retries": 2,
        "backoff_base": 0.01,
        "backoff_cap": 0.05,
        "retry_after_cap": 1.0,
    }
    values.update(overrides)
    return ModelSettings(**values)


@contextlib.asynccontextmanager
async def client_for(fake: FakeModelServer, **overrides: Any) -> AsyncIterator[ModelClient]:
    client = ModelClient(settings_for(fake, **overrides))
    try:
        yield client
    finally:
        await client.aclose()


def user(text: str) -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "你是小汤圆。"},
        {"role": "user", "content": text},
    ]


class Outcome:
    """What a consumer of stream_chat saw."""

    def __init__(self) -> None:
        self.deltas: list[str] = []
        self.done: Done | None = None
        self.error: ModelError | None = None


async def consume(
    client: ModelClient, messages: Sequence[Mapping[str, Any]], **kwargs: Any
) -> Outcome:
    out = Outcome()
    try:
        async with contextlib.aclosing(client.stream_chat(messages, **kwargs)) as events:
            async for event in events:
                if isinstance(event, Delta):
                    assert out.done is None, "a Delta after Done"
                    out.deltas.append(event.text)
                else:
                    out.done = event
    except ModelError as err:
        out.error = err
    return out


def retry_delays(logs: list[dict[str, Any]]) -> list[float]:
    """The waits the client chose before each retry (what it decided, not the clock)."""
    return [e["delay_s"] for e in logs if e["event"] == "model.retry"]


# ---------------------------------------------------------------------------
# Streaming


@pytest.mark.anyio
async def test_client_yields_deltas_in_order_and_done_joins_them_with_usage(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["你好", "，", "农夫", "！"]))
    async with client_for(fake) as client:
        out = await consume(client, user("早上好"))
    assert out.error is None
    assert out.deltas == ["你好", "，", "农夫", "！"]
    assert out.done is not None
    assert out.done.text == "你好，农夫！"
    prompt = len("你是小汤圆。\n早上好")
    assert out.done.usage == Usage(
        prompt_tokens=prompt, completion_tokens=6, total_tokens=prompt + 6
    )


@pytest.mark.anyio
async def test_client_streams_the_fake_default_reply_when_nothing_is_scripted(
    fake: FakeModelServer,
) -> None:
    async with client_for(fake) as client:
        out = await consume(client, user("今天天气怎么样"))
    assert out.done is not None
    assert out.done.text == "小汤圆收到：今天天气怎么样"
    assert len(out.deltas) == 4
    assert "".join(out.deltas) == out.done.text


@pytest.mark.anyio
async def test_client_request_carries_stream_options_key_and_image_part(
    fake: FakeModelServer,
) -> None:
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "你是小汤圆。"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "看看这张图"},
                {"type": "image_url", "image_url": {"url": PNG_URL}},
            ],
        },
    ]
    async with client_for(fake) as client:
        out = await consume(client, messages)
    assert out.error is None
    [request] = fake.chat_requests
    body = request.json
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["model"] == DEFAULT_MODEL
    assert body["messages"][1]["content"][1] == {"type": "image_url", "image_url": {"url": PNG_URL}}
    assert request.headers["authorization"] == f"Bearer {CANARY_KEY}"


@pytest.mark.anyio
async def test_client_without_vision_sends_the_turn_without_the_image(
    fake: FakeModelServer,
) -> None:
    messages: list[dict[str, Any]] = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "看看这张图"},
                {"type": "image_url", "image_url": {"url": PNG_URL}},
            ],
        }
    ]
    async with client_for(fake, vision=False) as client:
        out = await consume(client, messages)
    assert out.error is None
    [request] = fake.chat_requests
    assert request.json["messages"][0]["content"] == [{"type": "text", "text": "看看这张图"}]
    assert b"image_url" not in request.body
    assert messages[0]["content"][1]["type"] == "image_url", "caller's messages untouched"


@pytest.mark.anyio
async def test_client_complete_returns_whole_text_using_extraction_model(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(text="记住：玩家喜欢钓鱼"))
    async with client_for(fake, extraction_model="xty-small") as client:
        text = (await client.complete_done(user("总结"))).text
    assert text == "记住：玩家喜欢钓鱼"
    assert fake.chat_requests[0].json["model"] == "xty-small"


@pytest.mark.anyio
async def test_client_consumer_leaving_early_closes_stream_and_next_call_works(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["一", "二", "三"], chunk_delay=0.05), Reply(text="好的"))
    async with client_for(fake) as client:
        async with contextlib.aclosing(client.stream_chat(user("a"))) as events:
            async for event in events:
                assert event == Delta("一")
                break
        out = await consume(client, user("b"))
    assert out.done is not None and out.done.text == "好的"


# ---------------------------------------------------------------------------
# Rate limits


@pytest.mark.anyio
async def test_client_honours_retry_after_on_429_then_succeeds(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(status=429, retry_after=0.3), Reply(text="终于轮到我了"))
    with structlog.testing.capture_logs() as logs:
        async with client_for(fake) as client:
            out = await consume(client, user("你好"))
    assert out.error is None
    assert out.done is not None and out.done.text == "终于轮到我了"
    assert len(fake.chat_requests) == 2
    # Backoff alone would be 0.01 s: the wait it chose came from Retry-After.
    assert retry_delays(logs) == [0.3]


@pytest.mark.anyio
async def test_client_waits_retry_after_exactly_at_cap(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(status=429, retry_after=0.25), Reply(text="好"))
    async with client_for(fake, retry_after_cap=0.25) as client:
        out = await consume(client, user("你好"))
    assert out.done is not None and out.done.text == "好"
    assert len(fake.chat_requests) == 2


@pytest.mark.anyio
async def test_client_refuses_to_wait_retry_after_over_cap(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(status=429, retry_after=0.26), Reply(text="不该到这里"))
    async with client_for(fake, retry_after_cap=0.25) as client:
        out = await consume(client, user("你好"))
    assert out.error is not None
    assert out.error.code == "model_rate_limited"
    assert out.error.retry_after == pytest.approx(0.26)
    assert len(fake.chat_requests) == 1


@pytest.mark.anyio
async def test_client_does_not_sleep_a_retry_after_it_will_not_honour(
    fake: FakeModelServer,
) -> None:
    # A minute over the cap: waiting it out would be unmistakable on any machine.
    fake.enqueue(Reply(status=429, retry_after=60), Reply(text="不该到这里"))
    with structlog.testing.capture_logs() as logs:
        async with client_for(fake, retry_after_cap=0.25) as client:
            out = await consume(client, user("你好"))
    assert out.error is not None and out.error.code == "model_rate_limited"
    assert retry_delays(logs) == []  # it decided not to wait at all


@pytest.mark.anyio
async def test_client_gives_up_on_429_forever_with_rate_limited_within_cap(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(*[Reply(status=429, retry_after=0.1)] * 5)
    with structlog.testing.capture_logs() as logs:
        async with client_for(fake, max_retries=2) as client:
            out = await consume(client, user("你好"))
    assert out.error is not None
    assert out.error.code == "model_rate_limited"
    assert out.error.status == 429
    assert len(fake.chat_requests) == 3
    assert retry_delays(logs) == [0.1, 0.1]  # max_retries waits, each the Retry-After
    assert CANARY_KEY not in repr(logs)


@pytest.mark.anyio
async def test_client_backs_off_exponentially_on_429_without_retry_after(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(*[Reply(status=429)] * 3, Reply(text="好"))
    with structlog.testing.capture_logs() as logs:
        async with client_for(fake, max_retries=3, backoff_base=0.01, backoff_cap=0.03) as client:
            out = await consume(client, user("你好"))
    assert out.done is not None and out.done.text == "好"
    delays = [e["delay_s"] for e in logs if e["event"] == "model.retry"]
    assert delays == [0.01, 0.02, 0.03]  # doubled, then held at the cap


# ---------------------------------------------------------------------------
# Server errors and connection failures


@pytest.mark.anyio
@pytest.mark.parametrize("max_retries", [0, 2])
async def test_client_retries_500_exactly_max_retries_times_then_unavailable(
    fake: FakeModelServer, max_retries: int
) -> None:
    fake.enqueue(*[Reply(status=500)] * 5)
    async with client_for(fake, max_retries=max_retries) as client:
        out = await consume(client, user("你好"))
    assert out.error is not None
    assert out.error.code == "model_unavailable"
    assert out.error.status == 500
    assert out.deltas == []
    assert len(fake.chat_requests) == max_retries + 1


@pytest.mark.anyio
async def test_client_recovers_when_503_clears_within_retries(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(status=503), Reply(status=502), Reply(text="恢复了"))
    async with client_for(fake, max_retries=2) as client:
        out = await consume(client, user("你好"))
    assert out.done is not None and out.done.text == "恢复了"
    assert len(fake.chat_requests) == 3


@pytest.mark.anyio
async def test_client_reports_unavailable_when_connection_is_refused() -> None:
    # A port that was just free and has nobody listening.
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1", local_port=0)
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    await listener.aclose()
    settings = ModelSettings(
        base_url=f"http://127.0.0.1:{port}/v1",
        api_key=CANARY_KEY,
        model=DEFAULT_MODEL,
        first_token_timeout=FIRST_TOKEN_S,
        backoff_base=0.01,
        backoff_cap=0.05,
    )
    client = ModelClient(settings)
    try:
        with structlog.testing.capture_logs() as logs:
            out = await consume(client, user("你好"))
    finally:
        await client.aclose()
    assert out.error is not None
    assert out.error.code == "model_unavailable"
    delays = retry_delays(logs)  # short backoffs that grow, each within the cap, not a hang
    assert delays and all(0 < d <= 0.05 for d in delays) and delays == sorted(delays)


# ---------------------------------------------------------------------------
# Auth and bad requests


@pytest.mark.anyio
@pytest.mark.parametrize("status", [401, 403])
async def test_client_does_not_retry_auth_failure_and_never_shows_the_key(
    fake: FakeModelServer, status: int
) -> None:
    fake.enqueue(*[Reply(status=status)] * 3)
    settings = settings_for(fake)
    with structlog.testing.capture_logs() as logs:
        async with client_for(fake) as client:
            out = await consume(client, user("你好"))
    assert out.error is not None
    assert out.error.code == "model_auth_failed"
    assert out.error.status == status
    assert len(fake.chat_requests) == 1
    if status == 401:  # the provider echoed the key back; it must go no further
        assert CANARY_KEY.encode() in await _echoed_401_body(fake)
    for shown in (
        str(out.error),
        repr(out.error),
        out.error.message,
        repr(settings),
        str(settings),
    ):
        assert CANARY_KEY not in shown
        assert "CANARY" not in shown
    assert out.error.__cause__ is None
    assert "XTY_MODEL_API_KEY" in out.error.message
    assert CANARY_KEY not in repr(logs)


async def _echoed_401_body(fake: FakeModelServer) -> bytes:
    # Ask the fake once more with the raw openai client to see what the provider said.

    fake.enqueue(Reply(status=401))
    raw = openai.AsyncOpenAI(base_url=fake.base_url, api_key=CANARY_KEY, max_retries=0)
    try:
        await raw.chat.completions.create(model=DEFAULT_MODEL, messages=user("x"))  # type: ignore[arg-type]
    except openai.AuthenticationError as err:
        return msgspec.json.encode(err.body)
    finally:
        await raw.close()
    raise AssertionError("the fake did not answer 401")


@pytest.mark.anyio
@pytest.mark.parametrize("status", [400, 404, 422])
async def test_client_does_not_retry_other_4xx_and_reports_bad_request(
    fake: FakeModelServer, status: int
) -> None:
    fake.enqueue(*[Reply(status=status)] * 3)
    async with client_for(fake) as client:
        out = await consume(client, user("你好"))
    assert out.error is not None
    assert out.error.code == "model_bad_request"
    assert len(fake.chat_requests) == 1


# ---------------------------------------------------------------------------
# Deadlines


@pytest.mark.anyio
async def test_client_times_out_when_first_token_never_comes_then_next_call_works(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(text="永远不来", first_delay=1e6), Reply(text="我来了"))
    async with client_for(fake) as client:
        out = await consume(client, user("你好"))
        assert out.error is not None
        assert out.error.code == "model_timeout"
        assert out.deltas == []
        assert len(fake.chat_requests) == 1, "a timeout is not retried"
        again = await consume(client, user("再试一次"))
    assert again.done is not None and again.done.text == "我来了"


@pytest.mark.anyio
async def test_client_first_token_just_inside_deadline_is_accepted(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(text="刚好", first_delay=FIRST_TOKEN_S - 0.3))
    async with client_for(fake) as client:
        out = await consume(client, user("你好"))
    assert out.error is None and out.done is not None and out.done.text == "刚好"


@pytest.mark.anyio
async def test_client_ends_incomplete_when_stream_goes_idle_after_first_token(
    fake: FakeModelServer,
) -> None:
    """Issue 18: text the player saw is kept; the reply ends incomplete, not in an error."""
    fake.enqueue(Reply(chunks=["开始", "然后"], chunk_delay=1e6))
    async with client_for(fake) as client:
        out = await consume(client, user("你好"))
    assert out.deltas == ["开始"]
    assert out.error is None and out.done is not None
    assert out.done.incomplete and not out.done.truncated
    assert out.done.text == "开始"
    assert len(fake.chat_requests) == 1
    with anyio.fail_after(5):
        await fake.wait_open_streams(0)  # the upstream stream was closed


# ---------------------------------------------------------------------------
# Stream cuts


@pytest.mark.anyio
async def test_client_reports_stream_cut_after_deltas_without_retrying(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["一", "二", "三", "四"], cut_after=2), Reply(text="第二次"))
    async with client_for(fake) as client:
        out = await consume(client, user("数数"))
        assert out.deltas == ["一", "二"]
        assert out.done is None
        assert out.error is not None
        assert out.error.code == "model_stream_cut"
        assert len(fake.chat_requests) == 1, "text was shown: never retried"
        assert fake.queued == 1
        again = await consume(client, user("再来"))
    assert again.done is not None and again.done.text == "第二次"


@pytest.mark.anyio
async def test_client_reports_stream_cut_when_all_text_came_but_no_finish(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["一", "二"], cut_after=2))
    async with client_for(fake) as client:
        out = await consume(client, user("数数"))
    assert out.deltas == ["一", "二"]
    assert out.error is not None and out.error.code == "model_stream_cut"
    assert len(fake.chat_requests) == 1


@pytest.mark.anyio
async def test_client_retries_a_cut_before_any_text_was_shown(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(chunks=["一", "二"], cut_after=0), Reply(text="完整"))
    async with client_for(fake) as client:
        out = await consume(client, user("数数"))
    assert out.done is not None and out.done.text == "完整"
    assert out.deltas == ["完", "整"], "nothing of the cut attempt was shown"
    assert len(fake.chat_requests) == 2


# ---------------------------------------------------------------------------
# Configuration


@pytest.mark.anyio
async def test_client_without_configuration_names_the_missing_settings() -> None:
    client = ModelClient(ModelSettings(api_key=CANARY_KEY))
    assert not client.configured
    out = await consume(client, user("你好"))
    await client.aclose()
    assert out.error is not None
    assert out.error.code == "model_not_configured"
    assert "XTY_MODEL_BASE_URL" in out.error.message
    assert "XTY_MODEL " in out.error.message + " "
    assert CANARY_KEY not in out.error.message


@pytest.mark.anyio
async def test_client_with_only_model_missing_names_only_xty_model() -> None:
    client = ModelClient(ModelSettings(base_url="http://127.0.0.1:9/v1"))
    with pytest.raises(ModelError) as info:
        await client.complete_done(user("你好"))
    assert info.value.code == "model_not_configured"
    assert "XTY_MODEL (" in info.value.message
    assert "XTY_MODEL_BASE_URL" not in info.value.message


def test_settings_repr_never_shows_the_key() -> None:
    settings = ModelSettings(base_url="http://x/v1", api_key=CANARY_KEY, model="m")
    assert CANARY_KEY not in repr(settings)
    assert CANARY_KEY not in str(settings)
    assert CANARY_KEY not in f"{settings}"
    assert "<set>" in repr(settings)
    assert settings.configured


@pytest.mark.parametrize("field", ["first_token_timeout", "idle_timeout"])
def test_settings_refuse_a_zero_timeout(field: str) -> None:
    kwargs: dict[str, Any] = {field: 0.0}
    with pytest.raises(ValueError):
        ModelSettings(**kwargs)
    with pytest.raises(msgspec.ValidationError):
        msgspec.convert({field: 0.0}, ModelSettings)


def test_settings_accept_ten_retries_and_refuse_eleven() -> None:
    assert ModelSettings(max_retries=10).max_retries == 10
    with pytest.raises(ValueError):
        ModelSettings(max_retries=11)


# ---------------------------------------------------------------------------
# strip_images (pure)

_text_part = st.builds(lambda t: {"type": "text", "text": t}, st.text(max_size=10))
_image_part = st.sampled_from(
    [
        {"type": "image_url", "image_url": {"url": PNG_URL}},
        {"type": "input_image", "image_url": PNG_URL},
    ]
)
_content = st.one_of(st.text(max_size=10), st.lists(st.one_of(_text_part, _image_part), max_size=4))
_messages = st.lists(
    st.builds(
        lambda role, content: {"role": role, "content": content},
        st.sampled_from(["system", "user", "assistant"]),
        _content,
    ),
    max_size=4,
)


def _has_image(messages: Sequence[Mapping[str, Any]]) -> bool:
    return any(
        isinstance(m["content"], list) and any(p["type"] != "text" for p in m["content"])
        for m in messages
    )


@given(_messages)
def test_strip_images_removes_every_image_part_and_keeps_text_in_order(
    messages: list[dict[str, Any]],
) -> None:
    before = msgspec.json.encode(messages)
    stripped, removed = strip_images(messages)
    assert msgspec.json.encode(messages) == before, "input untouched"
    assert removed == _has_image(messages)
    assert not _has_image([m for m in stripped if isinstance(m["content"], list)])
    assert len(stripped) == len(messages)
    for old, new in zip(messages, stripped, strict=True):
        assert new["role"] == old["role"]
        if isinstance(old["content"], str):
            assert new["content"] == old["content"]
        else:
            texts = [p for p in old["content"] if p["type"] == "text"]
            had_image = len(texts) != len(old["content"])
            assert new["content"] == ((texts or "") if had_image else old["content"])


def test_strip_images_leaves_image_free_messages_alone() -> None:
    messages = user("只是文字")
    stripped, removed = strip_images(messages)
    assert not removed
    assert stripped == messages


@pytest.mark.anyio
async def test_streamed_tool_call_deltas_are_joined_into_done(fake: FakeModelServer) -> None:
    from xtyserver.session.tools import ToolCall
    from xtyserver.testing import ToolCallScript

    fake.enqueue(
        Reply(
            tool_calls=[
                ToolCallScript(name="xiaotangyuan_memory_view", arguments={"what": "profile"}),
                ToolCallScript(name="xiaotangyuan_memory_forget", arguments='{"target": "all"}'),
            ]
        )
    )
    tools = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
    async with client_for(fake) as client:
        events = [
            e async for e in client.stream_chat([{"role": "user", "content": "hi"}], tools=tools)
        ]
    assert events == [
        Done(
            "",
            Usage(prompt_tokens=2, completion_tokens=0, total_tokens=2),
            (
                ToolCall("call_1", "xiaotangyuan_memory_view", '{"what":"profile"}'),
                ToolCall("call_2", "xiaotangyuan_memory_forget", '{"target": "all"}'),
            ),
        )
    ]
    assert fake.chat_requests[-1].json["tools"] == tools


# ---------------------------------------------------------------------------
# Streamed chunks are read as parsed JSON (no pydantic model per chunk)


@pytest.mark.anyio
async def test_post_chat_yields_the_chunks_json_without_building_sdk_models(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["你", "好"]))
    client = provider_client(fake.base_url, "sk-x", timeout=30.0)
    try:
        body = chat_body(DEFAULT_MODEL, [{"role": "user", "content": "x"}])
        chunks = [chunk async for chunk in await post_chat(client, body)]
    finally:
        await client.close()
    assert all(type(c) is RawChunk and isinstance(c.data, dict) for c in chunks)
    progress = _Progress()
    assert [progress.take(c) for c in chunks] == ["", "你", "好", "", ""]
    assert progress.finished and progress.usage is not None
    assert progress.usage.completion_tokens == 2


def test_a_chunk_of_odd_shape_is_read_leniently() -> None:
    progress = _Progress()
    odd: list[object] = [
        {"choices": None, "usage": {"prompt_tokens": 3, "total_tokens": "x"}},
        {"choices": [None, {"index": 1, "delta": {"content": "other choice"}}]},
        {"choices": [{"delta": {"content": "无 index"}}]},  # index defaults to 0
        {"choices": [{"index": 0, "delta": None, "finish_reason": None}]},
        {
            "choices": [
                {
                    "index": 0,
                    "delta": {
                        "content": None,
                        "tool_calls": [
                            None,
                            {"id": "c1", "function": {"name": "f", "arguments": None}},
                            {"index": 0, "function": {"arguments": '{"a": 1}'}},
                        ],
                    },
                    "finish_reason": "tool_calls",
                }
            ]
        },
    ]
    pieces = [progress.take(RawChunk(data)) for data in odd]
    assert pieces == ["", "", "无 index", "", ""]
    assert progress.usage == Usage(prompt_tokens=3, completion_tokens=None, total_tokens=None)
    assert progress.tool_calls() == (ToolCall("c1", "f", '{"a": 1}'),)
    assert progress.finished


def test_a_chunk_that_is_not_a_json_object_is_a_provider_failure() -> None:
    with pytest.raises(ProviderAnswerError, match="not a JSON object"):
        _Progress().take(RawChunk(["choices"]))
