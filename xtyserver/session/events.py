"""What happens to a session: the events the shell feeds into ``GameAgentSession.handle``.

Every event is plain, immutable data (v1.md "Session"). Answers to an effect
name what they answer: a turn number for a turn's work, a request number for
a store request (see :mod:`xtyserver.session.effects`).
"""

from __future__ import annotations

from typing import Literal

import msgspec

from xtyserver import errors
from xtyserver.memory.commands import Outcome
from xtyserver.memory.retrieval import SaveIndex
from xtyserver.memory.types import PlayStats, Scope, SharedProfile
from xtyserver.protocol.codec import Decoded
from xtyserver.protocol.frames import Usage
from xtyserver.protocol.images import PreparedImage
from xtyserver.session.tools import ToolAnswer, ToolCall
from xtyserver.session.working import SessionSummary, WorkingSnapshot

TimerKind = Literal["hello", "heartbeat", "action", "voice"]


class Event(msgspec.Struct, frozen=True):
    """Something that happened to the connection."""


class Connected(Event, frozen=True):
    pass


class FrameIn(Event, frozen=True):
    decoded: Decoded


class FrameRefused(Event, frozen=True):
    """A frame the codec refused; ``error`` says why."""

    error: errors.PeerError


class TimerFired(Event, frozen=True):
    kind: TimerKind


class Disconnected(Event, frozen=True):
    pass


PairingOutcome = Literal["pending", "busy", "refused", "granted", "denied", "expired"]


class PairingAnswered(Event, frozen=True):
    """The shell's answer to ``AskPairing``.

    ``pending`` carries the code and its life, ``granted`` the mod's new key, the rest nothing.
    """

    outcome: PairingOutcome
    code: str = ""
    expires_in: int = 0
    key: str = ""


class SeatAnswered(Event, frozen=True):
    """The shell's answer to ``ClaimSeat``: whether an authenticated seat was free."""

    granted: bool


# -- a turn's inputs ------------------------------------------------------------------------


class SaveMemory(msgspec.Struct, frozen=True):
    """One save's long-term memory as the turn planner reads it.

    ``index`` is the memory service's: read only while handling its event, never kept.
    """

    profile: SharedProfile | None
    index: SaveIndex | None
    # (event id, cosine with this turn's query), best first, when the query was embedded
    # within its latency budget (a [models.embedding] route); None: words alone.
    similar: tuple[tuple[int, float], ...] | None = None
    # The query's best cosine with everyday chatter (memory/smalltalk.py), with ``similar``
    # once the chatter is embedded; None: unknown (no small-talk judgement).
    chatter: float | None = None
    # Each memory's cosine with everyday chatter's centroid (memory/vectors.py centered),
    # with ``similar`` once the chatter is embedded; None: the vectors rank by raw cosines.
    generic: tuple[tuple[int, float], ...] | None = None
    # Memories of the save still without a vector when the turn was planned (an embedder
    # runs, and neither the backlog nor the turn's own catch-up reached them).
    unembedded: int = 0


class TurnMemoryReady(Event, frozen=True):
    """Answer to ``LoadTurnMemory``: ``memory`` None when the store failed or memory is off.

    ``spent``: the tokens spent today (None when unknown), for the daily budget.
    """

    turn: int
    memory: SaveMemory | None
    spent: int | None = None


class ImageReady(Event, frozen=True):
    turn: int
    image: PreparedImage


class ImageRefused(Event, frozen=True):
    turn: int
    error: errors.PeerError


class ModelDelta(Event, frozen=True):
    turn: int
    text: str


class ModelDone(Event, frozen=True):
    """The model's answer ended; with ``tool_calls`` it asks for tools before answering.

    ``truncated``: cut by ``finish_reason: length`` or a server cap; ``incomplete``:
    the provider fell silent after text was shown; ``reasoned``: reasoning came
    (kept from the player); ``image_refused``: the model refused the screenshot and
    the answer was made without it (v1.md "chat.done"); ``image_dropped``: the
    screenshot was left out (the model takes none).
    """

    turn: int
    text: str
    usage: Usage | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    truncated: bool = False
    incomplete: bool = False
    reasoned: bool = False
    image_refused: bool = False
    image_dropped: bool = False


class ToolAnswered(Event, frozen=True):
    """Answer to ``RunTool``: what the memory service returned, or a ToolFailure."""

    turn: int
    call_id: str
    answer: ToolAnswer


class ModelFailed(Event, frozen=True):
    turn: int
    code: str


# -- working memory ---------------------------------------------------------------------------


class WorkingFolded(Event, frozen=True):
    """Answer to ``FoldWorking``: the new session summary, or None when the fold failed."""

    generation: int
    summary: SessionSummary | None


class WorkingResumed(Event, frozen=True):
    """Answer to ``ResumeWorking``: the parked working memory, or None (nothing, or too old)."""

    save: Scope
    snapshot: WorkingSnapshot | None


# -- answers to store requests ----------------------------------------------------------------


class StoreAnswer(Event, frozen=True):
    """An answer to a :class:`~xtyserver.session.effects.StoreRequest` with its ``request``."""

    request: int


class StatsLoaded(StoreAnswer, frozen=True):
    stats: PlayStats


class CommandsDone(StoreAnswer, frozen=True):
    """What each command of a ``RunCommands`` gave, in order."""

    outcomes: tuple[Outcome, ...]


class StoreFailed(StoreAnswer, frozen=True):
    """A store request failed; ``code`` and ``message`` are safe to show the peer."""

    code: str
    message: str


# -- voice (v1.md "Voice") -----------------------------------------------------------------------


class VoiceHeard(Event, frozen=True):
    """A transcript of utterance ``utterance``: partial while listening, then final once."""

    utterance: str
    text: str
    final: bool


class VoiceFailed(Event, frozen=True):
    """The utterance (or the speaking of reply ``utterance``) failed; ``code`` says why."""

    utterance: str
    code: str


class SpeechReady(Event, frozen=True):
    """A sentence of reply ``chat_id`` synthesised for a mod that plays sound itself."""

    chat_id: str
    seq: int
    text: str
    rate: int
    pcm: bytes
