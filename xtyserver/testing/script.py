"""What the scripted model answers: replies, recorded requests and the answer bodies.

Pure code, no I/O: :mod:`xtyserver.testing.model_server` puts these on the wire.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Annotated, Any

import msgspec

from xtyserver.session.prompt import unfence

__all__ = [
    "DEFAULT_MODEL",
    "RecordedRequest",
    "Reply",
    "ToolCallScript",
    "completion_body",
    "default_reply_text",
    "error_body",
    "message_text",
    "pick_reply",
    "reply_pieces",
    "split_chunks",
    "stream_events",
]

DEFAULT_MODEL = "xty-fake-1"
"""The model id the fake reports in ``/v1/models`` and in its answers."""

CREATED = 1_790_000_000
"""Fixed ``created`` stamp: answers stay deterministic and need no clock."""

_NonNegative = Annotated[float, msgspec.Meta(ge=0)]


class ToolCallScript(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One scripted tool call, streamed as ``tool_calls`` deltas.

    Attributes:
        arguments: The arguments object (sent as JSON text, split in two deltas)
            or a raw string (sent as is, e.g. broken JSON).
        id: The call id; default ``call_<n>``.
    """

    name: str
    arguments: dict[str, Any] | str = msgspec.field(default_factory=dict)
    id: str | None = None


class Reply(msgspec.Struct, frozen=True, kw_only=True, forbid_unknown_fields=True):
    """One scripted answer to one chat request.

    Attributes:
        text: The reply text; split into about four chunks when ``chunks`` is not given.
            ``None`` with no ``chunks`` means the default reply. With an error
            ``status`` it is the error message.
        chunks: The exact content pieces to stream, overriding ``text``.
        first_delay: Seconds between the response head and the first token.
            ``1e6`` or more: the first token never comes.
        chunk_delay: Seconds between later tokens.
        status: HTTP status; anything but 200 answers an OpenAI-style error body.
        retry_after: Seconds for a ``Retry-After`` header (sent as given, e.g. ``0.2``).
        cut_after: Drop the connection after this many content chunks, mid-stream,
            without the end of the chunked body (a non-streamed answer is cut halfway).
        usage: Send usage when the request asks for it (``stream_options.include_usage``
            for a stream; always in a plain completion).
        match: Only a request whose message text contains this substring gets this reply.
        tool_calls: Tool calls streamed after the text (finish reason ``tool_calls``).
        reasoning: Reasoning text streamed as ``reasoning_content`` before the text
            (the way DeepSeek-R1 and llama.cpp's reasoning models send it).
        finish_reason: The finish reason to send instead of ``stop``, e.g. ``length``.
        endless: After the text, keep streaming it again, forever (until the client
            hangs up): a provider that never stops.
        line_bytes: Stream one content chunk of this many bytes on a single SSE line
            (written 64 KiB at a time, never held whole) after the first piece of
            text (with no text: first), then the rest.
    """

    text: str | None = None
    chunks: list[str] | None = None
    first_delay: _NonNegative = 0.0
    chunk_delay: _NonNegative = 0.0
    status: Annotated[int, msgspec.Meta(ge=100, le=599)] = 200
    retry_after: _NonNegative | None = None
    cut_after: Annotated[int, msgspec.Meta(ge=0)] | None = None
    usage: bool = True
    match: str | None = None
    tool_calls: list[ToolCallScript] | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    endless: bool = False
    line_bytes: Annotated[int, msgspec.Meta(ge=0)] | None = None


class RecordedRequest(msgspec.Struct, frozen=True, kw_only=True):
    """A request as the fake received it: ``path`` with its query, header names
    lower-cased (a repeated one keeps its last value), ``json`` None for no JSON."""

    method: str
    path: str
    headers: dict[str, str]
    body: bytes
    json: Any = None

    @property
    def text(self) -> str:
        """All message text of a chat request, joined by newlines (empty otherwise)."""
        return message_text(self.json)


def message_text(payload: object) -> str:
    """The text of every message of a parsed chat request body, one message a line
    (string content or text parts; "" for anything else)."""
    if not isinstance(payload, Mapping):
        return ""
    messages = payload.get("messages")
    if not isinstance(messages, list):
        return ""
    return "\n".join(_content_text(m.get("content")) for m in messages if isinstance(m, Mapping))


def _content_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def _last_user_text(payload: object) -> str:
    if isinstance(payload, Mapping):
        messages = payload.get("messages")
        if isinstance(messages, list):
            for m in reversed(messages):
                if isinstance(m, Mapping) and m.get("role") == "user":
                    return _content_text(m.get("content"))
    return ""


def default_reply_text(payload: object) -> str:
    """Deterministic default answer: ``小汤圆收到：`` and the first 30 chars of the user text.

    The user text is the last user message without its leading data fence
    (``xtyserver.session.prompt.unfence``): what the player said.
    """
    return "小汤圆收到：" + unfence(_last_user_text(payload))[1].strip()[:30]


def pick_reply(queue: list[Reply], text: str) -> Reply | None:
    """Take (remove) the first queued reply whose ``match`` is in ``text``, else the first
    unmatched one; ``None`` when no queued reply fits."""
    for i, reply in enumerate(queue):
        if reply.match is not None and reply.match in text:
            return queue.pop(i)
    for i, reply in enumerate(queue):
        if reply.match is None:
            return queue.pop(i)
    return None


def split_chunks(text: str, parts: int = 4) -> list[str]:
    """Split ``text`` into at most ``parts`` non-empty pieces of near-equal length, in order."""
    if not text:
        return []
    parts = max(1, min(parts, len(text)))
    size, extra = divmod(len(text), parts)
    bounds = [i * size + min(i, extra) for i in range(parts + 1)]
    return [text[start:end] for start, end in itertools.pairwise(bounds)]


def reply_pieces(reply: Reply, payload: object) -> list[str]:
    """The content pieces a successful reply streams: its chunks, its text or the default."""
    if reply.chunks is not None:
        return [p for p in reply.chunks if p]
    if reply.tool_calls and reply.text is None:
        return []  # a tool-calling answer carries no text unless scripted
    return split_chunks(reply.text if reply.text is not None else default_reply_text(payload))


_ERROR_TYPES = {
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", "permission_denied"),
    404: ("invalid_request_error", "not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def error_body(status: int, message: str) -> bytes:
    """An OpenAI-style error body (``{"error": {...}}``) for an HTTP status."""
    kind, code = _ERROR_TYPES.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None)
    )
    return msgspec.json.encode(
        {"error": {"message": message, "type": kind, "param": None, "code": code}}
    )


def _usage(prompt: str, completion: str) -> dict[str, int]:
    # Deterministic stand-in for token counts: one token per character.
    p, c = len(prompt), len(completion)
    return {"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c}


def completion_body(model: str, text: str, *, prompt: str, usage: bool) -> bytes:
    """A plain (non-streamed) ``chat.completion`` body answering ``text`` (``prompt``,
    the request's message text, gives the token counts of ``usage``)."""
    completion: dict[str, Any] = {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": CREATED,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
    }
    if usage:
        completion["usage"] = _usage(prompt, text)
    return msgspec.json.encode(completion)


def _chunk(
    model: str, n: int, delta: Mapping[str, Any], finish: str | None, with_usage: bool
) -> bytes:
    chunk: dict[str, Any] = {
        "id": f"chatcmpl-fake-{n}",
        "object": "chat.completion.chunk",
        "created": CREATED,
        "model": model,
        "system_fingerprint": None,
        "choices": [{"index": 0, "delta": dict(delta), "logprobs": None, "finish_reason": finish}],
    }
    if with_usage:
        # OpenAI sends "usage": null on every chunk but the last when usage is asked for.
        chunk["usage"] = None
    return msgspec.json.encode(chunk)


def content_chunk(model: str, n: int, text: str) -> bytes:
    """One streamed chunk carrying ``text`` as content (for endless streams)."""
    return _chunk(model, n, {"content": text}, None, False)


def stream_events(
    reply: Reply, pieces: Sequence[str], *, model: str, prompt: str, want_usage: bool
) -> tuple[list[tuple[float, bytes]], bool]:
    """The SSE ``data:`` payloads of a streamed answer, each with the delay before it.

    Also whether the stream ends properly: not when ``cut_after`` cuts it (no finish
    chunk, no usage, no ``[DONE]``) or it is ``endless``.
    """
    # The role chunk comes at once, like OpenAI's; it carries no token.
    events = [(0.0, _chunk(model, 0, {"role": "assistant", "content": ""}, None, want_usage))]
    for i, thought in enumerate(split_chunks(reply.reasoning or "")):
        delay = reply.first_delay if i == 0 else reply.chunk_delay
        delta = {"content": None, "reasoning_content": thought}
        events.append((delay, _chunk(model, 0, delta, None, want_usage)))
    for i, piece in enumerate(pieces):
        if reply.cut_after is not None and i >= reply.cut_after:
            return events, False
        delay = reply.first_delay if i == 0 else reply.chunk_delay
        events.append((delay, _chunk(model, i + 1, {"content": piece}, None, want_usage)))
    if reply.cut_after is not None or reply.endless:
        return events, False  # cut after every content chunk, or endless: no end comes
    n = len(pieces) + 1
    finish = reply.finish_reason or "stop"
    for i, call in enumerate(reply.tool_calls or ()):
        args = call.arguments
        text = args if isinstance(args, str) else msgspec.json.encode(args).decode()
        half = len(text) // 2
        head = {
            "index": i,
            "id": call.id or f"call_{i + 1}",
            "type": "function",
            "function": {"name": call.name, "arguments": text[:half]},
        }
        tail = {"index": i, "function": {"arguments": text[half:]}}
        for part in (head, tail):
            events.append(
                (reply.chunk_delay, _chunk(model, n, {"tool_calls": [part]}, None, want_usage))
            )
            n += 1
        finish = reply.finish_reason or "tool_calls"
    events.append((0.0, _chunk(model, n, {}, finish, want_usage)))
    if want_usage:
        final = {
            "id": f"chatcmpl-fake-{n + 1}",
            "object": "chat.completion.chunk",
            "created": CREATED,
            "model": model,
            "choices": [],
            "usage": _usage(prompt, "".join(pieces)),
        }
        events.append((0.0, msgspec.json.encode(final)))
    events.append((0.0, b"[DONE]"))
    return events, True
