"""The scripted model server over real loopback sockets (raw HTTP and the openai client)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import anyio.abc
import msgspec
import openai
import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtyserver.testing import (
    DEFAULT_MODEL,
    FakeModelServer,
    Reply,
    message_text,
    run_fake_model,
    split_chunks,
)
from xtyserver.testing.connection import MAX_BODY, MAX_HEAD


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
async def fake() -> AsyncIterator[FakeModelServer]:
    async with FakeModelServer() as server:
        yield server


@pytest.fixture
async def oai(fake: FakeModelServer) -> AsyncIterator[openai.AsyncOpenAI]:
    client = openai.AsyncOpenAI(base_url=fake.base_url, api_key="sk-fake", max_retries=0)
    yield client
    await client.close()


def chat_body(text: str, *, stream: bool = True, usage: bool = True) -> bytes:
    body: dict[str, Any] = {
        "model": DEFAULT_MODEL,
        "messages": [{"role": "user", "content": text}],
        "stream": stream,
    }
    if usage:
        body["stream_options"] = {"include_usage": True}
    return msgspec.json.encode(body)


def request_bytes(method: str, path: str, body: bytes = b"", *, close: bool = True) -> bytes:
    head = (
        f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Content-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n"
    )
    return head.encode() + body


async def read_all(stream: anyio.abc.SocketStream) -> bytes:
    data = b""
    with anyio.fail_after(5):
        while True:
            try:
                data += await stream.receive()
            except anyio.EndOfStream:
                return data


async def raw(fake: FakeModelServer, method: str, path: str, body: bytes = b"") -> bytes:
    async with await anyio.connect_tcp("127.0.0.1", fake.port) as stream:
        await stream.send(request_bytes(method, path, body))
        return await read_all(stream)


def split_response(data: bytes) -> tuple[int, dict[str, str], bytes]:
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split(" ")[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


def sse_events(chunked_body: bytes) -> tuple[list[bytes], bool]:
    """Decode a chunked SSE body; return the data payloads and whether it ended properly."""
    events: list[bytes] = []
    rest = chunked_body
    complete = False
    while rest:
        size_line, _, rest = rest.partition(b"\r\n")
        size = int(size_line, 16)
        if size == 0:
            complete = True
            break
        payload, rest = rest[:size], rest[size + 2 :]
        for line in payload.split(b"\n"):
            if line.startswith(b"data: "):
                events.append(line[len(b"data: ") :])
    return events, complete


# ---------------------------------------------------------------------------
# Chat completions through the real openai client


@pytest.mark.anyio
async def test_fake_streams_default_chinese_reply_in_four_chunks_with_usage(
    fake: FakeModelServer, oai: openai.AsyncOpenAI
) -> None:
    stream = await oai.chat.completions.create(
        model=DEFAULT_MODEL,
        messages=[{"role": "user", "content": "一二三四五六七八九十" * 4}],
        stream=True,
        stream_options={"include_usage": True},
    )
    pieces: list[str] = []
    usage = None
    async for chunk in stream:
        if chunk.usage is not None:
            usage = chunk.usage
        for choice in chunk.choices:
            if choice.delta.content:
                pieces.append(choice.delta.content)
    assert "".join(pieces) == "小汤圆收到：" + ("一二三四五六七八九十" * 3)
    assert len(pieces) == 4
    assert usage is not None and usage.completion_tokens == 36


@pytest.mark.anyio
async def test_fake_answers_plain_completion_when_not_streaming(
    fake: FakeModelServer, oai: openai.AsyncOpenAI
) -> None:
    fake.enqueue(Reply(text="不流式"))
    completion = await oai.chat.completions.create(
        model=DEFAULT_MODEL, messages=[{"role": "user", "content": "你好"}]
    )
    assert completion.choices[0].message.content == "不流式"
    assert completion.usage is not None and completion.usage.total_tokens == 2 + 3


@pytest.mark.anyio
async def test_fake_lists_its_model(fake: FakeModelServer, oai: openai.AsyncOpenAI) -> None:
    models = [m.id async for m in oai.models.list()]
    assert models == [DEFAULT_MODEL]
    assert fake.requests[-1].method == "GET"


@pytest.mark.anyio
async def test_fake_gives_matched_reply_only_to_the_request_containing_its_text(
    fake: FakeModelServer, oai: openai.AsyncOpenAI
) -> None:
    fake.enqueue(Reply(text="苹果答案", match="苹果"), Reply(text="普通答案"))

    async def ask(text: str) -> str | None:
        done = await oai.chat.completions.create(
            model=DEFAULT_MODEL, messages=[{"role": "user", "content": text}]
        )
        return done.choices[0].message.content

    assert await ask("你好") == "普通答案"
    assert await ask("我想要苹果") == "苹果答案"
    assert await ask("你好") == "小汤圆收到：你好"
    assert fake.queued == 0


@pytest.mark.anyio
async def test_fake_records_method_path_headers_raw_body_and_json(
    fake: FakeModelServer, oai: openai.AsyncOpenAI
) -> None:
    await oai.chat.completions.create(
        model=DEFAULT_MODEL, messages=[{"role": "user", "content": "记录我"}]
    )
    [request] = fake.chat_requests
    assert request.method == "POST"
    assert request.path == "/v1/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-fake"
    assert msgspec.json.decode(request.body) == request.json
    assert request.text == "记录我"


# ---------------------------------------------------------------------------
# Raw HTTP: stream shape, faults, control endpoints


@pytest.mark.anyio
async def test_fake_stream_without_usage_request_sends_no_usage_chunk(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["甲", "乙"]))
    data = await raw(fake, "POST", "/v1/chat/completions", chat_body("x", usage=False))
    status, headers, body = split_response(data)
    assert status == 200
    assert headers["content-type"].startswith("text/event-stream")
    events, complete = sse_events(body)
    assert complete
    assert events[-1] == b"[DONE]"
    chunks = [msgspec.json.decode(e) for e in events[:-1]]
    assert all("usage" not in c for c in chunks)
    assert [c["choices"][0]["delta"].get("content") for c in chunks] == ["", "甲", "乙", None]
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


@pytest.mark.anyio
async def test_fake_cut_after_two_chunks_drops_connection_without_ending_body(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["一", "二", "三"], cut_after=2))
    data = await raw(fake, "POST", "/v1/chat/completions", chat_body("x"))
    events, complete = sse_events(split_response(data)[2])
    assert not complete
    contents = [msgspec.json.decode(e)["choices"][0]["delta"]["content"] for e in events]
    assert contents == ["", "一", "二"]


@pytest.mark.anyio
async def test_fake_answers_scripted_status_with_retry_after_and_openai_error_body(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(status=429, retry_after=0.5))
    status, headers, body = split_response(
        await raw(fake, "POST", "/v1/chat/completions", chat_body("x"))
    )
    assert status == 429
    assert headers["retry-after"] == "0.5"
    assert msgspec.json.decode(body)["error"]["code"] == "rate_limit_exceeded"


@pytest.mark.anyio
async def test_fake_control_endpoints_script_list_and_reset_on_one_keepalive_connection(
    fake: FakeModelServer,
) -> None:
    script = msgspec.json.encode([{"text": "脚本答案"}, {"status": 500}])
    async with await anyio.connect_tcp("127.0.0.1", fake.port) as stream:
        await stream.send(request_bytes("POST", "/_script", script, close=False))
        await stream.send(request_bytes("GET", "/_requests", close=True))
        data = await read_all(stream)
    first, _, _ = data.partition(b"\r\n\r\n")
    assert first.startswith(b"HTTP/1.1 200")
    assert b"keep-alive" in first.lower()
    assert data.count(b"HTTP/1.1 200 OK") == 2, "both answers came on the one connection"
    assert fake.queued == 2

    await raw(fake, "POST", "/v1/chat/completions", chat_body("录下来", stream=False))
    status, _, body = split_response(await raw(fake, "GET", "/_requests"))
    assert status == 200
    [recorded] = msgspec.json.decode(body)
    assert recorded["path"] == "/v1/chat/completions"
    assert recorded["json"]["messages"][0]["content"] == "录下来"

    status, _, _ = split_response(await raw(fake, "POST", "/_reset"))
    assert status == 200
    assert fake.requests == [] and fake.queued == 0


@pytest.mark.anyio
async def test_fake_refuses_a_bad_script_and_keeps_its_queue(fake: FakeModelServer) -> None:
    bad = msgspec.json.encode([{"status": 99}])
    status, _, _ = split_response(await raw(fake, "POST", "/_script", bad))
    assert status == 400
    assert fake.queued == 0


@pytest.mark.anyio
async def test_fake_survives_garbage_and_a_client_hanging_up_mid_stream(
    fake: FakeModelServer, oai: openai.AsyncOpenAI
) -> None:
    async with await anyio.connect_tcp("127.0.0.1", fake.port) as stream:
        await stream.send(b"NONSENSE\r\n\r\n")
        status, _, _ = split_response(await read_all(stream))
    assert status == 400

    fake.enqueue(Reply(chunks=["慢"] * 50, chunk_delay=0.01), Reply(first_delay=1e6))
    for _ in range(2):
        async with await anyio.connect_tcp("127.0.0.1", fake.port) as stream:
            await stream.send(request_bytes("POST", "/v1/chat/completions", chat_body("x")))
            await stream.receive()  # the head (and maybe a chunk), then hang up

    with anyio.fail_after(2):
        await fake.wait_open_connections(0)  # the stuck stream's task ends with its client
    assert fake.open_streams == 0

    done = await oai.chat.completions.create(
        model=DEFAULT_MODEL, messages=[{"role": "user", "content": "还在吗"}]
    )
    assert done.choices[0].message.content == "小汤圆收到：还在吗"


@pytest.mark.anyio
async def test_fake_unknown_path_is_404(fake: FakeModelServer) -> None:
    status, _, _ = split_response(await raw(fake, "GET", "/v1/nothing"))
    assert status == 404


# ---------------------------------------------------------------------------
# HTTP edges: what h11 parses, refuses and keeps alive


async def exchange(fake: FakeModelServer, data: bytes) -> bytes:
    """Send raw bytes on a new connection and read until the server closes it."""
    async with await anyio.connect_tcp("127.0.0.1", fake.port) as stream:
        await stream.send(data)
        return await read_all(stream)


def split_responses(data: bytes) -> list[tuple[int, dict[str, str], bytes]]:
    """Split back-to-back ``Content-Length`` responses."""
    out = []
    while data:
        status, headers, rest = split_response(data)
        length = int(headers["content-length"])
        out.append((status, headers, rest[:length]))
        data = rest[length:]
    return out


def error_message(body: bytes) -> str:
    message: str = msgspec.json.decode(body)["error"]["message"]
    return message


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("data", "named"),
    [
        (b"NONSENSE\r\n\r\n", "request line"),
        (b"GET /v1/models HTTP/1.1\r\nHost x\r\n\r\n", "header"),
        (b"GET /v1/models HTTP/1.1\r\n\r\n", "Host"),
        (b"GET /v1/models HTTP/2.0\r\nHost: x\r\n\r\n", "HTTP/1.x"),
        (b"POST /v1/models HTTP/1.1\r\nHost: x\r\nContent-Length: x\r\n\r\n", "Content-Length"),
    ],
)
async def test_fake_answers_a_malformed_request_400_naming_the_problem_and_closes(
    fake: FakeModelServer, data: bytes, named: str
) -> None:
    [(status, headers, body)] = split_responses(await exchange(fake, data))
    assert status == 400
    assert headers["connection"] == "close"
    assert named.lower() in error_message(body).lower()
    assert fake.requests == []


@pytest.mark.anyio
async def test_fake_refuses_a_body_over_the_limit_before_reading_it(fake: FakeModelServer) -> None:
    head = (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: {MAX_BODY + 1}\r\n\r\n"
    )
    [(status, _, body)] = split_responses(await exchange(fake, head.encode()))
    assert status == 413
    assert str(MAX_BODY) in error_message(body)
    assert fake.requests == []


@pytest.mark.anyio
async def test_fake_refuses_a_request_head_over_the_limit(fake: FakeModelServer) -> None:
    # One byte over the limit and never finished: the server must not wait for the end.
    data = b"GET /v1/models HTTP/1.1\r\nX-Long: " + b"a" * MAX_HEAD
    data = data[: MAX_HEAD + 1]
    [(status, _, body)] = split_responses(await exchange(fake, data))
    assert status == 431
    assert str(MAX_HEAD) in error_message(body)


@pytest.mark.anyio
async def test_fake_answers_pipelined_requests_in_order_on_one_connection(
    fake: FakeModelServer,
) -> None:
    script = msgspec.json.encode([{"text": "流水线"}])
    data = (
        request_bytes("POST", "/_script", script, close=False)
        + request_bytes("POST", "/v1/chat/completions", chat_body("一", stream=False), close=False)
        + request_bytes("GET", "/v1/models", close=True)
    )
    answers = split_responses(await exchange(fake, data))  # one write, three answers
    assert [status for status, _, _ in answers] == [200, 200, 200]
    assert [h["connection"] for _, h, _ in answers] == ["keep-alive", "keep-alive", "close"]
    assert msgspec.json.decode(answers[0][2]) == {"queued": 1}
    assert msgspec.json.decode(answers[1][2])["choices"][0]["message"]["content"] == "流水线"
    assert msgspec.json.decode(answers[2][2])["data"][0]["id"] == DEFAULT_MODEL
    assert [r.path for r in fake.requests] == ["/v1/chat/completions", "/v1/models"]


@pytest.mark.anyio
async def test_fake_closes_after_answering_http_1_0(fake: FakeModelServer) -> None:
    # read_all returns only because the server closes: HTTP/1.0 has no keep-alive here.
    [(status, headers, _)] = split_responses(
        await exchange(fake, b"GET /v1/models HTTP/1.0\r\n\r\n")
    )
    assert status == 200
    assert headers["connection"] == "close"


@pytest.mark.anyio
async def test_fake_reads_a_chunked_request_body(fake: FakeModelServer) -> None:
    body = chat_body("分块", stream=False)
    half = len(body) // 2
    chunked = b"%x\r\n%s\r\n%x\r\n%s\r\n0\r\n\r\n" % (
        half,
        body[:half],
        len(body) - half,
        body[half:],
    )
    head = b"POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
    data = head + b"Connection: close\r\n\r\n" + chunked
    [(status, _, answer)] = split_responses(await exchange(fake, data))
    assert status == 200
    assert msgspec.json.decode(answer)["choices"][0]["message"]["content"] == "小汤圆收到：分块"
    assert fake.chat_requests[0].body == body


@pytest.mark.anyio
async def test_fake_keeps_the_openai_clients_connection_alive(
    fake: FakeModelServer, oai: openai.AsyncOpenAI
) -> None:
    for text in ("一", "二"):
        await oai.chat.completions.create(
            model=DEFAULT_MODEL, messages=[{"role": "user", "content": text}]
        )
    assert len(fake.chat_requests) == 2
    assert fake.open_connections == 1, "both answers came on one kept-alive connection"


async def read_chunked_answer(stream: anyio.abc.SocketStream) -> tuple[dict[str, str], bytes]:
    """Read one chunked answer up to its last (empty) chunk, leaving the connection open."""
    data = b""
    with anyio.fail_after(5):
        while b"\r\n0\r\n\r\n" not in data:
            data += await stream.receive()
    _, headers, body = split_response(data)
    return headers, body


@pytest.mark.anyio
async def test_fake_answers_two_streams_on_one_kept_alive_connection(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(chunks=["一"]), Reply(chunks=["二"]))
    contents = []
    async with await anyio.connect_tcp("127.0.0.1", fake.port) as stream:
        for text in ("x", "y"):
            request = request_bytes("POST", "/v1/chat/completions", chat_body(text), close=False)
            await stream.send(request)
            headers, body = await read_chunked_answer(stream)
            assert headers["connection"] == "keep-alive"
            events, complete = sse_events(body)
            assert complete
            contents.append(msgspec.json.decode(events[1])["choices"][0]["delta"]["content"])
            # The stream is over with its last chunk; its connection stays open.
            with anyio.fail_after(5):
                await fake.wait_open_streams(0)
            assert fake.open_connections == 1
    assert contents == ["一", "二"]
    assert len(fake.chat_requests) == 2


@pytest.mark.anyio
async def test_fake_streams_to_the_openai_client_on_one_kept_alive_connection(
    fake: FakeModelServer, oai: openai.AsyncOpenAI
) -> None:
    for text in ("一", "二"):
        stream = await oai.chat.completions.create(
            model=DEFAULT_MODEL, messages=[{"role": "user", "content": text}], stream=True
        )
        pieces = [c.choices[0].delta.content async for c in stream if c.choices]
        assert "".join(p or "" for p in pieces) == f"小汤圆收到：{text}"
    assert len(fake.chat_requests) == 2
    with anyio.fail_after(5):
        await fake.wait_open_streams(0)
    with anyio.move_on_after(0.3):
        await fake.wait_open_connections(0)
        pytest.fail("the server closed the connection after a whole stream")
    assert fake.open_connections == 1, "both streams came on one kept-alive connection"


@pytest.mark.anyio
async def test_fake_closes_a_cut_stream_saying_so(fake: FakeModelServer) -> None:
    fake.enqueue(Reply(chunks=["一", "二"], cut_after=1))
    async with await anyio.connect_tcp("127.0.0.1", fake.port) as stream:
        request = request_bytes("POST", "/v1/chat/completions", chat_body("x"), close=False)
        await stream.send(request)
        _, headers, _ = split_response(await read_all(stream))  # ends: the server closed it
    assert headers["connection"] == "close"
    with anyio.fail_after(5):
        await fake.wait_open_connections(0)
    assert fake.open_streams == 0


# ---------------------------------------------------------------------------
# Open connections and streams, waited on without polling


@pytest.mark.anyio
async def test_fake_counts_a_stream_until_the_client_closes_it(
    fake: FakeModelServer, oai: openai.AsyncOpenAI
) -> None:
    fake.enqueue(Reply(chunks=["一", "二"], chunk_delay=1e6))
    stream = await oai.chat.completions.create(
        model=DEFAULT_MODEL, messages=[{"role": "user", "content": "x"}], stream=True
    )
    with anyio.fail_after(5):
        await fake.wait_open_streams(1)
        chunks = aiter(stream)
        pieces = [await anext(chunks) for _ in range(2)]  # role, then "一"; "二" never comes
        assert pieces[1].choices[0].delta.content == "一"
        assert fake.open_streams == 1 and fake.open_connections == 1
        await stream.close()  # what a cancelled turn does to its upstream stream
        await fake.wait_open_streams(0)
        await fake.wait_open_connections(0)


@pytest.mark.anyio
async def test_fake_ends_a_delayed_plain_answer_when_its_client_hangs_up(
    fake: FakeModelServer,
) -> None:
    fake.enqueue(Reply(first_delay=1e6))
    with anyio.fail_after(5):
        async with await anyio.connect_tcp("127.0.0.1", fake.port) as stream:
            body = chat_body("x", stream=False)
            await stream.send(request_bytes("POST", "/v1/chat/completions", body, close=False))
            await fake.wait_open_connections(1)
        await fake.wait_open_connections(0)  # without the watch it would wait forever
    assert fake.queued == 0 and len(fake.chat_requests) == 1
    assert fake.open_streams == 0


@pytest.mark.anyio
async def test_run_fake_model_reports_its_url_and_serves_until_cancelled() -> None:
    urls: list[str] = []
    ready = anyio.Event()

    def on_ready(url: str) -> None:
        urls.append(url)
        ready.set()

    async with anyio.create_task_group() as tg:
        tg.start_soon(lambda: run_fake_model("127.0.0.1", 0, on_ready=on_ready))
        with anyio.fail_after(5):
            await ready.wait()
        client = openai.AsyncOpenAI(base_url=urls[0], api_key="x", max_retries=0)
        models = [m.id async for m in client.models.list()]
        await client.close()
        tg.cancel_scope.cancel()
    assert urls[0].startswith("http://127.0.0.1:") and urls[0].endswith("/v1")
    assert models == [DEFAULT_MODEL]


# ---------------------------------------------------------------------------
# Pure helpers


@given(st.text(max_size=60), st.integers(min_value=1, max_value=8))
def test_split_chunks_keeps_text_in_order_in_at_most_n_nonempty_pieces(
    text: str, parts: int
) -> None:
    pieces = split_chunks(text, parts)
    assert "".join(pieces) == text
    assert len(pieces) <= parts
    assert all(pieces)


def test_message_text_joins_string_and_text_parts() -> None:
    payload = {
        "messages": [
            {"role": "system", "content": "甲"},
            {"role": "user", "content": [{"type": "text", "text": "乙"}, {"type": "image_url"}]},
        ]
    }
    assert message_text(payload) == "甲\n乙"
    assert message_text([1, 2]) == ""
