"""Local speech recognition behind one small interface (docs/voice.md "Recognition").

:class:`Recognizer` turns 16 kHz mono PCM into text. The engine that runs and is
tested here is faster-whisper (CTranslate2) with the ``base`` model at int8 on the
CPU; it is imported, and the model loaded, on first use, never at import.
Blocking: the voice service calls it on a worker thread, one call at a time.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Protocol

# Whisper writes Mandarin in traditional or simplified characters as it likes; a
# simplified prompt with full-width punctuation steers it to what a mainland player types.
PROMPTS = {"zh": "以下是普通话的句子，其中可能有英文游戏名。", "yue": "以下係粵語嘅句子。"}

# Whisper's encoder reads a 30 s window (3,000 mel frames) however short the speech, and
# its attention over that window is most of a push-to-talk utterance's time on a CPU.
# An utterance that fits is encoded over its own length plus MARGIN_FRAMES of silence
# instead (2 s: chosen on the test clips, over twelve silences around each; 1 s heard
# worse, 3 s no better); a longer one takes faster-whisper's own 30 s windows.
# Measured in docs/benchmarks.md.
FRAMES_PER_SECOND = 100
SAMPLES_PER_FRAME = 160  # 16 kHz
WINDOW_FRAMES = 3000
MARGIN_FRAMES = 200
# A degenerate short-window answer (a phrase repeated: text that compresses this well,
# faster-whisper's own threshold) is decoded again over the full window.
REPEATED = 2.4
MAX_TOKENS = 224  # a 30 s window's answer, as faster-whisper bounds it


def invented(no_speech_prob: float, avg_logprob: float) -> bool:
    """Whether a decoded segment is words Whisper invented in silence: its own no-speech
    estimate high and the words unlikely."""
    return no_speech_prob > 0.6 and avg_logprob < -1


def short_window(frames: int) -> int | None:
    """The encoder window (mel frames) of ``frames`` of audio: its length and a 2 s margin
    in whole seconds, or None when that is not shorter than Whisper's own 30 s."""
    wanted = -(-(frames + MARGIN_FRAMES) // FRAMES_PER_SECOND) * FRAMES_PER_SECOND
    return wanted if wanted < WINDOW_FRAMES else None


class Recognizer(Protocol):
    """What the voice service needs of a speech recogniser."""

    def transcribe(self, pcm: bytes, *, final: bool) -> str:
        """The words in ``pcm`` (16 kHz mono 16-bit); ``final``: the answer, not a partial."""
        ...

    def close(self) -> None:
        """Free the model's memory."""
        ...


class WhisperRecognizer:
    """faster-whisper over a CTranslate2 model folder.

    Args:
        folder: The model's files (:func:`xtyserver.voice.model_files.model_folder`).
        language: ``zh``, ``en``, ``yue`` or ``auto`` (detected per utterance, slower).
        threads: CPU threads of one transcription.
        beam_size: Of the final transcript (partials use 1).
        compute_type: CTranslate2's, ``int8`` on a CPU.
        model: A ``WhisperModel`` loaded already (the tests share one); None: loaded here.

    ``fit_window``: encode an utterance that fits over its own length (:func:`short_window`);
    False: over Whisper's 30 s window, as faster-whisper does (the benchmark's baseline).
    """

    def __init__(
        self,
        folder: Path,
        *,
        language: str = "zh",
        threads: int = 2,
        beam_size: int = 1,
        compute_type: str = "int8",
        model: Any = None,
    ) -> None:
        if model is None:
            from faster_whisper import WhisperModel

            model = WhisperModel(
                str(folder), device="cpu", compute_type=compute_type, cpu_threads=threads
            )
        self._model: Any = model
        self._language = None if language == "auto" else language
        self._prompt = PROMPTS.get(language)
        self._beam = beam_size
        self.fit_window = True

    def transcribe(self, pcm: bytes, *, final: bool) -> str:
        import numpy as np

        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        beam = self._beam if final else 1
        if self._language is not None and self.fit_window:
            text = self._short(audio, beam)
            if text is not None:
                return text
        segments, _info = self._model.transcribe(
            audio,
            language=self._language,
            beam_size=beam,
            without_timestamps=True,
            condition_on_previous_text=False,
            initial_prompt=self._prompt,
            vad_filter=False,
        )
        kept = (s.text for s in segments if not invented(s.no_speech_prob, s.avg_logprob))
        return "".join(kept).strip()

    def _short(self, audio: Any, beam: int) -> str | None:
        """``audio`` decoded over a window of its own length (:func:`short_window`); None
        when it does not fit one or its answer is degenerate (the full window decides)."""
        import numpy as np
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.transcribe import get_compression_ratio

        model = self._model
        window = short_window(len(audio) // SAMPLES_PER_FRAME)
        if window is None:
            return None
        # The margin is silence in the audio, as Whisper was trained on, not zeros in the
        # mel features (faster-whisper's own padding): a clip ending close to the key's
        # release is then heard as well as one with a second of silence after it.
        silence = window * SAMPLES_PER_FRAME - len(audio)
        features = model.feature_extractor(np.pad(audio, (0, silence)))
        encoded = model.encode(pad_or_trim(features, window))
        tokenizer, prompt, suppress = self._decoding
        result = model.model.generate(
            encoded,
            [prompt],
            beam_size=beam,
            max_length=len(prompt) + MAX_TOKENS,
            return_scores=True,
            return_no_speech_prob=True,
            suppress_blank=True,
            suppress_tokens=suppress,
        )[0]
        tokens = [t for t in result.sequences_ids[0] if t < tokenizer.eot]
        # A token cut inside a character decodes as U+FFFD: not a word anybody said.
        text: str = tokenizer.decode(tokens).replace("\ufffd", "").strip()
        if not text:
            return ""
        if get_compression_ratio(text) > REPEATED:
            return None
        avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)  # faster-whisper's
        return "" if invented(result.no_speech_prob, avg_logprob) else text

    @functools.cached_property
    def _decoding(self) -> tuple[Any, list[int], list[int]]:
        """What every short-window decode of this language starts from, made once: the
        tokenizer, the prompt's tokens and the tokens never written (faster-whisper's)."""
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        model = self._model
        tokenizer = Tokenizer(
            model.hf_tokenizer,
            model.model.is_multilingual,
            task="transcribe",
            language=self._language,
        )
        previous = tokenizer.encode(" " + self._prompt) if self._prompt else []
        prompt: list[int] = model.get_prompt(tokenizer, previous, without_timestamps=True)
        return tokenizer, prompt, list(get_suppressed_tokens(tokenizer, [-1]))

    @property
    def model(self) -> Any:
        """The loaded ``WhisperModel``."""
        return self._model

    def close(self) -> None:
        self._model = None
