"""The one decoder and encoder of protocol/v1 frames (v1.md "Frames", "Errors").

:func:`decode_client_frame` turns the bytes of one text frame into a typed
client frame or raises a :class:`~xtyserver.errors.PeerError` whose ``fields``
name every offending field. It never raises anything else for any input: that
is the property the fuzz harness and the hypothesis tests check.

Decoding is two-phase. The fast path is one typed msgspec decode. Only when it
fails does the slow path decode the frame generically and walk it against the
same types (via ``msgspec.inspect``) to collect *all* the offending fields,
since msgspec stops at the first.

A decoded frame's free text is then normalised (v1.md "Normalisation") before
anything judges it: the modelContext strings, ``chat.send`` text and
``identity.saveName`` wherever they come, and ``profile.update`` values. The
decoded frame carries the normalised strings, so that is what the server
keeps, prompts and stores. Ids, versions, tokens, time zones and image data
are not touched: their patterns admit only ASCII letters, digits and a few
marks, which normalisation never changes, so an accepted id is already normal
and a look-alike one (full-width, with a zero-width space) is refused by its
pattern instead of being merged with another save. A string that normalisation
takes past its limit (NFKC can expand a character into several) or empties is
refused like one sent that way, with "after normalisation" in the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi

from xtyserver.errors import BudgetError, FrameError, PeerError
from xtyserver.protocol.budget import check_chat_context, check_hello, check_state_update
from xtyserver.protocol.duplicates import refuse_duplicate_keys
from xtyserver.protocol.frames import (
    CLIENT_FRAME_TYPES,
    ChatContext,
    ChatSend,
    ClientFrame,
    Hello,
    Identity,
    ModelContext,
    ProfileUpdate,
    ServerFrame,
    StateUpdate,
    frame_type,
)
from xtyserver.protocol.limits import (
    CHAT_TEXT_MAX,
    CONTEXT_STRING_MAX,
    CONTEXT_TARGET_BYTES,
    FRAME_MAX_BYTES,
    PROFILE_ITEM_MAX,
    PROFILE_TEXT_MAX,
    SAVE_NAME_MAX,
    SMALL_FRAME_MAX_BYTES,
)
from xtyserver.protocol.normalize import is_plain, normalize

_DECODER = msgspec.json.Decoder(ClientFrame)
_GENERIC = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()
_TYPES_BY_TAG: dict[str, type[Any]] = {frame_type(t): t for t in CLIENT_FRAME_TYPES}
_STATE_HEAD = b'{"type":"state.update","modelContext":'
_MSGSPEC_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")

# Reasons that are budget violations rather than type errors (v1.md "Error codes").
_BUDGET_REASONS = ("too long", "too many items", "too large")


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
    """A decoded client frame and what the budget check noticed on the way.

    Attributes:
        frame: The typed frame.
        context_bytes: Serialized size of the frame's modelContext, 0 if none.
        context_over_target: The modelContext is over the 2 KiB target (logged).
    """

    frame: ClientFrame
    context_bytes: int = 0
    context_over_target: bool = False


def encode_frame(frame: ServerFrame) -> bytes:
    """Serialize one server frame to the bytes of a text frame."""
    return _ENCODER.encode(frame)


def decode_client_frame(data: bytes | str) -> Decoded:
    """Decode and validate one client text frame (v1.md "Frames").

    Args:
        data: The payload of one WebSocket text frame.

    Returns:
        The typed frame with budget notes.

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
        raise _explain(raw, str(exc)) from None
    except msgspec.DecodeError:
        raise FrameError("frame is not valid UTF-8 JSON", code="invalid_json") from None
    except RecursionError:
        raise FrameError("frame is nested too deeply", code="invalid_json") from None

    if not isinstance(frame, ChatSend) and len(raw) > SMALL_FRAME_MAX_BYTES:
        raise FrameError(
            f"a {frame_type(frame)} frame may be at most {SMALL_FRAME_MAX_BYTES} bytes",
            code="frame_too_large",
        )
    encoded = _ENCODER.encode(_without_image_data(frame))
    try:
        refuse_duplicate_keys(raw, frame, encoded)
        normal = _normalized(frame, raw)
        size = _check_semantics(normal, encoded if normal is frame else None)
    except PeerError as exc:
        exc.frame_id = getattr(frame, "id", None)
        raise
    return Decoded(normal, size, size > CONTEXT_TARGET_BYTES)


def _without_image_data(frame: ClientFrame) -> ClientFrame:
    """``frame`` with its screenshot's base64 blanked, for counting colons cheaply.

    Valid base64 has no colon, so the count is the same without re-encoding a
    megabyte of it (0.4 ms). Data that does hold a colon only makes the raw
    frame's count higher, which the duplicate check reads as "not sure" and
    settles by decoding again (see :mod:`~xtyserver.protocol.duplicates`).
    """
    if isinstance(frame, ChatSend) and frame.image is not None:
        image = msgspec.structs.replace(frame.image, data="")
        return msgspec.structs.replace(frame, image=image)
    return frame


def _check_semantics(frame: ClientFrame, encoded: bytes | None) -> int:
    """Checks beyond the types: sizes and forbidden content. Returns context bytes.

    ``encoded`` is the frame's msgspec encoding when it is still current (no
    string was normalised): a state.update's modelContext is then a slice of
    it instead of a second encoding.
    """
    match frame:
        case Hello():
            check_hello(frame)
            return 0
        case StateUpdate(identity=None, id=None) if encoded and encoded.startswith(_STATE_HEAD):
            # The tag, then the only field set: b'{"type":"state.update","modelContext":{...}}'.
            return check_state_update(frame, encoded=encoded[len(_STATE_HEAD) : -1])
        case StateUpdate():
            return check_state_update(frame)
        case ChatSend(context=context) if context is not None:
            return check_chat_context(context, prefix="context.")
        case _:
            return 0


# -- normalisation of free text (v1.md "Normalisation") -----------------------


def _plain(encoded: bytes) -> bool:
    """Whether JSON bytes can only hold strings that are already normal.

    Bytes of printable ASCII, whitespace, kana, Hangul, CJK ideographs and
    punctuation (see :func:`~xtyserver.protocol.normalize.is_plain`) without a
    ``\\u`` or ``\\b`` escape hold only strings that normalisation leaves as
    they are. (An escaped backslash before ``u`` or ``b`` also says no: a false
    alarm only costs the slower walk.) Single-byte searches first: they are
    several times faster than a two-byte one, and most frames have no backslash.
    """
    if encoded.isascii():
        if encoded.find(b"\x7f") >= 0:
            return False
    elif not is_plain(encoded.decode("utf-8", "replace")):
        return False
    return encoded.find(b"\\") < 0 or (b"\\u" not in encoded and b"\\b" not in encoded)


def _normalized(frame: ClientFrame, raw: bytes) -> ClientFrame:
    """``frame`` with its free text normalised and checked against its limits again.

    Raises:
        PeerError: naming every string that normalisation took past a limit.
    """
    # Most frames are plain ASCII; a large one is a chat.send with a screenshot,
    # whose base64 is not worth scanning: its few text fields are checked below.
    if len(raw) <= SMALL_FRAME_MAX_BYTES and _plain(raw):
        return frame
    problems: list[tuple[str, str]] = []
    match frame:
        case Hello():
            identity = _normal_identity(frame.identity, "", problems)
            if identity is not frame.identity:
                frame = msgspec.structs.replace(frame, identity=identity)
        case StateUpdate():
            # The frame is little but its modelContext: no second plain check.
            context = _normal_context(frame.model_context, "modelContext", problems, look=False)
            maybe = frame.identity and _normal_identity(frame.identity, "", problems)
            if context is not frame.model_context or maybe is not frame.identity:
                frame = msgspec.structs.replace(frame, model_context=context, identity=maybe)
        case ChatSend():
            text = _normal_text(
                frame.text, "text", problems, min_length=1, max_length=CHAT_TEXT_MAX
            )
            chat_context = frame.context and _normal_chat_context(frame.context, problems)
            if text is not frame.text or chat_context is not frame.context:
                frame = msgspec.structs.replace(frame, text=text, context=chat_context)
        case ProfileUpdate(value=str() as value):
            text = _normal_text(value, "value", problems, max_length=PROFILE_TEXT_MAX)
            if text is not value:
                frame = msgspec.structs.replace(frame, value=text)
        case ProfileUpdate(value=list() as items):
            new = [
                _normal_text(item, f"value[{i}]", problems, max_length=PROFILE_ITEM_MAX)
                for i, item in enumerate(items)
            ]
            if any(a is not b for a, b in zip(new, items, strict=True)):
                frame = msgspec.structs.replace(frame, value=new)
    if problems:
        raise _problems_error(problems)
    return frame


def _normal_text(
    text: str,
    path: str,
    problems: list[tuple[str, str]],
    *,
    max_length: int,
    min_length: int = 0,
) -> str:
    """``text`` normalised; the same object when normalisation changed nothing."""
    new = normalize(text)
    if new == text:
        return text
    if len(new) > max_length:
        problems.append(
            (path, f"too long after normalisation ({len(new)} chars; at most {max_length})")
        )
    elif len(new) < min_length:
        problems.append((path, f"too short after normalisation (at least {min_length} chars)"))
    return new


def _normal_identity(identity: Identity, prefix: str, problems: list[tuple[str, str]]) -> Identity:
    # gameId and saveId passed their ASCII patterns, so they are already normal.
    name = identity.save_name
    if name is None:
        return identity
    new = _normal_text(
        name, f"{prefix}identity.saveName", problems, min_length=1, max_length=SAVE_NAME_MAX
    )
    return identity if new is name else msgspec.structs.replace(identity, save_name=new)


def _normal_chat_context(context: ChatContext, problems: list[tuple[str, str]]) -> ChatContext:
    model_context = context.model_context and _normal_context(
        context.model_context, "context.modelContext", problems
    )
    identity = context.identity and _normal_identity(context.identity, "context.", problems)
    if model_context is context.model_context and identity is context.identity:
        return context
    return msgspec.structs.replace(context, model_context=model_context, identity=identity)


def _normal_context(
    context: ModelContext, path: str, problems: list[tuple[str, str]], *, look: bool = True
) -> ModelContext:
    """The modelContext with every string normalised, or ``context`` itself if none changes.

    ``look``: first check its encoding for plain text, which is cheaper than
    the walk when, as usual, nothing needs normalising.
    """
    if look and _plain(_ENCODER.encode(context)):
        return context
    too_long: list[str] = []
    new = _normal_struct(context, too_long)
    if too_long:
        # Rare: walk again to name each field, as the slow decode path does.
        found = list(_walk(msgspec.to_builtins(new), _MODEL_CONTEXT_INFO, path))
        found = found or [(path, f"a string is too long (at most {CONTEXT_STRING_MAX} chars)")]
        problems.extend((where, f"{reason} after normalisation") for where, reason in found)
    return new


_MODEL_CONTEXT_INFO = mi.type_info(ModelContext)
_S = TypeVar("_S", bound=msgspec.Struct)

# What a field of a modelContext Struct holds, as far as text goes.
_TEXT, _TEXTS, _PART, _PARTS = range(4)


def _text_fields(info: mi.Type) -> tuple[tuple[str, int], ...]:
    """The fields of a modelContext Struct that hold text, and how (read once)."""
    assert isinstance(info, mi.StructType)
    out = []
    for field in info.fields:
        t = field.type
        if isinstance(t, mi.UnionType):  # X | None
            t = next(m for m in t.types if not isinstance(m, mi.NoneType))
        if isinstance(t, mi.Metadata):
            t = t.type
        item = t.item_type if isinstance(t, mi.ListType) else None
        if isinstance(item, mi.Metadata):
            item = item.type
        if isinstance(t, mi.StrType):
            out.append((field.name, _TEXT))
        elif isinstance(t, mi.StructType):
            out.append((field.name, _PART))
            _TEXT_FIELDS[t.cls] = _text_fields(t)
        elif isinstance(item, mi.StrType):
            out.append((field.name, _TEXTS))
        elif isinstance(item, mi.StructType):
            out.append((field.name, _PARTS))
            _TEXT_FIELDS[item.cls] = _text_fields(item)
    return tuple(out)


_TEXT_FIELDS: dict[type[Any], tuple[tuple[str, int], ...]] = {}
_TEXT_FIELDS[ModelContext] = _text_fields(_MODEL_CONTEXT_INFO)


def _normal_struct(obj: _S, too_long: list[str]) -> _S:
    """``obj`` (a modelContext or part of one) with its strings normalised.

    Walks only the fields that hold text, as found once from the types, rather
    than converting to builtins and back. Every string of a modelContext has
    the same limit (v1.md "modelContext"), so a changed string is only
    measured; ``too_long`` collects those over it.
    """
    changes: dict[str, Any] = {}
    for name, holds in _TEXT_FIELDS[type(obj)]:
        value = getattr(obj, name)
        if value is None:
            continue
        if holds == _TEXT:
            new: Any = _normal_string(value, too_long)
        elif holds == _PART:
            new = _normal_struct(value, too_long)
        else:
            one = _normal_string if holds == _TEXTS else _normal_struct
            items = [one(item, too_long) for item in value]
            new = value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if new is not value:
            changes[name] = new
    return msgspec.structs.replace(obj, **changes) if changes else obj


def _normal_string(value: str, too_long: list[str]) -> str:
    new = normalize(value)
    if new == value:
        return value
    if len(new) > CONTEXT_STRING_MAX:
        too_long.append(new)
    return new


# -- slow path: explain a validation failure, naming every field --------------


def _explain(raw: bytes, msgspec_message: str) -> PeerError:
    try:
        value = _GENERIC.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return FrameError("frame is not valid JSON", code="invalid_json")
    if not isinstance(value, dict):
        return FrameError("a frame must be a JSON object", code="invalid_frame")
    frame_id = value.get("id") if isinstance(value.get("id"), str) else None
    kind = value.get("type")
    if not isinstance(kind, str):
        err: PeerError = FrameError("frame has no string `type`", fields=["type"])
    elif kind not in _TYPES_BY_TAG:
        err = FrameError(f"unknown frame type {kind[:64]!r}", code="unknown_type", fields=["type"])
    else:
        problems = list(_walk(value, _type_info(_TYPES_BY_TAG[kind]), ""))
        if not problems:  # our walker and msgspec disagree; trust msgspec's path.
            match = _MSGSPEC_PATH.search(msgspec_message)
            path = match["path"].lstrip(".") if match else ""
            problems = [(path, msgspec_message.split(" - at ")[0])]
        err = _problems_error(problems)
    if frame_id is not None and len(frame_id) <= 64:
        err.frame_id = frame_id
    return err


def _problems_error(problems: list[tuple[str, str]]) -> PeerError:
    fields = list(dict.fromkeys(path for path, _ in problems))
    message = "; ".join(f"{path or '(frame)'}: {reason}" for path, reason in problems[:20])
    if all(any(r in reason for r in _BUDGET_REASONS) for _, reason in problems):
        return BudgetError(message, fields=fields)
    return FrameError(message, fields=fields)


_TYPE_INFO: dict[type[Any], mi.Type] = {t: mi.type_info(t) for t in CLIENT_FRAME_TYPES}


def _type_info(cls: type[Any]) -> mi.Type:
    return _TYPE_INFO[cls]


def _join(path: str, key: str | int) -> str:
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def _json_kind(value: object) -> str:
    match value:
        case None:
            return "null"
        case bool():
            return "boolean"
        case int() | float():
            return "number"
        case str():
            return "string"
        case list():
            return "array"
        case dict():
            return "object"
    return type(value).__name__


def _accepts_kind(value: object, t: mi.Type) -> bool:
    """Whether a union member could hold a JSON value of this kind."""
    match t:
        case mi.Metadata():
            return _accepts_kind(value, t.type)
        case mi.StrType() | mi.DateTimeType():
            return isinstance(value, str)
        case mi.BoolType():
            return isinstance(value, bool)
        case mi.IntType():
            return isinstance(value, int) and not isinstance(value, bool)
        case mi.FloatType():
            return isinstance(value, int | float) and not isinstance(value, bool)
        case mi.ListType():
            return isinstance(value, list)
        case mi.StructType() | mi.DictType():
            return isinstance(value, dict)
        case mi.LiteralType():
            return value in t.values
        case mi.NoneType():
            return value is None
        case mi.AnyType() | mi.RawType():
            return True
    return False


def _walk(value: object, t: mi.Type, path: str, depth: int = 0) -> Iterable[tuple[str, str]]:
    """Yield (path, reason) for every way ``value`` breaks type ``t``."""
    match t:
        case mi.Metadata():
            yield from _walk(value, t.type, path, depth)
        case mi.UnionType():
            members = [m for m in t.types if not isinstance(m, mi.NoneType)]
            if value is None and len(members) < len(t.types):
                return
            for member in members:
                if _accepts_kind(value, member):
                    yield from _walk(value, member, path, depth)
                    return
            yield path, f"expected {_describe(t)}, got {_json_kind(value)}"
        case mi.StructType():
            yield from _walk_struct(value, t, path, depth)
        case mi.ListType():
            if not isinstance(value, list):
                yield path, f"expected array, got {_json_kind(value)}"
                return
            if t.max_length is not None and len(value) > t.max_length:
                yield path, f"too many items ({len(value)}; at most {t.max_length})"
            for i, item in enumerate(value):
                yield from _walk(item, t.item_type, _join(path, i), depth + 1)
        case mi.StrType():
            if not isinstance(value, str):
                yield path, f"expected string, got {_json_kind(value)}"
            elif t.max_length is not None and len(value) > t.max_length:
                yield path, f"too long ({len(value)} chars; at most {t.max_length})"
            elif t.min_length is not None and len(value) < t.min_length:
                yield path, f"too short (at least {t.min_length} chars)"
            elif t.pattern is not None and not re.search(t.pattern, value):
                yield path, f"does not match {t.pattern}"
        case mi.IntType() | mi.FloatType():
            yield from _walk_number(value, t, path)
        case mi.BoolType():
            if not isinstance(value, bool):
                yield path, f"expected boolean, got {_json_kind(value)}"
        case mi.NoneType():
            if value is not None:
                yield path, f"expected null, got {_json_kind(value)}"
        case mi.LiteralType():
            if value not in t.values or isinstance(value, bool) != any(
                isinstance(v, bool) for v in t.values
            ):
                allowed = ", ".join(json.dumps(v) for v in t.values)
                yield path, f"must be one of {allowed}"
        case mi.DateTimeType():
            yield from _walk_datetime(value, t, path)
        case _:
            return


def _walk_struct(
    value: object, t: mi.StructType, path: str, depth: int
) -> Iterable[tuple[str, str]]:
    if not isinstance(value, dict):
        yield path, f"expected object, got {_json_kind(value)}"
        return
    fields = {f.encode_name: f for f in t.fields}
    for key, item in value.items():
        if key == t.tag_field and depth == 0:
            continue
        field = fields.get(key)
        if field is None:
            yield _join(path, key), "unknown field"
            continue
        yield from _walk(item, field.type, _join(path, key), depth + 1)
    for field in t.fields:
        if field.required and field.encode_name not in value:
            yield _join(path, field.encode_name), "required field missing"


def _walk_number(
    value: object, t: mi.IntType | mi.FloatType, path: str
) -> Iterable[tuple[str, str]]:
    integral = isinstance(t, mi.IntType)
    ok = isinstance(value, int) if integral else isinstance(value, int | float)
    if isinstance(value, bool) or not ok:
        yield path, f"expected {'integer' if integral else 'number'}, got {_json_kind(value)}"
        return
    assert isinstance(value, int | float)
    if (t.ge is not None and value < t.ge) or (t.le is not None and value > t.le):
        yield path, f"out of range ({t.ge} to {t.le})"


def _walk_datetime(value: object, t: mi.DateTimeType, path: str) -> Iterable[tuple[str, str]]:
    if not isinstance(value, str):
        yield path, f"expected RFC 3339 date-time string, got {_json_kind(value)}"
        return
    try:
        when = msgspec.convert(value, datetime)
    except msgspec.ValidationError:
        yield path, "not an RFC 3339 date-time"
        return
    if t.tz and when.tzinfo is None:
        yield path, "date-time needs a time zone offset (e.g. Z)"


def _describe(t: mi.UnionType) -> str:
    names = []
    for member in t.types:
        inner = member.type if isinstance(member, mi.Metadata) else member
        names.append(type(inner).__name__.removesuffix("Type").lower())
    return " or ".join(names)
