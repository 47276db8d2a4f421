"""The page's voice section (docs/voice.md "The page"): status, devices, models, the test.

The switches themselves (on/off, devices, language, model, voice, speed, mute) are
stored settings and go through ``POST settings`` like every other; this view says
what the player cannot type: whether the voice extra is installed, whether the
microphone is open now, the speech model's state and download progress, the
devices this PC has. ``POST voice-fetch`` downloads a larger model once (progress
in the view and the console); ``POST voice-test`` records three seconds, shows
the transcript and speaks a sample line.
"""

from __future__ import annotations

import dataclasses
import importlib.util
from collections.abc import Callable
from typing import Any

import anyio
import anyio.to_thread
import msgspec

from xtyserver.manage.ops import Refused
from xtyserver.session.voice import VoiceTexts
from xtyserver.voice.fetch import MODELS, present
from xtyserver.voice.service import VoiceService

TEST_SECONDS = 3.0
"""How long the test button records."""
EXTRA = ("sounddevice", "faster_whisper")


class FetchBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``POST voice-fetch``: download this model (one of :data:`~xtyserver.voice.fetch.MODELS`)."""

    model: str


def installed() -> bool:
    """Whether the voice extra is here (found without importing it)."""
    return all(importlib.util.find_spec(name) is not None for name in EXTRA)


def devices() -> dict[str, Any]:
    """The PC's microphones and speakers by name, or the code of why none could be listed.
    Blocking (PortAudio looks at the devices)."""
    try:
        from xtyserver.voice.capture import device_names

        return {
            "inputs": device_names(output=False),
            "outputs": device_names(output=True),
            "code": "",
        }
    except (ImportError, OSError) as exc:
        return {"inputs": [], "outputs": [], "code": _portaudio_code(exc)}


def _portaudio_code(exc: BaseException) -> str:
    # sounddevice raises OSError when the PortAudio library itself is missing.
    return "voice_unavailable" if isinstance(exc, ImportError) else "no_microphone"


class PageVoice:
    """The voice section's steps for one running server.

    Args:
        service: The server's voice.
        enabled: Whether voice is on now (the sessions' rules, which the page changes).
        texts: The messages of the ``voice.error`` codes, and the test's sample line.
    """

    def __init__(
        self, service: VoiceService, enabled: Callable[[], bool], texts: VoiceTexts
    ) -> None:
        self.service = service
        self.enabled = enabled
        self.texts = texts
        self.testing = False

    async def view(self) -> dict[str, Any]:
        """What the voice section shows; the devices only with voice on and installed (listing
        them loads PortAudio, which voice off never does)."""
        service = self.service
        opts = service.options
        here = installed()
        on = self.enabled()
        listed = await anyio.to_thread.run_sync(devices) if on and here else None
        # The download's state before the folders: a fetch ends while they are looked at, and
        # "done" read after a stale "not present" would show a finished model as missing.
        download = dataclasses.asdict(service.download)
        models = [
            {
                "name": c.name,
                "megabytes": c.megabytes,
                "present": await anyio.to_thread.run_sync(present, opts.data_dir, c.name),
            }
            for c in MODELS.values()
        ]
        if download["code"]:
            download["message"] = self.message(download["code"])
        return {
            "installed": here,
            "enabled": on,
            "microphoneOpen": service.listening > 0,
            "testing": self.testing,
            "model": opts.model,
            "modelDir": opts.model_dir,
            "status": service.status,
            "models": models,
            "download": download,
            "devices": listed,
        }

    async def fetch(self, body: FetchBody) -> dict[str, Any]:
        """Start downloading ``body.model`` (the view shows its progress)."""
        choice = MODELS.get(body.model)
        if choice is None or not choice.repo:
            raise Refused(f"model must be one of {', '.join(MODELS)} but base", 400, ["model"])
        if not self.service.fetch(body.model):
            raise Refused("a model is being downloaded already", 409, ["model"])
        return await self.view()

    async def test(self) -> dict[str, Any]:
        """Record :data:`TEST_SECONDS`, transcribe, speak the sample line; what came of it."""
        if not installed():
            code = "voice_unavailable"
            return {"transcript": "", "code": code, "message": self.message(code)}
        if self.testing:
            raise Refused("the test is running already", 409)
        self.testing = True
        try:
            text, code = await self.service.try_out(TEST_SECONDS, self.texts.test_line)
        finally:
            self.testing = False
        return {"transcript": text, "code": code, "message": self.message(code) if code else ""}

    def message(self, code: str) -> str:
        """The player's message for a ``voice.error`` or model-file code."""
        seconds = f"{self.service.options.max_seconds:g}"
        text = getattr(self.texts, code, None)
        if not isinstance(text, str):
            text = self.texts.voice_unavailable
        return text.format(seconds=seconds)
