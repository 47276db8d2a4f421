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
and none at all when the mod says the player is typing before they send. Where
the passages run in a worker process (``serve/passage_worker.py``), the unit
under way is stopped too: :meth:`BacklogPace.stopped` says the worker is
suspended while the next unit is held (the player typing, a turn until a reply
ends), so an untyped turn gets the cores at once; :class:`WorkerWatch` says when a
passage in that worker is stuck, and whether a failed worker is started again
or the passages go back to the server's own thread.
"""

from __future__ import annotations

import math
from typing import Literal

TYPING_HOLD_S = 3.0
"""Seconds the backlog waits after the player's last typing or speaking hint."""

TURN_HOLD_S = 5.0
"""Seconds a turn's start holds the backlog at most when no reply ends first (its memory,
its query's budget and its screenshot come well within this; its reply then holds it)."""

PASSAGE_STUCK_S = 60.0
"""Seconds a passage may run in the worker (not counting the time it was suspended)
before the worker counts as stuck and is ended: a passage is about 50 ms of CPU (one
memory's text, 40-60 tokens: scripts/bench/backlog.py), 0.4 s at the eighth of a core
a nice +10 process got on the loaded two-core build machine; a hundred times that is
a hang, not a busy PC."""

WORKER_FAILURES = 3
"""Failures in a row (a crash, a hang, a start that never answered) after which the
passages go back to the server's own thread for the rest of the process: a worker that
cannot run here is not started again in a loop."""

Reason = Literal["typing", "turn"]
AfterFailure = Literal["restart", "in_thread"]


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

    def stopped(self, now: float) -> tuple[bool, float]:
        """Whether the passages' worker is to be suspended now, and the seconds after which
        that changes with no move of the player (``inf``: only a move changes it).

        Whenever the next unit is held (:meth:`held`): a turn under way (its query,
        memory and model call get the cores at once, whatever passage was in flight),
        and the player typing or speaking too (the query a mod's ``chat.typing``
        prepares gets them, and a typed turn meets no passage that outlasted the
        hint on a loaded machine: ``scripts/bench/backlog.py --lead-ms 150`` found 29
        of 200 turns meeting one when only turns stopped it). What that costs the
        backlog is the one passage under way, which goes on when the hold ends.
        """
        wait, reason = self.held(now)
        return (True, wait) if reason is not None else (False, math.inf)


class WorkerWatch:
    """The passage in flight in the worker process, and the worker's failures in a row.

    The shell notes when it sent a passage, when it suspended and resumed the
    worker, and each answer or failure; the time a passage ran counts only while
    the worker was not suspended (a long turn is not a hang).

    Args:
        stuck_after: Seconds of running after which a passage is stuck.
        failures: Failures in a row after which the passages leave the worker.
    """

    def __init__(
        self, stuck_after: float = PASSAGE_STUCK_S, failures: int = WORKER_FAILURES
    ) -> None:
        self.stuck_after = stuck_after
        self.failures_allowed = failures
        self.failures = 0  # in a row: an answer sets it back to 0
        self._sent: float | None = None  # when the passage in flight was sent
        self._paused = 0.0  # seconds it spent suspended, before the current suspension
        self._since: float | None = None  # when the current suspension began

    def sent(self, now: float) -> None:
        """A passage went to the worker."""
        self._sent, self._paused = now, 0.0

    def suspended(self, now: float) -> None:
        """The worker was suspended (no-op when it already was)."""
        if self._since is None:
            self._since = now

    def resumed(self, now: float) -> None:
        """The worker was resumed (no-op when it was not suspended)."""
        if self._since is not None:
            if self._sent is not None:
                self._paused += now - max(self._since, self._sent)
            self._since = None

    def ran(self, now: float) -> float:
        """Seconds the passage in flight has run (0 with none in flight)."""
        if self._sent is None:
            return 0.0
        paused = self._paused
        if self._since is not None:
            paused += now - max(self._since, self._sent)
        return now - self._sent - paused

    def until_stuck(self, now: float) -> float:
        """Seconds until the passage in flight is stuck if it runs all along (0: it is;
        ``inf`` with none in flight or while suspended: only a resume starts it again)."""
        if self._sent is None or self._since is not None:
            return math.inf
        return max(self.stuck_after - self.ran(now), 0.0)

    def answered(self) -> None:
        """The passage in flight came back: the worker works."""
        self._sent = None
        self.failures = 0

    def failed(self) -> AfterFailure:
        """The worker crashed, hung or never started; what next: another worker, or the
        passages on the server's own thread (after :data:`WORKER_FAILURES` in a row)."""
        self._sent = None
        self.failures += 1
        return "in_thread" if self.failures >= self.failures_allowed else "restart"
