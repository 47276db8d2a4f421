"""Spoken replies: a voice that turns a sentence into PCM, and the speakers that play it.

Engines behind :class:`Synthesizer`: on Windows the voice the OS already has
(SAPI 5 through comtypes: Chinese Windows ships zh-CN voices, nothing is
downloaded); elsewhere eSpeak NG's ``espeak-ng`` program where it is installed
(GPL-3.0, used as a separate program; the tests' voice on Linux). :class:`Speaker`
keeps one PortAudio output stream open while it has sentences to play, so the
first sample of a sentence leaves as soon as its synthesis ends.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
import threading
import time
import wave
from collections import deque
from typing import Any, Protocol

from xtyserver.errors import XtyError


class SpeechError(XtyError):
    """No voice or no speakers: ``speech_unavailable``."""

    code = "speech_unavailable"


class Synthesizer(Protocol):
    def synthesize(self, text: str) -> tuple[bytes, int]:
        """Mono 16-bit PCM of ``text`` and its sample rate. Blocking."""
        ...


def _has_cjk(text: str) -> bool:
    return any("\u3400" <= c <= "\u9fff" for c in text)


class EspeakSynthesizer:
    """eSpeak NG's program: ``cmn`` (Mandarin) for text with Chinese characters, else ``en``.

    Args:
        voice: An espeak-ng voice name to use for every sentence; "": by the text.
        speed: 1.0 is espeak-ng's 175 words a minute.
    """

    def __init__(self, voice: str = "", speed: float = 1.0, program: str | None = None) -> None:
        found = program or shutil.which("espeak-ng")
        if found is None:
            raise SpeechError("espeak-ng is not installed")
        self._program = found
        self._voice = voice
        self._wpm = max(80, min(450, round(175 * speed)))

    def synthesize(self, text: str) -> tuple[bytes, int]:
        voice = self._voice or ("cmn" if _has_cjk(text) else "en")
        done = subprocess.run(
            [self._program, "-v", voice, "-s", str(self._wpm), "--stdout", text],
            capture_output=True,
            timeout=30,
            check=False,
        )
        if done.returncode != 0 or not done.stdout:
            raise SpeechError("espeak-ng failed")
        with wave.open(io.BytesIO(done.stdout)) as wav:
            return wav.readframes(wav.getnframes()), wav.getframerate()


class SapiSynthesizer:  # pragma: no cover - Windows only
    """Windows' own voice (SAPI 5, ``SAPI.SpVoice``) into memory at 22 kHz 16-bit mono."""

    def __init__(self, voice: str = "", speed: float = 1.0) -> None:
        self._voice = voice
        self._rate = max(-10, min(10, round((speed - 1.0) * 10)))

    def synthesize(self, text: str) -> tuple[bytes, int]:
        import comtypes
        import comtypes.client

        comtypes.CoInitialize()  # each worker thread once; further calls are counted
        try:
            speaker: Any = comtypes.client.CreateObject("SAPI.SpVoice")
            stream: Any = comtypes.client.CreateObject("SAPI.SpMemoryStream")
            stream.Format.Type = 22  # SAFT22kHz16BitMono
            if self._voice:
                for token in speaker.GetVoices():
                    if self._voice.lower() in token.GetDescription().lower():
                        speaker.Voice = token
                        break
            speaker.Rate = self._rate
            speaker.AudioOutputStream = stream
            speaker.Speak(text)
            return bytes(stream.GetData()), 22050
        finally:
            comtypes.CoUninitialize()


def synthesizer(engine: str, voice: str = "", speed: float = 1.0) -> Synthesizer:
    """The configured engine (``voice.tts_engine``): ``auto`` is SAPI on Windows, else espeak-ng.

    Raises:
        SpeechError: the engine is not there.
    """
    if engine == "none":
        raise SpeechError("spoken replies are off")
    if engine == "sapi" or (engine == "auto" and sys.platform == "win32"):
        if sys.platform != "win32":
            raise SpeechError("SAPI is Windows only")
        return SapiSynthesizer(voice, speed)
    return EspeakSynthesizer(voice, speed)


class Speaker:
    """The PC's speakers: sentences played in order on one output stream.

    Args:
        device: ``voice.output_device`` ("": the default).
        first_sample: Called on PortAudio's thread with ``time.monotonic()`` when the
            first sample of each sentence is handed to the device (for the bench).
    """

    def __init__(self, device: str = "", first_sample: Any = None) -> None:
        self._device = device
        self._lock = threading.Lock()
        self._queue: deque[tuple[memoryview, bool]] = deque()
        self._stream: Any = None
        self._rate = 0
        self._first_sample = first_sample
        self.muted = False

    def play(self, pcm: bytes, rate: int) -> None:
        """Queue one sentence. Blocking while a stream at another rate is opened."""
        if self.muted or not pcm:
            return
        self._ensure(rate)
        with self._lock:
            self._queue.append((memoryview(pcm), True))

    def hush(self) -> None:
        """Drop what plays and everything queued, now."""
        with self._lock:
            self._queue.clear()

    @property
    def playing(self) -> bool:
        with self._lock:
            return bool(self._queue)

    def close(self) -> None:
        stream, self._stream = self._stream, None
        self.hush()
        if stream is not None:
            stream.stop()
            stream.close()

    def _ensure(self, rate: int) -> None:
        import sounddevice as sd

        from xtyserver.voice.capture import device_code, find_device

        if self._stream is not None and self._rate == rate:
            return
        self.close()
        try:
            index = find_device(self._device, output=True)
            stream = sd.RawOutputStream(
                samplerate=rate, channels=1, dtype="int16", device=index, callback=self._pull
            )
            stream.start()
        except (sd.PortAudioError, ValueError, XtyError) as exc:
            raise SpeechError(f"speakers: {device_code(exc)}") from None
        self._stream, self._rate = stream, rate

    def _pull(self, out: Any, frames: int, when: Any, status: Any) -> None:
        wanted = frames * 2
        filled = 0
        with self._lock:
            while filled < wanted and self._queue:
                chunk, fresh = self._queue[0]
                if fresh and self._first_sample is not None:
                    self._first_sample(time.monotonic())
                take = min(len(chunk), wanted - filled)
                out[filled : filled + take] = chunk[:take]
                filled += take
                if take == len(chunk):
                    self._queue.popleft()
                else:
                    self._queue[0] = (chunk[take:], False)
        if filled < wanted:
            out[filled:wanted] = b"\x00" * (wanted - filled)
