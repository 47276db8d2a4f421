"""A live server under malformed frames while a good client keeps chatting.

One real server (real store file, scripted model over loopback) runs for the whole module
in a background event loop. A hostile adapter throws hypothesis-generated malformed frames
at it over a raw synchronous WebSocket client: lone surrogate escapes, 10,000- and
100,000-deep nesting, integers with thousands of digits, NaN/Infinity, duplicate keys,
non-object top levels, trailing garbage, wrong types, random text and random binary
frames. Each must be answered by exactly one ``error`` frame, except invalid UTF-8 in a
text frame, which the WebSocket layer must fail with close code 1007. Meanwhile a good
adapter on another connection keeps chatting and every one of its turns must be served.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from anyio.streams.memory import MemoryObjectSendStream
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import ClientConnection, connect

from tests.conftest import Harness, chat, hello_frame, running
from xtyserver.protocol.codec import DECODE_ERROR_CODES

OVERRIDES: dict[str, Any] = {
    # The harness's ManualClock never refills the rate-limit buckets; rate limits have
    # their own tests. Here every frame must reach the decoder.
    "server.frame_burst": 1_000_000,
    "server.chat_burst": 1_000_000,
    # Heartbeat deadlines run on real time; this test is not about them.
    "server.heartbeat_ms": 600_000,
    "memory.extraction": False,
}

ERROR_CODES = DECODE_ERROR_CODES | frozenset(
    {
        "binary_not_supported",
        # A memory.forget eventId beyond SQLite's 64-bit range passes the decoder and is
        # refused by the store.
        "invalid_memory",
    }
)
"""Codes a malformed frame may be refused with (v1.md "Error codes")."""

CLOSE_INVALID_DATA = 1007
CAPTURED = "2026-09-21T08:00:00Z"


# -- the good client ------------------------------------------------------------------------


class GoodClient:
    """A well-behaved adapter that chats whenever it is nudged, recording every outcome."""

    def __init__(self) -> None:
        self.served = 0
        self.failures: list[object] = []
        self._send: MemoryObjectSendStream[anyio.Event | None] | None = None

    async def run(self, h: Harness, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        send, receive = anyio.create_memory_object_stream[anyio.Event | None](1)
        self._send = send
        async with h.adapter(save="good-farm") as ws, receive:
            task_status.started()
            turn = 0
            async for finished in receive:
                turn += 1
                try:
                    deltas, last = await chat(
                        ws, f"今天鱼塘怎么样？第{turn}次", chat_id=f"good-{turn}"
                    )
                except Exception as exc:  # recorded, then asserted by the tests
                    self.failures.append(repr(exc))
                else:
                    if (
                        last["type"] == "chat.done"
                        and "".join(d["text"] for d in deltas) == last["text"]
                    ):
                        self.served += 1
                    else:
                        self.failures.append(last)
                if finished is not None:
                    finished.set()

    def nudge(self) -> None:
        """Ask for one more chat unless one is already pending (runs in the server's loop)."""
        assert self._send is not None
        with contextlib.suppress(anyio.WouldBlock):
            self._send.send_nowait(None)

    async def chat_now(self) -> None:
        """Chat once more and wait until that turn has finished."""
        assert self._send is not None
        finished = anyio.Event()
        with anyio.fail_after(30):
            await self._send.send(finished)
            await finished.wait()

    async def stop(self) -> None:
        assert self._send is not None
        await self._send.aclose()


@dataclass
class Live:
    url: str
    portal: BlockingPortal
    good: GoodClient

    def assert_good_client_still_served(self, served_before: int) -> None:
        self.portal.call(self.good.chat_now)
        assert self.good.failures == []
        assert self.good.served > served_before


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    data_dir: Path = tmp_path_factory.mktemp("malformed")
    with (
        start_blocking_portal(backend="asyncio") as portal,
        portal.wrap_async_context_manager(running(data_dir, overrides=OVERRIDES)) as h,
    ):
        good = GoodClient()
        future, _ = portal.start_task(good.run, h)
        try:
            yield Live(h.url, portal, good)
        finally:
            portal.call(good.stop)
            future.result(timeout=10)


# -- the hostile client ---------------------------------------------------------------------


@contextlib.contextmanager
def adapter(url: str, save: str) -> Iterator[ClientConnection]:
    """A raw synchronous connection that has said hello."""
    with connect(url, max_size=None, open_timeout=10) as ws:
        ws.send(json.dumps(hello_frame(save=save)))
        answer = json.loads(ws.recv(timeout=10))
        assert answer["type"] == "server.hello", answer
        yield ws


class Hostile:
    """A hello'd raw connection that sends whatever it is given and collects the answers.

    When the server drops the connection (it never should) the failure is reported
    and the next frame goes out on a fresh connection, so one failure stays one failure.
    """

    def __init__(self, url: str) -> None:
        self._url = url
        self._stack: contextlib.ExitStack | None = None
        self._ws: ClientConnection | None = None
        self._sent = 0

    def answers(self, payload: str | bytes, *, text: bool) -> list[dict[str, Any]]:
        """Send one frame; return every frame the server sent back for it.

        A ``chat.cancel`` for an unknown id follows the payload; its ``unknown_chat``
        error marks the end of the answers to the payload.
        """
        if self._ws is None:
            self._stack = contextlib.ExitStack()
            self._ws = self._stack.enter_context(adapter(self._url, "hostile-farm"))
        self._sent += 1
        marker = f"sync-{self._sent}"
        frames: list[dict[str, Any]] = []
        try:
            self._ws.send(payload, text=text)
            self._ws.send(json.dumps({"type": "chat.cancel", "id": marker}))
            while True:
                frame = json.loads(self._ws.recv(timeout=15))
                if frame.get("id") == marker and frame.get("code") == "unknown_chat":
                    return frames
                frames.append(frame)
        except ConnectionClosed as exc:
            self.close()
            raise AssertionError(f"server dropped the connection: {exc}; got {frames}") from None

    def close(self) -> None:
        if self._stack is not None:
            self._stack.close()
        self._stack = self._ws = None


@pytest.fixture(scope="module")
def hostile(live: Live) -> Iterator[Hostile]:
    client = Hostile(live.url)
    yield client
    client.close()


# -- malformed frames -----------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One malformed frame: what to send, as text or binary, and the id the error must echo."""

    label: str
    payload: str | bytes
    text: bool = True
    echo_id: str | None = None


def _chat_send(**extra: Any) -> dict[str, Any]:
    return {"type": "chat.send", "id": "bad-chat", "text": "你好", "source": "text", **extra}


def _state_update(**parts: Any) -> dict[str, Any]:
    return {
        "type": "state.update",
        "modelContext": {"schemaVersion": 1, "capturedAt": CAPTURED, **parts},
    }


VALID_FRAMES: list[dict[str, Any]] = [
    {"type": "heartbeat", "id": "hb"},
    {"type": "stats.get", "id": "st"},
    _chat_send(),
    _state_update(
        world={"location": "Farm", "day": 3},
        player={"health": 80, "status": ["tired"]},
        nearby=[{"kind": "npc", "name": "Abigail", "distance": 2.5}],
        ui={"busy": False},
    ),
    {"type": "profile.update", "field": "nickname", "value": "阿汤"},
]

# Slots where a raw JSON fragment replaces a value: "@" marks the spot.
VALUE_SLOTS = [
    "@",
    '{"type":"heartbeat","id":@}',
    '{"type":"chat.send","id":"c","text":@,"source":"text"}',
    '{"type":"chat.send","id":"c","text":"x","source":"text","context":{"observation":@}}',
    '{"type":"state.update","modelContext":{"schemaVersion":1,"capturedAt":"' + CAPTURED + '",'
    '"world":{"day":@}}}',
    '{"type":"state.update","modelContext":{"schemaVersion":1,"capturedAt":"' + CAPTURED + '",'
    '"player":{"health":@}}}',
    '{"type":"memory.forget","target":"event","confirm":true,"eventId":@}',
    '{"type":"profile.update","field":"notes","value":@}',
]
STRING_SLOTS = [
    '{"type":"chat.send","id":"c","text":"@","source":"text"}',
    '{"type":"chat.send","id":"@","text":"x","source":"text"}',
    '{"type":"heartbeat","id":"@"}',
    '{"type":"@"}',
    '{"type":"heartbeat","@":1}',
    '{"type":"state.update","modelContext":{"schemaVersion":1,"capturedAt":"' + CAPTURED + '",'
    '"world":{"location":"@"}}}',
    '{"type":"profile.update","field":"nickname","value":"@"}',
]


def _fill(slot: str, fragment: str) -> str:
    return slot.replace("@", fragment, 1)


_ascii = st.text(alphabet="abcxyz 0189", max_size=8)


@st.composite
def lone_surrogates(draw: st.DrawFn) -> Case:
    code = draw(st.integers(0xD800, 0xDFFF))
    # Letters after the escape: a high surrogate is never followed by its low half.
    fragment = draw(_ascii) + f"\\u{code:04x}" + draw(_ascii)
    return Case("lone surrogate", _fill(draw(st.sampled_from(STRING_SLOTS)), fragment))


@st.composite
def deep_nesting(draw: st.DrawFn) -> Case:
    depth = draw(st.sampled_from([10_000, 100_000]))
    opener, closer = draw(st.sampled_from([("[", "]"), ('{"a":', "}")]))
    inner = opener * depth + (closer * depth if draw(st.booleans()) else "")
    return Case(f"{depth}-deep nesting", _fill(draw(st.sampled_from(VALUE_SLOTS)), inner))


@st.composite
def huge_integers(draw: st.DrawFn) -> Case:
    digits = draw(st.integers(1_000, 10_000))
    number = draw(st.sampled_from(["", "-"])) + draw(st.sampled_from("123456789")) + "7" * digits
    # The legacy observation is opaque JSON; a big number there is not malformed.
    slots = [s for s in VALUE_SLOTS if "observation" not in s and "profile.update" not in s]
    return Case(f"{digits}-digit integer", _fill(draw(st.sampled_from(slots)), number))


@st.composite
def non_finite_numbers(draw: st.DrawFn) -> Case:
    literal = draw(
        st.sampled_from(["NaN", "Infinity", "-Infinity", "-NaN", "+1", ".5", "01", "1."])
    )
    return Case(f"number {literal}", _fill(draw(st.sampled_from(VALUE_SLOTS)), literal))


def _dumps_with_duplicate(value: Any, target: tuple[str, ...], extra: Any) -> str:
    """JSON for ``value`` where the key at path ``target`` appears twice (second: ``extra``)."""
    if isinstance(value, dict):
        parts = []
        for key, item in value.items():
            if target and key == target[0]:
                parts.append(f"{json.dumps(key)}:{_dumps_with_duplicate(item, target[1:], extra)}")
                if len(target) == 1:
                    parts.append(f"{json.dumps(key)}:{json.dumps(extra, ensure_ascii=False)}")
            else:
                parts.append(f"{json.dumps(key)}:{json.dumps(item, ensure_ascii=False)}")
        return "{" + ",".join(parts) + "}"
    return json.dumps(value, ensure_ascii=False)


def _key_paths(value: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    if not isinstance(value, dict):
        return []
    return [
        path
        for key, item in value.items()
        for path in [(*prefix, key), *_key_paths(item, (*prefix, key))]
    ]


@st.composite
def duplicate_keys(draw: st.DrawFn) -> Case:
    frame = draw(st.sampled_from(VALID_FRAMES))
    path = draw(st.sampled_from(_key_paths(frame)))
    original = frame
    for key in path:
        original = original[key]
    again = draw(st.sampled_from([original, "other", 1, None]))
    return Case(f"duplicate key {'.'.join(path)}", _dumps_with_duplicate(frame, path, again))


_json_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
_json_values = st.recursive(
    _json_scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


@st.composite
def non_object_top_level(draw: st.DrawFn) -> Case:
    value = draw(_json_scalars | st.lists(_json_values, max_size=4))
    return Case("non-object top level", json.dumps(value, ensure_ascii=False))


@st.composite
def trailing_garbage(draw: st.DrawFn) -> Case:
    frame = json.dumps(draw(st.sampled_from(VALID_FRAMES)), ensure_ascii=False)
    garbage = draw(
        st.sampled_from(["x", ",", "}", "]", "{}", frame, "\x00", "// note"])
        | st.text(min_size=1, max_size=30).filter(lambda s: s.strip(" \t\r\n") != "")
    )
    # JSON whitespace before the garbage is allowed; the garbage itself is not.
    return Case("trailing garbage", frame + draw(st.sampled_from(["", " ", "\n"])) + garbage)


_KIND_VALUES: dict[str, st.SearchStrategy[Any]] = {
    "str": st.text(max_size=10),
    "int": st.integers(-5, 5),
    "float": st.sampled_from([0.5, -1.25, 3.75]),
    "bool": st.booleans(),
    "null": st.none(),
    "list": st.lists(st.integers(0, 9), max_size=3),
    "obj": st.dictionaries(st.sampled_from(["a", "b"]), st.integers(0, 9), max_size=2),
}
# (frame, path of one field, the JSON kinds that field accepts)
TYPED_FIELDS: list[tuple[dict[str, Any], tuple[str, ...], frozenset[str]]] = [
    (_chat_send(), ("text",), frozenset({"str"})),
    (_chat_send(), ("source",), frozenset({"str"})),
    (_chat_send(), ("image",), frozenset({"obj", "null"})),
    (_chat_send(), ("context",), frozenset({"obj", "null"})),
    (_state_update(), ("modelContext",), frozenset({"obj"})),
    # Both optional (v1.md "modelContext"): null means "not given".
    (_state_update(), ("modelContext", "capturedAt"), frozenset({"str", "null"})),
    (_state_update(), ("modelContext", "schemaVersion"), frozenset({"int", "null"})),
    (_state_update(world={"day": 1}), ("modelContext", "world", "day"), frozenset({"int", "null"})),
    (
        _state_update(player={"health": 1}),
        ("modelContext", "player", "health"),
        frozenset({"int", "float", "null"}),
    ),
    (_state_update(player={}), ("modelContext", "player", "status"), frozenset({"list", "null"})),
    (_state_update(), ("modelContext", "nearby"), frozenset({"list", "null"})),
    (_state_update(focus={}), ("modelContext", "focus", "reachable"), frozenset({"bool", "null"})),
    (
        {"type": "memory.forget", "target": "all", "confirmToken": "t"},
        ("confirmToken",),
        frozenset({"str", "null"}),
    ),
    (
        {"type": "memory.forget", "target": "item", "eventId": 1},
        ("eventId",),
        frozenset({"int", "null"}),
    ),
    ({"type": "chat.cancel", "id": "x"}, ("id",), frozenset({"str"})),
    ({"type": "profile.update", "field": "notes", "value": "x"}, ("field",), frozenset({"str"})),
    ({"type": "heartbeat"}, ("id",), frozenset({"str", "null"})),
]


@st.composite
def wrong_types(draw: st.DrawFn) -> Case:
    base, path, accepted = draw(st.sampled_from(TYPED_FIELDS))
    kind = draw(st.sampled_from(sorted(set(_KIND_VALUES) - accepted)))
    frame = json.loads(json.dumps(base))
    target = frame
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = draw(_KIND_VALUES[kind])
    echo = None
    if path != ("id",):
        echo = f"wrong-{draw(st.integers(0, 999))}"
        frame["id"] = echo
    return Case(f"{kind} for {'.'.join(path)}", json.dumps(frame, ensure_ascii=False), echo_id=echo)


random_text = st.builds(lambda s: Case("random text", s), st.text(max_size=200))
random_binary = st.builds(lambda b: Case("random binary", b, text=False), st.binary(max_size=300))

MALFORMED = st.one_of(
    lone_surrogates(),
    deep_nesting(),
    huge_integers(),
    non_finite_numbers(),
    duplicate_keys(),
    non_object_top_level(),
    trailing_garbage(),
    wrong_types(),
    random_text,
    random_binary,
)

# The named cases of bad input, always run on top of the generated ones.
NAMED_CASES = [
    Case("lone surrogate", '{"type":"chat.send","id":"c","text":"\\ud800","source":"text"}'),
    Case("10,000-deep arrays", "[" * 10_000 + "]" * 10_000),
    Case("100,000-deep objects", '{"a":' * 100_000 + "1" + "}" * 100_000),
    Case("100,000-deep observation", _fill(VALUE_SLOTS[3], "[" * 100_000 + "]" * 100_000)),
    Case("5,000-digit integer", _fill(VALUE_SLOTS[4], "9" * 5_000)),
    Case("NaN", _fill(VALUE_SLOTS[5], "NaN")),
    Case("Infinity", _fill(VALUE_SLOTS[5], "Infinity")),
    Case("duplicate type", '{"type":"heartbeat","type":"stats.get"}'),
    Case("array top level", '[{"type":"heartbeat"}]'),
    Case("trailing garbage", '{"type":"heartbeat"}x'),
    Case("binary frame", b'{"type":"heartbeat"}', text=False),
]


def _with_named_examples(test: Any) -> Any:
    for case in NAMED_CASES:
        test = example(case=case)(test)
    return test


def test_server_answers_each_malformed_frame_with_one_error_frame_while_good_client_chats(
    live: Live, hostile: Hostile
) -> None:
    served_before = live.good.served

    @settings(
        max_examples=150,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @_with_named_examples
    @given(case=MALFORMED)
    def throw(case: Case) -> None:
        live.portal.call(live.good.nudge)
        answers = hostile.answers(case.payload, text=case.text)
        assert len(answers) == 1, (case.label, answers)
        error = answers[0]
        assert error["type"] == "error", (case.label, error)
        assert error["code"] in ERROR_CODES, (case.label, error)
        assert isinstance(error["message"], str) and error["message"], (case.label, error)
        if case.echo_id is not None:
            assert error.get("id") == case.echo_id, (case.label, error)

    throw()
    live.assert_good_client_still_served(served_before)


# -- invalid UTF-8: the WebSocket layer fails the connection -------------------------------

INVALID_SEQUENCES = [
    b"\xff",
    b"\xfe\xfe",
    b"\xc0\xaf",  # overlong "/"
    b"\xe0\x80\xaf",  # overlong, three bytes
    b"\xed\xa0\x80",  # a UTF-16 surrogate encoded as UTF-8
    b"\xf4\x90\x80\x80",  # beyond U+10FFFF
    b"\x80",  # a lone continuation byte
    b"\xe4\xb8",  # a truncated sequence
]


def _is_utf8(data: bytes) -> bool:
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@st.composite
def invalid_utf8_frames(draw: st.DrawFn) -> bytes:
    frame = json.dumps(draw(st.sampled_from(VALID_FRAMES)), ensure_ascii=False).encode()
    at = draw(st.integers(0, len(frame)))
    bad = draw(st.sampled_from(INVALID_SEQUENCES))
    return frame[:at] + bad + frame[at:]


def test_server_fails_connection_with_1007_on_invalid_utf8_and_stays_up(live: Live) -> None:
    served_before = live.good.served

    @settings(max_examples=20, deadline=None, database=None)
    @example(payload=b'{"type":"chat.send","id":"c","text":"\xed\xa0\x80","source":"text"}')
    @given(payload=invalid_utf8_frames().filter(lambda b: not _is_utf8(b)))
    def throw(payload: bytes) -> None:
        live.portal.call(live.good.nudge)
        # A fresh connection each time also proves the server is still up.
        with adapter(live.url, "utf8-farm") as ws:
            ws.send(payload, text=True)
            with pytest.raises(ConnectionClosed) as closed:
                frame = ws.recv(timeout=15)
                pytest.fail(f"expected close 1007, got a frame: {frame!r}")
        assert closed.value.rcvd is not None, "closed without a close frame"
        assert closed.value.rcvd.code == CLOSE_INVALID_DATA, closed.value.rcvd

    throw()
    live.assert_good_client_still_served(served_before)
