"""protocol/v1 over ``POST /v1/http`` (v1.md "HTTP transport"), driven as DST's QueryServer does.

The client here uses nothing but one HTTP POST with a body per call, over a
real loopback socket, against the real server and the scripted model.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest

from tests.conftest import Harness, hello_frame, model_context, running
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio


async def post(
    h: Harness,
    body: bytes | str | dict[str, Any],
    *,
    headers: dict[str, str] | None = None,
    path: str = "/v1/http",
    length: int | None = None,
) -> tuple[int, Any]:
    """One HTTP/1.1 POST; the answer's status and its JSON (or text) body."""
    port = urlsplit(h.url).port
    assert port is not None
    if isinstance(body, dict):
        body = json.dumps(body, ensure_ascii=False)
    data = body.encode() if isinstance(body, str) else body
    lines = [
        f"POST {path} HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        "Content-Type: application/json",
        f"Content-Length: {len(data) if length is None else length}",
    ]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode() + data
    with anyio.fail_after(40):
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(request)
            answer = b""
            with pytest.raises(anyio.EndOfStream):
                while True:
                    answer += await stream.receive()
    head, _, payload = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    kind = [line for line in head.split(b"\r\n") if line.lower().startswith(b"content-type:")]
    if kind and b"json" in kind[0]:
        return status, json.loads(payload)
    return status, payload.decode()


async def call(h: Harness, session: str | None, frames: Any, wait_ms: int = 0) -> dict[str, Any]:
    status, answer = await post(h, {"session": session, "frames": frames, "waitMs": wait_ms})
    assert status == 200, answer
    assert isinstance(answer, dict)
    return answer


async def hello(h: Harness, save: str = "farm-a") -> str:
    answer = await call(h, None, [hello_frame("dont-starve-together", save)])
    assert [f["type"] for f in answer["frames"]] == ["server.hello"], answer
    session = answer["session"]
    assert isinstance(session, str) and len(session) >= 16
    return session


async def until(
    h: Harness, session: str, want: str, wait_ms: int = 2000
) -> tuple[list[dict[str, Any]], int]:
    """Poll until a frame of type ``want``; every frame seen, and how many polls brought frames."""
    seen: list[dict[str, Any]] = []
    polls = 0
    with anyio.fail_after(30):
        while not any(f["type"] == want for f in seen):
            frames = (await call(h, session, [], wait_ms))["frames"]
            polls += bool(frames)
            seen += frames
    return seen, polls


async def test_hello_state_and_a_request_over_http(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        session = await hello(h)
        state = {"type": "state.update", "modelContext": model_context(h.clock, world={"day": 3})}
        answer = await call(
            h, session, [state, {"type": "heartbeat"}, {"type": "stats.get", "id": "s"}], 2000
        )
        frames = answer["frames"]
        if not frames:
            frames = (await call(h, session, [], 2000))["frames"]
        assert [f["type"] for f in frames] == ["stats.result"] and frames[0]["id"] == "s"
        assert "closed" not in answer


async def test_bad_token_in_hello_is_refused_and_the_session_closes(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        answer = await call(h, None, [hello_frame(token="wrong")])
        assert answer["frames"][0]["code"] == "unauthorized"
        if "closed" not in answer:
            answer = await call(h, answer["session"], [], 2000)
        assert answer["closed"]["code"] == 4001
        status, error = await post(h, {"session": answer["session"], "frames": []})
        assert status == 404 and error["code"] == "unknown_session"


async def test_chat_streams_deltas_across_polls(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        h.fake.enqueue(Reply(chunks=["天黑了，", "快去", "生火！"], chunk_delay=0.4))
        session = await hello(h)
        chat = {"type": "chat.send", "id": "c1", "text": "天黑了怎么办？", "source": "text"}
        first = (await call(h, session, [chat], 0))["frames"]
        seen, polls = await until(h, session, "chat.done", wait_ms=300)
        seen = first + seen
        deltas = [f["text"] for f in seen if f["type"] == "chat.delta"]
        assert "".join(deltas) == "天黑了，快去生火！"
        assert polls >= 2  # the reply came in pieces, over several calls
        done = seen[-1]
        assert done["type"] == "chat.done" and done["text"] == "天黑了，快去生火！"


async def test_cancel_ends_the_reply_with_cancelled(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        h.fake.enqueue(Reply(chunks=["一", "二", "三", "四"], chunk_delay=1.0))
        session = await hello(h)
        chat = {"type": "chat.send", "id": "c1", "text": "数到四", "source": "text"}
        await call(h, session, [chat])
        await until(h, session, "chat.delta")
        answer = await call(h, session, [{"type": "chat.cancel", "id": "c1"}], 3000)
        seen = answer["frames"]
        if not any(f["type"] == "chat.error" for f in seen):
            seen += (await until(h, session, "chat.error"))[0]
        error = next(f for f in seen if f["type"] == "chat.error")
        assert error["id"] == "c1" and error["code"] == "cancelled"


async def test_save_switch_over_http(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        session = await hello(h, "farm-a")
        switch = {
            "type": "state.update",
            "identity": {"gameId": "dont-starve-together", "saveId": "farm-b"},
            "modelContext": model_context(h.clock),
        }
        answer = await call(h, session, [switch, {"type": "stats.get", "id": "s"}], 2000)
        frames = answer["frames"] or (await call(h, session, [], 2000))["frames"]
        saves = {s["saveId"] for s in frames[0]["saves"]}
        assert saves == {"farm-a", "farm-b"}, frames


async def test_session_dies_without_heartbeats_even_while_polled(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        session = await hello(h)
        with anyio.fail_after(10):
            await h.clock.wait_sleepers(1)
        h.clock.advance(14.9)
        await call(h, session, [{"type": "heartbeat"}])  # this one counts
        for _ in range(3):  # polls without frames are not heartbeats
            h.clock.advance(5.0)
            answer = await call(h, session, [], 200)
            if "closed" in answer:
                break
        else:
            answer = await call(h, session, [], 2000)
        assert answer["closed"]["code"] == 4003
        status, error = await post(h, {"session": session, "frames": []})
        assert status == 404 and error["fields"] == ["session"]


async def test_a_second_waiting_call_answers_the_first_at_once(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        session = await hello(h)
        results: list[float] = []

        async def waiting() -> None:
            start = anyio.current_time()
            await call(h, session, [], 20_000)
            results.append(anyio.current_time() - start)

        async with anyio.create_task_group() as tg:
            tg.start_soon(waiting)
            await anyio.sleep(0.3)
            answer = await call(h, session, [{"type": "stats.get", "id": "s"}], 5000)
        assert results and results[0] < 5
        frames = answer["frames"] or (await call(h, session, [], 2000))["frames"]
        assert frames[0]["type"] == "stats.result"


async def test_guard_refuses_foreign_origin_and_host(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        body = {"session": None, "frames": [hello_frame()]}
        status, text = await post(h, body, headers={"Origin": "https://evil.example"})
        assert status == 403 and "origin" in text
        status, text = await post(h, body, headers={"Origin": "null"})
        assert status == 403
        status, text = await post(h, body, headers={"Authorization": "Bearer wrong"})
        assert status == 401
        assert h.server.connections.value == 0


async def test_bad_bodies_are_400_with_fields_and_unknown_sessions_404(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        status, error = await post(h, b"{not json")
        assert status == 400 and error["type"] == "error" and error["code"] == "invalid_json"
        status, error = await post(h, {"frames": [], "waitMs": 30000})
        assert status == 400 and error["fields"] == ["waitMs"]
        status, error = await post(h, {"frames": [], "Session": None})
        assert status == 400 and error["fields"] == ["Session"]
        status, error = await post(h, b'{"frames":[],"frames":[]}')
        assert status == 400 and error["fields"] == ["frames"]
        status, error = await post(h, {"session": "x" * 32, "frames": []})
        assert status == 404 and error["code"] == "unknown_session"
        status, _ = await post(h, b"x" * 100, path="/v1/http?x=1")
        assert status == 400
        status, _ = await post(h, b"x" * 10, headers={"X-Length": "big"}, length=11_400_000)
        assert status == 413  # refused on the declared length, before the body is read


async def test_dst_json_quirks_are_tolerated(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        session = await hello(h)
        # DST writes ' as \' and an empty table as {} wherever a list is expected.
        body = (
            '{"session":"SESSION","waitMs":2000,"frames":[{"type":"state.update","modelContext":'
            '{"player":{"heldItem":"Wilson\\\'s axe","status":{}},"nearby":{},"relevantItems":{}}},'
            '{"type":"stats.get","id":"s"}]}'
        ).replace("SESSION", session)
        status, answer = await post(h, body)
        assert status == 200, answer
        frames = answer["frames"] or (await call(h, session, [], 2000))["frames"]
        assert [f["type"] for f in frames] == ["stats.result"], frames
        status, answer = await post(h, '{"session":"S","frames":{}}'.replace("S", session))
        assert status == 200 and answer["frames"] == []
        h.fake.enqueue(Reply(text="好"))
        await call(
            h, session, [{"type": "chat.send", "id": "c", "text": "斧头呢", "source": "text"}]
        )
        await until(h, session, "chat.done")
        prompt = json.dumps(h.turn_request().json, ensure_ascii=False)
        assert "Wilson's axe" in prompt


async def test_a_refused_frame_is_an_error_frame_and_the_session_goes_on(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        session = await hello(h)
        bad = {"type": "state.update", "id": "s1", "modelContext": {"Nearby": []}}
        answer = await call(h, session, [bad], 2000)
        frames = answer["frames"] or (await call(h, session, [], 2000))["frames"]
        assert frames[0]["code"] == "invalid_frame" and "use `nearby`" in frames[0]["message"]
        answer = await call(h, session, [{"type": "stats.get", "id": "s"}], 2000)
        assert "closed" not in answer
