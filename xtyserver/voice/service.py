"""The voice shell: one per server (:class:`VoiceService`), one link per connection.

It carries out the session's voice effects (:mod:`xtyserver.session.effects`
``Listen``, ``AudioIn``, ``EndListening``, ``Speak``, ``Hush``) and posts what
came of them (``VoiceHeard``, ``VoiceFailed``, ``SpeechReady``); the session
decides everything else. The server has one microphone and one pair of
speakers: one utterance records at a time (another connection's start is
``device_busy``), one transcription runs at a time, and sentences play in
order. The speech model loads on first use and is released after
``voice.idle_release`` seconds without use. Audio lives in memory only.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from xtyserver import log
from xtyserver.clock import Clock
from xtyserver.errors import XtyError
from xtyserver.protocol.limits import VOICE_SAMPLE_RATE
from xtyserver.session.effects import AudioIn, EndListening, Hush, Listen, Speak
from xtyserver.session.events import Event, SpeechReady, VoiceFailed, VoiceHeard
from xtyserver.voice.asr import Recognizer

Post = Callable[[Event], Awaitable[None]]
SPEECH_QUEUE = 64
"""Sentences of one connection waiting for the voice (a reply has a handful)."""
# Below this peak level (of 32767) an utterance is silence: no transcription at all.
SILENCE_PEAK = 300


@dataclass(frozen=True)
class VoiceOptions:
    """The voice settings the shell needs (``[voice]``, derived once)."""

    data_dir: Path
    input_device: str = ""
    output_device: str = ""
    language: str = "zh"
    model_dir: str = ""
    threads: int = 2
    beam_size: int = 1
    partial_every: float = 1.0
    idle_release: float = 300.0
    max_seconds: float = 30.0
    tts_engine: str = "auto"
    tts_voice: str = ""
    speed: float = 1.0
    muted: bool = False


def silent(pcm: bytes) -> bool:
    """Whether ``pcm`` (16-bit) holds nothing louder than :data:`SILENCE_PEAK`."""
    import numpy as np

    samples = np.frombuffer(pcm[: len(pcm) - len(pcm) % 2], dtype="<i2")
    return samples.size == 0 or int(np.abs(samples.astype(np.int32)).max()) < SILENCE_PEAK


@dataclass
class _Model:
    recognizer: Recognizer | None = None
    last_used: float = 0.0
    users: int = 0


class VoiceService:
    """What every connection's voice shares: the recogniser, the microphone, the speakers.

    Args:
        options: The settings.
        clock: The server's clock (the idle release's deadline).
        recognizer: Builds the recogniser (tests and the bench pass their own); None:
            faster-whisper over :func:`~xtyserver.voice.model_files.model_folder`.
    """

    def __init__(
        self,
        options: VoiceOptions,
        clock: Clock,
        recognizer: Callable[[], Recognizer] | None = None,
    ) -> None:
        self.options = options
        self._clock = clock
        self._build = recognizer or self._whisper
        self._model = _Model()
        self._loading = anyio.Lock()
        self._transcribing = anyio.CapacityLimiter(1)
        self._mic_owner: object | None = None
        self._speaker: Any = None
        self._synth: Any = None
        self._used = anyio.Event()
        self._log = log.get("xtyserver.voice")
        self.first_samples: list[float] = []
        """``time.monotonic()`` of each sentence's first sample on the device (the bench)."""
        self.status = "idle"
        """The page's view: ``idle`` (model not loaded), ``loading``, ``ready``, ``failed``."""
        self.listening = 0
        """Utterances recording the microphone now (the page's microphone-open light)."""

    # -- the model -------------------------------------------------------------------------------

    def _whisper(self) -> Recognizer:
        from xtyserver.voice.asr import WhisperRecognizer
        from xtyserver.voice.model_files import model_folder

        opts = self.options
        return WhisperRecognizer(
            model_folder(opts.data_dir, opts.model_dir),
            language=opts.language,
            threads=opts.threads,
            beam_size=opts.beam_size,
        )

    async def recognizer(self) -> Recognizer:
        """The loaded recogniser, loading it on a worker thread the first time."""
        async with self._loading:
            if self._model.recognizer is None:
                self.status = "loading"
                try:
                    self._model.recognizer = await anyio.to_thread.run_sync(self._build)
                except (XtyError, OSError, RuntimeError, ValueError, ImportError) as exc:
                    self.status = "failed"
                    self._log.warning("voice.model_failed", error=type(exc).__name__)
                    raise
                self.status = "ready"
                self._log.info("voice.model_loaded")
            self._model.last_used = self._clock.now()
            self._used.set()
            return self._model.recognizer

    async def transcribe(self, pcm: bytes, *, final: bool) -> str:
        """The words of ``pcm``; silence is "" without asking the model."""
        if await anyio.to_thread.run_sync(silent, pcm):
            return ""
        recognizer = await self.recognizer()
        self._model.users += 1
        try:
            async with self._transcribing:
                return await anyio.to_thread.run_sync(
                    lambda: recognizer.transcribe(pcm, final=final)
                )
        finally:
            self._model.users -= 1
            self._model.last_used = self._clock.now()

    def release(self) -> bool:
        """Free the model now unless a transcription uses it; whether it was freed."""
        model = self._model
        if model.recognizer is None or model.users:
            return False
        recognizer, model.recognizer = model.recognizer, None
        recognizer.close()
        self.status = "idle"
        self._log.info("voice.model_released")
        return True

    async def run(self) -> None:
        """Release the model after ``idle_release`` seconds unused (a task of the server)."""
        while True:
            await self._used.wait()
            self._used = anyio.Event()
            while self._model.recognizer is not None:
                deadline = self._model.last_used + self.options.idle_release
                with self._clock.move_on_at(deadline):
                    await self._used.wait()
                    self._used = anyio.Event()
                    continue
                if self._clock.now() >= self._model.last_used + self.options.idle_release:
                    self.release()

    # -- the microphone ----------------------------------------------------------------------------

    def take_microphone(self, owner: object) -> bool:
        if self._mic_owner is not None:
            return False
        self._mic_owner = owner
        return True

    def give_microphone(self, owner: object) -> None:
        if self._mic_owner is owner:
            self._mic_owner = None

    # -- the voice ---------------------------------------------------------------------------------

    def synthesize(self, text: str) -> tuple[bytes, int]:
        """A sentence's PCM and rate. Blocking (a worker thread)."""
        from xtyserver.voice.tts import synthesizer

        if self._synth is None:
            opts = self.options
            self._synth = synthesizer(opts.tts_engine, opts.tts_voice, opts.speed)
        pcm, rate = self._synth.synthesize(text)
        return bytes(pcm), int(rate)

    def play(self, pcm: bytes, rate: int) -> None:
        """Queue a sentence on the speakers. Blocking the first time (opening the device)."""
        from xtyserver.voice.tts import Speaker

        if self._speaker is None:
            self._speaker = Speaker(self.options.output_device, self.first_samples.append)
            self._speaker.muted = self.options.muted
        self._speaker.play(pcm, rate)

    def hush(self) -> None:
        if self._speaker is not None:
            self._speaker.hush()

    @property
    def speaking(self) -> bool:
        return self._speaker is not None and bool(self._speaker.playing)

    def close(self) -> None:
        if self._speaker is not None:
            self._speaker.close()
            self._speaker = None
        self.release()


@dataclass(eq=False)
class _Utterance:
    id: str
    stream: bool
    pcm: bytearray = field(default_factory=bytearray)
    ended: anyio.Event = field(default_factory=anyio.Event)
    transcribe: bool = False
    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)


class VoiceLink:
    """One connection's side of the voice: its utterance and its reply's sentences.

    Args:
        service: The server's voice.
        post: Hands an event to the connection's session.
        spawn: Starts a task in the connection's task group (it ends with the connection).
    """

    def __init__(self, service: VoiceService, post: Post, spawn: Callable[..., None]) -> None:
        self._service = service
        self._post = post
        self._spawn = spawn
        self._utterance: _Utterance | None = None
        self._speech_in: MemoryObjectSendStream[tuple[int, Speak]] | None = None
        self._generation = 0

    async def run(self, effect: Listen | AudioIn | EndListening | Speak | Hush) -> None:
        match effect:
            case Listen(utterance=uid, stream=stream):
                self._drop()
                self._utterance = utterance = _Utterance(uid, stream)
                self._spawn(self._listen, utterance)
            case AudioIn(utterance=uid, pcm=pcm):
                current = self._utterance
                if current is not None and current.id == uid:
                    current.pcm += pcm
            case EndListening(utterance=uid, transcribe=transcribe):
                current = self._utterance
                if current is not None and current.id == uid:
                    current.transcribe = transcribe
                    current.ended.set()
                    self._utterance = None
            case Speak():
                await self._speak(effect)
            case Hush():
                self._generation += 1
                self._service.hush()

    def _drop(self) -> None:
        if self._utterance is not None:
            self._utterance.ended.set()
            self._utterance = None

    # -- listening --------------------------------------------------------------------------------

    async def _listen(self, utterance: _Utterance) -> None:
        service = self._service
        if utterance.stream:
            await self._partials(utterance, lambda: bytes(utterance.pcm))
            await self._answer(utterance, bytes(utterance.pcm))
            return
        from xtyserver.voice.capture import DeviceError, Microphone

        if not service.take_microphone(self):
            await self._post(VoiceFailed(utterance.id, "device_busy"))
            return
        try:
            max_bytes = int(service.options.max_seconds * VOICE_SAMPLE_RATE) * 2
            mic = Microphone(service.options.input_device, max_bytes)
            try:
                await anyio.to_thread.run_sync(mic.open)
            except DeviceError as exc:
                await self._post(VoiceFailed(utterance.id, exc.code))
                return
            except (ImportError, OSError):
                await self._post(VoiceFailed(utterance.id, "voice_unavailable"))
                return
            service.listening += 1
            try:
                lost = await self._partials(utterance, mic.audio, lambda: mic.lost)
            finally:
                pcm = await anyio.to_thread.run_sync(mic.close)
                service.listening -= 1
        finally:
            service.give_microphone(self)
        if lost or mic.lost:
            await self._post(VoiceFailed(utterance.id, "device_lost"))
            return
        await self._answer(utterance, pcm)

    async def _partials(
        self,
        utterance: _Utterance,
        audio: Callable[[], bytes],
        lost: Callable[[], bool] = lambda: False,
    ) -> bool:
        """Partial transcripts while the utterance is open; whether the device went away."""
        service = self._service
        every = service.options.partial_every
        heard = 0
        while not utterance.ended.is_set():
            with anyio.move_on_after(every):
                await utterance.ended.wait()
            if utterance.ended.is_set():
                break
            if lost():
                return True
            pcm = audio()
            # A partial only for a second or more of new audio, and never in the
            # model's way: a stop that comes meanwhile waits for at most this one.
            if len(pcm) - heard >= VOICE_SAMPLE_RATE * 2 and every > 0:
                heard = len(pcm)
                try:
                    text = await service.transcribe(pcm, final=False)
                except (XtyError, OSError, RuntimeError, ValueError, ImportError):
                    continue  # the final transcript reports it
                if text and not utterance.ended.is_set():
                    await self._post(VoiceHeard(utterance.id, text, final=False))
        return False

    async def _answer(self, utterance: _Utterance, pcm: bytes) -> None:
        if not utterance.transcribe:
            return  # cancelled or superseded: the audio goes unheard
        try:
            text = await self._service.transcribe(pcm, final=True)
        except (XtyError, OSError, RuntimeError, ValueError, ImportError):
            await self._post(VoiceFailed(utterance.id, "voice_unavailable"))
            return
        finally:
            del pcm
        await self._post(VoiceHeard(utterance.id, text, final=True))

    # -- speaking ---------------------------------------------------------------------------------

    async def _speak(self, effect: Speak) -> None:
        if self._speech_in is None:
            self._speech_in, out = anyio.create_memory_object_stream[tuple[int, Speak]](
                SPEECH_QUEUE
            )
            self._spawn(self._voice, out)
        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            await self._speech_in.send((self._generation, effect))

    async def _voice(self, sentences: MemoryObjectReceiveStream[tuple[int, Speak]]) -> None:
        """Synthesise the sentences in order; play them or hand their audio to the session."""
        service = self._service
        failed: set[str] = set()
        async with sentences:
            async for generation, speak in sentences:
                if generation != self._generation or speak.chat_id in failed:
                    continue  # hushed since
                try:
                    pcm, rate = await anyio.to_thread.run_sync(service.synthesize, speak.text)
                    if generation != self._generation:
                        continue
                    if speak.frames:
                        ready = SpeechReady(speak.chat_id, speak.seq, speak.text, rate, pcm)
                        await self._post(ready)
                    else:
                        await anyio.to_thread.run_sync(service.play, pcm, rate)
                except (XtyError, OSError, ImportError, ValueError):
                    failed.add(speak.chat_id)
                    await self._post(VoiceFailed(speak.chat_id, "speech_unavailable"))
