"""The companion speaks up about game events, within the player's budget (docs/speakup.md).

Pure: events in with the time they happened, effects out. Every rule is
checked at its edge: the cooldown's last second, the hour's Nth line, the
quiet hours' first and last hour, the budget share's last token.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

import msgspec

from tests.session.test_machine import (
    FARM_A,
    chat_send,
    context,
    frame,
    hello,
    make_session,
    of,
    sent,
    state_of,
)
from tests.session.test_turn import event as memory_event
from xtyserver.memory.retrieval import SaveIndex
from xtyserver.memory.tokenize import approx_tokens
from xtyserver.memory.tokens import DailyBudget
from xtyserver.memory.types import SharedProfile
from xtyserver.protocol.frames import ChatDelta, ChatDone, ChatError, Error
from xtyserver.session.companion import LINE_PROMPT_TOKENS, messages_tokens
from xtyserver.session.effects import (
    CallModel,
    CancelModel,
    Close,
    Effect,
    LoadTurnMemory,
    Log,
    Remember,
    Summarize,
)
from xtyserver.session.events import (
    Connected,
    FrameIn,
    ModelDelta,
    ModelDone,
    SaveMemory,
    TurnMemoryReady,
)
from xtyserver.session.machine import GameAgentSession, State
from xtyserver.session.speakup import GameSpeakUp, SpeakUpSettings

ON = GameSpeakUp(enabled=True, cooldown_minutes=10, lines_per_hour=3)
NOON = datetime(2026, 6, 1, 12, 0, tzinfo=ZoneInfo("Asia/Shanghai")).timestamp()


def speaking(rules: GameSpeakUp | None = ON, **kwargs: Any) -> GameAgentSession:
    speakup = SpeakUpSettings(games={FARM_A.game_id: rules} if rules else {})
    session = make_session(speakup=speakup, **kwargs)
    session.handle(Connected(), NOON)
    session.handle(hello(), NOON)
    return session


def game_event(kind: str = "stamina_low", **fields: Any) -> FrameIn:
    return frame(type="game.event", kind=kind, **fields)


def verdicts(effects: list[Effect]) -> list[str]:
    return [e.fields["verdict"] for e in of(effects, Log) if e.event == "speakup.event"]


def speak(
    session: GameAgentSession,
    now: float,
    kind: str = "stamina_low",
    memory: SaveMemory | None = None,
    spent: int | None = None,
    **fields: Any,
) -> list[Effect]:
    """One event, its memory read answered, and the line streamed to its end when one starts."""
    effects = session.handle(game_event(kind, **fields), now)
    for load in of(effects, LoadTurnMemory):
        ready = TurnMemoryReady(load.turn, memory or SaveMemory(None, None), spent)
        effects += session.handle(ready, now)
    for call in of(effects, CallModel):
        effects += session.handle(ModelDelta(call.turn, "天黑了，"), now)
        effects += session.handle(ModelDone(call.turn, "天黑了，回家吧。"), now)
    return effects


def lines(effects: list[Effect]) -> list[ChatDone]:
    return [f for f in sent(effects) if isinstance(f, ChatDone)]


def test_speaking_up_is_off_by_default_and_an_event_says_nothing() -> None:
    session = speaking(rules=None)
    effects = speak(session, NOON)
    assert verdicts(effects) == ["off"]
    assert sent(effects) == [] and not of(effects, LoadTurnMemory)
    assert state_of(session) is State.READY


def test_an_event_makes_the_companion_speak_once_marked_as_its_own() -> None:
    session = speaking()
    effects = speak(session, NOON)
    [delta] = [f for f in sent(effects) if isinstance(f, ChatDelta)]
    [done] = lines(effects)
    assert (delta.origin, done.origin) == ("companion", "companion")
    assert done.id == delta.id == "companion-1"
    assert done.text == "天黑了，回家吧。"
    # An event alone forms no memory (the player never talked).
    assert not of(effects, Remember)
    assert state_of(session) is State.READY
    # The wire shows the origin; a player's reply omits it (absent means "player").
    assert b'"origin":"companion"' in msgspec.json.encode(done)
    assert b"origin" not in msgspec.json.encode(ChatDone(id="c", text="t", context="none"))


def test_the_cooldown_holds_a_kind_to_its_last_second_and_other_kinds_speak() -> None:
    session = speaking()
    assert len(lines(speak(session, NOON))) == 1
    assert verdicts(speak(session, NOON + 599)) == ["cooldown"]
    assert len(lines(speak(session, NOON + 30, kind="night_falling"))) == 1
    assert len(lines(speak(session, NOON + 600))) == 1


def test_at_most_n_lines_in_any_hour() -> None:
    session = speaking(GameSpeakUp(enabled=True, cooldown_minutes=0, lines_per_hour=3))
    for minute in range(3):
        assert len(lines(speak(session, NOON + minute * 60))) == 1
    assert verdicts(speak(session, NOON + 3599)) == ["hourly_cap"]
    # The first line is an hour old: room for one more.
    assert len(lines(speak(session, NOON + 3600))) == 1


def test_quiet_hours_across_midnight_in_the_adapters_zone() -> None:
    rules = GameSpeakUp(enabled=True, quiet_from=23, quiet_until=8, cooldown_minutes=0)
    session = speaking(rules)
    day = datetime(2026, 6, 1, tzinfo=ZoneInfo("Asia/Shanghai"))
    at = {h: day.replace(hour=h).timestamp() for h in (7, 8, 22, 23)}
    assert verdicts(speak(session, at[23])) == ["quiet_hours"]
    assert verdicts(speak(session, at[7] + 3599)) == ["quiet_hours"]
    assert verdicts(speak(session, at[8])) == ["speak"]
    assert verdicts(speak(session, at[22] + 3599)) == ["speak"]


def test_never_while_the_player_types_a_menu_is_open_or_a_turn_streams() -> None:
    session = speaking(GameSpeakUp(enabled=True, cooldown_minutes=0))
    typing = context(now=NOON, ui={"typing": True})
    session.handle(frame(type="state.update", modelContext=typing), NOON)
    assert verdicts(speak(session, NOON)) == ["typing"]
    menu = context(now=NOON, ui={"menu": "inventory"})
    session.handle(frame(type="state.update", modelContext=menu), NOON)
    assert verdicts(speak(session, NOON)) == ["menu_open"]
    # A state 31 s old says nothing of now.
    assert verdicts(speak(session, NOON + 31)) == ["speak"]
    # A player's turn streams: no line, and the turn goes on.
    effects = session.handle(chat_send(), NOON + 40)
    assert verdicts(session.handle(game_event(), NOON + 40)) == ["turn_streaming"]
    assert state_of(session) is State.TURN and of(effects, LoadTurnMemory)


def test_a_share_of_the_daily_budget_to_its_last_token() -> None:
    rules = GameSpeakUp(enabled=True, cooldown_minutes=0, token_share=0.2)
    session = speaking(rules, daily_budget=DailyBudget(10_000))
    effects = speak(session, NOON, spent=1_999)
    assert len(lines(effects)) == 1
    effects = speak(session, NOON + 60, spent=2_000)
    assert verdicts(effects)[-1] == "budget_share"
    assert sent(effects) == [] and not of(effects, CallModel)
    assert state_of(session) is State.READY


def test_a_stale_event_is_refused_naming_the_field_and_the_session_goes_on() -> None:
    session = speaking()
    old = datetime.fromtimestamp(NOON - 6, UTC).isoformat()
    [error] = sent(session.handle(game_event(capturedAt=old, id="e1"), NOON))
    assert isinstance(error, Error)
    assert (error.code, error.fields, error.id) == ("stale_event", ["capturedAt"], "e1")
    [error] = sent(session.handle(game_event(saveId="farm-b"), NOON))
    assert (error.code, error.fields) == ("stale_event", ["saveId"])
    fresh = datetime.fromtimestamp(NOON - 5, UTC).isoformat()
    assert len(lines(speak(session, NOON, capturedAt=fresh, saveId="farm-a"))) == 1


def test_a_flood_of_events_is_bounded_and_never_closes_the_connection() -> None:
    session = speaking(GameSpeakUp(enabled=True, cooldown_minutes=0, lines_per_hour=60))
    effects: list[Effect] = []
    for i in range(500):  # 500 events in one second
        effects += speak(session, NOON + i / 500)
    assert not of(effects, Close)
    limited = [f for f in sent(effects) if isinstance(f, Error) and f.code == "rate_limited"]
    assert len(limited) >= 480
    assert len(lines(effects)) <= 10
    # Heartbeats still pass: the events never took the frames' bucket.
    assert not sent(session.handle(frame(type="heartbeat"), NOON + 1))


def test_the_player_speaking_hushes_the_line_and_their_answer_is_an_ordinary_turn() -> None:
    session = speaking()
    effects = session.handle(game_event(), NOON)
    [load] = of(effects, LoadTurnMemory)
    [call] = of(session.handle(TurnMemoryReady(load.turn, SaveMemory(None, None)), NOON), CallModel)
    session.handle(ModelDelta(call.turn, "天黑"), NOON)
    effects = session.handle(chat_send("等一下"), NOON + 1)
    [hushed] = [f for f in sent(effects) if isinstance(f, ChatError)]
    assert (hushed.code, hushed.origin, hushed.id) == ("cancelled", "companion", "companion-1")
    assert CancelModel(call.turn) in effects
    assert state_of(session) is State.TURN and of(effects, LoadTurnMemory)
    # A whole line, then the player's answer: that turn sees the line, and is remembered alone.
    session = speaking()
    speak(session, NOON)
    effects = session.handle(chat_send("好呀"), NOON + 5)
    [load] = of(effects, LoadTurnMemory)
    effects = session.handle(TurnMemoryReady(load.turn, SaveMemory(None, None)), NOON + 5)
    [call] = of(effects, CallModel)
    contents = [m["content"] for m in call.messages]
    assert "天黑了，回家吧。" in contents
    done = session.handle(ModelDone(call.turn, "走吧"), NOON + 6)
    [remember] = of(done, Remember)
    assert (remember.player_text, remember.reply) == ("好呀", "走吧")
    assert [f.origin for f in sent(done) if isinstance(f, ChatDone)] == ["player"]


def test_lines_alone_form_no_stage_summary() -> None:
    session = speaking(GameSpeakUp(enabled=True, cooldown_minutes=0))
    for minute in range(3):
        speak(session, NOON + minute * 60)
    effects = session.handle(
        frame(
            type="state.update",
            modelContext=context(now=NOON),
            identity={"gameId": "stardew-valley", "saveId": "farm-b"},
        ),
        NOON + 300,
    )
    assert not of(effects, Summarize)


def test_a_proactive_lines_prompt_stays_under_600_tokens_at_its_worst() -> None:
    long = "长" * 200
    worst_context = context(
        now=NOON,
        world={"location": long, "time": long, "season": long[:100], "day": 9},
        player={"health": 1, "stamina": 2, "status": [long[:25]] * 8, "heldItem": long},
        focus={"kind": long, "name": long, "reachable": True},
        nearby=[{"kind": long[:20], "name": long[:20], "distance": 3}] * 5,
        relevantItems=[{"name": long[:20], "count": 1}] * 8,
        ui={"busy": False},
    )
    persona = "你是小汤圆。" * 300  # a player's very long persona
    profile = SharedProfile(
        companion_name="汤" * 24,
        companion_persona="温" * 200,
        language="中文",
        reply_style="短" * 80,
    )
    events = [memory_event(i, "体力", "体力" + "多" * 150) for i in range(1, 30)]
    texts = msgspec.structs.replace(make_session()._texts, persona=persona)
    session = speaking(texts=texts)
    session.handle(frame(type="state.update", modelContext=worst_context), NOON)
    facts = {"subject": long, "place": long[:100], "value": 12.5, "maxValue": 270, "count": 3}
    memory = SaveMemory(profile, SaveIndex(FARM_A, events))
    effects = session.handle(game_event("stamina_low", facts=facts), NOON)
    [load] = of(effects, LoadTurnMemory)
    [call] = of(session.handle(TurnMemoryReady(load.turn, memory), NOON), CallModel)
    assert call.tools is None and not call.image_sent
    assert messages_tokens(call.messages) <= LINE_PROMPT_TOKENS
    assert sum(approx_tokens(str(m["content"])) for m in call.messages) <= LINE_PROMPT_TOKENS
    assert "主动开口" in call.messages[0]["content"]  # the persona gave way, not the rules
    user = call.messages[-1]["content"]
    # What happened, the state and a memory all made it in.
    assert "玩家体力快用完了" in user and "数值：12.5/270" in user and "体力多" in user


def test_a_line_says_why_it_spoke_and_how_to_stop_in_the_players_language() -> None:
    [done] = lines(speak(speaking(), NOON, kind="night_falling"))
    assert done.why is not None
    assert "天快黑了" in done.why and "主动说话" in done.why and "关掉" in done.why
    english = SaveMemory(SharedProfile(language="English"), None)
    [done] = lines(speak(speaking(), NOON, kind="boss_near", memory=english))
    assert done.why is not None and "a boss is near" in done.why and "turn it off" in done.why
    # A player's reply carries no why.
    assert b"why" not in msgspec.json.encode(ChatDone(id="c", text="t", context="none"))


def test_the_player_can_stop_a_line_as_it_streams() -> None:
    session = speaking()
    [load] = of(session.handle(game_event(), NOON), LoadTurnMemory)
    [call] = of(session.handle(TurnMemoryReady(load.turn, SaveMemory(None, None)), NOON), CallModel)
    effects = session.handle(frame(type="chat.cancel", id="companion-1"), NOON + 1)
    [cancelled] = [f for f in sent(effects) if isinstance(f, ChatError)]
    assert (cancelled.code, cancelled.origin) == ("cancelled", "companion")
    assert CancelModel(call.turn) in effects and state_of(session) is State.READY


def test_a_line_the_budget_share_kept_quiet_costs_no_cooldown_nor_hour() -> None:
    rules = GameSpeakUp(enabled=True, cooldown_minutes=10, lines_per_hour=1, token_share=0.2)
    session = speaking(rules, daily_budget=DailyBudget(10_000))
    assert verdicts(speak(session, NOON, spent=2_000))[-1] == "budget_share"
    # The player raises the day's budget on the page; a minute later the same kind speaks.
    session.model_changed(configured=True, vision=True, daily_budget=DailyBudget(100_000))
    assert len(lines(speak(session, NOON + 60, spent=2_000))) == 1
    assert verdicts(speak(session, NOON + 120, spent=2_000)) == ["cooldown"]


def test_push_to_talk_over_the_companions_line_cuts_it_as_the_companions() -> None:
    from xtyserver.session.effects import Hush, Listen
    from xtyserver.session.voice import VoiceRules

    session = speaking(voice=VoiceRules(enabled=True))
    effects = session.handle(game_event(), NOON)
    [load] = of(effects, LoadTurnMemory)
    [call] = of(session.handle(TurnMemoryReady(load.turn, SaveMemory(None, None)), NOON), CallModel)
    session.handle(ModelDelta(call.turn, "天黑"), NOON)
    effects = session.handle(frame(type="voice.start", id="v1"), NOON + 1)
    [hushed] = [f for f in sent(effects) if isinstance(f, ChatError)]
    assert (hushed.code, hushed.origin, hushed.id) == ("cancelled", "companion", "companion-1")
    assert CancelModel(call.turn) in effects and of(effects, Hush)
    assert of(effects, Listen) == [Listen("v1", stream=False)]
    assert state_of(session) is State.READY
