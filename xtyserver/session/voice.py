"""Push-to-talk and spoken replies of one session, decided here (v1.md "Voice").

Pure. :class:`VoiceDesk` holds the one utterance a connection may have open
(listening, then waiting for its final transcript) and the reply being spoken.
It answers the voice frames with effects for the shell (open the microphone,
hand it a mod's audio, stop and transcribe, speak a sentence, hush) and the
frames the mod sees; the machine (:mod:`xtyserver.session.machine`) runs the
final transcript as a ``chat.send`` with ``source: "voice"``.
"""

from __future__ import annotations

import binascii
from collections.abc import Iterable

import msgspec

from xtyserver.protocol.frames import ChatDelta, ChatDone, ChatError
from xtyserver.protocol.limits import CHAT_TEXT_MAX, VOICE_SAMPLE_RATE, VOICE_UTTERANCE_SECONDS
from xtyserver.protocol.normalize import visible
from xtyserver.protocol.voice_frames import (
    VoiceAudio,
    VoiceCancel,
    VoiceError,
    VoiceSpeech,
    VoiceStart,
    VoiceStop,
    VoiceTranscript,
)
from xtyserver.session.effects import (
    ArmTimer,
    AudioIn,
    CancelTimer,
    Effect,
    EndListening,
    Hush,
    Listen,
    Log,
    Send,
    Speak,
)
from xtyserver.session.events import SpeechReady, VoiceFailed, VoiceHeard
from xtyserver.session.sentences import Sentences


class VoiceTexts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What a mod shows for each ``voice.error`` code (``[texts.voice]``), Chinese first.

    Attributes:
        voice_off: Voice is turned off (or its extra is not installed).
        voice_busy: A second ``voice.start`` while one utterance is open.
        unknown_voice: A stop, cancel or audio for no open utterance.
        no_microphone: The PC has no microphone (or not the one configured).
        device_busy: Another program holds the microphone, or another mod is talking.
        device_blocked: The OS refused the microphone (Windows privacy settings).
        device_lost: The microphone went away mid-utterance.
        no_speech: Only silence was heard: no turn.
        voice_timeout: No ``voice.stop`` came in time: what was heard is answered.
        audio_too_long: A mod's audio passed the utterance's limit: what came is answered.
        audio_invalid: A ``voice.audio`` chunk out of order or not 16-bit PCM in base64.
        voice_unavailable: The speech model could not be loaded (files, checksum).
        speech_unavailable: No voice to speak the reply with on this PC.
    """

    voice_off: str = (
        "语音没有打开：请在小汤圆页面的「设置」里打开语音。"
        "Voice is off: turn it on in 设置 (Settings)."
    )
    voice_busy: str = "已经在听了，请先松开按键。Already listening: release the key first."
    unknown_voice: str = "没有正在进行的语音。No utterance with this id is open."
    no_microphone: str = (
        "没有找到麦克风：请插上麦克风，或在「设置」里选择另一个。"
        "No microphone found: plug one in or choose another in 设置 (Settings)."
    )
    device_busy: str = (
        "麦克风正被占用（别的程序或别的游戏在用），稍后再试。"
        "The microphone is busy (another program or game is using it); try again."
    )
    device_blocked: str = (
        "系统不允许使用麦克风：请在 Windows「设置 > 隐私和安全性 > 麦克风」里允许桌面应用访问。"
        "The system blocked the microphone: allow desktop apps in Windows Settings > "
        "Privacy & security > Microphone."
    )
    device_lost: str = "麦克风断开了，这句没听完。The microphone went away mid-sentence."
    no_speech: str = (
        "没听到说话声，再按住说一次吧。Heard only silence; hold the key and speak again."
    )
    voice_timeout: str = (
        "说话太久了，只听了前 {seconds} 秒。Spoke too long: only the first {seconds} s were heard."
    )
    audio_too_long: str = (
        "声音超过 {seconds} 秒，后面的没收到。Audio past {seconds} s was not taken."
    )
    audio_invalid: str = (
        "声音数据不对（需要 16 kHz 单声道 16 位 PCM）。Bad audio: 16 kHz mono 16-bit PCM."
    )
    voice_unavailable: str = (
        "语音识别模型加载失败，请在「设置」里查看语音模型的状态。"
        "The speech model could not be loaded: see its status in 设置 (Settings)."
    )
    speech_unavailable: str = (
        "这台电脑上没有可用的朗读声音，回答只显示文字。"
        "No voice to speak with on this PC: replies are text only."
    )


class VoiceRules(msgspec.Struct, frozen=True, kw_only=True):
    """What the session needs to know of the voice settings.

    Attributes:
        enabled: Voice is on and its extra installed: ``voice.start`` is taken.
        max_seconds: An utterance longer than this is cut and answered (``voice.max_seconds``).
        speak: Replies to voice turns are spoken (off: muted at the source).
    """

    enabled: bool = False
    max_seconds: float = VOICE_UTTERANCE_SECONDS
    speak: bool = True

    @property
    def max_bytes(self) -> int:
        """The PCM bytes of the longest utterance."""
        return int(self.max_seconds * VOICE_SAMPLE_RATE) * 2


class _Utterance(msgspec.Struct):
    id: str
    stream: bool
    speech: str
    received: int = 0
    next_seq: int = 0


class _Speaking(msgspec.Struct):
    chat_id: str
    frames: bool
    sentences: Sentences
    streamed: str = ""
    seq: int = 0


class VoiceDesk:
    """One connection's open utterance and the reply it is speaking."""

    def __init__(self, rules: VoiceRules, texts: VoiceTexts) -> None:
        self.rules = rules
        self._texts = texts
        self._listening: _Utterance | None = None
        # The utterance whose final transcript is awaited, with where its reply is spoken.
        self._pending: _Utterance | None = None
        self._speaking: _Speaking | None = None
        # How the player's last turn was answered when they spoke it ("local", "frames"), or
        # None after a typed one: the companion's own lines are spoken the same way.
        self._voiced: str | None = None

    # -- frames ---------------------------------------------------------------------------------

    def refuses(self, frame: VoiceStart) -> list[Effect] | None:
        """The refusal of a ``voice.start`` (voice off, one already open), or None: it starts."""
        if not self.rules.enabled:
            return [self.error(frame.id, "voice_off")]
        if self._listening is not None:
            return [self.error(frame.id, "voice_busy")]
        return None

    def start(self, frame: VoiceStart) -> list[Effect]:
        """Open an utterance (after :meth:`refuses` said None); silence what is being spoken."""
        self._listening = _Utterance(frame.id, frame.audio == "stream", frame.speech)
        self._pending = None  # a newer utterance supersedes one still being transcribed
        log = Log("voice.start", {"audio": frame.audio, "speech": frame.speech})
        return [
            *self.hush(),
            Listen(frame.id, stream=frame.audio == "stream"),
            ArmTimer("voice", self.rules.max_seconds),
            log,
        ]

    def stop(self, frame: VoiceStop) -> list[Effect]:
        if self._open(frame.id) is None:
            return [self.error(frame.id, "unknown_voice")]
        return self._end(transcribe=True)

    def cancel(self, frame: VoiceCancel) -> list[Effect]:
        if self._open(frame.id) is None:
            return [self.error(frame.id, "unknown_voice")]
        return [*self._end(transcribe=False), Log("voice.cancel", {})]

    def audio(self, frame: VoiceAudio) -> list[Effect]:
        """A mod's chunk: in order, whole samples, within the utterance's bytes."""
        utterance = self._open(frame.id)
        if utterance is None or not utterance.stream:
            return [self.error(frame.id, "unknown_voice")]
        try:
            pcm = binascii.a2b_base64(frame.data, strict_mode=True)
        except binascii.Error:
            pcm = b""
        if frame.seq != utterance.next_seq or not pcm or len(pcm) % 2:
            return [self.error(frame.id, "audio_invalid")]
        utterance.next_seq += 1
        room = self.rules.max_bytes - utterance.received
        if len(pcm) > room:
            # The limit is the utterance's: what fits is heard, then it is answered.
            kept = [AudioIn(frame.id, pcm[: room - room % 2])] if room >= 2 else []
            return [*kept, self.error(frame.id, "audio_too_long"), *self._end(transcribe=True)]
        utterance.received += len(pcm)
        return [AudioIn(frame.id, pcm)]

    def timed_out(self) -> list[Effect]:
        """No ``voice.stop`` within ``max_seconds``: stop and answer what was heard."""
        if self._listening is None:
            return []
        return [self.error(self._listening.id, "voice_timeout"), *self._end(transcribe=True)]

    # -- the shell's answers --------------------------------------------------------------------

    def heard(self, event: VoiceHeard) -> tuple[list[Effect], str | None]:
        """A transcript: the frame for the mod, and the text of a final one to answer.

        A final transcript of silence starts no turn (``no_speech``).
        """
        text = visible(event.text).strip()[:CHAT_TEXT_MAX]
        current = self._listening or self._pending
        if current is None or current.id != event.utterance:
            return [], None  # an utterance cancelled or superseded
        if not event.final:
            return [Send(VoiceTranscript(id=event.utterance, text=text))], None
        if self._pending is None:
            return [], None  # a final before the stop: the shell's mistake, ignored
        speech, self._pending = self._pending.speech, None
        done = Send(VoiceTranscript(id=event.utterance, text=text, final=True))
        log = Log("voice.transcript", {"chars": len(text)})
        if not text:
            return [done, log, self.error(event.utterance, "no_speech")], None
        self._voiced = speech if self.rules.speak and speech != "none" else None
        if self._voiced is not None:
            # Its reply is spoken as it streams; a refused turn's chat.error ends this.
            self._speaking = _Speaking(event.utterance, speech == "frames", Sentences())
        return [done, log], text

    def typed(self) -> None:
        """The player typed a turn: the companion's own lines are no longer spoken."""
        self._voiced = None

    def speak_line(self, chat_id: str) -> None:
        """The companion speaks up (docs/speakup.md): spoken like a reply while the player
        talks by voice (their last turn was spoken and answered aloud), else text only."""
        if self.rules.enabled and self._voiced is not None and self._listening is None:
            self._speaking = _Speaking(chat_id, self._voiced == "frames", Sentences())

    def hush_reply(self, chat_id: str) -> list[Effect]:
        """Stop speaking reply ``chat_id`` (cut off by the player's typed words), if it is."""
        if self._speaking is None or self._speaking.chat_id != chat_id:
            return []
        return self.hush()

    def failed(self, event: VoiceFailed) -> list[Effect]:
        current = self._listening or self._pending
        if current is None or current.id != event.utterance:
            return []
        effects: list[Effect] = [Log("voice.failed", {"code": event.code})]
        if self._listening is not None:
            effects.append(CancelTimer("voice"))
        self._listening = self._pending = None
        return [*effects, self.error(event.utterance, event.code)]

    def speech_failed(self, event: VoiceFailed) -> list[Effect]:
        """No voice to speak reply ``utterance`` with (the shell says so once): text goes on."""
        if event.code != "speech_unavailable":
            return []
        if self._speaking is not None and self._speaking.chat_id == event.utterance:
            self._speaking = None
        return [Log("voice.failed", {"code": event.code}), self.error(event.utterance, event.code)]

    # -- the spoken reply -----------------------------------------------------------------------

    def spoken(self, effects: list[Effect]) -> list[Effect]:
        """``effects`` with a ``Speak`` behind each reply piece that finished a sentence."""
        speaking = self._speaking
        if speaking is None:
            return effects
        out: list[Effect] = []
        for effect in effects:
            out.append(effect)
            frame = effect.frame if isinstance(effect, Send) else None
            if frame is None or getattr(frame, "id", None) != speaking.chat_id:
                continue
            if isinstance(frame, ChatDelta):
                speaking.streamed += frame.text
                out += self._say(speaking, speaking.sentences.feed(frame.text))
            elif isinstance(frame, ChatDone):
                # The whole reply may add to what streamed (the server's own question).
                rest = frame.text.removeprefix(speaking.streamed) if frame.text else ""
                tail = speaking.sentences.feed(rest) + speaking.sentences.flush()
                out += self._say(speaking, tail)
                self._speaking = None
            elif isinstance(frame, ChatError):
                self._speaking = None
        return out

    def speech_frame(self, event: SpeechReady) -> list[Effect]:
        """A sentence's audio for a mod that plays sound itself."""
        data = binascii.b2a_base64(event.pcm, newline=False).decode("ascii")
        frame = VoiceSpeech(
            id=event.chat_id, seq=event.seq, text=event.text, rate=event.rate, data=data
        )
        return [Send(frame)]

    def hush(self) -> list[Effect]:
        """Stop speaking at once (barge-in, a cancelled reply, the connection's end)."""
        self._speaking = None
        return [Hush()]

    def close(self) -> list[Effect]:
        """The connection ends: the microphone closes unheard, the speech stops."""
        effects = self._end(transcribe=False) if self._listening is not None else []
        self._pending = None
        return [*effects, *self.hush()]

    def error(self, utterance: str, code: str) -> Send:
        message = str(getattr(self._texts, code, self._texts.voice_unavailable))
        seconds = f"{self.rules.max_seconds:g}"
        return Send(VoiceError(id=utterance, code=code, message=message.format(seconds=seconds)))

    # -- helpers --------------------------------------------------------------------------------

    def _open(self, utterance: str) -> _Utterance | None:
        listening = self._listening
        return listening if listening is not None and listening.id == utterance else None

    def _end(self, *, transcribe: bool) -> list[Effect]:
        utterance, self._listening = self._listening, None
        if utterance is None:
            return []
        if transcribe:
            self._pending = utterance
        return [CancelTimer("voice"), EndListening(utterance.id, transcribe=transcribe)]

    def _say(self, speaking: _Speaking, sentences: Iterable[str]) -> list[Effect]:
        effects: list[Effect] = []
        for sentence in sentences:
            effects.append(Speak(speaking.chat_id, speaking.seq, sentence, frames=speaking.frames))
            speaking.seq += 1
        return effects
