"""Per-connection admission: all frames, chat turns, and flood detection (v1.md "Rate limits").

Pure: time is passed in.
"""

from __future__ import annotations

from typing import Literal

from xtyserver.session.ratelimit import TokenBucket, WindowCounter
from xtyserver.session.settings import SessionSettings

FLOOD_WINDOW_S = 10.0

Verdict = Literal["ok", "limited", "flood"]


class Admission:
    """Token buckets for frames and for ``chat.send``, and a window of refusals."""

    def __init__(self, settings: SessionSettings, now: float) -> None:
        limits = settings.limits
        self._frames = TokenBucket(limits.frames_per_second, limits.frame_burst, now)
        self._chats = TokenBucket(limits.chat_per_minute / 60, limits.chat_burst, now)
        self._refusals = WindowCounter(FLOOD_WINDOW_S)
        self._flood = settings.flood_refusals

    def frame(self, now: float) -> Verdict:
        """Admit one frame: ok, limited (refuse it), or flood (close the connection)."""
        if self._frames.take(now):
            return "ok"
        if self._refusals.add(now) > self._flood:
            return "flood"
        return "limited"

    def chat(self, now: float) -> bool:
        """Admit one ``chat.send``."""
        return self._chats.take(now)
