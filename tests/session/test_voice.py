"""Push-to-talk in the session, pure (v1.md "Voice"): what each voice frame and answer does.

Events in, effects out: the microphone opens only between a start and its stop,
a final transcript with words is a ``chat.send`` with ``source: "voice"``, the
reply is spoken sentence by sentence as it streams, a new start barges in.
"""

from __future__ import annotations

import base64
from typing import Any

from tests.session.test_machine import T0, frame, hello, make_session, of, sent
from xtyserver.protocol.frames import ChatDelta, ChatDone, ChatError
from xtyserver.protocol.voice_frames import VoiceError, VoiceSpeech, VoiceTranscript
from xtyserver.session.effects import (
    ArmTimer,
    AudioIn,
    CallModel,
    CancelModel,
    EndListening,
    Hush,
    Listen,
    LoadTurnMemory,
    PrepareQuery,
    Speak,
)
from xtyserver.session.events import (
    ModelDelta,
    ModelDone,
    SpeechReady,
    TimerFired,
    TurnMemoryReady,
    VoiceFailed,
    VoiceHeard,
)
from xtyserver.session.machine import GameAgentSession, State
from xtyserver.session.sentences import Sentences
from xtyserver.session.speakup import GameSpeakUp, SpeakUpSettings
from xtyserver.session.voice import VoiceRules


def voice_session(**rules: Any) -> GameAgentSession:
    session = make_session(voice=VoiceRules(enabled=True, **rules))
    session.handle(hello(), T0)
    assert session.state is State.READY
    return session


def start(session: GameAgentSession, vid: str = "v1", **extra: Any) -> list[Any]:
    return session.handle(frame(type="voice.start", id=vid, **extra), T0)


def errors_of(effects: list[Any]) -> list[str]:
    return [f.code for f in sent(effects) if isinstance(f, VoiceError)]


def answered_turn(session: GameAgentSession, vid: str = "v1", text: str = "今天钓鱼吗") -> Any:
    """Stop ``vid`` and answer its final transcript; returns the turn's CallModel."""
    session.handle(frame(type="voice.stop", id=vid), T0)
    effects = session.handle(VoiceHeard(vid, text, final=True), T0)
    assert [f.final for f in sent(effects) if isinstance(f, VoiceTranscript)] == [True]
    load = of(effects, LoadTurnMemory)[0]
    effects = session.handle(TurnMemoryReady(load.turn, None), T0)
    return of(effects, CallModel)[0]


def test_voice_off_refuses_start_with_the_players_message() -> None:
    session = make_session()
    session.handle(hello(), T0)
    effects = start(session)
    assert errors_of(effects) == ["voice_off"]
    assert "设置" in sent(effects)[0].message
    assert not of(effects, Listen)


def test_start_opens_the_microphone_with_the_utterance_deadline() -> None:
    session = voice_session(max_seconds=30)
    effects = start(session)
    assert of(effects, Listen) == [Listen("v1", stream=False)]
    assert ArmTimer("voice", 30) in effects
    assert of(effects, Hush)  # whatever was being said stops at once


def test_a_second_start_is_refused_and_the_first_goes_on() -> None:
    session = voice_session()
    start(session)
    effects = start(session, "v2")
    assert errors_of(effects) == ["voice_busy"]
    assert not of(effects, Listen) and not of(effects, EndListening)
    stopped = session.handle(frame(type="voice.stop", id="v1"), T0)
    assert of(stopped, EndListening) == [EndListening("v1", transcribe=True)]


def test_final_transcript_is_a_voice_chat_send_and_only_its_text_reaches_the_model() -> None:
    session = voice_session()
    start(session)
    partial = session.handle(VoiceHeard("v1", "今天", final=False), T0)
    assert sent(partial) == [VoiceTranscript(id="v1", text="今天")]
    call = answered_turn(session, text="今天钓鱼吗")
    assert session.state is State.TURN
    assert "今天钓鱼吗" in str(call.messages[-1]["content"])
    assert "audio" not in str(call.messages)


def test_a_partial_transcript_prepares_its_query_and_a_blank_one_does_not() -> None:
    session = voice_session()
    start(session)
    partial = session.handle(VoiceHeard("v1", "我的奶牛呢", final=False), T0)
    assert [e.query for e in of(partial, PrepareQuery)] == ["我的奶牛呢"]
    assert of(session.handle(VoiceHeard("v1", "  ", final=False), T0), PrepareQuery) == []


def test_silence_starts_no_turn_and_says_so() -> None:
    session = voice_session()
    start(session)
    session.handle(frame(type="voice.stop", id="v1"), T0)
    effects = session.handle(VoiceHeard("v1", "", final=True), T0)
    assert errors_of(effects) == ["no_speech"]
    assert not of(effects, LoadTurnMemory)
    assert session.state is State.READY


def test_no_stop_within_the_limit_ends_the_utterance_and_answers_what_was_heard() -> None:
    session = voice_session(max_seconds=30)
    start(session)
    effects = session.handle(TimerFired("voice"), T0 + 30)
    assert errors_of(effects) == ["voice_timeout"]
    assert "30" in sent(effects)[0].message
    assert of(effects, EndListening) == [EndListening("v1", transcribe=True)]


def test_cancel_drops_the_utterance_unheard() -> None:
    session = voice_session()
    start(session)
    effects = session.handle(frame(type="voice.cancel", id="v1"), T0)
    assert of(effects, EndListening) == [EndListening("v1", transcribe=False)]
    assert session.handle(VoiceHeard("v1", "迟到的", final=True), T0) == []


def pcm_frame(vid: str, seq: int, size: int) -> Any:
    data = base64.b64encode(b"\x01\x00" * (size // 2)).decode()
    return frame(type="voice.audio", id=vid, seq=seq, data=data)


def test_streamed_audio_is_taken_in_order_up_to_the_utterances_bytes() -> None:
    session = voice_session(max_seconds=1)  # 32000 bytes
    start(session, audio="stream")
    taken = [session.handle(pcm_frame("v1", n, 12000), T0) for n in range(2)]
    assert [len(of(e, AudioIn)[0].pcm) for e in taken] == [12000, 12000]
    out_of_order = session.handle(pcm_frame("v1", 5, 100), T0)
    assert errors_of(out_of_order) == ["audio_invalid"]
    over = session.handle(pcm_frame("v1", 2, 12000), T0)
    assert [len(a.pcm) for a in of(over, AudioIn)] == [8000]  # exactly up to 32000
    assert errors_of(over) == ["audio_too_long"]
    assert of(over, EndListening) == [EndListening("v1", transcribe=True)]


def test_odd_or_foreign_audio_is_refused() -> None:
    session = voice_session()
    start(session)  # microphone: a mod's audio has no place
    assert errors_of(session.handle(pcm_frame("v1", 0, 100), T0)) == ["unknown_voice"]
    session.handle(frame(type="voice.cancel", id="v1"), T0)
    start(session, "v2", audio="stream")
    odd = frame(type="voice.audio", id="v2", seq=0, data=base64.b64encode(b"abc").decode())
    assert errors_of(session.handle(odd, T0)) == ["audio_invalid"]


def test_device_failure_is_the_players_error_and_the_session_goes_on() -> None:
    session = voice_session()
    start(session)
    effects = session.handle(VoiceFailed("v1", "device_lost"), T0)
    assert errors_of(effects) == ["device_lost"]
    assert session.state is State.READY
    assert of(start(session, "v2"), Listen)


def test_reply_is_spoken_sentence_by_sentence_as_it_streams() -> None:
    session = voice_session()
    start(session)
    call = answered_turn(session)
    first = session.handle(ModelDelta(call.turn, "今天适合钓鱼。明"), T0)
    assert of(first, Speak) == [Speak("v1", 0, "今天适合钓鱼。")]
    assert sent(first)[0] == ChatDelta(id="v1", text="今天适合钓鱼。明")
    done = session.handle(ModelDone(call.turn, "今天适合钓鱼。明天下雨"), T0)
    assert of(done, Speak) == [Speak("v1", 1, "明天下雨")]
    assert any(isinstance(f, ChatDone) for f in sent(done))


def test_speech_as_frames_for_a_mod_that_plays_sound_itself() -> None:
    session = voice_session()
    start(session, speech="frames")
    call = answered_turn(session)
    speak = of(session.handle(ModelDelta(call.turn, "好的。"), T0), Speak)[0]
    assert speak.frames
    ready = session.handle(SpeechReady("v1", 0, "好的。", 22050, b"\x01\x02"), T0)
    assert sent(ready) == [VoiceSpeech(id="v1", seq=0, text="好的。", rate=22050, data="AQI=")]


def test_muted_or_speech_none_speaks_nothing() -> None:
    for session, extra in ((voice_session(speak=False), {}), (voice_session(), {"speech": "none"})):
        start(session, **extra)
        call = answered_turn(session)
        assert not of(session.handle(ModelDelta(call.turn, "好的。"), T0), Speak)


def test_barge_in_cancels_the_streaming_reply_and_hushes_at_once() -> None:
    session = voice_session()
    start(session)
    call = answered_turn(session)
    session.handle(ModelDelta(call.turn, "今天适合"), T0)
    effects = start(session, "v2")
    assert session.state is State.READY
    assert CancelModel(call.turn) in effects
    cancelled = [f for f in sent(effects) if isinstance(f, ChatError)]
    assert [(f.id, f.code) for f in cancelled] == [("v1", "cancelled")]
    assert of(effects, Hush) and of(effects, Listen) == [Listen("v2", stream=False)]
    # The old reply's late pieces are neither sent nor spoken.
    assert session.handle(ModelDelta(call.turn, "钓鱼。"), T0) == []


def test_a_voice_turn_while_a_typed_reply_streams_is_busy() -> None:
    session = voice_session()
    start(session)
    session.handle(frame(type="voice.stop", id="v1"), T0)
    session.handle(frame(type="chat.send", id="c1", text="你好", source="text"), T0)
    assert session.state is State.TURN
    effects = session.handle(VoiceHeard("v1", "在吗", final=True), T0)
    assert [(f.id, f.code) for f in sent(effects) if isinstance(f, ChatError)] == [("v1", "busy")]


def test_closing_the_connection_closes_the_microphone_unheard() -> None:
    from xtyserver.session.events import Disconnected

    session = voice_session()
    start(session)
    effects = session.handle(Disconnected(), T0)
    assert EndListening("v1", transcribe=False) in effects
    assert of(effects, Hush)


def test_sentences_wait_for_their_end_and_cut_run_ons() -> None:
    s = Sentences(longest=10)
    assert s.feed("It is 3.") == []
    assert s.feed("14 now. Next") == ["It is 3.14 now."]
    assert s.feed("，一二三四五六七八九十") == ["Next，"]
    assert Sentences().feed("**好**的！🎉") == ["好的！"]
    assert s.flush() == ["一二三四五六七八九十"]


def companion_line(session: GameAgentSession, text: str = "天黑了。快回家吧") -> list[Any]:
    """Dusk is reported and the companion's line streams to its end; its effects."""
    load = of(
        session.handle(frame(type="game.event", kind="night_falling"), T0 + 60), LoadTurnMemory
    )
    effects = session.handle(TurnMemoryReady(load[0].turn, None), T0 + 60)
    call = of(effects, CallModel)[0]
    effects += session.handle(ModelDelta(call.turn, text), T0 + 60)
    return effects + session.handle(ModelDone(call.turn, text), T0 + 60)


def speaking_up_by_voice(**rules: Any) -> GameAgentSession:
    speakup = SpeakUpSettings(default=GameSpeakUp(enabled=True, cooldown_minutes=0))
    session = make_session(voice=VoiceRules(enabled=True, **rules), speakup=speakup)
    session.handle(hello(), T0)
    return session


def test_a_proactive_line_is_spoken_like_a_reply_while_the_player_talks_by_voice() -> None:
    session = speaking_up_by_voice()
    start(session)
    call = answered_turn(session)
    session.handle(ModelDone(call.turn, "好。"), T0)
    effects = companion_line(session)
    assert of(effects, Speak) == [
        Speak("companion-1", 0, "天黑了。"),
        Speak("companion-1", 1, "快回家吧"),
    ]
    # The player types: the next line is text only.
    typed = session.handle(frame(type="chat.send", id="c1", text="好的", source="text"), T0 + 61)
    turn = of(typed, LoadTurnMemory)[0].turn
    session.handle(TurnMemoryReady(turn, None), T0 + 61)
    session.handle(ModelDone(turn, "嗯"), T0 + 61)
    assert not of(companion_line(session), Speak)


def test_a_proactive_line_is_silent_when_muted_never_voiced_or_cut_off() -> None:
    muted = speaking_up_by_voice(speak=False)
    start(muted)
    muted.handle(ModelDone(answered_turn(muted).turn, "好。"), T0)
    assert not of(companion_line(muted), Speak)
    assert not of(companion_line(speaking_up_by_voice()), Speak)  # the player only typed
    # Typed words over a spoken line hush it at once.
    session = speaking_up_by_voice()
    start(session)
    session.handle(ModelDone(answered_turn(session).turn, "好。"), T0)
    load = of(
        session.handle(frame(type="game.event", kind="night_falling"), T0 + 60), LoadTurnMemory
    )
    call = of(session.handle(TurnMemoryReady(load[0].turn, None), T0 + 60), CallModel)[0]
    assert of(session.handle(ModelDelta(call.turn, "天黑了。"), T0 + 60), Speak)
    effects = session.handle(frame(type="chat.send", id="c2", text="等等", source="text"), T0 + 61)
    assert of(effects, Hush)
