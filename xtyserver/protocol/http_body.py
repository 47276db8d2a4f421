"""The body of a ``POST /v1/http`` call and its answer (v1.md "HTTP transport").

Pure. :func:`decode_call` reads the request body (:class:`HttpCall`), tolerating
what Don't Starve Together's JSON encoder writes, in this transport only: ``\\'``
inside a string, and ``{}`` (an empty Lua table) anywhere a list is expected.
Each frame comes back re-encoded as compact JSON for the one decoder
(:func:`~xtyserver.protocol.codec.decode_client_frame`), which judges it exactly
as a WebSocket message. :func:`encode_answer` writes the answer around frames
already encoded.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

import msgspec
import msgspec.inspect as mi

from xtyserver.errors import FrameError
from xtyserver.protocol.duplicates import RepeatedKey, no_repeats
from xtyserver.protocol.frame_base import Obj
from xtyserver.protocol.frames import CLIENT_FRAME_TYPES, client_frame_info, frame_type

WAIT_MS_MAX = 25_000
SESSION_PATTERN = r"^[A-Za-z0-9_-]{16,64}$"
# A backslash-quote that is an escape (after an even run of backslashes) is DST's "\'".
_ESCAPED_QUOTE = re.compile(rb"(?<!\\)((?:\\\\)*)\\'")
_ENCODER = msgspec.json.Encoder()
_UNKNOWN = re.compile(r"unknown field `([^`]*)`")
_TYPES: dict[str, type[Any]] = {frame_type(t): t for t in CLIENT_FRAME_TYPES}


CALL_FRAMES_MAX = 256
"""Client frames one call may carry (v1.md "HTTP transport"); the answer carries as many."""


class HttpCall(Obj):
    """A ``POST /v1/http`` request body (schemas/http.call.json)."""

    frames: Annotated[list[Any], msgspec.Meta(max_length=CALL_FRAMES_MAX)]
    session: Annotated[str, msgspec.Meta(pattern=SESSION_PATTERN)] | None = None
    wait_ms: Annotated[int, msgspec.Meta(ge=0, le=WAIT_MS_MAX)] = 0


class HttpClose(Obj):
    code: int
    reason: str = ""


class HttpAnswer(Obj):
    """A ``200`` answer (schemas/http.answer.json): the server frames queued since the last call."""

    session: str
    frames: list[Any]
    closed: HttpClose | None = None


class Call(msgspec.Struct, frozen=True):
    """A decoded call: the session handle, each frame's JSON text, the wait."""

    session: str | None
    frames: list[str]
    wait_ms: int


def decode_call(raw: bytes) -> Call:
    """Decode a ``POST /v1/http`` body (DST's quirks tolerated).

    Raises:
        FrameError: ``invalid_json`` for a body that is not strict JSON (but for
            the quirks), ``invalid_frame`` with ``fields`` for a wrong shape.
    """
    text = _ESCAPED_QUOTE.sub(rb"\1'", raw) if b"\\'" in raw else raw
    _count_frames(text)
    try:
        value = json.loads(text, object_pairs_hook=no_repeats, parse_constant=_no_constant)
    except RepeatedKey as exc:
        key = exc.key[:64]
        raise FrameError(f"duplicate key {key!r}", code="invalid_json", fields=[key]) from None
    except (ValueError, RecursionError) as exc:
        raise FrameError(f"body is not valid JSON: {str(exc)[:120]}", code="invalid_json") from None
    if isinstance(value, dict) and value.get("frames") == {}:
        value["frames"] = []
    try:
        call = msgspec.convert(value, HttpCall)
    except msgspec.ValidationError as exc:
        message = str(exc)
        at = message.split(" - at `$", 1)
        path = at[1].rstrip("`").lstrip(".") if len(at) == 2 else ""
        unknown = _UNKNOWN.search(message)
        if unknown is not None:
            path = ".".join(filter(None, [path, unknown[1][:64]]))
        reason = "unknown field" if unknown else message.split(" - at ")[0]
        raise FrameError(f"{path or '(body)'}: {reason}", fields=[path or "frames"]) from None
    frames = []
    for frame in call.frames:
        kind = frame.get("type") if isinstance(frame, dict) else None
        if isinstance(kind, str) and kind in _TYPES:
            frame = _lists(frame, client_frame_info()[_TYPES[kind]])
        frames.append(json.dumps(frame, ensure_ascii=False, separators=(",", ":")))
    return Call(call.session, frames, call.wait_ms)


class _Outline(msgspec.Struct):
    frames: list[msgspec.Raw]


def _count_frames(text: bytes) -> None:
    """Refuse too many frames before the slow, exact decoding builds them (an outline read in C)."""
    try:
        outline = msgspec.json.decode(text, type=_Outline)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return
    if len(outline.frames) > CALL_FRAMES_MAX:
        raise FrameError(
            f"frames: Expected `array` of length <= {CALL_FRAMES_MAX}", fields=["frames"]
        )


def encode_answer(session: str, frames: list[bytes], closed: tuple[int, str] | None) -> bytes:
    """The answer body; ``frames`` are encoded server frames, joined as they are."""
    head = b'{"session":' + _ENCODER.encode(session) + b',"frames":[' + b",".join(frames) + b"]"
    if closed is not None:
        head += b',"closed":' + _ENCODER.encode({"code": closed[0], "reason": closed[1]})
    return head + b"}"


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _lists(value: Any, t: mi.Type) -> Any:
    """``value`` with every ``{}`` where ``t`` expects a list made ``[]`` (a Lua empty table)."""
    match t:
        case mi.Metadata():
            return _lists(value, t.type)
        case mi.ListType() if value == {}:
            return []
        case mi.ListType() if isinstance(value, list):
            return [_lists(v, t.item_type) for v in value]
        case mi.UnionType():
            if (
                value == {}
                and any(_is_list(m) for m in t.types)
                and not any(_is_object(m) for m in t.types)
            ):
                return []
            for member in t.types:
                if isinstance(value, dict) and _is_object(member):
                    return _lists(value, member)
                if isinstance(value, list) and _is_list(member):
                    return _lists(value, member)
            return value
        case mi.StructType() if isinstance(value, dict):
            fields = {f.encode_name: f.type for f in t.fields}
            return {k: _lists(v, fields[k]) if k in fields else v for k, v in value.items()}
    return value


def _inner(t: mi.Type) -> mi.Type:
    return t.type if isinstance(t, mi.Metadata) else t


def _is_list(t: mi.Type) -> bool:
    return isinstance(_inner(t), mi.ListType)


def _is_object(t: mi.Type) -> bool:
    return isinstance(_inner(t), mi.StructType | mi.DictType)
