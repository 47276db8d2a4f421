"""Duplicate keys are refused on every path of the counting check (protocol/duplicates.py).

The property test builds frames that hit the counting check's blind spots on
purpose: defaults spelled out (``null``, ``"schemaVersion": 1``, ``false``), a
key repeated with ``null`` first or last, strings holding colons and the word
``null``, timestamps whose offset the re-encoding spells differently
(``+0530`` becomes ``+05:30``, ``+00:00`` becomes ``Z``), whitespace around
colons, a whole modelContext overwritten by a second one. Whatever the codec
answers, it must answer what a ``json`` pairs-hook oracle does: refused with
``invalid_json`` naming the key exactly when some object repeats a key.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from tests.property_budget import examples
from xtyserver.errors import FrameError, PeerError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.duplicates import _null_key
from xtyserver.protocol.frames import ClientFrame

_TYPED = msgspec.json.Decoder(ClientFrame)

_TEXT = st.sampled_from(
    ["Farm", "08:10", "a:null", "null", ":null", " :null", "x: null", "spring", "08:10:", "+05:30"]
)
_STAMP = st.sampled_from(
    [
        "2026-11-30T12:00:00Z",
        "2026-11-30T12:00:00+00:00",
        "2026-11-30T12:00:00+0530",
        "2026-11-30T12:00:00+05:30",
        "2026-11-30T12:00:00.5-0800",
        "2026-11-30 12:00:00z",
    ]
)
_SEPARATORS = st.sampled_from([":", ": ", " : ", ":\n"])


def _pairs(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]]) -> list[tuple[str, Any]]:
    """Some of ``fields`` in order, each maybe null, maybe repeated."""
    out: list[tuple[str, Any]] = []
    for name, values in fields.items():
        for _ in range(draw(st.sampled_from([0, 1, 1, 1, 2]))):
            out.append((name, draw(st.none() | values)))
    return out


@st.composite
def _object(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]]) -> str:
    sep = draw(_SEPARATORS)
    pairs = _pairs(draw, fields)
    return "{" + ",".join(f"{json.dumps(k)}{sep}{_value(v)}" for k, v in pairs) + "}"


class _Json(str):
    """Already JSON text (a nested object)."""


def _value(value: Any) -> str:
    return str(value) if isinstance(value, _Json) else json.dumps(value)


def _nested(fields: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    return _object(fields).map(_Json)


_WORLD = {"location": _TEXT, "time": _TEXT, "day": st.integers(0, 99)}
_UI = {"busy": st.booleans(), "menu": _TEXT}
_NEARBY = {"name": _TEXT, "distance": st.integers(0, 9)}


@st.composite
def _context(draw: st.DrawFn) -> str:
    sep = draw(_SEPARATORS)
    pairs: list[tuple[str, Any]] = []
    for _ in range(draw(st.sampled_from([0, 1, 1, 2]))):
        pairs.append(("schemaVersion", draw(st.just(1) | st.none())))
    for _ in range(draw(st.sampled_from([0, 1, 1, 2]))):
        pairs.append(("capturedAt", draw(_STAMP)))
    pairs += _pairs(draw, {"world": _nested(_WORLD), "ui": _nested(_UI)})
    if draw(st.booleans()):
        items = draw(st.lists(_nested(_NEARBY), max_size=3))
        pairs.append(("nearby", _Json("[" + ",".join(items) + "]")))
    return "{" + ",".join(f"{json.dumps(k)}{sep}{_value(v)}" for k, v in pairs) + "}"


@st.composite
def _frame(draw: st.DrawFn) -> bytes:
    # Sometimes a whole modelContext first that the second one overwrites.
    contexts = [draw(_context()) for _ in range(draw(st.sampled_from([1, 1, 2])))]
    body = ",".join('"modelContext":' + context for context in contexts)
    if draw(st.booleans()):
        return ('{"type":"state.update",' + body + "}").encode()
    head = '{"type":"chat.send","id":"c1","text":"hi","source":"text"'
    return (head + ',"context":{' + body + "}}").encode()


class _Duplicate(Exception):
    pass


def _oracle_duplicate(raw: bytes) -> str | None:
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        seen: set[str] = set()
        for name, _ in pairs:
            if name in seen:
                raise _Duplicate(name)
            seen.add(name)
        return dict(pairs)

    try:
        json.loads(raw, object_pairs_hook=hook)
    except _Duplicate as dup:
        return str(dup.args[0])
    return None


@settings(max_examples=examples(1500), deadline=None)
@given(_frame())
# An overwritten whole that random drawing rarely builds.
@example(b'{"type":"state.update","modelContext":{"ui":{"menu":null}},"modelContext":{}}')
def test_codec_refuses_a_repeated_key_exactly_when_json_finds_one(raw: bytes) -> None:
    try:
        _TYPED.decode(raw)
    except msgspec.ValidationError:
        return  # refused on its types before any duplicate check
    duplicate = _oracle_duplicate(raw)
    try:
        decode_client_frame(raw)
    except FrameError as exc:
        if exc.code == "invalid_json":
            assert duplicate is not None, raw
            assert list(exc.fields) == [duplicate]
            return
        assert duplicate is None, raw
        return
    except PeerError:
        assert duplicate is None, raw
        return
    assert duplicate is None, raw


def test_a_repeat_hidden_by_an_offset_the_encoding_spells_longer_is_refused() -> None:
    """``+0530`` re-encodes as ``+05:30``: one colon more, as many as one repeat adds."""
    raw = (
        b'{"type":"state.update","modelContext":{"capturedAt":"2026-11-30T12:00:00+0530",'
        b'"world":{"day":1,"day":1}}}'
    )
    assert _oracle_duplicate(raw) == "day"
    try:
        decode_client_frame(raw)
    except FrameError as exc:
        assert list(exc.fields) == ["day"]
    else:
        raise AssertionError("accepted a repeated key")


def test_a_null_repeated_before_a_value_is_refused_and_a_lone_spelled_null_passes() -> None:
    head = b'{"type":"state.update","modelContext":{"schemaVersion":1,"ui":{'
    for body, refused in [
        (b'"menu":null,"menu":"x"', True),
        (b'"menu":null,"menu":null', True),
        (b'"menu":null,"busy":true', False),
        (b'"menu" : null, "busy" : false', False),
    ]:
        raw = head + body + b"}}}"
        try:
            decode_client_frame(raw)
        except FrameError as exc:
            assert refused and list(exc.fields) == ["menu"], body
        else:
            assert not refused, body


_CTX = '"schemaVersion":1,"capturedAt":"2026-11-30T12:00:00+00:00"'


def _state(ui: str, extra: str = "") -> bytes:
    return (
        '{"type":"state.update","modelContext":{' + _CTX + ',"ui":{' + ui + "}}" + extra + "}"
    ).encode()


@pytest.mark.parametrize(
    "ui",
    [
        '"menu":"a","menu":"b"',
        '"menu":null,"menu":"x"',  # the default first: the typed re-encoding has one key
        '"menu":"x","menu":null',
        '"busy":false,"busy":false',
        '"menu":"a:b","menu":"a:b"',
        '"menu" : "a", "menu" : "b"',
        '"menu":"\\u003a","menu":"x"',  # an escaped colon
    ],
)
def test_duplicates_are_refused_naming_the_key(ui: str) -> None:
    with pytest.raises(FrameError) as info:
        decode_client_frame(_state(ui))
    assert info.value.code == "invalid_json"
    assert list(info.value.fields) in (["menu"], ["busy"])


def test_a_duplicate_top_level_key_is_refused() -> None:
    raw = _state('"menu":"a"', ',"id":"s1","id":"s2"')
    with pytest.raises(FrameError):
        decode_client_frame(raw)


def test_a_duplicate_inside_the_opaque_observation_is_refused() -> None:
    frame = {
        "type": "chat.send",
        "id": "c1",
        "text": "hi",
        "source": "text",
        "context": {"observation": {"a": 1}},
    }
    raw = json.dumps(frame).replace('{"a": 1}', '{"a": 1, "a": 2}').encode()
    with pytest.raises(FrameError) as info:
        decode_client_frame(raw)
    assert list(info.value.fields) == ["a"]


@pytest.mark.parametrize(
    "ui",
    ['"menu":null,"busy":false', '"menu":"a:b"', '"menu":":x"', '"menu":"\\u003a"', '"menu" : "a"'],
)
def test_frames_without_duplicates_pass(ui: str) -> None:
    decode_client_frame(_state(ui))


def _chat_with_image(data: str, extra: str = "") -> bytes:
    return (
        '{"type":"chat.send","id":"c1","text":"hi","source":"text"'
        ',"image":{"mime":"image/jpeg","data":"' + data + '"' + extra + "}}"
    ).encode()


@pytest.mark.parametrize("data", ["/9j/4AAQ", "/9j/:4AAQ", "a:b:c:d"])
def test_a_duplicate_next_to_a_screenshot_is_refused(data: str) -> None:
    # The first count leaves the image data out (base64 has no colon); data that
    # has one must not let a duplicate through.
    with pytest.raises(FrameError) as info:
        decode_client_frame(_chat_with_image(data, ',"mime":"image/png"'))
    assert list(info.value.fields) == ["mime"]


@pytest.mark.parametrize("data", ["/9j/4AAQ", "/9j/:4AAQ"])
def test_a_screenshot_frame_without_duplicates_passes(data: str) -> None:
    decoded = decode_client_frame(_chat_with_image(data))
    assert decoded.frame.image is not None  # type: ignore[union-attr]
    assert decoded.frame.image.data == data  # type: ignore[union-attr]


_LONG = "/9j/" + "A" * 200_000


@pytest.mark.parametrize("data", [_LONG, _LONG + ":", ":" + _LONG, _LONG[:1000] + ":" + _LONG])
@pytest.mark.parametrize("spacing", ["", " "])
def test_a_duplicate_beside_a_long_screenshot_is_refused(data: str, spacing: str) -> None:
    # The colons of a long screenshot's span are not counted one by one: a
    # colon inside it, or a key spelled twice beside it, must still tell.
    raw = _chat_with_image(data, ',"mime":"image/png"').replace(
        b'"data":"', f'"data":{spacing}"'.encode()
    )
    with pytest.raises(FrameError) as info:
        decode_client_frame(raw)
    assert list(info.value.fields) == ["mime"]
    assert decode_client_frame(_chat_with_image(data)).frame.image.data == data  # type: ignore[union-attr]


def test_a_repeated_data_key_before_a_long_screenshot_is_refused() -> None:
    # The span left out of the count starts at the first "data" key: here a
    # short one, so the span runs over the repeated keys after it, whose
    # colons it would hide were it not checked for colons.
    raw = (
        '{"type":"chat.send","id":"c1","text":"hi","source":"text","image":'
        '{"mime":"image/jpeg","data":"x","mime":"image/jpeg","data":"' + _LONG + '"}}'
    ).encode()
    with pytest.raises(FrameError) as info:
        decode_client_frame(raw)
    assert list(info.value.fields) == ["mime"]


def _null_key_by_slicing(raw: bytes, at: int) -> bytes | None:
    """The null's key as the counting step first read it: strip, slice, search."""
    head = raw[max(0, at - 128) : at].rstrip(b" \t\n\r")
    if not head.endswith(b":"):
        return None
    head = head[:-1].rstrip(b" \t\n\r")
    opening = head.rfind(b'"', 0, -1) if head.endswith(b'"') else -1
    name = head[opening:]
    return name if opening >= 0 and name[1:-1].isalpha() else b""


_BEFORE_NULL = st.lists(
    st.sampled_from(['"', ":", " ", "\t", "menu", "a1", "x", "[", ",", "{", "é", "m" * 130]),
    max_size=8,
).map("".join)


@settings(max_examples=examples(3000), deadline=None)
@given(_BEFORE_NULL, st.sampled_from(['"menu"', '"a1"', '"', ""]))
@example('"ui": {"busy": false, "menu": ', "")
@example('"ui":{"menu":', "")
@example('{"x1": ', "")
@example('"' + "m" * 130 + '": ', "")
@example(":", "")
@example("", '": ')  # a null at the very start: no key before it
def test_the_null_key_shortcut_reads_every_spelling_as_slicing_does(
    before: str, after: str
) -> None:
    """``"menu": null`` and ``"menu":null`` are read without slicing; every spelling alike."""
    raw = f"{before}null{after}".encode()
    at = len(before.encode())
    assert _null_key(raw, at) == _null_key_by_slicing(raw, at), raw
