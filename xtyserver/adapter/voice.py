"""One push-to-talk utterance of the adapter client (v1.md "Voice").

``client.voice_start()`` returns a :class:`VoiceTurn`: release the key with
:meth:`VoiceTurn.stop` (or drop it with :meth:`VoiceTurn.cancel`); ``partials``
and :meth:`VoiceTurn.transcript` hold what was heard, ``reply`` is the turn's
:class:`~xtyserver.adapter.reply.ChatReply` (the same id), ``errors`` the
``voice.error`` frames and ``speech`` the ``voice.speech`` sentences (``speech="frames"``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import anyio

from xtyserver.adapter.reply import ChatReply
from xtyserver.protocol.frames import ChatError
from xtyserver.protocol.voice_frames import VoiceError, VoiceSpeech, VoiceTranscript

# Codes after which the utterance is still answered (what was heard is transcribed).
NOT_FINAL = frozenset({"voice_timeout", "audio_too_long", "speech_unavailable"})


class VoiceTurn:
    """An utterance from ``voice.start`` to its transcript and reply."""

    def __init__(
        self, utterance: str, reply: ChatReply, send: Callable[[dict[str, object]], Awaitable[None]]
    ) -> None:
        self.id = utterance
        self.reply = reply
        self.partials: list[str] = []
        self.errors: list[VoiceError] = []
        self.speech: list[VoiceSpeech] = []
        self._send = send
        self._final: VoiceTranscript | None = None
        self._heard = anyio.Event()
        self._seq = 0

    async def stop(self) -> None:
        """Release push-to-talk: the server transcribes and answers."""
        await self._send({"type": "voice.stop", "id": self.id})

    async def cancel(self) -> None:
        """Drop the utterance unheard."""
        await self._send({"type": "voice.cancel", "id": self.id})

    async def audio(self, pcm: bytes) -> None:
        """Send the mod's own audio (``audio="stream"``), cut into frames of 12000 bytes."""
        import base64

        for at in range(0, len(pcm), 12000):
            data = base64.b64encode(pcm[at : at + 12000]).decode("ascii")
            await self._send({"type": "voice.audio", "id": self.id, "seq": self._seq, "data": data})
            self._seq += 1

    async def transcript(self) -> str:
        """The final transcript ("" for silence or a failed utterance)."""
        await self._heard.wait()
        return self._final.text if self._final is not None else ""

    def _frame(self, frame: VoiceTranscript | VoiceError | VoiceSpeech) -> None:
        match frame:
            case VoiceTranscript(final=False, text=text):
                self.partials.append(text)
            case VoiceTranscript():
                self._final = frame
                self._heard.set()
            case VoiceSpeech():
                self.speech.append(frame)
            case VoiceError(code=code) if code not in NOT_FINAL:
                self.errors.append(frame)
                self._heard.set()
                self.reply._end(ChatError(id=self.id, code=code, message=frame.message))
            case VoiceError():
                self.errors.append(frame)
