"""When the embedding backlog may start its next unit of work, from what the player does.

Pure: the shell (``serve/vector_backlog.py``) notes the player's moves with the
time it read from its clock and asks :meth:`BacklogPace.wait` before each unit
(one memory's passage in process, one request on a route). A unit under way
cannot be stopped (the engine's call is one C call), so the backlog keeps off
the cores while a turn is likely, not only while its reply streams:

* the player is typing or speaking (a ``chat.typing``, ``voice.start``, a partial
  transcript): a ``chat.send`` is near, and its turn should find no passage in
  flight; held for :data:`TYPING_HOLD_S` after the last such hint;
* a turn began (a ``chat.send``, a final transcript): held until a reply ends
  after it, or :data:`TURN_HOLD_S` at most (a turn refused before its model call
  lets go then). While a reply streams the scheduler holds the backlog anyway
  (``Scheduler.wait_no_chat``);
* a reply's end lets go of both: the player reads it before typing again.

So a turn meets at most the one unit that was under way when the player began,
and none at all when the mod says the player is typing before they send.
"""

from __future__ import annotations

import math
from typing import Literal

TYPING_HOLD_S = 3.0
"""Seconds the backlog waits after the player's last typing or speaking hint."""

TURN_HOLD_S = 5.0
"""Seconds a turn's start holds the backlog at most when no reply ends first (its memory,
its query's budget and its screenshot come well within this; its reply then holds it)."""

Reason = Literal["typing", "turn"]


class BacklogPace:
    """The player's last moves, and when the backlog's next unit may start.

    Args:
        typing_hold: Seconds held after a typing or speaking hint.
        turn_hold: Seconds held at most after a turn's start.
    """

    def __init__(self, typing_hold: float = TYPING_HOLD_S, turn_hold: float = TURN_HOLD_S) -> None:
        self.typing_hold = typing_hold
        self.turn_hold = turn_hold
        self._typing = -math.inf
        self._turn = -math.inf
        self._reply_end = -math.inf

    def typing(self, now: float) -> None:
        """The player is typing or speaking to the companion (a turn is near)."""
        self._typing = max(self._typing, now)

    def turn_began(self, now: float) -> None:
        """The player sent a turn."""
        self._turn = max(self._turn, now)

    def reply_ended(self, now: float) -> None:
        """A reply's model call ended (its turn is over, or its tool calls run)."""
        self._reply_end = max(self._reply_end, now)

    def held(self, now: float) -> tuple[float, Reason | None]:
        """Seconds until the next unit may start (0: now) and what holds it back."""
        holds: list[tuple[float, Reason]] = []
        if self._turn > self._reply_end:
            holds.append((self._turn + self.turn_hold - now, "turn"))
        if self._typing > self._reply_end:
            holds.append((self._typing + self.typing_hold - now, "typing"))
        wait, reason = max(holds, default=(0.0, None))
        return (wait, reason) if wait > 0 else (0.0, None)

    def wait(self, now: float) -> float:
        """Seconds until the next unit may start (0: now)."""
        return self.held(now)[0]
