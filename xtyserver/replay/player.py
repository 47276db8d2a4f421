"""Play the client side of a recording against a running server (a shell: websockets, Pillow).

What is sent, when, and with which substitutions is in docs/replay.md "Record and replay":
the same bytes otherwise, so a broken frame is broken the same way. It drives a
raw WebSocket, not the adapter client, because it must send frames the client
would refuse to send.
"""

from __future__ import annotations

import base64
import io
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import cache
from typing import Any

import anyio
import msgspec
import websockets
from PIL import Image
from websockets.asyncio.client import ClientConnection, connect

from xtyserver.clock import Clock, SystemClock
from xtyserver.replay.recording import IMAGE_PLACEHOLDER, REDACTED, Entry, ImageNote, Recording

_CAPTURED = re.compile(r'("capturedAt"\s*:\s*")([^"]{1,64})(")')
_FORMATS = {"image/png": "PNG", "image/jpeg": "JPEG", "image/webp": "WEBP"}
_MIMES = {fmt: mime for mime, fmt in _FORMATS.items()}
Progress = Callable[[int, int], None]


class Played(msgspec.Struct, frozen=True):
    """What a replay sent and got back (``close_code`` None: still open at the end)."""

    sent: int
    received: list[dict[str, Any]]
    seconds: float
    close_code: int | None


async def play(
    recording: Recording,
    *,
    url: str,
    token: str,
    speed: float | None = 1.0,
    timeout: float = 30.0,
    clock: Clock | None = None,
    progress: Progress | None = None,
) -> Played:
    """Send a recording's client frames and collect the answers.

    ``speed`` divides the recorded timing (None: as fast as possible); ``timeout``
    bounds the wait for the answers once everything is sent; ``progress`` gets
    (frames sent, frames in total) after each frame.
    """
    clock = clock or SystemClock()
    shift = clock.now() - recording.header.started_at
    headers = {"Authorization": f"Bearer {token}"} if recording.header.auth == "header" else {}
    inbound = recording.inbound()
    after = answers_before(recording)
    wanted = sum(1 for f in recording.outbound() if f.get("type") != "chat.delta")
    received: list[dict[str, Any]] = []
    answers = 0
    closed = False
    changed = anyio.Event()
    began = anyio.current_time()

    async def read(ws: ClientConnection) -> None:
        nonlocal answers, changed, closed
        try:
            async for message in ws:
                frame = json.loads(message)
                received.append(frame)
                answers += frame.get("type") != "chat.delta"
                changed.set()
                changed = anyio.Event()
        except websockets.ConnectionClosed:
            pass
        closed = True
        changed.set()

    async def answered(count: int) -> None:
        with anyio.move_on_after(timeout):
            while answers < count and not closed:
                await changed.wait()

    async with connect(url, additional_headers=headers, max_size=None, open_timeout=timeout) as ws:
        async with anyio.create_task_group() as tg:
            tg.start_soon(read, ws)
            for n, entry in enumerate(inbound, start=1):
                # Never ahead of the server: what answered before this frame has come.
                await answered(after[n - 1])
                if speed is not None:
                    await anyio.sleep_until(began + entry.t / speed)
                try:
                    await ws.send(message(entry, token=token, shift=shift))
                except websockets.ConnectionClosed:
                    break
                if progress is not None:
                    progress(n, len(inbound))
            await answered(wanted)
            tg.cancel_scope.cancel()
        await ws.close(1000)
    return Played(len(inbound), received, anyio.current_time() - began, ws.close_code)


def answers_before(recording: Recording) -> list[int]:
    """For each client frame, how many server frames (deltas aside) came before it."""
    counts = []
    answers = 0
    for entry in recording.entries:
        if entry.inbound:
            counts.append(answers)
        elif entry.frame is not None and entry.frame.get("type") != "chat.delta":
            answers += 1
    return counts


def message(entry: Entry, *, token: str, shift: float) -> str | bytes:
    """The message to send for one recorded client frame."""
    if entry.binary is not None:
        return bytes(int(entry.binary.get("bytes", 1)))
    if entry.unparsed is not None:
        return "x" * int(entry.unparsed.get("bytes", 1))
    assert entry.raw is not None
    raw = entry.raw
    if f'"{REDACTED}"' in raw and '"adapter.hello"' in raw:
        raw = raw.replace(f'"{REDACTED}"', json.dumps(token), 1)
    if entry.image is not None:
        raw = raw.replace(f'"{IMAGE_PLACEHOLDER}"', f'"{stand_in_image(entry.image)}"', 1)
    return _CAPTURED.sub(lambda m: m[1] + _shifted(m[2], shift) + m[3], raw) if shift else raw


def _shifted(stamp: str, seconds: float) -> str:
    try:
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return stamp  # not a timestamp: the server refuses it the same way
    if when.tzinfo is None:
        return stamp
    moved = (when + timedelta(seconds=seconds)).astimezone(UTC)
    return moved.isoformat(timespec="milliseconds").replace("+00:00", "Z")


@cache
def _image(mime: str, width: int, height: int) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (96, 160, 96)).save(buf, format=_FORMATS[mime])
    return base64.b64encode(buf.getvalue()).decode("ascii")


def stand_in_image(note: ImageNote) -> str:
    """Base64 of a plain image of the recorded format and size (not an image if it was not).

    The format is the one the bytes had, which may differ from the declared ``mime``
    (the server refuses that mismatch, and so it does again on replay).
    """
    mime = _MIMES.get(note.format or "", note.mime)
    if note.width and note.height and mime in _FORMATS:
        return _image(mime, note.width, note.height)
    return base64.b64encode(b"not an image").decode("ascii")


def progress_bar(done: int, total: int, width: int = 30) -> str:
    """``[#######.......]  12/40 frames`` for a terminal line."""
    filled = width * done // max(total, 1)
    return f"[{'#' * filled}{'.' * (width - filled)}] {done:>{len(str(total))}}/{total} frames"
