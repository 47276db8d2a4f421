"""Text messages received as bytes: UTF-8 checked in slices, binary told apart (issue 22).

The server takes each WebSocket message as bytes (``recv(decode=False)``) and checks
a text message's UTF-8 itself, slice by slice for a large one. What a peer sees must
not change: invalid UTF-8 anywhere is closed with 1007 and websockets' own reason, a
character split between two slices is still one character, a bad JSON frame is
refused at its byte position, and a binary message stays ``binary_not_supported``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed

from tests.conftest import recv, running
from tests.property_budget import examples
from tests.test_malformed_frames import INVALID_SEQUENCES, _is_utf8
from xtyserver.serve.connection import THREAD_DECODE_BYTES
from xtyserver.serve.text_frames import CHUNK_BYTES, valid_utf8

pytestmark = pytest.mark.anyio

FISH = "钓鱼".encode()  # two 3-byte characters


# -- the check itself ---------------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None, database=None)
@example(snippet=b"\xe4\xb8", shift=-2, tail=b"a")  # truncated exactly at a slice's end
@example(snippet=FISH, shift=-1, tail=b"")  # a character across two slices
@example(snippet=b"\xed\xa0\x80", shift=-1, tail=b"")  # a surrogate across two slices
@given(
    snippet=st.one_of(st.sampled_from([*INVALID_SEQUENCES, FISH]), st.binary(max_size=8)),
    shift=st.integers(-8, 8),
    tail=st.binary(max_size=4),
)
def test_valid_utf8_agrees_with_bytes_decode_across_slice_boundaries(
    snippet: bytes, shift: int, tail: bytes
) -> None:
    for boundary in (CHUNK_BYTES, 3 * CHUNK_BYTES):
        data = b"A" * (boundary + shift) + snippet + b"B" * 100 + tail
        assert valid_utf8(data) == _is_utf8(data), (boundary, shift, snippet, tail)
    small = b"x" + snippet + tail
    assert valid_utf8(small) == _is_utf8(small)


# -- through a real server socket ---------------------------------------------------------


def _big_chat(head_bytes: int, tail: bytes) -> bytes:
    """A chat.send whose ``text`` starts at byte ``head_bytes`` (image data before it)."""
    head = b'{"type":"chat.send","id":"big","image":{"mime":"image/jpeg","data":"'
    middle = b'"},"text":"'
    padding = head_bytes - len(head) - len(middle)
    assert padding > 0
    return head + b"A" * padding + middle + tail


async def test_large_frame_split_character_decodes_and_bad_json_is_refused_at_its_byte(
    tmp_path: Path,
) -> None:
    # "钓" straddles the first slice boundary; the frame is past the thread-decode size.
    start = CHUNK_BYTES - 1
    body = _big_chat(start, FISH + b'","source":')
    garbage_at = len(body)
    frame = body + b"x}"
    assert len(frame) > THREAD_DECODE_BYTES and _is_utf8(frame)
    unknown = _big_chat(start, FISH + b'","source":"text","x":1}')
    async with running(tmp_path) as h, h.adapter(save="utf8-farm") as ws:
        await ws.send(frame, text=True)
        error = await recv(ws)
        assert error["type"] == "error" and error["code"] == "invalid_json", error
        # A byte position: the two characters before it are six bytes, not two.
        assert f"at byte {garbage_at} " in error["message"], error
        # The split character was one character: with an unknown field instead, the
        # frame is refused by that field's name, nothing about UTF-8.
        await ws.send(unknown, text=True)
        error = await recv(ws)
        assert error["code"] == "invalid_frame" and error.get("fields") == ["x"], error


@pytest.mark.parametrize(
    ("bad", "at"),
    [
        (b"\xff", 3 * CHUNK_BYTES + 5),  # deep in the screenshot's data, past the first slice
        (b"\xe4\xb8", CHUNK_BYTES - 2),  # a sequence cut exactly at a slice's end
        (b"\xed\xa0\x80", CHUNK_BYTES - 1),  # a surrogate across two slices
        (b"\x80", THREAD_DECODE_BYTES + 1000),
    ],
)
async def test_invalid_utf8_anywhere_in_a_large_frame_closes_1007(
    tmp_path: Path, bad: bytes, at: int
) -> None:
    frame = bytearray(_big_chat(4 * CHUNK_BYTES, FISH + b'","source":"text"}'))
    frame[at : at + len(bad)] = bad
    payload = bytes(frame)
    with pytest.raises(UnicodeDecodeError) as expected:
        payload.decode()
    async with running(tmp_path) as h, h.adapter(save="utf8-farm") as ws:
        await ws.send(payload, text=True)
        with pytest.raises(ConnectionClosed) as closed:
            await recv(ws)
        assert closed.value.rcvd is not None
        assert closed.value.rcvd.code == 1007
        # websockets' own reason for its own decoding failure.
        error = expected.value
        assert closed.value.rcvd.reason == f"{error.reason} at position {error.start}"
        async with h.adapter(save="utf8-farm") as again:  # the server is still up
            await again.send(json.dumps({"type": "chat.cancel", "id": "nothing"}))
            assert (await recv(again))["code"] == "unknown_chat"


async def test_binary_and_fragmented_messages_keep_their_kind(tmp_path: Path) -> None:
    cancel = json.dumps({"type": "chat.cancel", "id": "frag"})
    async with running(tmp_path) as h, h.adapter(save="utf8-farm") as ws:
        # Valid JSON in a binary message is still refused, and the connection stays.
        await ws.send(cancel.encode())
        assert (await recv(ws))["code"] == "binary_not_supported"
        # A text message in three fragments is one frame, decoded.
        await ws.send([cancel[:5], cancel[5:20], cancel[20:]])
        answer = await recv(ws)
        assert answer["code"] == "unknown_chat" and answer["id"] == "frag", answer
        # A fragmented binary message is one binary message: one refusal.
        await ws.send([b'{"type":', b'"chat.cancel","id":"frag"}'])
        assert (await recv(ws))["code"] == "binary_not_supported"
        await ws.send(cancel)
        assert (await recv(ws))["code"] == "unknown_chat"
