"""What a session asks the shell to do: typed effects (v1.md "Session").

The shell carries each effect out and decides nothing: every frame to send is
built in the core, every rule is checked in the core. Effects that expect an
answer say which event answers them.
"""

from __future__ import annotations

from typing import Any

import msgspec

from xtyserver.memory.aliases import Naming, Unnaming
from xtyserver.memory.manage import ForgetSpec
from xtyserver.memory.types import Scope
from xtyserver.protocol.frames import ImageInput, ServerFrame
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
    # What the query vector is computed from, with a [models.embedding] route
    # (the player's text and the modelContext names); unused without one.
    query: str = ""


class PrepareQuery(Effect, frozen=True):
    """Embed a turn's query before its chat.send comes (a chat.typing), where that costs
    no tokens; the turn then finds its vector ready. Nothing answers it."""

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


# -- store requests of a mod's menu frames (answered by a StoreAnswer with the same number) -----


class StoreRequest(Effect, frozen=True):
    """A request the shell answers with an event carrying the same ``request`` number."""

    request: int


class LoadStats(StoreRequest, frozen=True):
    """Read every play statistic; answered StatsLoaded."""


class ViewMemory(StoreRequest, frozen=True):
    """Read the overview of ``save`` alone, or of every save of ``game_id``; OverviewLoaded."""

    game_id: str
    save: Scope | None


class SetProfileField(StoreRequest, frozen=True):
    """Replace one shared-profile field (snake_case ``name``); OverviewLoaded of ``save``."""

    save: Scope
    name: str
    value: Any


class PinItem(StoreRequest, frozen=True):
    """Pin or unpin one event of ``save``; OverviewLoaded of ``save`` (``found`` says if it was)."""

    save: Scope
    event_id: int
    pinned: bool


class PreviewForget(StoreRequest, frozen=True):
    """What forgetting ``spec`` would delete (nothing changes); ForgetPreviewed."""

    spec: ForgetSpec


class ApplyForget(StoreRequest, frozen=True):
    """Delete what ``spec`` names (its token was redeemed in the core); Forgotten."""

    spec: ForgetSpec


Job = Remember | Summarize | FoldWorking
