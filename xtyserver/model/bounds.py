"""The bounds of one model call, as pure decisions.

No I/O, no clock: :mod:`xtyserver.model.client` and :mod:`xtyserver.model.request`
feed bytes, text and times in and act on the answers.

* :class:`SseLines` splits a streamed body into server-sent events and refuses a
  line (or an event) over :data:`LINE_BYTES`: a provider's 256 MB line is never
  held in memory, only the first 64 KiB of it.
* :class:`ReplyCap` keeps a reply within :data:`REPLY_CHARS` characters (tool-call
  arguments count too) and within :data:`TOOL_CALLS` tool calls per answer.
* :class:`ThinkFilter` keeps ``<think>...</think>`` reasoning that some providers
  put in ``content`` away from the player.
* :func:`token_limits` is what a request says about ``max_tokens``.
* :func:`image_refused` reads a provider's 400 as "this model takes no images".
* :func:`is_loopback` tells a local server (one request at a time) from a service.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterator
from typing import Literal
from urllib.parse import urlsplit

LINE_BYTES = 64 * 1024
"""Longest SSE line (and event) accepted from a provider."""

REPLY_CHARS = 8_000
"""Longest reply in characters; the rest is not read."""

REPLY_SECONDS = 60.0
"""Longest reply in seconds, from the request to the last chunk."""

TOOL_CALLS = 4
"""Tool calls kept per answer; further calls in the same answer are refused (dropped)."""

TokenField = Literal["max_tokens", "max_completion_tokens", "both"]
Purpose = Literal["chat", "background"]


class OversizedLine(Exception):
    """A provider sent an SSE line (or event) over the line cap."""


class SseEvent:
    """One server-sent event: its ``event`` name and joined ``data`` lines."""

    __slots__ = ("data", "event")

    def __init__(self, event: str | None, data: str) -> None:
        self.event = event
        self.data = data


class SseLines:
    """An incremental SSE decoder with a ``cap`` in bytes on every line and every event."""

    def __init__(self, cap: int = LINE_BYTES) -> None:
        self._cap = cap
        self._buffer = bytearray()
        self._skip_lf = False
        self._event: str | None = None
        self._data: list[str] = []
        self._size = 0

    def feed(self, chunk: bytes) -> Iterator[SseEvent]:
        """The events completed by ``chunk``; OversizedLine past the cap (nothing more kept)."""
        start = 0
        n = len(chunk)
        while start < n:
            if self._skip_lf:
                self._skip_lf = False
                if chunk[start] == 10:
                    start += 1
                    continue
            cr = chunk.find(b"\r", start)
            lf = chunk.find(b"\n", start)
            ends = [i for i in (cr, lf) if i >= 0]
            if not ends:
                self._grow(len(chunk) - start)
                self._buffer += chunk[start:]
                return
            end = min(ends)
            self._grow(end - start)
            self._buffer += chunk[start:end]
            line = bytes(self._buffer)
            self._buffer.clear()
            self._skip_lf = chunk[end] == 13
            start = end + 1
            event = self._line(line)
            if event is not None:
                yield event

    def finish(self) -> Iterator[SseEvent]:
        """The last event of a body that ended without a blank line."""
        if self._buffer:
            line = bytes(self._buffer)
            self._buffer.clear()
            event = self._line(line)
            if event is not None:
                yield event
        event = self._line(b"")
        if event is not None:
            yield event

    def _grow(self, more: int) -> None:
        if len(self._buffer) + more > self._cap:
            self._buffer.clear()
            raise OversizedLine(f"an SSE line over {self._cap} bytes")

    def _line(self, raw: bytes) -> SseEvent | None:
        if not raw:
            if not self._data and self._event is None:
                return None
            event = SseEvent(self._event, "\n".join(self._data))
            self._event, self._data, self._size = None, [], 0
            return event
        line = raw.decode("utf-8", errors="replace")
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if name == "data":
            self._size += len(raw)
            if self._size > self._cap:
                self._data, self._size = [], 0
                raise OversizedLine(f"an SSE event over {self._cap} bytes")
            self._data.append(value)
        elif name == "event":
            self._event = value
        return None


class ReplyCap:
    """Counts what a reply has streamed against the character and tool-call caps.

    ``chars`` counts content and tool arguments; ``tool_calls`` is per answer.
    """

    def __init__(self, chars: int = REPLY_CHARS, tool_calls: int = TOOL_CALLS) -> None:
        self.chars = chars
        self.tool_calls = tool_calls
        self.used = 0
        self.reached = False
        self._refused: set[int] = set()

    @property
    def refused_calls(self) -> int:
        """Tool calls of this answer refused for being past the cap."""
        return len(self._refused)

    def take(self, text: str) -> str:
        """The part of ``text`` that fits; once the cap is reached, ``reached`` is set."""
        room = max(self.chars - self.used, 0)
        kept = text[:room]
        self.used += len(kept)
        if len(text) > room:
            self.reached = True
        return kept

    def call_allowed(self, index: int, kept: int, is_new: bool) -> bool:
        """Whether a delta of tool call ``index`` may be kept (``kept`` calls kept so far)."""
        if not is_new or kept < self.tool_calls:
            return True
        if len(self._refused) < 1_000_000:
            self._refused.add(index)
        return False


def time_left(started: float, now: float, seconds: float = REPLY_SECONDS) -> float:
    """Seconds a reply that started at ``started`` may still take at ``now`` (never negative)."""
    return max(0.0, seconds - (now - started))


_THINK_OPEN = "<think>"
_THINK_CLOSE = "</think>"


class ThinkFilter:
    """Drops ``<think>...</think>`` from streamed content, across chunk boundaries.

    Only a block at the very start of the reply is reasoning (DeepSeek-R1 and
    Qwen3 through Ollama or llama.cpp put it there); a ``<think>`` later on is
    the model's own text.
    """

    def __init__(self) -> None:
        self._held = ""
        self._state: Literal["start", "inside", "passing"] = "start"
        self.reasoned = False

    def feed(self, piece: str) -> str:
        """The text of ``piece`` the player may see (may be empty)."""
        if self._state == "passing":
            return piece
        self._held += piece
        if self._state == "start":
            stripped = self._held.lstrip()
            if not stripped:
                return ""
            if _THINK_OPEN.startswith(stripped) and len(stripped) < len(_THINK_OPEN):
                return ""  # could still become <think>
            if not stripped.startswith(_THINK_OPEN):
                out, self._held, self._state = self._held, "", "passing"
                return out
            self._state = "inside"
            self.reasoned = True
            self._held = stripped[len(_THINK_OPEN) :]
        end = self._held.find(_THINK_CLOSE)
        if end < 0:
            # Keep only what could be the start of the closing tag.
            self._held = self._held[-(len(_THINK_CLOSE) - 1) :]
            return ""
        out = self._held[end + len(_THINK_CLOSE) :].lstrip()
        self._held, self._state = "", "passing"
        return out

    def flush(self) -> str:
        """What is left at the end: held text that never became a ``<think>`` block."""
        held, self._held = self._held, ""
        return held if self._state == "start" else ""


def token_limits(field: TokenField, limit: int) -> dict[str, int]:
    """The body keys bounding the answer's tokens, as the provider wants them."""
    if field == "both":
        return {"max_tokens": limit, "max_completion_tokens": limit}
    return {field: limit}


_IMAGE_WORDS = ("image", "vision", "multimodal", "multi-modal", "图片", "图像")


def image_refused(status: int | None, message: str) -> bool:
    """Whether a provider's error says it takes no image parts (a 400 naming the image)."""
    if status not in (400, 415, 422):
        return False
    text = message.lower()
    return any(word in text for word in _IMAGE_WORDS)


def is_loopback(base_url: str) -> bool:
    """Whether ``base_url`` points at this machine (a local server: one request at a time)."""
    host = (urlsplit(base_url).hostname or "").strip("[]").lower()
    if host in ("localhost", "localhost.localdomain") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def concurrency(max_concurrency: int | None, base_url: str) -> int:
    """Calls a route's provider takes at once: as configured, else 1 on loopback, 4 elsewhere."""
    if max_concurrency is not None:
        return max(1, max_concurrency)
    return 1 if is_loopback(base_url) else 4
