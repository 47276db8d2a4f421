"""Working memory of one session: the recent window and the rolling session summary.

Pure bookkeeping (v1.md "Working memory"). The last ``window`` rounds go into
each request as chat messages. A round that leaves the window waits in
``pending`` (still sent, so nothing is lost in between) until a stateless
background call folds it into the rolling :class:`SessionSummary`: every
``fold_every`` rounds, or as soon as the rounds sent pass ``fold_tokens``. One
fold at a time; an answer for an older generation (the session was cleared or
restored since) is ignored. The summary is never stored as long-term memory.
"""

from __future__ import annotations

import msgspec

from xtyserver.memory.tokenize import approx_tokens

Round = tuple[str, str]
"""One exchange: (the player's redacted text, the companion's reply)."""

MIN_WINDOW = 2
"""The token threshold never shrinks the window below this many rounds."""

WAITING_FOLDS = 2
"""Rounds waiting for a fold are at most this many times ``fold_every``."""

SUMMARY_HEAD = "本次会话前面聊过的："
_LABELS = (
    ("requests", "玩家的请求"),
    ("decisions", "已确认的决定"),
    ("preferences", "偏好"),
    ("open_questions", "还没解决的问题"),
)


class WorkingSettings(msgspec.Struct, frozen=True, kw_only=True):
    """Sizes of working memory (docs/memory.md); ``item_chars`` caps one summary item.

    ``window``, ``fold_every`` and ``fold_tokens`` are ``[server]``'s
    ``history_turns``, ``summary_every`` and ``summary_tokens``.
    """

    window: int
    fold_every: int
    fold_tokens: int
    summary_chars: int
    resume_within: float
    item_chars: int = 80


class SessionSummary(msgspec.Struct, frozen=True, kw_only=True):
    """The structured rolling summary of the rounds that left the window."""

    requests: tuple[str, ...] = ()
    decisions: tuple[str, ...] = ()
    preferences: tuple[str, ...] = ()
    open_questions: tuple[str, ...] = ()
    mood: str = ""
    text: str = ""  # free text: a fold that answered in prose

    def render(self) -> str:
        """The prompt text (Chinese labels), or "" when the summary is empty."""
        lines: list[str] = []
        for name, label in _LABELS:
            items: tuple[str, ...] = getattr(self, name)
            if items:
                lines.append(f"- {label}：" + "；".join(items))
        if self.mood:
            lines.append(f"- 玩家的心情：{self.mood}")
        if self.text:
            lines.append(f"- 概要：{self.text}")
        return SUMMARY_HEAD + "\n" + "\n".join(lines) if lines else ""

    def capped(self, max_chars: int, item_chars: int) -> SessionSummary:
        """Cut each item to ``item_chars``, then drop the oldest items until it fits."""
        cut = msgspec.structs.replace(
            self,
            mood=self.mood[:item_chars],
            **{
                name: tuple(i[:item_chars] for i in getattr(self, name) if i) for name, _ in _LABELS
            },
        )
        over = len(cut.render()) - max_chars
        if over > 0 and cut.text:
            # The free text gives way first, down to what fits (it may go whole).
            cut = msgspec.structs.replace(cut, text=cut.text[: max(len(cut.text) - over, 0)])
        while len(cut.render()) > max_chars:
            longest = max(_LABELS, key=lambda nl: len(getattr(cut, nl[0])))[0]
            items = getattr(cut, longest)
            if not items:
                return msgspec.structs.replace(cut, mood="") if cut.mood else cut
            cut = msgspec.structs.replace(cut, **{longest: items[1:]})
        return cut


class WorkingSnapshot(msgspec.Struct, frozen=True):
    """What a reconnect of the same save gets back (``day``: the in-game day when parked)."""

    window: tuple[Round, ...]
    pending: tuple[Round, ...]
    summary: SessionSummary
    day: int | None = None


class FoldRequest(msgspec.Struct, frozen=True):
    """Fold ``rounds`` into ``previous`` (answered by the generation's summary or None)."""

    generation: int
    previous: SessionSummary
    rounds: tuple[Round, ...]


class WorkingMemory:
    """The window, the rounds waiting to be folded and the session summary."""

    def __init__(self, settings: WorkingSettings) -> None:
        self._s = settings
        self.window: list[Round] = []  # a few rounds: a list, as an empty deque is 10x its size
        self.pending: list[Round] = []
        self.summary = SessionSummary()
        self.generation = 0
        self._folding = 0  # rounds of ``pending`` in the fold in flight (dropped ones not)
        self._in_flight = False  # a fold was asked for and has not answered
        self._backoff = 0  # rounds to wait after a failed fold before asking again
        self.dropped = 0  # rounds lost because folds kept failing

    def rounds(self) -> list[Round]:
        """The rounds sent as chat messages, oldest first."""
        return [*self.pending, *self.window]

    def __len__(self) -> int:
        return len(self.pending) + len(self.window)

    def _tokens(self) -> int:
        return sum(approx_tokens(p) + approx_tokens(r) for p, r in self.rounds())

    def add(self, done: Round) -> FoldRequest | None:
        """Record a finished round; return the fold to ask for, if one is due."""
        s = self._s
        self.window.append(done)
        while len(self.window) > max(s.window, 0):
            self.pending.append(self.window.pop(0))
        over = self._tokens() > s.fold_tokens
        while over and len(self.window) > MIN_WINDOW:
            self.pending.append(self.window.pop(0))
            over = self._tokens() > s.fold_tokens
        limit = WAITING_FOLDS * max(s.fold_every, 1)
        if len(self.pending) > limit:
            # No fold came (failing, or no moment for one): the oldest rounds go rather
            # than grow the prompt; a fold in flight keeps what it was given.
            excess = len(self.pending) - limit
            self.dropped += excess
            del self.pending[:excess]
            self._folding = max(self._folding - excess, 0)
        if self._in_flight or not self.pending:
            return None
        if self._backoff:
            # A failed fold is asked again only after ``fold_every`` more rounds:
            # a provider that cannot summarise must not cost a call every turn.
            self._backoff -= 1
            return None
        if len(self.pending) < max(s.fold_every, 1) and not over:
            return None
        self.generation += 1
        self._folding = len(self.pending)
        self._in_flight = True
        return FoldRequest(self.generation, self.summary, tuple(self.pending))

    def folded(self, generation: int, summary: SessionSummary | None) -> bool:
        """Take a fold's answer (None: it failed; the rounds wait for the next one)."""
        if generation != self.generation or not self._in_flight:
            return False
        if summary is not None:
            self.summary = summary.capped(self._s.summary_chars, self._s.item_chars)
            del self.pending[: self._folding]
        else:
            self._backoff = max(self._s.fold_every, 1) - 1
        self._folding = 0
        self._in_flight = False
        return summary is not None

    def snapshot(self, day: int | None = None) -> WorkingSnapshot:
        return WorkingSnapshot(tuple(self.window), tuple(self.pending), self.summary, day)

    def restore(self, snapshot: WorkingSnapshot) -> None:
        """Take back a parked session's working memory (a reconnect of the same save)."""
        self.clear()
        self.window.extend(snapshot.window)
        self.pending.extend(snapshot.pending)
        self.summary = snapshot.summary

    def clear(self) -> None:
        """Forget everything; a fold in flight is ignored when it answers."""
        self.window.clear()
        self.pending.clear()
        self.summary = SessionSummary()
        self.generation += 1
        self._folding = 0
        self._in_flight = False
        self._backoff = 0
