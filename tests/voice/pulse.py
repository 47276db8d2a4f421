"""A PulseAudio daemon with a virtual microphone and speaker (tests/voice, scripts/bench/voice.py).

``paplay --device=mic`` plays a clip into the null sink ``mic``, whose monitor is
remapped as the source ``micin``: PortAudio records it from ALSA's ``pulse``
device with ``PULSE_SOURCE=micin``, exactly as on a player's PC it records the
microphone. What PortAudio plays with ``PULSE_SINK=spk`` is recorded from
``spk.monitor`` with ``parecord``. The daemon runs in the given runtime folder
and is stopped by its pid.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


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


@contextlib.contextmanager
def virtual_sound(runtime: Path) -> Iterator[Pulse]:
    """The daemon running in ``runtime`` while inside; this process's PortAudio uses it."""
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
    pid = int((runtime / "pulse" / "pid").read_text().strip())
    socket = runtime / "pulse" / "native"
    # This process's PortAudio talks to it through ALSA's pulse plugin.
    ours = {"PULSE_SERVER": f"unix:{socket}", "PULSE_SOURCE": "micin", "PULSE_SINK": "spk"}
    before = {k: os.environ.get(k) for k in ours}
    os.environ.update(ours)
    env.update(PULSE_SERVER=ours["PULSE_SERVER"])
    try:
        yield Pulse(runtime, env)
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        for _ in range(100):
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
