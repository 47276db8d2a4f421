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
    """Each test clip with silence around it as a key press leaves it (0.1 to 1 s before,
    0.3 to 1 s after: twelve ways, since base is fragile on a one-second clip): over them,
    the fitted window's mean error rate is no worse than the 30 s window's, clip by clip."""
    worse: dict[str, tuple[float, float]] = {}
    for name, ref in clip_texts().items():
        lent = speech_model(str(ref["language"]))()
        recognizer = lent.recognizer  # type: ignore[attr-defined]
        assert isinstance(recognizer, WhisperRecognizer)
        pcm, rate = wav_pcm(CLIPS / f"{name}.wav")
        assert rate == 16000
        paddings = [(0.1, 1.0)] if ref["language"] == "en" else PADDINGS
        errors = {True: 0.0, False: 0.0}
        for before, after in paddings:
            audio = silence(before) + pcm + silence(after)
            for fit in (True, False):
                recognizer.fit_window = fit
                errors[fit] += error_rate(recognizer.transcribe(audio, final=True), ref["text"])
        if errors[True] > errors[False]:
            worse[name] = (errors[True] / len(paddings), errors[False] / len(paddings))
    assert worse == {}


PADDINGS = [(b, a) for b in (0.1, 0.3, 0.6, 1.0) for a in (0.3, 0.6, 1.0)]


def silence(seconds: float) -> bytes:
    return b"\x00\x00" * int(16000 * seconds)
