"""What a session asks the shell to do: typed effects (v1.md "Session").

The shell carries each effect out and decides nothing: every frame to send is
built in the core, every rule is checked in the core. Effects that expect an
answer say which event answers them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from xtyserver.memory.aliases import Naming, Unnaming
from xtyserver.memory.commands import MemoryCommand
from xtyserver.memory.types import Scope
from xtyserver.protocol.frames import ImageInput, ServerFrame
from xtyserver.session.actions import ActionRecord
from xtyserver.session.events import TimerKind
from xtyserver.session.layers import InjectionRecord
from xtyserver.session.tools import ToolOp
from xtyserver.session.working import Round, SessionSummary, WorkingSnapshot


class Effect(msgspec.Struct, frozen=True):
    """Something the shell must do."""


class Send(Effect, frozen=True):
    """Queue ``frame`` for the peer.

    ``droppable`` frames (advisory refusals of a flood) are dropped rather than
    waited for when the peer is not reading, so a flood never stops the reader.
    """

    frame: ServerFrame
    droppable: bool = False


class Close(Effect, frozen=True):
    code: int
    reason: str


class ClaimSeat(Effect, frozen=True):
    """A pre-auth connection proved the token in its hello: take one of the
    ``max_connections`` authenticated seats (v1.md "Upgrade"). Answered by
    ``SeatAnswered``; ``server.hello`` waits for it."""


class AskPairing(Effect, frozen=True):
    """A tokenless connection's ``adapter.pair`` (v1.md "Pairing"): put it before the
    player. Answered by ``PairingAnswered``: at once (pending, busy or refused),
    then once more when the player decides or the request expires."""

    frame_id: str
    adapter: str
    game_id: str
    install_id: str | None = None  # one key per install when set (v1.md "Keys per install")


class ArmTimer(Effect, frozen=True):
    """(Re)arm the timer ``kind`` to fire after ``seconds``; replaces an armed one."""

    kind: TimerKind
    seconds: float


class CancelTimer(Effect, frozen=True):
    kind: TimerKind


class Log(Effect, frozen=True):
    event: str
    fields: dict[str, Any]


# -- play accounting and the save's memory ------------------------------------------------------


class OpenSave(Effect, frozen=True):
    """Start a play session of ``save`` and keep its memory loaded until ``CloseSave``."""

    save: Scope
    timezone: str
    at: float
    save_name: str | None = None


class NameSaid(Effect, frozen=True):
    """The player named something on ``save`` in their own words, or took a name back."""

    save: Scope
    said: Naming | Unnaming
    at: float


class CloseSave(Effect, frozen=True):
    """End the play session of ``save`` at ``at`` (its last heartbeat or now)."""

    save: Scope
    at: float


class PlayBeat(Effect, frozen=True):
    save: Scope
    timezone: str
    at: float


# -- a turn -------------------------------------------------------------------------------------


class LoadTurnMemory(Effect, frozen=True):
    """Read the profile, ``save``'s memory (unless off), today's spent tokens; TurnMemoryReady."""

    turn: int
    save: Scope
    read_memory: bool = True
    # What the query vector is computed from, with an embedder: the player's
    # (redacted) text; a game.event's line adds the modelContext names. Unused without one.
    query: str = ""


class PrepareQuery(Effect, frozen=True):
    """Embed a turn's query (the redacted text typed or said so far) before its turn comes
    (a chat.typing, a partial transcript), where that costs no tokens; the turn then finds
    its vector ready. Nothing answers it."""

    save: Scope
    query: str


class PrepareImage(Effect, frozen=True):
    """Check and downscale a screenshot off the event loop; answer ImageReady/ImageRefused."""

    turn: int
    image: ImageInput


class CallModel(Effect, frozen=True):
    """Stream one model call; answer ModelDelta..., then ModelDone or ModelFailed.

    With ``tools`` offered (v1.md "Memory tools") a ModelDone may carry tool calls.
    """

    turn: int
    messages: list[dict[str, Any]]
    image_sent: bool
    tools: list[dict[str, Any]] | None = None


class RunTool(Effect, frozen=True):
    """Run one memory tool operation of turn ``turn``; answer ToolAnswered (never nothing)."""

    turn: int
    call_id: str
    op: ToolOp


class CancelModel(Effect, frozen=True):
    turn: int


class TouchMemories(Effect, frozen=True):
    """Mark memories as used (write-behind: never delays a reply)."""

    save: Scope
    ids: tuple[int, ...]
    at: float


class Remember(Effect, frozen=True):
    """Background extraction after a finished reply (never blocks the player).

    A shared-profile value naming one of ``context_names`` (the modelContext's) is refused.
    """

    save: Scope
    player_text: str
    reply: str
    day: int | None
    at: float
    context_names: tuple[str, ...] = ()


class Summarize(Effect, frozen=True):
    """End-of-session summary of at most the last 12 turns (>= 2 turns only)."""

    save: Scope
    turns: tuple[tuple[str, str], ...]
    day: int | None
    at: float


# -- working memory and the injection log ------------------------------------------------------


class FoldWorking(Effect, frozen=True):
    """Fold ``rounds`` into ``previous`` with a stateless background call; WorkingFolded."""

    save: Scope
    generation: int
    previous: SessionSummary
    rounds: tuple[Round, ...]


class ParkWorking(Effect, frozen=True):
    """Keep ``save``'s working memory for a reconnect within ``resume_within`` of ``at``."""

    save: Scope
    snapshot: WorkingSnapshot
    at: float


class ResumeWorking(Effect, frozen=True):
    """Take ``save``'s parked working memory if parked within the resume time; WorkingResumed."""

    save: Scope
    at: float


class RecordInjection(Effect, frozen=True):
    """Append one turn to the injection log (sizes, ids, scores; never text)."""

    record: InjectionRecord


class RecordAction(Effect, frozen=True):
    """Append one action's request, question, refusal or result to the injection log."""

    record: ActionRecord


# -- store requests of a mod's menu frames (answered by a StoreAnswer with the same number) -----


class StoreRequest(Effect, frozen=True):
    """A request the shell answers with an event carrying the same ``request`` number."""

    request: int


class LoadStats(StoreRequest, frozen=True):
    """Read every play statistic; answered StatsLoaded."""


class RunCommands(StoreRequest, frozen=True):
    """Execute ``commands`` in order, each admitted in the core
    (:func:`~xtyserver.session.consent.admit`); answered CommandsDone."""

    commands: tuple[MemoryCommand, ...]


Job = Remember | Summarize | FoldWorking


# -- voice (v1.md "Voice"): the microphone, the recogniser and the voice ------------------------


class Listen(Effect, frozen=True):
    """Open utterance ``utterance``: record the microphone, or (``stream``) take ``AudioIn``.

    Answered by ``VoiceHeard`` (partial transcripts, then the final one after
    ``EndListening``) or ``VoiceFailed``. The audio stays in memory, never on disk.
    """

    utterance: str
    stream: bool


class AudioIn(Effect, frozen=True):
    """A mod's PCM chunk of the open ``stream`` utterance."""

    utterance: str
    pcm: bytes


class EndListening(Effect, frozen=True):
    """Close the utterance: transcribe it (``transcribe``) or drop it unheard."""

    utterance: str
    transcribe: bool


class Speak(Effect, frozen=True):
    """Say sentence ``seq`` of reply ``chat_id``: on the speakers, or (``frames``) answer
    ``SpeechReady`` with its audio. Sentences are spoken in the order they come."""

    chat_id: str
    seq: int
    text: str
    frames: bool = False


class Hush(Effect, frozen=True):
    """Stop speaking now: what plays and every sentence still waiting."""
