"""The PC's microphone through PortAudio (sounddevice), between a start and a stop.

A shell: it opens the configured input device at 16 kHz mono 16-bit, keeps what
it hears in memory (never on disk) and reports how the device failed as one of
the ``voice.error`` codes. PortAudio calls :meth:`Microphone._heard` on its own
thread; the lock guards the buffer between it and the event loop.
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any

from xtyserver.errors import XtyError
from xtyserver.protocol.limits import VOICE_SAMPLE_RATE


class DeviceError(XtyError):
    """The device could not be used: ``no_microphone``, ``device_busy``,
    ``device_blocked`` or ``device_lost`` (the same codes as ``voice.error``)."""


def device_code(exc: BaseException) -> str:
    """The ``voice.error`` code of a PortAudio failure, from its error text."""
    text = str(exc).lower()
    if "unavailable" in text or "busy" in text or "in use" in text:
        return "device_busy"
    if "host error" in text or "access" in text or "denied" in text or "permission" in text:
        return "device_blocked"
    return "no_microphone"


def find_device(name: str, *, output: bool) -> int | None:
    """The PortAudio index of the device named ``name`` (a part of its name, or its index);
    None: the system's default. Raises :class:`DeviceError` when there is none such."""
    import sounddevice as sd

    kind = "max_output_channels" if output else "max_input_channels"
    devices: list[dict[str, Any]] = [dict(d) for d in sd.query_devices()]
    if (name and not any(name.lower() in str(d["name"]).lower() for d in devices)) or (
        not name and not any(d[kind] > 0 for d in devices)
    ):
        # PortAudio lists the devices once: a microphone plugged in since needs a new look.
        with contextlib.suppress(sd.PortAudioError):
            sd._terminate()
            sd._initialize()
        devices = [dict(d) for d in sd.query_devices()]
    if not name:
        default = sd.default.device[1 if output else 0]
        if default is None or default < 0:
            raise DeviceError("no default device", code="no_microphone")
        return None
    if name.isdigit() and int(name) < len(devices) and devices[int(name)][kind] > 0:
        return int(name)
    for index, device in enumerate(devices):
        if device[kind] > 0 and name.lower() in str(device["name"]).lower():
            return index
    raise DeviceError(f"no {'output' if output else 'input'} device {name!r}", code="no_microphone")


def device_names(*, output: bool) -> list[str]:
    """The names of the PC's input (or output) devices, for the page's choice."""
    import sounddevice as sd

    kind = "max_output_channels" if output else "max_input_channels"
    return [str(d["name"]) for d in sd.query_devices() if d[kind] > 0]


class Microphone:
    """One recording of the input device, from :meth:`open` to :meth:`close`.

    Args:
        device: The configured input device (``voice.input_device``; "": the default).
        max_bytes: What the utterance may hold; more is not kept.
    """

    def __init__(self, device: str, max_bytes: int) -> None:
        self._device = device
        self._max = max_bytes
        self._lock = threading.Lock()
        self._pcm = bytearray()
        self._stream: Any = None
        self._closing = False
        self.lost = False

    def open(self) -> None:
        """Start recording. Blocking (opening a device takes tens of ms).

        Raises:
            DeviceError: the device is missing, busy or blocked.
        """
        import sounddevice as sd

        index = find_device(self._device, output=False)
        try:
            stream = sd.RawInputStream(
                samplerate=VOICE_SAMPLE_RATE,
                channels=1,
                dtype="int16",
                device=index,
                blocksize=VOICE_SAMPLE_RATE // 20,
                callback=self._heard,
                finished_callback=self._finished,
            )
            stream.start()
        except (sd.PortAudioError, ValueError) as exc:
            raise DeviceError(str(exc), code=device_code(exc)) from None
        self._stream = stream

    def _heard(self, data: Any, frames: int, time: Any, status: Any) -> None:
        with self._lock:
            room = self._max - len(self._pcm)
            if room > 0:
                self._pcm += bytes(data)[:room]

    def _finished(self) -> None:
        # PortAudio ends a stream by itself only when the device went away.
        if not self._closing:
            self.lost = True

    @property
    def active(self) -> bool:
        stream = self._stream
        return stream is not None and bool(stream.active) and not self.lost

    def audio(self) -> bytes:
        """What was heard so far."""
        with self._lock:
            return bytes(self._pcm)

    def close(self) -> bytes:
        """Stop recording; the utterance's audio (the buffer is then emptied). Blocking."""
        import sounddevice as sd

        self._closing = True
        stream, self._stream = self._stream, None
        if stream is not None:
            try:
                stream.stop()
                stream.close()
            except sd.PortAudioError:
                self.lost = True
        with self._lock:
            pcm, self._pcm = bytes(self._pcm), bytearray()
        return pcm
