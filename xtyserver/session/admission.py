"""Per-connection admission: all frames, chat turns, and flood detection (v1.md "Rate limits").

Pure: time is passed in.
"""

from __future__ import annotations

from typing import Literal

from xtyserver.session.settings import SessionSettings

FLOOD_WINDOW_S = 10.0
# game.event frames have a bucket of their own (docs/speakup.md): a mod that floods
# events has the excess refused, never counted towards a flood close, and its
# heartbeats and chats keep the frame bucket.
EVENTS_PER_SECOND = 2.0
EVENT_BURST = 10

Verdict = Literal["ok", "limited", "flood"]


class TokenBucket:
    """A token bucket refilled at ``rate`` tokens/second up to ``burst``, full at ``now``."""

    def __init__(self, rate: float, burst: int, now: float) -> None:
        if rate <= 0 or burst < 1:
            raise ValueError("a token bucket needs rate > 0 and burst >= 1")
        self.rate = rate
        self.burst = float(burst)
        self._tokens = float(burst)
        self._at = now

    def take(self, now: float) -> bool:
        """Take one token at ``now``; False when the bucket is empty."""
        elapsed = max(0.0, now - self._at)
        self._tokens = min(self.burst, self._tokens + elapsed * self.rate)
        self._at = max(self._at, now)
        if self._tokens >= 1.0:
            self._tokens -= 1.0
            return True
        return False


class Admission:
    """Token buckets for frames and for ``chat.send``, and refusals counted per flood window."""

    def __init__(self, settings: SessionSettings, now: float) -> None:
        limits = settings.limits
        self._frames = TokenBucket(limits.frames_per_second, limits.frame_burst, now)
        self._chats = TokenBucket(limits.chat_per_minute / 60, limits.chat_burst, now)
        self._events = TokenBucket(EVENTS_PER_SECOND, EVENT_BURST, now)
        self._flood = settings.flood_refusals
        # Refusals in fixed windows of FLOOD_WINDOW_S, the current one since _window.
        self._window = float("-inf")
        self._refusals = 0

    def frame(self, now: float) -> Verdict:
        """Admit one frame: ok, limited (refuse it), or flood (close the connection)."""
        if self._frames.take(now):
            return "ok"
        if now - self._window >= FLOOD_WINDOW_S:
            self._window, self._refusals = now, 0
        self._refusals += 1
        return "flood" if self._refusals > self._flood else "limited"

    def chat(self, now: float) -> bool:
        """Admit one ``chat.send``."""
        return self._chats.take(now)

    def event(self, now: float) -> bool:
        """Admit one ``game.event`` (its own bucket, instead of the frames')."""
        return self._events.take(now)
