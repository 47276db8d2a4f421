"""The recogniser (xtyserver/voice/asr.py): an utterance that fits is encoded over a window
of its own length (docs/voice.md "A window fitted to the utterance"), and hears the test
clips as well as Whisper's 30 s window does."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.voice.cer import error_rate
from tests.voice.conftest import CLIPS, clip_texts, wav_pcm
from xtyserver.voice.asr import Recognizer, WhisperRecognizer, short_window


@pytest.mark.parametrize(
    ("frames", "window"),
    [
        (0, 300),  # nothing heard: the 3 s margin
        (1, 400),
        (100, 400),  # 1 s of speech: 4 s
        (101, 500),
        (2600, 2900),  # 26 s: the last that fits
        (2601, None),  # past it: Whisper's own 30 s windows
        (3000, None),
        (48000, None),
    ],
)
def test_the_window_is_the_utterance_and_3_s_in_whole_seconds(
    frames: int, window: int | None
) -> None:
    assert short_window(frames) == window


def test_the_fitted_window_hears_every_clip_as_well_as_the_full_one(
    speech_model: Callable[[str], Callable[[], Recognizer]],
) -> None:
    """Each test clip, with half a second of silence either side (a key pressed, then
    speech): the fitted window's answer is as near the reference as the 30 s window's."""
    quiet = b"\x00\x00" * 8000
    worse: list[tuple[str, str, str]] = []
    for name, ref in clip_texts().items():
        lent = speech_model(str(ref["language"]))()
        recognizer = lent.recognizer  # type: ignore[attr-defined]
        assert isinstance(recognizer, WhisperRecognizer)
        pcm, rate = wav_pcm(CLIPS / f"{name}.wav")
        assert rate == 16000
        audio = quiet + pcm + quiet
        recognizer.fit_window = True
        fitted = recognizer.transcribe(audio, final=True)
        recognizer.fit_window = False
        full = recognizer.transcribe(audio, final=True)
        expected = str(ref["text"])
        if error_rate(fitted, expected) > error_rate(full, expected):
            worse.append((name, fitted, full))
        assert fitted.strip(), name  # every clip is heard
    assert worse == []
