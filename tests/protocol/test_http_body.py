"""The body of POST /v1/http: its shape and DST's quirks, nothing more (v1.md "HTTP transport")."""

from __future__ import annotations

import json

import pytest

from xtyserver.errors import PeerError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.frames import ProfileUpdate, StateUpdate
from xtyserver.protocol.http_body import decode_call, encode_answer

SESSION = "pXz0c2n4b1Yw7lQ9kR3mT8vA6sD5fG2h"


def refused(raw: bytes) -> PeerError:
    with pytest.raises(PeerError) as info:
        decode_call(raw)
    return info.value


def test_a_call_gives_its_session_wait_and_frames_as_json_text() -> None:
    call = decode_call(
        json.dumps({"session": SESSION, "waitMs": 2500, "frames": [{"type": "heartbeat"}]}).encode()
    )
    assert call.session == SESSION and call.wait_ms == 2500
    assert call.frames == ['{"type":"heartbeat"}']
    assert decode_call(b'{"frames":[]}').session is None


def test_dst_escaped_quote_is_a_quote_and_a_real_backslash_stays() -> None:
    raw = rb'{"frames":[{"type":"chat.send","id":"c","source":"text",'
    raw += rb'"text":"Wilson\'s axe \\\\ \\\'x"}]}'
    (frame,) = decode_call(raw).frames
    text = decode_client_frame(frame).frame.text  # type: ignore[union-attr]
    assert text == "Wilson's axe \\\\ \\'x"  # Wilson's axe \\ \'x


def test_empty_table_is_an_empty_list_wherever_a_list_is_expected() -> None:
    raw = (
        b'{"frames":[{"type":"state.update","modelContext":{"player":{"status":{}},'
        b'"nearby":{},"relevantItems":{},"ui":{}}},'
        b'{"type":"profile.update","field":"hobbies","value":{}}]}'
    )
    state, profile = (decode_client_frame(f).frame for f in decode_call(raw).frames)
    assert isinstance(state, StateUpdate) and state.model_context.nearby == []
    assert state.model_context.player is not None and state.model_context.player.status == []
    assert state.model_context.ui is not None  # an object stays an object
    assert isinstance(profile, ProfileUpdate) and profile.value == []
    assert decode_call(b'{"frames":{}}').frames == []


def test_a_non_empty_object_for_a_list_is_still_refused() -> None:
    raw = b'{"frames":[{"type":"state.update","modelContext":{"nearby":{"a":1}}}]}'
    (frame,) = decode_call(raw).frames
    with pytest.raises(PeerError) as info:
        decode_client_frame(frame)
    assert info.value.fields == ("modelContext.nearby",)


@pytest.mark.parametrize(
    ("raw", "code", "fields"),
    [
        (b"{nope", "invalid_json", ()),
        (b'{"frames":[],"frames":[]}', "invalid_json", ("frames",)),
        (b'{"frames":[NaN]}', "invalid_json", ()),
        (b'{"frames":[],"waitMs":25001}', "invalid_frame", ("waitMs",)),
        (b'{"frames":[],"waitMs":-1}', "invalid_frame", ("waitMs",)),
        (b'{"frames":[],"Session":null}', "invalid_frame", ("Session",)),
        (b'{"frames":"x"}', "invalid_frame", ("frames",)),
        (b'{"frames":{"a":1}}', "invalid_frame", ("frames",)),
        (b'{"session":"../../etc","frames":[]}', "invalid_frame", ("session",)),
        (b"[]", "invalid_frame", ("frames",)),
    ],
)
def test_bad_bodies_are_refused_with_a_code_and_fields(
    raw: bytes, code: str, fields: tuple[str, ...]
) -> None:
    err = refused(raw)
    assert err.code == code and tuple(err.fields) == fields


def test_answer_joins_encoded_frames() -> None:
    body = encode_answer(SESSION, [b'{"type":"chat.delta","id":"c","text":"a"}'], None)
    assert json.loads(body) == {
        "session": SESSION,
        "frames": [{"type": "chat.delta", "id": "c", "text": "a"}],
    }
    closed = json.loads(encode_answer(SESSION, [], (4003, "heartbeat timeout")))
    assert closed["closed"] == {"code": 4003, "reason": "heartbeat timeout"}
