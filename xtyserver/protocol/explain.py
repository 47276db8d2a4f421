"""Explaining a refused frame: every offending field, not just the first (v1.md "Errors").

msgspec stops at the first problem; a mod author fixing a serializer wants all
of them. :func:`explain` decodes the frame generically and walks it against
the same types (via ``msgspec.inspect``), collecting a path and a reason per
field. Only refused frames pay for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import msgspec
import msgspec.inspect as mi

from xtyserver.errors import BudgetError, FrameError, PeerError
from xtyserver.protocol.frames import CLIENT_FRAME_TYPES, client_frame_info, frame_type

_GENERIC = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()
_BYTE_AT = re.compile(r" \(byte (?P<byte>\d+)\)")
_TYPES_BY_TAG: dict[str, type[Any]] = {frame_type(t): t for t in CLIENT_FRAME_TYPES}
_MSGSPEC_PATH = re.compile(r" - at `\$(?P<path>[^`]*)`$")

# Reasons that are budget violations rather than type errors (v1.md "Error codes").
_BUDGET_REASONS = ("too long", "too many items", "too large")


def not_json(raw: bytes, decode_message: str) -> FrameError:
    """The refusal of bytes that are not JSON, with the byte position and a short excerpt.

    ``decode_message`` is msgspec's ``DecodeError`` text, e.g. ``JSON is malformed:
    invalid character (byte 9)``. The excerpt (at most 16 bytes either side) goes
    to the peer only; the log records the code, never the message.
    """
    match = _BYTE_AT.search(decode_message)
    reason = decode_message.removeprefix("JSON is malformed: ")
    if match is None:  # "Input data was truncated"
        position = len(raw)
        reason = "the frame ends too early"
    else:
        position = int(match["byte"])
        reason = _BYTE_AT.sub("", reason)
    start = max(0, position - 16)
    excerpt = raw[start : position + 16].decode("utf-8", "replace")
    shown = json.dumps(excerpt, ensure_ascii=True)
    return FrameError(
        f"frame is not valid UTF-8 JSON: {reason} at byte {position} (near {shown})",
        code="invalid_json",
    )


def integral(raw: bytes) -> bytes | None:
    """``raw`` with every integral float at a whole-number field made an integer, or None.

    C# writes a ``double`` day as ``45.0`` and Lua has one number type (v1.md "JSON
    rules"). Only a frame the typed decode refused pays for this.
    """
    try:
        value = _GENERIC.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return None
    if not isinstance(value, dict) or value.get("type") not in _TYPES_BY_TAG:
        return None
    changed: list[bool] = []
    fixed = _integral(value, _type_info(_TYPES_BY_TAG[value["type"]]), changed)
    return _ENCODER.encode(fixed) if changed else None


def _integral(value: Any, t: mi.Type, changed: list[bool]) -> Any:
    match t:
        case mi.Metadata():
            return _integral(value, t.type, changed)
        case mi.IntType() if _is_integral_float(value):
            changed.append(True)
            return int(value)
        case mi.UnionType():
            for member in t.types:
                if _accepts_kind(value, member) or (
                    _is_integral_float(value) and _int_member(member)
                ):
                    return _integral(value, member, changed)
            return value
        case mi.StructType() if isinstance(value, dict):
            fields = {f.encode_name: f.type for f in t.fields}
            return {
                k: (_integral(v, fields[k], changed) if k in fields else v)
                for k, v in value.items()
            }
        case mi.ListType() if isinstance(value, list):
            return [_integral(v, t.item_type, changed) for v in value]
    return value


def _int_member(t: mi.Type) -> bool:
    inner = t.type if isinstance(t, mi.Metadata) else t
    return isinstance(inner, mi.IntType)


def _is_integral_float(value: object) -> bool:
    return isinstance(value, float) and value.is_integer()


def explain(raw: bytes, msgspec_message: str) -> PeerError:
    try:
        value = _GENERIC.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return FrameError("frame is not valid JSON", code="invalid_json")
    if not isinstance(value, dict):
        return FrameError("a frame must be a JSON object", code="invalid_frame")
    frame_id = value.get("id") if isinstance(value.get("id"), str) else None
    kind = value.get("type")
    if not isinstance(kind, str):
        hint = next((k for k in value if isinstance(k, str) and _fold(k) == "type"), None)
        message = "frame has no string `type`"
        if hint is not None and hint != "type":
            message += f" (`{hint[:64]}` is not a field: use `type`; keys are camelCase)"
        err: PeerError = FrameError(message, fields=["type"])
    elif kind not in _TYPES_BY_TAG:
        err = FrameError(f"unknown frame type {kind[:64]!r}", code="unknown_type", fields=["type"])
    else:
        problems = list(walk(value, _type_info(_TYPES_BY_TAG[kind]), ""))
        if not problems:  # our walker and msgspec disagree; trust msgspec's path.
            match = _MSGSPEC_PATH.search(msgspec_message)
            path = match["path"].lstrip(".") if match else ""
            problems = [(path, msgspec_message.split(" - at ")[0])]
        err = problems_error(problems)
    if frame_id is not None and len(frame_id) <= 64:
        err.frame_id = frame_id
    return err


def problems_error(problems: list[tuple[str, str]]) -> PeerError:
    fields = list(dict.fromkeys(path for path, _ in problems))
    message = "; ".join(f"{path or '(frame)'}: {reason}" for path, reason in problems[:20])
    if all(any(r in reason for r in _BUDGET_REASONS) for _, reason in problems):
        return BudgetError(message, fields=fields)
    return FrameError(message, fields=fields)


def _type_info(cls: type[Any]) -> mi.Type:
    return client_frame_info()[cls]


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
            whole = isinstance(value, int) or _is_integral_float(value)
            return whole and not isinstance(value, bool)
        case mi.FloatType():
            return isinstance(value, int | float) and not isinstance(value, bool)
        case mi.ListType():
            return isinstance(value, list)
        case mi.StructType() if t.tag_field is not None and isinstance(value, dict):
            # A tagged union's member is the one its tag names (an argument's "type").
            return value.get(t.tag_field) == t.tag
        case mi.StructType() | mi.DictType():
            return isinstance(value, dict)
        case mi.LiteralType():
            return value in t.values
        case mi.NoneType():
            return value is None
        case mi.AnyType() | mi.RawType():
            return True
    return False


def walk(value: object, t: mi.Type, path: str, depth: int = 0) -> Iterable[tuple[str, str]]:
    """Yield (path, reason) for every way ``value`` breaks type ``t``."""
    match t:
        case mi.Metadata():
            yield from walk(value, t.type, path, depth)
        case mi.UnionType():
            members = [m for m in t.types if not isinstance(m, mi.NoneType)]
            if value is None and len(members) < len(t.types):
                return
            for member in members:
                if _accepts_kind(value, member):
                    yield from walk(value, member, path, depth)
                    return
            if isinstance(value, float) and any(_int_member(m) for m in members):
                yield path, f"expected a whole number, got {value!r}"
                return
            tagged = [m for m in members if isinstance(m, mi.StructType) and m.tag is not None]
            if isinstance(value, dict) and tagged and len(tagged) == len(members):
                allowed = ", ".join(json.dumps(m.tag) for m in tagged)
                yield _join(path, str(tagged[0].tag_field)), f"must be one of {allowed}"
                return
            yield path, f"expected {_describe(t)}, got {_json_kind(value)}"
        case mi.StructType():
            yield from __walk_struct(value, t, path, depth)
        case mi.DictType() | mi.ListType():
            yield from __walk_collection(value, t, path, depth)
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
            yield from __walk_number(value, t, path)
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
            yield from __walk_datetime(value, t, path)
        case _:
            return


def __walk_collection(
    value: object, t: mi.DictType | mi.ListType, path: str, depth: int
) -> Iterable[tuple[str, str]]:
    """An object with keys of one type (an action's arguments by name) or an array."""
    kind, container = ("object", dict) if isinstance(t, mi.DictType) else ("array", list)
    if not isinstance(value, container):
        yield path, f"expected {kind}, got {_json_kind(value)}"
        return
    if t.max_length is not None and len(value) > t.max_length:
        what = "keys" if kind == "object" else "items"
        yield path, f"too many {what} ({len(value)}; at most {t.max_length})"
    if isinstance(t, mi.DictType):
        for key, item in value.items():  # type: ignore[union-attr]
            yield from walk(key, t.key_type, _join(path, key), depth + 1)
            yield from walk(item, t.value_type, _join(path, key), depth + 1)
    else:
        for i, item in enumerate(value):
            yield from walk(item, t.item_type, _join(path, i), depth + 1)


def __walk_struct(
    value: object, t: mi.StructType, path: str, depth: int
) -> Iterable[tuple[str, str]]:
    if not isinstance(value, dict):
        yield path, f"expected object, got {_json_kind(value)}"
        return
    fields = {f.encode_name: f for f in t.fields}
    for key, item in value.items():
        if key == t.tag_field and (depth == 0 or t.tag is not None):
            continue  # the frame's type, or a tagged member's tag (its union chose it)
        field = fields.get(key)
        if field is None:
            yield _join(path, key), _unknown(key, t, depth)
            continue
        yield from walk(item, field.type, _join(path, key), depth + 1)
    for field in t.fields:
        if field.required and field.encode_name not in value:
            yield _join(path, field.encode_name), "required field missing"


def _fold(key: str) -> str:
    """A key compared without case or separators: ``Nearby``, ``held_item``, ``HeldItem``."""
    return key.replace("_", "").replace("-", "").lower()


def _unknown(key: str, t: mi.StructType, depth: int) -> str:
    """The reason for an unknown field, naming the camelCase key it resembles."""
    names = [f.encode_name for f in t.fields]
    if depth == 0 and t.tag_field is not None:
        names.append(t.tag_field)
    folded = _fold(key)
    for name in names:
        if _fold(name) == folded:
            return f"unknown field; use `{name}` (keys are camelCase)"
    return "unknown field"


def __walk_number(
    value: object, t: mi.IntType | mi.FloatType, path: str
) -> Iterable[tuple[str, str]]:
    integral = isinstance(t, mi.IntType)
    whole = isinstance(value, int) or _is_integral_float(value)
    ok = whole if integral else isinstance(value, int | float)
    if isinstance(value, bool) or not ok:
        got = repr(value) if isinstance(value, float) else _json_kind(value)
        yield path, f"expected {'a whole number' if integral else 'number'}, got {got}"
        return
    assert isinstance(value, int | float)
    if (t.ge is not None and value < t.ge) or (t.le is not None and value > t.le):
        yield path, f"out of range ({t.ge} to {t.le})"


def __walk_datetime(value: object, t: mi.DateTimeType, path: str) -> Iterable[tuple[str, str]]:
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
