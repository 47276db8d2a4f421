"""Local speech recognition behind one small interface (docs/voice.md "Recognition").

:class:`Recognizer` turns 16 kHz mono PCM into text. The engine that runs and is
tested here is faster-whisper (CTranslate2) with the ``base`` model at int8 on the
CPU; it is imported, and the model loaded, on first use, never at import.
Blocking: the voice service calls it on a worker thread, one call at a time.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

# Whisper writes Mandarin in traditional or simplified characters as it likes; a
# simplified prompt with full-width punctuation steers it to what a mainland player types.
PROMPTS = {"zh": "以下是普通话的句子，其中可能有英文游戏名。", "yue": "以下係粵語嘅句子。"}


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
    """

    def __init__(
        self,
        folder: Path,
        *,
        language: str = "zh",
        threads: int = 2,
        beam_size: int = 1,
        compute_type: str = "int8",
    ) -> None:
        from faster_whisper import WhisperModel

        self._model: Any = WhisperModel(
            str(folder), device="cpu", compute_type=compute_type, cpu_threads=threads
        )
        self._language = None if language == "auto" else language
        self._prompt = PROMPTS.get(language)
        self._beam = beam_size

    def transcribe(self, pcm: bytes, *, final: bool) -> str:
        import numpy as np

        audio = np.frombuffer(pcm, dtype="<i2").astype(np.float32) / 32768.0
        segments, _info = self._model.transcribe(
            audio,
            language=self._language,
            beam_size=self._beam if final else 1,
            without_timestamps=True,
            condition_on_previous_text=False,
            initial_prompt=self._prompt,
            vad_filter=False,
        )
        # Whisper invents words in silence; its own no-speech estimate drops them.
        kept = (s.text for s in segments if not (s.no_speech_prob > 0.6 and s.avg_logprob < -1))
        return "".join(kept).strip()

    def close(self) -> None:
        self._model = None
