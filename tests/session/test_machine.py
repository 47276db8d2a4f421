"""Pure tests of GameAgentSession: events in, actions out, no sockets and no clock."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from tests.session.defaults import session_settings
from xtyserver import errors
from xtyserver.memory.accounting import resolve_zone
from xtyserver.memory.commands import Correct, Preview, View
from xtyserver.memory.manage import ForgetSpec, Overview
from xtyserver.memory.retrieval import SaveIndex
from xtyserver.memory.tokens import DailyBudget
from xtyserver.memory.types import MemoryEvent, PlayStats, Scope, SharedProfile
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.frames import (
    ChatDelta,
    ChatDone,
    ChatError,
    Error,
    ServerHello,
    ServerInfo,
    Usage,
)
from xtyserver.protocol.images import PreparedImage
from xtyserver.protocol.limits import Limits
from xtyserver.session.effects import (
    ArmTimer,
    CallModel,
    CancelModel,
    CancelTimer,
    ClaimSeat,
    Close,
    CloseSave,
    Effect,
    LoadStats,
    LoadTurnMemory,
    OpenSave,
    PlayBeat,
    PrepareImage,
    RecordInjection,
    Remember,
    RunCommands,
    Send,
    Summarize,
    TouchMemories,
)
from xtyserver.session.events import (
    CommandsDone,
    Connected,
    Disconnected,
    FrameIn,
    FrameRefused,
    ImageReady,
    ImageRefused,
    ModelDelta,
    ModelDone,
    ModelFailed,
    SaveMemory,
    SeatAnswered,
    StatsLoaded,
    StoreFailed,
    TimerFired,
    TurnMemoryReady,
)
from xtyserver.session.machine import (
    CLOSE_FLOOD,
    CLOSE_HEARTBEAT_TIMEOUT,
    CLOSE_HELLO_TIMEOUT,
    CLOSE_SERVER_FULL,
    CLOSE_UNAUTHORIZED,
    GameAgentSession,
    State,
)
from xtyserver.session.settings import (
    Texts,
)

T0 = 1_790_000_000.0
TOKEN = "session-token-0123456789abcdef"
FARM_A = Scope("stardew-valley", "farm-a")


LIMIT_NAMES = {"frames_per_second", "frame_burst", "chat_per_minute", "chat_burst"}
LIMIT_NAMES |= {"heartbeat_misses"}


def make_session(
    *, model: bool = True, vision: bool = True, authenticated: bool = True, **server: Any
) -> GameAgentSession:
    limits = {k: server.pop(k) for k in list(server) if k in LIMIT_NAMES}
    base = session_settings()
    settings = msgspec.structs.replace(
        base,
        model_configured=model,
        vision=vision,
        server=ServerInfo(name="xtyserver", version="test"),
        limits=msgspec.structs.replace(base.limits, **limits),
        **server,
    )
    session = GameAgentSession(
        session_id="sess-1",
        settings=settings,
        token=TOKEN,
        authenticated=authenticated,
        zone_of=lambda name: resolve_zone(
            name,
            {"China Standard Time": "Asia/Shanghai"},
            known=lambda n: n in ("UTC", "Asia/Shanghai"),
        ),
        now=T0,
    )
    return session


def state_of(session: GameAgentSession) -> State:
    """The session's state, read through a call so each check sees it afresh."""
    return session.state


def frame(**fields: Any) -> FrameIn:
    return FrameIn(decode_client_frame(json.dumps(fields, ensure_ascii=False)))


def hello(**extra: Any) -> FrameIn:
    fields: dict[str, Any] = {
        "type": "adapter.hello",
        "id": "h1",
        "protocol": "v1",
        "adapter": {"name": "xty-stardew", "version": "0.1.0"},
        "identity": {"gameId": "stardew-valley", "saveId": "farm-a"},
        "token": TOKEN,
        "timezone": "Asia/Shanghai",
    }
    fields.update(extra)
    return frame(**fields)


def chat_send(text: str = "你好", chat_id: str = "c1", **extra: Any) -> FrameIn:
    return frame(type="chat.send", id=chat_id, text=text, source="text", **extra)


def context(age: float = 0.0, now: float = T0, **parts: Any) -> dict[str, Any]:
    from datetime import UTC, datetime

    stamp = datetime.fromtimestamp(now - age, UTC).isoformat().replace("+00:00", "Z")
    return {"schemaVersion": 1, "capturedAt": stamp, **parts}


def sent(actions: list[Effect]) -> list[Any]:
    return [a.frame for a in actions if isinstance(a, Send)]


def of(actions: list[Effect], kind: type[Any]) -> list[Any]:
    return [a for a in actions if isinstance(a, kind)]


def turn(
    session: GameAgentSession, chat: FrameIn, now: float = T0, memory: SaveMemory | None = None
) -> list[Effect]:
    """Send a chat.send and answer the turn's memory read (empty unless given)."""
    effects = session.handle(chat, now)
    for load in of(effects, LoadTurnMemory):
        effects += session.handle(TurnMemoryReady(load.turn, memory or SaveMemory(None, None)), now)
    return effects


def ready_session(**kwargs: Any) -> GameAgentSession:
    session = make_session(**kwargs)
    session.handle(Connected(), T0)
    session.handle(hello(), T0)
    assert state_of(session) is State.READY
    return session


def prompt(call: CallModel) -> str:
    parts = []
    for message in call.messages:
        content = message["content"]
        parts.append(
            content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        )
    return "\n".join(parts)


# -- hello ---------------------------------------------------------------------------------


def test_session_arms_hello_timer_on_connect() -> None:
    session = make_session(hello_timeout=10.0)
    assert session.handle(Connected(), T0) == [ArmTimer("hello", 10.0)]


def test_session_refuses_chat_before_hello() -> None:
    session = make_session()
    session.handle(Connected(), T0)
    actions = turn(session, chat_send(), T0)
    [error] = sent(actions)
    assert isinstance(error, Error)
    assert (error.code, error.id) == ("hello_required", "c1")
    assert not of(actions, CallModel)
    assert state_of(session) is State.AWAIT_HELLO


def test_session_answers_hello_and_opens_the_save() -> None:
    session = make_session(heartbeat_ms=5000, heartbeat_misses=3)
    session.handle(Connected(), T0)
    actions = session.handle(hello(), T0)
    [answer] = sent(actions)
    assert isinstance(answer, ServerHello)
    assert (answer.session_id, answer.heartbeat_ms, answer.id) == ("sess-1", 5000, "h1")
    assert answer.limits == Limits()
    assert CancelTimer("hello") in actions
    assert OpenSave(FARM_A, "Asia/Shanghai", T0) in actions
    assert ArmTimer("heartbeat", 15.0) in actions
    assert state_of(session) is State.READY


def test_session_arms_the_short_preauth_hello_deadline_without_a_token_in_the_upgrade() -> None:
    session = make_session(authenticated=False)
    assert session.handle(Connected(), T0) == [ArmTimer("hello", 2.0)]


def test_a_preauth_hello_with_the_token_claims_a_seat_before_server_hello() -> None:
    session = make_session(authenticated=False)
    session.handle(Connected(), T0)
    actions = session.handle(hello(), T0)
    assert actions == [ClaimSeat()]
    assert state_of(session) is State.AWAIT_HELLO
    [error] = sent(session.handle(hello(id="h2"), T0))  # a second hello while it waits
    assert error.code == "already_hello"
    actions = session.handle(SeatAnswered(True), T0)
    [answer] = sent(actions)
    assert isinstance(answer, ServerHello)
    assert state_of(session) is State.READY


def test_frames_sent_right_behind_a_preauth_hello_are_answered_after_it_in_order() -> None:
    session = make_session(authenticated=False)
    session.handle(Connected(), T0)
    assert session.handle(hello(), T0) == [ClaimSeat()]
    assert turn(session, chat_send(), T0) == []  # held, not refused as hello_required
    actions = session.handle(SeatAnswered(True), T0)
    answer, *_ = sent(actions)
    assert isinstance(answer, ServerHello)
    assert of(actions, LoadTurnMemory)  # the chat was planned after the hello
    assert state_of(session) is State.TURN


def test_a_preauth_hello_without_a_free_seat_is_closed_1013() -> None:
    session = make_session(authenticated=False)
    session.handle(Connected(), T0)
    session.handle(hello(), T0)
    actions = session.handle(SeatAnswered(False), T0)
    [error] = sent(actions)
    assert error.code == "server_full"
    assert of(actions, Close) == [Close(CLOSE_SERVER_FULL, "too many connections")]
    assert not of(actions, OpenSave)
    assert state_of(session) is State.CLOSED


def test_a_preauth_hello_with_a_wrong_token_claims_nothing() -> None:
    session = make_session(authenticated=False)
    session.handle(Connected(), T0)
    actions = session.handle(hello(token="wrong"), T0)
    assert not of(actions, ClaimSeat)
    assert of(actions, Close) == [Close(CLOSE_UNAUTHORIZED, "unauthorized")]


def test_session_closes_4001_on_wrong_token() -> None:
    session = make_session(authenticated=False)
    session.handle(Connected(), T0)
    actions = session.handle(hello(token="wrong"), T0)
    [error] = sent(actions)
    assert error.code == "unauthorized"
    assert TOKEN not in error.message
    assert of(actions, Close) == [Close(CLOSE_UNAUTHORIZED, "unauthorized")]
    assert not of(actions, OpenSave)
    assert state_of(session) is State.CLOSED
    assert turn(session, chat_send(), T0) == []


def test_session_refuses_unknown_timezone_and_waits_for_another_hello() -> None:
    session = make_session()
    session.handle(Connected(), T0)
    [error] = sent(session.handle(hello(timezone="Mars/Olympus"), T0))
    assert error.fields == ["timezone"]
    assert state_of(session) is State.AWAIT_HELLO
    [answer] = sent(session.handle(hello(), T0))
    assert isinstance(answer, ServerHello)
    assert state_of(session) is State.READY


def test_a_windows_zone_name_in_hello_opens_the_save_under_its_iana_name() -> None:
    session = make_session()
    session.handle(Connected(), T0)
    actions = session.handle(hello(timezone="China Standard Time"), T0)
    assert isinstance(sent(actions)[0], ServerHello)
    assert OpenSave(FARM_A, "Asia/Shanghai", T0) in actions


def test_session_refuses_second_hello() -> None:
    session = ready_session()
    [error] = sent(session.handle(hello(id="h2"), T0))
    assert (error.code, error.id) == ("already_hello", "h2")


def test_session_closes_4002_when_hello_timer_fires() -> None:
    session = make_session()
    session.handle(Connected(), T0)
    actions = session.handle(TimerFired("hello"), T0 + 10)
    assert of(actions, Close) == [Close(CLOSE_HELLO_TIMEOUT, "hello timeout")]
    assert not of(actions, CloseSave)


def test_session_ignores_a_stale_hello_timer_after_hello() -> None:
    session = ready_session()
    assert session.handle(TimerFired("hello"), T0 + 10) == []


# -- heartbeat and closing -------------------------------------------------------------------


def test_session_heartbeat_records_play_and_rearms_the_deadline() -> None:
    session = ready_session(heartbeat_ms=2000, heartbeat_misses=3)
    actions = session.handle(frame(type="heartbeat"), T0 + 2)
    assert actions == [PlayBeat(FARM_A, "Asia/Shanghai", T0 + 2), ArmTimer("heartbeat", 6.0)]
    assert sent(actions) == []


def test_session_closes_4003_and_ends_play_at_the_last_heartbeat() -> None:
    session = ready_session()
    session.handle(frame(type="heartbeat"), T0 + 5)
    actions = session.handle(TimerFired("heartbeat"), T0 + 20)
    assert of(actions, Close) == [Close(CLOSE_HEARTBEAT_TIMEOUT, "heartbeat timeout")]
    assert of(actions, CloseSave) == [CloseSave(FARM_A, T0 + 5)]
    assert state_of(session) is State.CLOSED


def test_session_disconnect_cancels_a_running_turn_and_summarizes_two_turns() -> None:
    session = ready_session()
    for n in (1, 2):
        turn(session, chat_send(f"第{n}句", f"c{n}"), T0)
        session.handle(ModelDone(n, f"回答{n}"), T0)
    turn(session, chat_send("第3句", "c3"), T0)
    actions = session.handle(Disconnected(), T0 + 1)
    assert CancelModel(3) in actions
    [summary] = of(actions, Summarize)
    assert summary.turns == (("第1句", "回答1"), ("第2句", "回答2"))
    assert of(actions, CloseSave) == [CloseSave(FARM_A, T0)]
    assert state_of(session) is State.CLOSED


# -- turns -------------------------------------------------------------------------------------


def test_session_streams_a_turn_from_call_to_done() -> None:
    session = ready_session()
    actions = turn(session, chat_send("今天钓什么鱼", "c1"), T0)
    [call] = of(actions, CallModel)
    assert (call.turn, call.image_sent) == (1, False)
    assert call.messages[-1] == {"role": "user", "content": "今天钓什么鱼"}
    assert state_of(session) is State.TURN
    assert sent(session.handle(ModelDelta(1, "鲑鱼"), T0)) == [ChatDelta(id="c1", text="鲑鱼")]
    usage = Usage(prompt_tokens=10, completion_tokens=2, total_tokens=12)
    actions = session.handle(ModelDone(1, "鲑鱼", usage), T0 + 1)
    assert sent(actions) == [ChatDone(id="c1", text="鲑鱼", context="none", usage=usage)]
    assert of(actions, Remember)[0].reply == "鲑鱼"
    assert state_of(session) is State.READY


def test_session_answers_busy_to_a_second_chat_during_a_turn() -> None:
    session = ready_session()
    turn(session, chat_send("一", "c1"), T0)
    actions = turn(session, chat_send("二", "c2"), T0)
    assert sent(actions) == [ChatError(id="c2", code="busy", message=Texts().busy)]
    assert not of(actions, CallModel)


def test_session_cancel_ends_the_turn_and_ignores_its_late_events() -> None:
    session = ready_session()
    turn(session, chat_send("一", "c1"), T0)
    actions = session.handle(frame(type="chat.cancel", id="c1"), T0)
    assert CancelModel(1) in actions
    assert sent(actions) == [ChatError(id="c1", code="cancelled", message=Texts().cancelled)]
    assert state_of(session) is State.READY
    assert session.handle(ModelDelta(1, "迟到"), T0) == []
    assert session.handle(ModelDone(1, "迟到"), T0) == []
    assert of(turn(session, chat_send("二", "c2"), T0), CallModel)[0].turn == 2


def test_session_cancel_of_another_id_is_unknown_chat() -> None:
    session = ready_session()
    turn(session, chat_send("一", "c1"), T0)
    [error] = sent(session.handle(frame(type="chat.cancel", id="zz"), T0))
    assert error.code == "unknown_chat"
    assert state_of(session) is State.TURN


@pytest.mark.parametrize(
    "code", ["model_timeout", "model_rate_limited", "model_unavailable", "model_stream_cut"]
)
def test_session_turns_model_failure_into_chat_error_and_is_ready_again(code: str) -> None:
    session = ready_session()
    turn(session, chat_send(), T0)
    actions = session.handle(ModelFailed(1, code), T0)
    [error] = sent(actions)
    assert isinstance(error, ChatError)
    assert (error.id, error.code) == ("c1", code)
    assert error.message == getattr(Texts(), code)
    assert not of(actions, Remember)
    assert state_of(session) is State.READY


def test_session_without_model_answers_model_not_configured() -> None:
    session = ready_session(model=False)
    actions = turn(session, chat_send(), T0)
    [error] = sent(actions)
    assert error.code == "model_not_configured"
    assert "「设置」" in error.message  # the page's Settings tab, where a player sets it up
    assert state_of(session) is State.READY


def test_session_redacts_chat_text_before_the_model() -> None:
    session = ready_session()
    actions = turn(session, chat_send("key sk-proj-ABCDEFGHIJ0123456789 here"), T0)
    [call] = of(actions, CallModel)
    assert "ABCDEFGHIJ0123456789" not in prompt(call)
    assert "[已隐去:密钥]" in prompt(call)


def test_session_redacts_look_alike_chat_text_before_the_model() -> None:
    session = ready_session()
    text = "key ｓｋ－ｐｒｏｊ－ABCDEFGHIJ0123456789 here, pid=4242"
    actions = turn(session, chat_send(text))
    [call] = of(actions, CallModel)
    assert "ABCDEFGHIJ0123456789" not in prompt(call)
    assert "4242" not in prompt(call)
    assert "[已隐去:密钥]" in prompt(call) and "[已隐去:进程号]" in prompt(call)


def test_session_redacts_the_adapter_token_typed_into_chat() -> None:
    session = ready_session()
    actions = turn(session, chat_send(f"我的 token 是 {TOKEN}，对吗？"))
    [call] = of(actions, CallModel)
    assert TOKEN not in prompt(call)
    assert "我的 token 是 [已隐去:密钥]，对吗？" in prompt(call)


def test_session_keeps_the_players_punctuation_as_typed() -> None:
    session = ready_session()
    actions = turn(session, chat_send("今天适合去钓鱼吗？（认真的）"))
    [call] = of(actions, CallModel)
    assert "今天适合去钓鱼吗？（认真的）" in prompt(call)


@pytest.mark.parametrize("where", ["location", "saveName"])
def test_session_refuses_the_adapter_token_in_a_model_context_or_save_name(where: str) -> None:
    session = ready_session()
    if where == "location":
        update = frame(type="state.update", modelContext=context(world={"location": TOKEN}))
        field = "modelContext.world.location"
    else:
        identity = {"gameId": "stardew-valley", "saveId": "farm-a", "saveName": f"x {TOKEN}"}
        update = frame(type="state.update", modelContext=context(), identity=identity)
        field = "identity.saveName"
    [error] = sent(session.handle(update, T0))
    assert (error.code, error.fields) == ("forbidden_content", [field])
    assert TOKEN not in error.message


def test_session_refuses_a_hello_whose_save_name_holds_the_adapter_token() -> None:
    session = make_session()
    session.handle(Connected(), T0)
    identity = {"gameId": "stardew-valley", "saveId": "farm-a", "saveName": TOKEN}
    [error] = sent(session.handle(hello(identity=identity), T0))
    assert (error.code, error.fields) == ("forbidden_content", ["identity.saveName"])
    assert state_of(session) is State.AWAIT_HELLO


# -- context freshness -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("age", "use", "in_prompt"),
    [
        (0.0, "fresh", True),
        (5.0, "fresh", True),
        (6.0, "stale", True),
        (30.0, "stale", True),
        (31.0, "dropped", False),
    ],
)
def test_session_marks_context_by_age(age: float, use: str, in_prompt: bool) -> None:
    session = ready_session()
    session.handle(frame(type="state.update", modelContext=context(world={"location": "Farm"})), T0)
    [call] = of(turn(session, chat_send(), T0 + age), CallModel)
    assert ("Farm" in prompt(call)) is in_prompt
    assert ("可能已过时" in prompt(call)) is (use == "stale")
    [done] = sent(session.handle(ModelDone(1, "好"), T0 + age))
    assert done.context == use


def test_session_uses_only_the_newest_context() -> None:
    session = ready_session()
    session.handle(frame(type="state.update", modelContext=context(world={"location": "Old"})), T0)
    session.handle(frame(type="state.update", modelContext=context(world={"location": "New"})), T0)
    [call] = of(turn(session, chat_send(), T0), CallModel)
    assert "New" in prompt(call)
    assert "Old" not in prompt(call)


def test_session_switches_save_on_a_different_identity() -> None:
    session = ready_session()
    session.handle(frame(type="heartbeat"), T0 + 3)
    update = frame(
        type="state.update",
        modelContext=context(world={"location": "B"}),
        identity={"gameId": "stardew-valley", "saveId": "farm-b"},
    )
    actions = session.handle(update, T0 + 4)
    assert of(actions, CloseSave) == [CloseSave(FARM_A, T0 + 3)]
    assert of(actions, OpenSave) == [
        OpenSave(Scope("stardew-valley", "farm-b"), "Asia/Shanghai", T0 + 4)
    ]
    same = frame(
        type="state.update",
        modelContext=context(),
        identity={"gameId": "stardew-valley", "saveId": "farm-b"},
    )
    assert session.handle(same, T0 + 5) == []


# -- images -----------------------------------------------------------------------------------


def _prepared() -> PreparedImage:
    return PreparedImage(
        mime="image/png",
        data=b"\x89PNG",
        width=1,
        height=1,
        original_width=1,
        original_height=1,
        original_bytes=4,
    )


def test_session_prepares_an_image_then_calls_with_it() -> None:
    session = ready_session()
    image = {"mime": "image/png", "data": "iVBORw0KGgo="}
    actions = turn(session, chat_send(image=image), T0)
    [prepare] = of(actions, PrepareImage)
    assert not of(actions, CallModel)
    [call] = of(session.handle(ImageReady(prepare.turn, _prepared()), T0), CallModel)
    assert call.image_sent is True
    assert call.messages[-1]["content"][1]["type"] == "image_url"


def test_session_refused_image_ends_the_turn_with_error_naming_the_field() -> None:
    session = ready_session()
    turn(session, chat_send(image={"mime": "image/png", "data": "AAAA"}), T0)
    refusal = errors.ImageError("bad", code="invalid_image", fields=["image.data"])
    [error] = sent(session.handle(ImageRefused(1, refusal), T0))
    assert (error.code, error.id, error.fields) == ("invalid_image", "c1", ["image.data"])
    assert state_of(session) is State.READY


def test_session_without_vision_drops_the_image() -> None:
    session = ready_session(vision=False)
    actions = turn(session, chat_send(image={"mime": "image/png", "data": "AAAA"}), T0)
    assert not of(actions, PrepareImage)
    [call] = of(actions, CallModel)
    assert call.image_sent is False
    assert call.messages[-1]["content"] == "你好"


# -- refusals and rate limits --------------------------------------------------------------------


def test_session_answers_a_refused_frame_with_its_error() -> None:
    session = ready_session()
    refusal = errors.BudgetError("too long", fields=["modelContext.world.location"])
    refusal.frame_id = "s9"
    [error] = sent(session.handle(FrameRefused(refusal), T0))
    assert (error.code, error.id, error.fields) == (
        "budget_exceeded",
        "s9",
        ["modelContext.world.location"],
    )
    assert state_of(session) is State.READY


def test_session_rate_limits_frames_past_the_burst_and_refills_with_time() -> None:
    session = make_session(frames_per_second=1, frame_burst=3)
    session.handle(Connected(), T0)
    session.handle(hello(), T0)
    for _ in range(2):
        assert sent(session.handle(frame(type="heartbeat"), T0)) == []
    [error] = sent(session.handle(frame(type="heartbeat", id="b"), T0))
    assert (error.code, error.id) == ("rate_limited", "b")
    assert sent(session.handle(frame(type="heartbeat"), T0 + 1)) == []


def test_session_closes_4008_on_a_flood() -> None:
    session = make_session(frames_per_second=1, frame_burst=1, flood_refusals=3)
    session.handle(Connected(), T0)
    session.handle(hello(), T0)
    closes = []
    for _ in range(5):
        closes += of(session.handle(frame(type="heartbeat"), T0), Close)
    assert closes == [Close(CLOSE_FLOOD, "flood")]
    assert state_of(session) is State.CLOSED


def test_session_rate_limits_chats_past_the_chat_burst() -> None:
    session = ready_session(chat_per_minute=1, chat_burst=1)
    turn(session, chat_send("一", "c1"), T0)
    session.handle(ModelDone(1, "好"), T0)
    [error] = sent(turn(session, chat_send("二", "c2"), T0))
    assert (error.code, error.id) == ("rate_limited", "c2")


# -- a turn waits for its save's memory (v1.md "Save switch") ------------------------------------


def _event(save: Scope, event_id: int, subject: str, summary: str) -> MemoryEvent:
    return MemoryEvent(
        id=event_id,
        game_id=save.game_id,
        save_id=save.save_id,
        kind="goal",
        subject=subject,
        summary=summary,
        importance=4,
        status="active",
        pinned=False,
        day=None,
        created_at=T0,
        updated_at=T0,
        last_used_at=T0,
    )


def test_session_after_switch_by_chat_context_plans_only_once_the_new_saves_memory_is_there() -> (
    None
):
    session = ready_session()
    farm_b = Scope("stardew-valley", "farm-b")
    chat = chat_send(
        "我们的计划是什么",
        context={"identity": {"gameId": "stardew-valley", "saveId": "farm-b"}},
    )
    effects = session.handle(chat, T0 + 1)
    assert of(effects, CloseSave) == [CloseSave(FARM_A, T0)]
    assert of(effects, OpenSave) == [OpenSave(farm_b, "Asia/Shanghai", T0 + 1)]
    # The query an embedding route would embed: the player's text (and context names).
    assert of(effects, LoadTurnMemory) == [LoadTurnMemory(1, farm_b, query="我们的计划是什么")]
    assert not of(effects, CallModel)  # no image, but the memory is not there yet
    memory = SaveMemory(
        SharedProfile(nickname="阿汤"),
        SaveIndex(farm_b, [_event(farm_b, 7, "鱼塘", "在 farm-b 挖一个鱼塘")]),
    )
    effects = session.handle(TurnMemoryReady(1, memory), T0 + 2)
    [call] = of(effects, CallModel)
    assert "阿汤" in prompt(call) and "鱼塘" in prompt(call)
    # Marking memories as used comes after the call, never before it.
    assert [type(e) for e in effects] == [CallModel, RecordInjection, TouchMemories]
    assert of(effects, TouchMemories) == [TouchMemories(farm_b, (7,), T0 + 2)]


def test_session_with_an_image_waits_for_both_the_image_and_the_memory() -> None:
    session = ready_session()
    effects = session.handle(chat_send(image={"mime": "image/png", "data": "AAAA"}), T0)
    assert of(effects, PrepareImage) and of(effects, LoadTurnMemory)
    assert not of(session.handle(ImageReady(1, _prepared()), T0), CallModel)
    [call] = of(session.handle(TurnMemoryReady(1, SaveMemory(None, None)), T0), CallModel)
    assert call.image_sent
    assert session.handle(TurnMemoryReady(1, SaveMemory(None, None)), T0) == []


def test_session_plans_without_memory_when_the_store_failed() -> None:
    session = ready_session()
    session.handle(chat_send("你好"), T0)
    [call] = of(session.handle(TurnMemoryReady(1, None), T0), CallModel)
    assert call.messages[-1] == {"role": "user", "content": "你好"}


def test_session_without_memory_calls_the_model_at_once_and_queues_no_extraction() -> None:
    session = ready_session(memory=False)
    effects = session.handle(chat_send(), T0)
    assert not of(effects, LoadTurnMemory)
    assert of(effects, CallModel)
    assert not of(session.handle(ModelDone(1, "好"), T0), Remember)


def test_session_queues_extraction_before_the_reply_frame() -> None:
    session = ready_session()
    turn(session, chat_send())
    effects = session.handle(ModelDone(1, "好"), T0)
    assert [type(e) for e in effects] == [Remember, Send]


# -- management frames: requests built and answered in the core ---------------------------------


def test_session_stats_get_is_a_request_answered_with_stats_result() -> None:
    session = ready_session()
    [request] = session.handle(frame(type="stats.get", id="q1"), T0)
    assert isinstance(request, LoadStats)
    [answer] = sent(session.handle(StatsLoaded(request.request, PlayStats([], [])), T0))
    assert (type(answer).__name__, answer.id) == ("StatsResult", "q1")
    assert session.handle(StatsLoaded(request.request, PlayStats([], [])), T0) == []


def test_session_memory_get_asks_for_the_current_save() -> None:
    session = ready_session()
    [request] = session.handle(frame(type="memory.get", id="m1"), T0)
    assert request == RunCommands(request.request, (View(game_id="stardew-valley", scope=FARM_A),))
    overview = Overview(profile=SharedProfile(nickname="阿汤"), saves=(), stats=PlayStats([], []))
    [result] = sent(session.handle(CommandsDone(request.request, (overview,)), T0))
    assert result.id == "m1" and result.profile["nickname"] == "阿汤"


def test_session_refuses_forget_item_without_event_id_naming_the_field() -> None:
    session = ready_session()
    effects = session.handle(frame(type="memory.forget", id="f1", target="item"), T0)
    [error] = sent(effects)
    assert (error.code, error.id, error.fields) == ("invalid_frame", "f1", ["eventId"])
    assert not of(effects, RunCommands)


def test_session_forget_and_profile_update_become_typed_requests() -> None:
    session = ready_session()
    [forget] = session.handle(frame(type="memory.forget", id="f1", target="item", eventId=3), T0)
    spec = ForgetSpec(kind="item", game_id="stardew-valley", save_id="farm-a", item_id=3)
    assert forget == RunCommands(forget.request, (Preview(target=spec),))
    [update] = session.handle(
        frame(type="profile.update", id="p1", field="replyStyle", value="简短"), T0
    )
    correct = Correct(field="reply_style", value="简短")
    assert update == RunCommands(update.request, (correct, View(scope=FARM_A)))
    failed = StoreFailed(update.request, "forbidden_content", "refused")
    [error] = sent(session.handle(failed, T0))
    assert (error.code, error.id, error.fields) == ("forbidden_content", "p1", ["value"])
    [error] = sent(session.handle(StoreFailed(forget.request, "store_busy", "busy"), T0))
    assert (error.code, error.id, error.fields) == ("store_busy", "f1", None)


def test_session_marks_rate_limit_refusals_droppable_and_nothing_else() -> None:
    session = make_session(frames_per_second=1, frame_burst=1)
    session.handle(Connected(), T0)
    effects = session.handle(hello(), T0)
    assert all(not e.droppable for e in of(effects, Send))
    [refusal] = of(session.handle(frame(type="heartbeat", id="b"), T0), Send)
    assert refusal.droppable and refusal.frame.code == "rate_limited"


def test_session_refuses_a_save_switch_while_a_reply_streams_and_the_reply_goes_on() -> None:
    session = ready_session()
    turn(session, chat_send("一", "c1"))
    update = frame(
        type="state.update",
        id="s1",
        modelContext=context(world={"location": "B"}),
        identity={"gameId": "stardew-valley", "saveId": "farm-b"},
    )
    effects = session.handle(update, T0)
    [error] = sent(effects)
    assert (error.code, error.id, error.fields) == ("reply_in_progress", "s1", ["identity"])
    assert not of(effects, CloseSave) and not of(effects, OpenSave)
    assert sent(session.handle(ModelDelta(1, "好"), T0)) == [ChatDelta(id="c1", text="好")]
    effects = session.handle(ModelDone(1, "好"), T0)
    assert of(effects, Remember)[0].save == FARM_A
    # The same save's update during a reply is fine; after the reply the switch goes through.
    assert of(session.handle(update, T0), OpenSave) == [
        OpenSave(Scope("stardew-valley", "farm-b"), "Asia/Shanghai", T0)
    ]


# -- every modelContext field is optional (v1.md "modelContext") --------------------------------


def test_session_takes_a_context_without_captured_at_as_captured_on_arrival() -> None:
    session = ready_session()
    update = frame(type="state.update", modelContext={"world": {"location": "Farm"}})
    assert sent(session.handle(update, T0 + 100)) == []
    [call] = of(turn(session, chat_send(), T0 + 105), CallModel)
    assert "Farm" in prompt(call) and "可能已过时" not in prompt(call)
    [done] = sent(session.handle(ModelDone(1, "好"), T0 + 105))
    assert done.context == "fresh"  # 5 s after arrival: at the edge, still fresh
    [call] = of(turn(session, chat_send(chat_id="c2"), T0 + 105.5), CallModel)
    [done] = sent(session.handle(ModelDone(2, "好"), T0 + 105.5))
    assert done.context == "stale"  # just past it
    [call] = of(turn(session, chat_send(chat_id="c3"), T0 + 131), CallModel)
    assert "Farm" not in prompt(call)


def test_session_reads_a_missing_schema_version_as_1_and_refuses_2() -> None:
    session = ready_session()
    ok = frame(type="state.update", modelContext={"capturedAt": context()["capturedAt"]})
    assert sent(session.handle(ok, T0)) == []
    # The codec refuses any other version before the session sees it.
    with pytest.raises(errors.FrameError) as caught:
        frame(type="state.update", id="s2", modelContext={"schemaVersion": 2})
    assert "modelContext.schemaVersion" in caught.value.fields


def test_session_decides_the_budget_from_what_was_spent_at_its_edge() -> None:
    session = ready_session(daily_budget=DailyBudget(1000))
    session.handle(chat_send("你好", chat_id="c8"), T0)
    just_under = session.handle(TurnMemoryReady(1, SaveMemory(None, None), spent=999), T0)
    assert of(just_under, CallModel)


def test_session_refuses_the_turn_when_its_memory_read_says_the_budget_is_spent() -> None:
    session = ready_session(daily_budget=DailyBudget(1000))
    session.handle(chat_send("你好", chat_id="c9"), T0)
    effects = session.handle(TurnMemoryReady(1, SaveMemory(None, None), spent=1000), T0)
    assert not of(effects, CallModel)
    [refusal] = sent(effects)
    assert refusal.code == "budget_exhausted" and refusal.id == "c9"
    assert state_of(session) is State.READY
    low = session.handle(chat_send("再来", chat_id="c10"), T0 + 5)
    [load] = of(low, LoadTurnMemory)
    low_spent = TurnMemoryReady(load.turn, None, spent=900)  # low: chat still runs
    assert of(session.handle(low_spent, T0 + 5), CallModel)
    unlimited = ready_session()  # no budget: any count is fine
    unlimited.handle(chat_send("你好", chat_id="c11"), T0)
    assert of(unlimited.handle(TurnMemoryReady(1, None, spent=10**12), T0), CallModel)


def test_session_without_memory_still_asks_for_the_budget_when_one_is_set() -> None:
    session = ready_session(memory=False, daily_budget=DailyBudget(1000))
    effects = session.handle(chat_send(), T0)
    [load] = of(effects, LoadTurnMemory)
    assert not load.read_memory and not of(effects, CallModel)
