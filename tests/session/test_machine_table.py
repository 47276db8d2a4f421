"""The session's table: every (state, event) pair is a row, or answered with the protocol's error.

Pure: generated events of every kind, fed to a session in each state, never make
it raise. A frame a state has no row for gets one ``error`` frame with the
state's code and changes nothing; any other event without a row changes nothing
and answers nothing; a closed session answers nothing at all. A row leads only
where it says (or to ``CLOSED``).
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.protocol.test_frames_property import _STRUCTS
from tests.session.test_machine import (
    FARM_A,
    T0,
    _prepared,
    chat_send,
    hello,
    make_session,
    sent,
    state_of,
)
from xtyserver import errors
from xtyserver.memory.manage import ForgetPreview, ForgetResult, ForgetSpec, Overview
from xtyserver.memory.types import PlayStats, SharedProfile
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.frames import CLIENT_FRAME_TYPES, Error
from xtyserver.session.events import (
    CommandsDone,
    Connected,
    Disconnected,
    Event,
    FrameIn,
    FrameRefused,
    ImageReady,
    ImageRefused,
    ModelDelta,
    ModelDone,
    ModelFailed,
    PairingAnswered,
    SaveMemory,
    SeatAnswered,
    SpeechReady,
    StatsLoaded,
    StoreFailed,
    TimerFired,
    ToolAnswered,
    TurnMemoryReady,
    VoiceFailed,
    VoiceHeard,
    WorkingFolded,
    WorkingResumed,
)
from xtyserver.session.machine import (
    NOT_ACCEPTED,
    TRANSITIONS,
    GameAgentSession,
    State,
    _row,
)
from xtyserver.session.tools import ToolCall, ToolFailure

TURNS = st.integers(0, 3)  # the turn in flight is 1; others are stale or never were
REQUESTS = st.integers(0, 3)
SPEC = ForgetSpec(kind="save", game_id=FARM_A.game_id, save_id=FARM_A.save_id)


@st.composite
def frames_in(draw: st.DrawFn) -> FrameIn | FrameRefused:
    """A generated client frame of any type, as the codec hands it to the session."""
    fields = draw(_STRUCTS[draw(st.sampled_from(CLIENT_FRAME_TYPES))])
    try:
        return FrameIn(decode_client_frame(json.dumps(fields, ensure_ascii=False)))
    except errors.PeerError as error:
        return FrameRefused(error)


def _refusal(turn: int) -> ImageRefused:
    return ImageRefused(turn, errors.PeerError("image refused", code="image_invalid"))


# Each kind of event with what it may carry (FrameIn: a frame of any client type).
KINDS: dict[type[Any], st.SearchStrategy[Event]] = {
    FrameIn: frames_in(),
    FrameRefused: st.builds(lambda: FrameRefused(errors.FrameError("bad", fields=["text"]))),
    Connected: st.just(Connected()),
    Disconnected: st.just(Disconnected()),
    TimerFired: st.builds(TimerFired, st.sampled_from(["hello", "heartbeat", "voice"])),
    SeatAnswered: st.builds(SeatAnswered, st.booleans()),
    PairingAnswered: st.builds(
        PairingAnswered,
        st.sampled_from(["pending", "busy", "refused", "granted", "denied", "expired"]),
        code=st.just("123456"),
        key=st.just("k" * 32),
    ),
    TurnMemoryReady: st.builds(
        TurnMemoryReady,
        TURNS,
        st.sampled_from([None, SaveMemory(None, None)]),
        spent=st.sampled_from([None, 0, 10**12]),
    ),
    ImageReady: st.builds(ImageReady, TURNS, st.just(_prepared())),
    ImageRefused: st.builds(_refusal, TURNS),
    ModelDelta: st.builds(ModelDelta, TURNS, st.sampled_from(["", "好"])),
    ModelDone: st.builds(
        ModelDone,
        TURNS,
        st.sampled_from(["", "好的"]),
        tool_calls=st.sampled_from([(), (ToolCall("t1", "memory_view", "{}"),)]),
    ),
    ToolAnswered: st.builds(
        ToolAnswered, TURNS, st.just("t1"), st.just(ToolFailure("store_busy", "busy"))
    ),
    ModelFailed: st.builds(ModelFailed, TURNS, st.sampled_from(["model_error", "x"])),
    StatsLoaded: st.builds(StatsLoaded, REQUESTS, st.just(PlayStats([], []))),
    CommandsDone: st.builds(
        CommandsDone,
        REQUESTS,
        st.sampled_from(
            [
                (Overview(profile=SharedProfile(), saves=(), stats=PlayStats([], [])),),
                (False, Overview(profile=SharedProfile(), saves=(), stats=PlayStats([], []))),
                (ForgetPreview(spec=SPEC, saves=(), profile_fields=(), stats_saves=()),),
                (ForgetResult(items=1, profile_cleared=False, stats_saves=0),),
            ]
        ),
    ),
    StoreFailed: st.builds(StoreFailed, REQUESTS, st.just("store_busy"), st.just("busy")),
    WorkingFolded: st.builds(WorkingFolded, st.integers(0, 2), st.none()),
    WorkingResumed: st.builds(WorkingResumed, st.just(FARM_A), st.none()),
    VoiceHeard: st.builds(
        VoiceHeard, st.sampled_from(["v1", "c1"]), st.sampled_from(["", "好"]), st.booleans()
    ),
    VoiceFailed: st.builds(
        VoiceFailed, st.sampled_from(["v1", "c1"]), st.sampled_from(["device_lost", "x"])
    ),
    SpeechReady: st.builds(
        SpeechReady, st.just("c1"), st.just(0), st.just("好。"), st.just(16000), st.just(b"\0\0")
    ),
}
EVENTS = st.one_of(list(KINDS.values()))


def _leaves(kind: type[Event]) -> set[type[Event]]:
    subs = kind.__subclasses__()
    return set().union(*map(_leaves, subs)) if subs else {kind}


def test_the_generated_events_cover_every_kind_of_event() -> None:
    # A new event type must be added to KINDS (and to the table, or be ignored on purpose).
    assert _leaves(Event) <= set(KINDS)


def session_in(state: State) -> GameAgentSession:
    """A session brought to ``state`` by the frames a mod sends."""
    session = make_session(memory=False)
    session.handle(Connected(), T0)
    if state is not State.AWAIT_HELLO:
        session.handle(hello(), T0)
    if state is State.TURN:
        session.handle(chat_send(), T0)  # turn 1, its model call under way
    if state is State.CLOSED:
        session.handle(Disconnected(), T0)
    assert state_of(session) is state
    return session


@given(st.sampled_from(list(State)), st.lists(EVENTS, min_size=1, max_size=12))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_every_state_and_event_is_a_row_or_answered_with_the_protocols_error(
    start: State, events: list[Event]
) -> None:
    session = session_in(start)
    for step, event in enumerate(events):
        before = state_of(session)
        # One frame a second: the rate limits, tested elsewhere, stay out of the way.
        effects = session.handle(event, T0 + step + 1)
        after = state_of(session)
        if before is State.CLOSED:
            assert effects == [] and after is State.CLOSED
            continue
        kind = type(event.decoded.frame) if isinstance(event, FrameIn) else type(event)
        row = _row(before, kind)
        if row is None and isinstance(event, FrameIn):
            code, _ = NOT_ACCEPTED[before]
            errors_sent = [f for f in sent(effects) if isinstance(f, Error)]
            assert [e.code for e in errors_sent] == [code], (before, kind)
            assert after is before
        elif row is None:
            assert effects == [] and after is before, (before, kind)
        else:
            assert after in (before, row.then, State.CLOSED), (before, kind, after)


def test_each_state_has_a_row_or_a_refusal_for_every_client_frame() -> None:
    for state in (State.AWAIT_HELLO, State.READY, State.TURN):
        missing = [k for k in CLIENT_FRAME_TYPES if _row(state, k) is None]
        assert state in NOT_ACCEPTED or not missing
    assert TRANSITIONS[State.CLOSED] == {}
    # What each state accepts, as v1.md "States" lists it.
    assert [k.__name__ for k in CLIENT_FRAME_TYPES if _row(State.AWAIT_HELLO, k)] == [
        "Hello",
        "AdapterPair",
    ]


def test_adapter_pair_after_the_hello_is_answered_already_hello() -> None:
    session = session_in(State.READY)
    pair = {
        "type": "adapter.pair",
        "id": "p1",
        "adapter": {"name": "xty-dst", "version": "0.1.0"},
        "gameId": "dont-starve-together",
    }
    effects = session.handle(FrameIn(decode_client_frame(json.dumps(pair))), T0 + 1)
    [error] = sent(effects)
    assert isinstance(error, Error) and (error.code, error.id) == ("already_hello", "p1")
    assert state_of(session) is State.READY
