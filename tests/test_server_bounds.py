"""Issue 18 over the real server: bounded replies end in chat.done, never in a lost turn.

A real server over a real socket, the real openai client, the scripted model
over loopback (which ignores ``max_tokens``).
"""

from __future__ import annotations

from typing import Any

import anyio
import pytest
import structlog

from tests.conftest import NO_GRACE, chat, is_job_request, running
from xtyserver.memory.extraction import EXTRACTION_SYSTEM_PROMPT
from xtyserver.model.bounds import REPLY_CHARS
from xtyserver.session.settings import Texts
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio


async def idle(h: Any) -> None:
    with anyio.fail_after(10):
        await h.server.memory.wait_idle()


def assistant_texts(request: Any) -> list[str]:
    return [m["content"] for m in request.json["messages"] if m["role"] == "assistant"]


async def test_every_request_carries_max_tokens_per_purpose(tmp_path: Any) -> None:
    async with running(tmp_path, overrides={"model.max_tokens": 380, **NO_GRACE}) as h:
        h.fake.enqueue(Reply(text="好呀"), Reply(text='{"events": []}', match="记忆整理员"))
        async with h.adapter() as ws:
            _, done = await chat(ws, "你好")
            assert done["type"] == "chat.done"
            await idle(h)
        turn = h.turn_request().json
        (job,) = [r.json for r in h.fake.chat_requests if is_job_request(r)]
        assert turn["max_tokens"] == 380
        assert job["messages"][0]["content"] == EXTRACTION_SYSTEM_PROMPT
        assert job["max_tokens"] == 300


async def test_finish_reason_length_ends_in_chat_done_truncated(tmp_path: Any) -> None:
    async with running(tmp_path) as h:
        h.fake.enqueue(Reply(text="今天先去钓", finish_reason="length"))
        async with h.adapter() as ws:
            deltas, done = await chat(ws, "今天做什么")
        assert done["type"] == "chat.done" and done["truncated"] is True
        assert done["text"] == "今天先去钓" == "".join(d["text"] for d in deltas)
        assert "incomplete" not in done


async def test_a_whole_reply_carries_neither_flag(tmp_path: Any) -> None:
    async with running(tmp_path) as h:
        h.fake.enqueue(Reply(text="好"))
        async with h.adapter() as ws:
            _, done = await chat(ws, "你好")
        assert done["type"] == "chat.done"
        assert "truncated" not in done and "incomplete" not in done and "notice" not in done


async def test_only_the_capped_text_enters_the_window(tmp_path: Any) -> None:
    async with running(tmp_path, overrides={"memory.extraction": False}) as h:
        h.fake.enqueue(Reply(chunks=["长" * 5000, "长" * 5000, "尾巴"]), Reply(text="好"))
        async with h.adapter() as ws:
            deltas, done = await chat(ws, "说个长的")
            assert done["truncated"] is True and len(done["text"]) == 8000
            assert sum(len(d["text"]) for d in deltas) == 8000
            _, again = await chat(ws, "再说", chat_id="c2")
        assert again["type"] == "chat.done"
        window = [t for t in assistant_texts(h.turn_request()) if "长" in t]
        assert window == ["长" * 8000]


async def test_a_silence_after_deltas_ends_in_chat_done_incomplete_with_the_text(
    tmp_path: Any,
) -> None:
    overrides = {"model.idle_timeout": 0.4}
    async with running(tmp_path, overrides=overrides) as h:
        h.fake.enqueue(Reply(chunks=["我看到你", "在矿洞"], chunk_delay=1e6))
        async with h.adapter() as ws:
            deltas, done = await chat(ws, "你看到了吗")
            await idle(h)
        assert done["type"] == "chat.done" and done["incomplete"] is True
        assert done["text"] == "我看到你" == "".join(d["text"] for d in deltas)
        assert "truncated" not in done
        assert not [r for r in h.fake.chat_requests if is_job_request(r)], (
            "an incomplete reply is not handed to extraction"
        )


async def test_a_reasoning_only_answer_is_chat_error_model_empty_reply(tmp_path: Any) -> None:
    async with running(tmp_path) as h:
        h.fake.enqueue(Reply(reasoning="玩家问了天气。我想想该怎么回答……", chunks=[]))
        async with h.adapter() as ws:
            deltas, done = await chat(ws, "今天天气怎么样")
            assert deltas == []
            assert done == {
                "type": "chat.error",
                "id": "c1",
                "code": "model_empty_reply",
                "message": Texts().model_empty_reply,
            }
            # The connection goes on.
            h.fake.enqueue(Reply(reasoning="嗯", text="晴天！"))
            deltas, done = await chat(ws, "再说一次", chat_id="c2")
        assert done["type"] == "chat.done" and done["text"] == "晴天！"
        assert "嗯" not in "".join(d["text"] for d in deltas)


async def test_an_endless_stream_ends_truncated_within_the_reply_deadline(tmp_path: Any) -> None:
    async with running(tmp_path, overrides={"model.reply_seconds": 1.0}) as h:
        h.fake.enqueue(Reply(chunks=["嗯"], chunk_delay=0.05, endless=True))
        async with h.adapter() as ws:
            with structlog.testing.capture_logs() as logs:
                deltas, done = await chat(ws, "说下去")
        assert done["type"] == "chat.done" and done["truncated"] is True
        assert done["text"] == "".join(d["text"] for d in deltas) and deltas
        # The reply deadline ended it: not the character cap, not the model's finish_reason.
        [bounded] = [e for e in logs if e["event"] == "model.reply_bounded"]
        assert bounded["truncated"] and bounded["finish_reason"] is None
        assert bounded["chars"] == len(done["text"]) < REPLY_CHARS
        with anyio.fail_after(5):
            await h.fake.wait_open_streams(0)


# -- section 3: fold answers read leniently, JSON mode asked for ---------------------------------

FOLD_SETTINGS = {
    "memory.extraction": False,
    "server.history_turns": 1,
    "server.summary_every": 1,
    "model.json_mode": True,
    **NO_GRACE,  # each round's fold is awaited before the next chat
}


async def fold_then_next_turn(h: Any, answer: str) -> tuple[Any, Any]:
    """Two rounds (the first leaves the window and is folded), then a third turn."""
    from xtyserver.session.fold import FOLD_MARKER

    h.fake.enqueue(Reply(text=answer, match=FOLD_MARKER))
    async with h.adapter() as ws:
        for n in (1, 2):
            h.fake.enqueue(Reply(text=f"第{n}轮好的"))
            _, done = await chat(ws, f"第{n}轮：我们去钓鱼吧", chat_id=f"c{n}")
            assert done["type"] == "chat.done"
            await idle(h)
        h.fake.enqueue(Reply(text="好"))
        await chat(ws, "第3轮", chat_id="c3")
    # The first fold (after round 2) is the one scripted; round 3 may ask another.
    fold = next(r for r in h.fake.chat_requests if FOLD_MARKER in r.text)
    return fold, h.turn_request()


async def test_a_fenced_fold_answer_with_prose_forms_the_summary(tmp_path: Any) -> None:
    body = '{"requests": ["一起去钓鱼",], "mood": "开心"}'
    answer = f"好的，整理如下：\n```json\n{body}\n```\n还有别的吗？"
    async with running(tmp_path, overrides=FOLD_SETTINGS) as h:
        fold, turn = await fold_then_next_turn(h, answer)
    assert fold.json["response_format"] == {"type": "json_object"}
    assert fold.json["max_tokens"] == 300
    assert "response_format" not in turn.json
    assert "一起去钓鱼" in turn.text and "开心" in turn.text


async def test_a_plain_text_fold_answer_is_the_summary_free_text(tmp_path: Any) -> None:
    async with running(tmp_path, overrides=FOLD_SETTINGS) as h:
        _, turn = await fold_then_next_turn(h, "玩家约小汤圆一起去钓鱼，心情不错。")
    assert "概要：玩家约小汤圆一起去钓鱼，心情不错。" in turn.text


async def test_a_provider_refusing_json_mode_is_asked_again_without_it(tmp_path: Any) -> None:
    from xtyserver.session.fold import FOLD_MARKER

    async with running(tmp_path, overrides=FOLD_SETTINGS) as h:
        h.fake.enqueue(
            Reply(status=400, text="response_format is not supported", match=FOLD_MARKER)
        )
        _, turn = await fold_then_next_turn(h, '{"requests": ["一起去钓鱼"]}')
        folds = [r for r in h.fake.chat_requests if FOLD_MARKER in r.text]
    assert [("response_format" in r.json) for r in folds[:2]] == [True, False]
    assert "一起去钓鱼" in turn.text
