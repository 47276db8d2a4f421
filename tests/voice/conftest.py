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

import contextlib
import ctypes.util
import importlib.util
import os
import shutil
import signal
import subprocess
import time
import tomllib
import wave
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

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


@dataclass
class Pulse:
    """The running daemon: play a clip into the microphone, record the speaker."""

    runtime: Path
    env: dict[str, str]

    def play(self, clip: Path) -> subprocess.Popen[bytes]:
        """Start playing ``clip`` into the virtual microphone."""
        return subprocess.Popen(["paplay", "--device=mic", str(clip)], env=self.env)

    @contextlib.contextmanager
    def recording(self, into: Path) -> Iterator[None]:
        """Record the virtual speaker into ``into`` (16 kHz mono WAV) while inside."""
        proc = subprocess.Popen(
            [
                "parecord",
                "--device=spk.monitor",
                "--rate=16000",
                "--channels=1",
                "--format=s16le",
                "--file-format=wav",
                str(into),
            ],
            env=self.env,
        )
        try:
            yield
        finally:
            time.sleep(0.3)  # the last buffered samples
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=10)


def wav_pcm(path: Path) -> tuple[bytes, int]:
    with wave.open(str(path)) as w:
        return w.readframes(w.getnframes()), w.getframerate()


@pytest.fixture
def pulse(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Pulse]:
    if MISSING is not None:
        pytest.skip(MISSING)
    runtime = tmp_path_factory.mktemp("pulse")
    env = {**os.environ, "XDG_RUNTIME_DIR": str(runtime), "HOME": str(runtime)}
    subprocess.run(
        [
            "pulseaudio",
            "-D",
            "-n",
            "--exit-idle-time=-1",
            "--load=module-native-protocol-unix",
            "--load=module-null-sink sink_name=spk",
            "--load=module-null-sink sink_name=mic",
            "--load=module-remap-source source_name=micin master=mic.monitor",
        ],
        env=env,
        check=True,
        capture_output=True,
        timeout=30,
    )
    pid_file = runtime / "pulse" / "pid"
    pid = int(pid_file.read_text().strip())
    try:
        # This process's PortAudio talks to it through ALSA's pulse plugin.
        socket = runtime / "pulse" / "native"
        monkeypatch.setenv("PULSE_SERVER", f"unix:{socket}")
        monkeypatch.setenv("PULSE_SOURCE", "micin")
        monkeypatch.setenv("PULSE_SINK", "spk")
        env.update(PULSE_SERVER=f"unix:{socket}")
        yield Pulse(runtime, env)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
