"""``xtyserver serve --record DIR``: each connection as one JSON-lines file.

A shell (files, Pillow). The connection runtime calls a :class:`ConnectionRecorder`
from its reader (every message received) and writer (every frame sent); the format
is :mod:`xtyserver.replay.recording`, what is redacted in docs/replay.md "Record and
replay". The tokens blanked out are the one at start and every one rotated in since.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import json
import re
import warnings
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import anyio

from xtyserver import __version__
from xtyserver.clock import Clock
from xtyserver.files import open_private, private_dir
from xtyserver.replay.recording import FORMAT, IMAGE_PLACEHOLDER, REDACTED

THREAD_BYTES = 64 * 1024  # hashing a screenshot runs off the event loop past this
RAW_MAX = 64 * 1024  # a message that is not a JSON object is kept only up to this size
_SAFE_NAME = re.compile(r"[^A-Za-z0-9_-]")
# A token field in a message that is not a JSON object (it may be a wrong token, still secret).
_TOKEN_FIELD = re.compile(r'("token"\s*:\s*")(?:[^"\\]|\\.)*(")')


class Recorder:
    """Where and how connections are recorded; one per server.

    ``token`` is blanked out of anything written; ``keep_images``
    (``--record-images``) keeps screenshots as sent.
    """

    def __init__(self, folder: Path, *, clock: Clock, token: str, keep_images: bool) -> None:
        self.folder = private_dir(folder)
        self._clock = clock
        self._tokens = [token] if token else []
        self._current: Callable[[], str] | None = None
        self._keep_images = keep_images

    def follow(self, current: Callable[[], str]) -> None:
        """Read the server's token from ``current`` too (``xtyserver token rotate``)."""
        self._current = current

    def tokens(self) -> list[str]:
        """Every token to blank out: the one at start and each one rotated in since."""
        if self._current is not None:
            token = self._current()
            if token and token not in self._tokens:
                self._tokens.append(token)
        return self._tokens

    def open(self, session_id: str, *, auth: str) -> ConnectionRecorder:
        """Start the file of one connection (``auth``: ``header`` or ``hello``)."""
        start = self._clock.now()
        stamp = datetime.fromtimestamp(start, UTC).strftime("%Y%m%dT%H%M%S")
        path = self.folder / f"{stamp}-{_SAFE_NAME.sub('_', session_id)}.jsonl"
        header = {
            "recording": FORMAT,
            "startedAt": start,
            "server": f"xtyserver {__version__}",
            "auth": auth,
            "images": "kept" if self._keep_images else "described",
        }
        # Owner-only, a line per frame reaches the disk.
        out = open_private(path, "w", encoding="utf-8", buffering=1)
        recorder = ConnectionRecorder(out, self._clock, start, self.tokens, self._keep_images)
        recorder.write(header)
        return recorder


class ConnectionRecorder:
    """Writes one connection's frames; called by the connection's reader and writer."""

    def __init__(
        self,
        out: IO[str],
        clock: Clock,
        start: float,
        tokens: Callable[[], list[str]],
        keep_images: bool,
    ) -> None:
        self._out = out
        self._clock = clock
        self._start = start
        self._tokens = tokens  # asked per line: a token rotated in meanwhile is blanked too
        self._keep_images = keep_images

    def write(self, line: dict[str, Any]) -> None:
        if self._out.closed:
            return
        text = json.dumps(line, ensure_ascii=False, separators=(",", ":"))
        for token in self._tokens():
            if token in text:
                text = text.replace(token, REDACTED)
        self._out.write(text + "\n")

    def _t(self) -> float:
        return round(self._clock.now() - self._start, 3)

    async def received(self, message: str | bytes) -> None:
        """A message from the adapter (before it is decoded)."""
        t = self._t()
        if len(message) > THREAD_BYTES:
            line = await anyio.to_thread.run_sync(self._inbound, t, message)
        else:
            line = self._inbound(t, message)
        self.write(line)

    def sent(self, data: bytes) -> None:
        """A frame the server wrote (compact JSON of a server frame)."""
        self.write({"t": self._t(), "out": json.loads(data)})

    def close(self, code: int | None) -> None:
        """The connection ended with this close code (``None``: dropped)."""
        self.write({"t": self._t(), "close": {"code": code}})
        self._out.close()

    def _inbound(self, t: float, message: str | bytes) -> dict[str, Any]:
        if isinstance(message, bytes):
            return {"t": t, "binary": _digest(message)}
        try:
            frame = json.loads(message)
        except (ValueError, RecursionError):
            frame = None
        if not isinstance(frame, dict):
            if len(message) > RAW_MAX:
                return {"t": t, "unparsed": _digest(message.encode("utf-8", "surrogatepass"))}
            return {"t": t, "in": _TOKEN_FIELD.sub(rf"\g<1>{REDACTED}\g<2>", message)}
        line: dict[str, Any] = {"t": t}
        changed = False
        if frame.get("type") == "adapter.hello" and isinstance(frame.get("token"), str):
            frame["token"] = REDACTED
            changed = True
        image = frame.get("image")
        if not self._keep_images and isinstance(image, dict) and isinstance(image.get("data"), str):
            line["image"] = describe_image(str(image.get("mime")), image["data"])
            image["data"] = IMAGE_PLACEHOLDER
            changed = True
        line["in"] = (
            json.dumps(frame, ensure_ascii=False, separators=(",", ":")) if changed else message
        )
        return line


def _digest(data: bytes) -> dict[str, Any]:
    return {"bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def describe_image(mime: str, data: str) -> dict[str, Any]:
    """Hash, size and dimensions of a base64 screenshot, read from its header only."""
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        raw = data.encode("utf-8", "surrogatepass")
    note: dict[str, Any] = {"mime": mime, **_digest(raw)}
    from PIL import Image  # imported here: only a recording server loads Pillow for this

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with Image.open(io.BytesIO(raw)) as img:  # reads the header, not the pixels
                note["width"], note["height"] = img.size
                note["format"] = img.format
    except (OSError, ValueError, Image.DecompressionBombError):
        pass  # not an image Pillow can read: described without its size
    return note
