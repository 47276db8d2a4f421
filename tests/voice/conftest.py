"""Real sound for the voice tests: a PulseAudio daemon with a virtual microphone and speaker.

``paplay --device=mic`` plays a clip into the null sink ``mic``, whose monitor is
remapped as the source ``micin``: PortAudio records it from ALSA's ``pulse``
device with ``PULSE_SOURCE=micin``, exactly as on a player's PC it records the
microphone. What PortAudio plays with ``PULSE_SINK=spk`` is recorded from
``spk.monitor`` with ``parecord``. The daemon runs in a temporary runtime folder
and is stopped by its pid. Without the Debian packages (pulseaudio,
pulseaudio-utils, libportaudio2, libasound2-plugins) or the voice extra the
tests skip, saying which is missing.
"""

from __future__ import annotations

import base64
import ctypes.util
import importlib.util
import re
import shutil
import tomllib
import wave
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.voice.pulse import Pulse, virtual_sound
from xtyserver.voice.asr import Recognizer

CLIPS = Path(__file__).parent / "clips"
PROGRAMS = ("pulseaudio", "paplay", "parecord", "pactl")


def clip_texts() -> dict[str, dict[str, object]]:
    with (CLIPS / "clips.toml").open("rb") as f:
        return tomllib.load(f)


def missing() -> str | None:
    """What of the real sound path is not installed here, or None."""
    lacking = [p for p in PROGRAMS if shutil.which(p) is None]
    if lacking:
        return f"{', '.join(lacking)} not installed (apt-get install pulseaudio pulseaudio-utils)"
    for module in ("sounddevice", "faster_whisper"):
        if importlib.util.find_spec(module) is None:
            return f"{module} not installed (pip install .[voice])"
    # Not imported here: PortAudio lists the devices once, when it is loaded.
    if ctypes.util.find_library("portaudio") is None:
        return "PortAudio not installed (apt-get install libportaudio2 libasound2-plugins)"
    return None


MISSING = missing()


def wav_pcm(path: Path) -> tuple[bytes, int]:
    with wave.open(str(path)) as w:
        return w.readframes(w.getnframes()), w.getframerate()


class Lent:
    """A recogniser over the session's one loaded model: its ``close`` keeps the model."""

    def __init__(self, recognizer: Recognizer) -> None:
        self.recognizer = recognizer

    def transcribe(self, pcm: bytes, *, final: bool) -> str:
        return self.recognizer.transcribe(pcm, final=final)

    def close(self) -> None:
        pass  # the next test's server uses it too


@pytest.fixture(scope="session")
def speech_model(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[[str], Callable[[], Recognizer]]:
    """faster-whisper ``base`` joined from its wheels and loaded once per test session (per
    worker), as a server loads it on first use; ``speech_model(language)`` is what a server
    builds its recogniser with."""
    if MISSING is not None:
        pytest.skip(MISSING)
    from xtyserver.voice.asr import WhisperRecognizer
    from xtyserver.voice.model_files import model_folder

    loaded: list[WhisperRecognizer] = []

    def for_language(language: str) -> Callable[[], Recognizer]:
        def build() -> Recognizer:
            if not loaded:
                folder = model_folder(tmp_path_factory.mktemp("voice-model"))
                loaded.append(WhisperRecognizer(folder, language=language))
            first = loaded[0]
            return Lent(WhisperRecognizer(Path(), language=language, model=first.model))

        return build

    return for_language


@pytest.fixture
def pulse(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Pulse]:
    if MISSING is not None:
        pytest.skip(MISSING)
    with virtual_sound(tmp_path_factory.mktemp("pulse")) as sound:
        yield sound


def assert_no_raw_audio(data_dir: Path, logged: str, pcm: bytes) -> None:
    """No slice of ``pcm`` in any file of the data folder, as bytes or in base64 (the wire's
    spelling), and no long base64 run in the log."""
    probes = [pcm[i : i + 64] for i in range(len(pcm) // 4, len(pcm) - 64, len(pcm) // 5)]
    spelled = [base64.b64encode(p)[8:72] for p in probes]
    for path in data_dir.rglob("*"):
        if path.is_file():
            body = path.read_bytes()
            assert not any(p in body for p in probes + spelled), path.name
    assert not re.search(r"[A-Za-z0-9+/]{120,}", logged), "a long base64 run in the log"
    assert not any(p.decode() in logged for p in spelled)
