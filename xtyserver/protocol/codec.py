"""The one decoder and encoder of protocol/v1 frames (v1.md "Frames", "Errors").

:func:`decode_client_frame` turns the bytes of one text frame into a typed
client frame or raises a :class:`~xtyserver.errors.PeerError` whose ``fields``
name every offending field. It never raises anything else for any input: that
is the property the fuzz harness and the hypothesis tests check.

Decoding runs in this order, each step in its own module:

1. One typed msgspec decode. Only when it fails does
   :mod:`~xtyserver.protocol.explain` name *all* the offending fields (msgspec
   stops at the first), retry a frame whose whole numbers were written as
   integral floats (``45.0``), or place the error in bytes that are not JSON.
2. Duplicate keys (:mod:`~xtyserver.protocol.duplicates`), counted against
   the frame's re-encoding.
3. Free text normalised (:mod:`~xtyserver.protocol.normal_frames`): the
   decoded frame carries the normal strings; ids are never touched.
4. Sizes and forbidden content (:mod:`~xtyserver.protocol.budget`).
"""

from __future__ import annotations

from typing import Final

import msgspec

from xtyserver.errors import FrameError, PeerError
from xtyserver.protocol.action_frames import check_actions
from xtyserver.protocol.budget import (
    check_chat_context,
    check_hello,
    check_model_context,
    check_pair,
    check_state_update,
)
from xtyserver.protocol.duplicates import refuse_duplicate_keys
from xtyserver.protocol.event_checks import check_event
from xtyserver.protocol.explain import explain, integral, not_json
from xtyserver.protocol.frames import (
    CLIENT_FRAME_TYPES,
    ActionsDeclare,
    AdapterPair,
    ChatContext,
    ChatSend,
    ClientFrame,
    GameEvent,
    Hello,
    ProfileUpdate,
    ServerFrame,
    StateUpdate,
    frame_type,
)
from xtyserver.protocol.limits import (
    CONTEXT_TARGET_BYTES,
    FRAME_MAX_BYTES,
    SMALL_FRAME_MAX_BYTES,
)
from xtyserver.protocol.normal_frames import normalized

_DECODER = msgspec.json.Decoder(ClientFrame)
_ENCODER = msgspec.json.Encoder()
_STATE_HEAD = len(b'{"type":"state.update","modelContext":')
_CHAT_CONTEXT_HEAD = b'"context":{"modelContext":'
# Frame types with no free text (ids and enums only) and no content checks:
# normalized() and _check_semantics() leave them as they are.
_WITHOUT_TEXT: Final = frozenset(CLIENT_FRAME_TYPES) - {
    Hello,
    StateUpdate,
    ChatSend,
    ProfileUpdate,
    ActionsDeclare,
    AdapterPair,  # its installId is judged (v1.md "Keys per install")
    GameEvent,
}


DECODE_ERROR_CODES = frozenset(
    {
        "invalid_json",
        "invalid_frame",
        "unknown_type",
        "frame_too_large",
        "budget_exceeded",
        "forbidden_content",
    }
)
"""Every code :func:`decode_client_frame` may refuse a frame with (v1.md "Error codes")."""


class Decoded(msgspec.Struct, frozen=True):
    """A decoded frame with its modelContext's serialized size (0: none), flagged over 2 KiB."""

    frame: ClientFrame
    context_bytes: int = 0
    context_over_target: bool = False


def encode_frame(frame: ServerFrame) -> bytes:
    """Serialize one server frame to the bytes of a text frame."""
    return _ENCODER.encode(frame)


def decode_client_frame(data: bytes | str) -> Decoded:
    """Decode and validate one client text frame (v1.md "Frames").

    Raises:
        PeerError: with ``code`` and ``fields`` for every refusal.
    """
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    if len(raw) > FRAME_MAX_BYTES:
        raise FrameError(
            f"frame is {len(raw)} bytes; the limit is {FRAME_MAX_BYTES}", code="frame_too_large"
        )
    try:
        frame = _DECODER.decode(raw)
    except msgspec.ValidationError as exc:
        frame = _retyped(raw, str(exc))
    except msgspec.DecodeError as exc:
        raise not_json(raw, str(exc)) from None
    except RecursionError:
        raise FrameError("frame is nested too deeply", code="invalid_json") from None

    kind = type(frame)
    if kind is ChatSend:
        encoded = _ENCODER.encode(_without_image_data(frame))
    elif len(raw) > SMALL_FRAME_MAX_BYTES:
        raise FrameError(
            f"a {frame_type(frame)} frame may be at most {SMALL_FRAME_MAX_BYTES} bytes",
            code="frame_too_large",
        )
    else:
        encoded = _ENCODER.encode(frame)
    try:
        refuse_duplicate_keys(raw, frame, encoded)
        if kind in _WITHOUT_TEXT:
            return Decoded(frame)  # a heartbeat and the like: nothing to normalise or judge
        normal = normalized(frame, raw)
        size = _check_semantics(normal, encoded if normal is frame else None)
    except PeerError as exc:
        exc.frame_id = getattr(frame, "id", None)
        raise
    return Decoded(normal, size, size > CONTEXT_TARGET_BYTES)


def _retyped(raw: bytes, message: str) -> ClientFrame:
    """The frame once its integral floats (``45.0``) are whole numbers, else the refusal."""
    fixed = integral(raw) if "got `float`" in message else None
    if fixed is not None:
        try:
            return _DECODER.decode(fixed)
        except (msgspec.ValidationError, msgspec.DecodeError):
            pass
    raise explain(raw, message)


def _without_image_data(frame: ClientFrame) -> ClientFrame:
    """``frame`` with its screenshot's base64 blanked, for counting colons cheaply.

    Valid base64 has no colon; data that holds one only makes the raw frame's
    count higher, which the duplicate check settles by decoding again.
    """
    if isinstance(frame, ChatSend) and frame.image is not None:
        image = msgspec.structs.replace(frame.image, data="")
        return msgspec.structs.replace(frame, image=image)
    return frame


def _check_semantics(frame: ClientFrame, encoded: bytes | None) -> int:
    """Checks beyond the types: sizes and forbidden content. Returns context bytes.

    ``encoded``: the frame's encoding while still current, to measure a trailing
    modelContext on instead of encoding it again.
    """
    if type(frame) is StateUpdate:  # the frame sent most often: no match statement
        if frame.identity is None and frame.id is None and encoded is not None:
            # The tag, then the only field set: b'{"type":"state.update","modelContext":{...}}'.
            return check_model_context(frame.model_context, size=len(encoded) - _STATE_HEAD - 1)
        return check_state_update(frame)
    match frame:
        case ChatSend(context=ChatContext(identity=None, observation=msgspec.UNSET) as context) if (
            encoded and context.model_context is not None
        ):
            # The modelContext is the last thing written: ...,"context":{"modelContext":{...}}}.
            # Inside a string every quote is escaped, so the key is found only as a key.
            at = encoded.rfind(_CHAT_CONTEXT_HEAD)
            size = len(encoded) - at - len(_CHAT_CONTEXT_HEAD) - 2 if at >= 0 else None
            return check_chat_context(context, prefix="context.", size=size)
        case ChatSend(context=context) if context is not None:
            return check_chat_context(context, prefix="context.")
        case Hello():
            check_hello(frame)
            if frame.actions:
                check_actions(frame.actions, "actions")
            return 0
        case ActionsDeclare():
            check_actions(frame.actions, "actions")
            return 0
        case GameEvent():
            check_event(frame)
            return 0
        case AdapterPair():
            check_pair(frame)
            return 0
        case _:
            return 0
