"""Duplicate keys are refused on every path of the counting check (codec._no_duplicates)."""

from __future__ import annotations

import json

import pytest

from xtyserver.errors import FrameError
from xtyserver.protocol.codec import decode_client_frame

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
