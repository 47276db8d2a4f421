"""Token buckets for per-connection rate limits (v1.md "Rate limits"). Pure: time is passed in."""

from __future__ import annotations


class TokenBucket:
    """A token bucket refilled at ``rate`` tokens/second up to ``burst`` tokens.

    Args:
        rate: Tokens added per second.
        burst: Bucket size: how many may pass at once after a quiet spell.
        now: The time the bucket starts (full).
    """

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


class WindowCounter:
    """Counts events in fixed windows of ``window`` seconds (flood detection)."""

    def __init__(self, window: float) -> None:
        self.window = window
        self._start = float("-inf")
        self.count = 0

    def add(self, now: float) -> int:
        """Count one event at ``now`` and return the count in the current window."""
        if now - self._start >= self.window:
            self._start = now
            self.count = 0
        self.count += 1
        return self.count
