"""Small parts of the adapter client: its errors, request waiters, frame helpers."""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import TypeVar

import anyio

from xtyserver.adapter.precheck import Refused
from xtyserver.clock import Clock, SystemClock
from xtyserver.protocol.frames import (
    ActionsDeclared,
    Error,
    Identity,
    ImageInput,
    MemoryForgotten,
    MemoryPreview,
    MemoryResult,
    StatsResult,
)
from xtyserver.protocol.images import Mime

T = TypeVar("T")


class ConnectionLost(Exception):
    """The connection is gone and is not (or not yet) back; ``code`` is its close code."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code


def screenshot(data: bytes, mime: Mime = "image/jpeg") -> ImageInput:
    """A ``chat.send`` image from the bytes of a PNG, JPEG or WebP file."""
    return ImageInput(mime=mime, data=base64.b64encode(data).decode("ascii"))


def captured_at(clock: Clock | None = None) -> str:
    """``capturedAt`` for a modelContext read now: RFC 3339 UTC with milliseconds and ``Z``."""
    now = (clock or SystemClock()).now()
    return datetime.fromtimestamp(now, UTC).isoformat(timespec="milliseconds")[:-6] + "Z"


Answer = StatsResult | MemoryResult | MemoryPreview | MemoryForgotten | ActionsDeclared | Error
"""A server frame that answers one management request."""


class Waiter:
    def __init__(self) -> None:
        self.event = anyio.Event()
        self.value: Answer | ConnectionLost | None = None

    def set(self, value: Answer | ConnectionLost) -> None:
        self.value = value
        self.event.set()


def same_save(a: Identity, b: Identity) -> bool:
    """Whether two identities name the same save (``saveName`` is only a display name)."""
    return (a.game_id, a.save_id) == (b.game_id, b.save_id)


def expect(answer: Answer, kind: type[T]) -> T:
    """The answer as ``kind``; an ``error`` answer is raised as :class:`Refused`."""
    if isinstance(answer, Error):
        raise Refused(answer.code, answer.message, fields=answer.fields or (), frame_id=answer.id)
    if not isinstance(answer, kind):
        raise Refused("unexpected_frame", f"expected {kind.__name__}, got {type(answer).__name__}")
    return answer
