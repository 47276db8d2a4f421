"""The push-to-talk frames (v1.md "Voice"): the mod holds the key, the server listens.

``voice.start`` opens the PC's microphone (or, with ``audio: "stream"``, takes the
mod's own ``voice.audio`` chunks), ``voice.stop`` ends the utterance and has it
transcribed, ``voice.cancel`` drops it. The server answers ``voice.transcript``
(partial, then final) and runs the turn as a ``chat.send`` with ``source: "voice"``
and the utterance's id; its reply is spoken on the PC's speakers, or sent back as
``voice.speech`` frames for a mod that plays sound itself. Ids, enums and base64
only: no free text to normalise.
"""

from __future__ import annotations

from typing import Annotated, Literal

from msgspec import Meta

from xtyserver.protocol.frame_base import ClientBase, FrameId, ServerBase
from xtyserver.protocol.limits import VOICE_AUDIO_MAX_B64_CHARS

AudioData = Annotated[
    str,
    Meta(
        min_length=4,
        max_length=VOICE_AUDIO_MAX_B64_CHARS,
        description="Base64 of 16 kHz mono signed 16-bit little-endian PCM.",
    ),
]
AudioSeq = Annotated[int, Meta(ge=0, le=1_000_000)]


class VoiceStart(ClientBase, tag="voice.start"):
    """The player pressed push-to-talk (v1.md "voice.start").

    ``audio``: ``microphone`` (the server records the PC's microphone) or ``stream``
    (the mod sends ``voice.audio``). ``speech``: where the reply's speech goes:
    the PC's ``speakers``, ``frames`` (``voice.speech`` to this mod) or ``none``.
    """

    id: FrameId
    audio: Literal["microphone", "stream"] = "microphone"
    speech: Literal["speakers", "frames", "none"] = "speakers"


class VoiceStop(ClientBase, tag="voice.stop"):
    """The player released push-to-talk: transcribe what was heard and answer it."""

    id: FrameId


class VoiceCancel(ClientBase, tag="voice.cancel"):
    """Drop the utterance unheard: no transcript, no turn."""

    id: FrameId


class VoiceAudio(ClientBase, tag="voice.audio"):
    """One chunk of a ``stream`` utterance, in order (``seq`` from 0)."""

    id: FrameId
    seq: AudioSeq
    data: AudioData


class VoiceTranscript(ServerBase, tag="voice.transcript"):
    """What was heard so far (``final`` false), then all of it (``final`` true).

    A final transcript with text starts the turn whose ``chat.delta`` / ``chat.done``
    carry the same id; an empty final one (silence) starts none.
    """

    id: str
    text: str
    final: bool = False


class VoiceError(ServerBase, tag="voice.error"):
    """The utterance ``id`` failed or was cut short; ``message`` is the player's.

    Codes (v1.md "voice.error"): ``voice_off``, ``voice_busy``, ``unknown_voice``,
    ``no_microphone``, ``device_busy``, ``device_blocked``, ``device_lost``,
    ``no_speech``, ``voice_timeout``, ``audio_too_long``, ``audio_invalid``,
    ``voice_unavailable``, ``speech_unavailable``.
    """

    id: str
    code: str
    message: str


class VoiceSpeech(ServerBase, tag="voice.speech"):
    """One spoken sentence of the reply ``id`` for a mod that plays sound itself.

    ``data``: base64 of mono signed 16-bit little-endian PCM at ``rate`` Hz;
    ``seq`` counts the reply's sentences from 0.
    """

    id: str
    seq: int
    text: str
    rate: int
    data: str


VOICE_CLIENT_FRAMES = (VoiceStart, VoiceStop, VoiceCancel, VoiceAudio)
VOICE_SERVER_FRAMES = (VoiceTranscript, VoiceError, VoiceSpeech)
