"""10,000 generated frames of every client type: valid ones round-trip, one-over ones are refused.

The generator is driven by the frame types themselves (``msgspec.inspect``), so a
new field or limit is covered without touching this file. A frame is either
valid (it decodes, and re-encoding gives the same frame) or has exactly one
limit broken by one (a string one char too long, an array one item too many, a
number one past its bound, a pattern or literal broken, an unknown field, a
missing required field) and is refused with a documented code naming that field.
"""

from __future__ import annotations

import json
import string
from typing import Any

import msgspec
import msgspec.inspect as mi
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property_budget import examples
from xtyserver.errors import PeerError
from xtyserver.protocol.codec import DECODE_ERROR_CODES, decode_client_frame
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.frames import CLIENT_FRAME_TYPES

CODES = DECODE_ERROR_CODES
# Letters, digits, CJK and spaces: free strings that cannot form a path or e-mail.
ALPHABET = string.ascii_letters + string.digits + " 农场钓鱼社区中心鱼缸阿比盖尔"
BIG = 4_000  # longer strings are covered by explicit edge tests (image data)


def _unwrap(t: mi.Type) -> mi.Type:
    return t.type if isinstance(t, mi.Metadata) else t


def _text(t: mi.StrType, size: int | None = None) -> st.SearchStrategy[str]:
    if t.pattern is not None:
        return st.from_regex(t.pattern, fullmatch=True)
    lo = t.min_length or 0
    hi = min(t.max_length if t.max_length is not None else 40, 60)
    return st.text(ALPHABET, min_size=lo, max_size=max(lo, hi))


def value_of(t: mi.Type) -> st.SearchStrategy[Any]:
    """A valid JSON value for type ``t``."""
    t = _unwrap(t)
    match t:
        case mi.StrType():
            return _text(t)
        case mi.IntType():
            lo = t.ge if t.ge is not None else -1000
            hi = t.le if t.le is not None else 1000
            return st.integers(lo, min(hi, lo + 10**6))
        case mi.FloatType():
            lo = t.ge if t.ge is not None else -1e6
            hi = t.le if t.le is not None else 1e6
            return st.floats(lo, hi, allow_nan=False, allow_infinity=False)
        case mi.BoolType():
            return st.booleans()
        case mi.NoneType():
            return st.none()
        case mi.LiteralType():
            return st.sampled_from(t.values)
        case mi.DateTimeType():
            return st.just("2026-09-21T10:00:00Z")
        case mi.ListType():
            hi = min(t.max_length if t.max_length is not None else 4, 8)
            return st.lists(value_of(t.item_type), max_size=hi)
        case mi.UnionType():
            members = [m for m in t.types if not isinstance(_unwrap(m), mi.RawType)]
            return st.one_of([value_of(m) for m in members])
        case mi.StructType():
            return struct_of(t)
        case mi.RawType() | mi.AnyType():
            return st.just({"any": [1, 2]})
        case mi.DictType():
            return st.just({})
    raise AssertionError(f"no generator for {t}")


def struct_of(t: mi.StructType) -> st.SearchStrategy[dict[str, Any]]:
    fields = [f for f in t.fields if not isinstance(_unwrap(f.type), mi.RawType)]
    required = {f.encode_name: value_of(f.type) for f in fields if f.required}
    optional = {f.encode_name: value_of(f.type) for f in fields if not f.required}
    base = st.fixed_dictionaries(required, optional=optional)
    if t.tag_field is not None and t.tag is not None:
        return base.map(lambda d: {t.tag_field: t.tag, **d})
    return base


def leaves(value: Any, t: mi.Type, path: str = "") -> list[tuple[str, mi.Type, Any, Any]]:
    """Every (path, type, container, key) in a generated value, for mutation."""
    out: list[tuple[str, mi.Type, Any, Any]] = []
    t = _unwrap(t)
    if isinstance(t, mi.UnionType):
        for member in t.types:
            m = _unwrap(member)
            if value is None and isinstance(m, mi.NoneType):
                return out
            if isinstance(m, mi.StructType) and isinstance(value, dict):
                return leaves(value, m, path)
            if isinstance(m, mi.ListType) and isinstance(value, list):
                return leaves(value, m, path)
        return out
    if isinstance(t, mi.StructType) and isinstance(value, dict):
        for f in t.fields:
            sub = f"{path}.{f.encode_name}" if path else f.encode_name
            out.append((sub, f.type, value, f.encode_name))
            if f.encode_name in value:
                out.extend(leaves(value[f.encode_name], f.type, sub))
    elif isinstance(t, mi.ListType) and isinstance(value, list):
        for i, item in enumerate(value):
            sub = f"{path}[{i}]"
            out.extend(leaves(item, t.item_type, sub))
    return out


def _constrained(t: mi.Type) -> mi.Type:
    """The constrained member of an optional field's type."""
    t = _unwrap(t)
    if isinstance(t, mi.UnionType):
        members = [_unwrap(m) for m in t.types if not isinstance(_unwrap(m), mi.NoneType)]
        if len(members) == 1:
            return members[0]
    return t


def breaker(t: mi.Type, present: Any) -> Any | None:
    """A value one past a limit of ``t``, or None when ``t`` has no simple limit."""
    t = _constrained(t)
    match t:
        case mi.StrType(max_length=int(hi)) if hi <= BIG:
            return "a" * (hi + 1)
        case mi.StrType(pattern=str()):
            return "C:\\Users\\x y"  # a path breaks every id pattern
        case mi.IntType(le=int(hi)):
            return hi + 1
        case mi.IntType(ge=int(lo)):
            return lo - 1
        case mi.FloatType(le=hi) if hi is not None:
            return hi * 10 + 1
        case mi.ListType(max_length=int(hi)) if isinstance(present, list) and present:
            return [present[0]] * (hi + 1)
        case mi.LiteralType():
            return "not-a-literal"
        case mi.BoolType():
            return "yes"
    return None


def _described(cls: type) -> mi.StructType:
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    return info


# Read from the frame types once, not on each of the 10,000 draws.
_INFO = {cls: _described(cls) for cls in CLIENT_FRAME_TYPES}
_STRUCTS = {cls: struct_of(info) for cls, info in _INFO.items()}


@st.composite
def frames(draw: st.DrawFn) -> tuple[dict[str, Any], str | None]:
    """A frame and the path broken in it (None: the frame is valid)."""
    cls = draw(st.sampled_from(CLIENT_FRAME_TYPES))
    info = _INFO[cls]
    frame = draw(_STRUCTS[cls])
    if draw(st.booleans()):
        return frame, None
    candidates = []
    for path, t, container, key in leaves(frame, info):
        if key == info.tag_field and container is frame:
            continue
        bad = breaker(t, container.get(key))
        if bad is not None:
            candidates.append((path, container, key, bad))
        if key not in container and isinstance(container, dict):
            candidates.append(
                (
                    path.rsplit(".", 1)[0] + ".zzUnknown" if "." in path else "zzUnknown",
                    container,
                    "zzUnknown",
                    1,
                )
            )
    required = [f for f in info.fields if f.required and f.encode_name != info.tag_field]
    for f in required:
        candidates.append((f.encode_name, frame, f.encode_name, ...))
    if not candidates:
        return frame, None
    path, container, key, bad = draw(st.sampled_from(candidates))
    if bad is ...:
        del container[key]
    else:
        container[key] = bad
    return frame, path


def _has_forbidden(value: Any) -> bool:
    if isinstance(value, str):
        return find_forbidden(value) is not None
    if isinstance(value, dict):
        return any(_has_forbidden(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_forbidden(v) for v in value)
    return False


@pytest.mark.slow
@settings(
    max_examples=examples(10_000),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    database=None,
)
@given(case=frames())
def test_codec_round_trips_valid_frames_and_refuses_one_over_naming_the_field(
    case: tuple[dict[str, Any], str | None],
) -> None:
    frame, broken = case
    raw = json.dumps(frame, ensure_ascii=False).encode()
    try:
        decoded = decode_client_frame(raw)
    except PeerError as exc:
        assert exc.code in CODES, exc.code
        if broken is None and exc.code == "invalid_frame":
            # A declaration of actions is judged beyond its types too (v1.md "Actions":
            # a name declared twice, required naming no property, bounds the wrong way).
            assert all(f.startswith("actions[") for f in exc.fields), exc.fields
        elif broken is None:
            # A valid-by-type frame may still be over a byte budget or carry a
            # forbidden pattern; nothing else may refuse it.
            assert exc.code in {"budget_exceeded", "frame_too_large", "forbidden_content"}, (
                exc.code,
                exc.message,
            )
            assert exc.code != "forbidden_content" or _has_forbidden(frame)
        elif exc.code not in {"budget_exceeded", "frame_too_large"} or broken in exc.fields:
            assert broken in exc.fields, (broken, exc.fields, exc.message)
        return
    assert broken is None, f"{broken} was broken but the frame was accepted: {frame}"
    again = decode_client_frame(msgspec.json.encode(decoded.frame))
    assert again.frame == decoded.frame
