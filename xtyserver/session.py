"""``GameAgentSession``: one connection's protocol/v1 state machine, sans-I/O.

The session takes events in (:class:`Event` subclasses, each with the time it
happened) and hands actions out (:class:`Action` subclasses) for the shell in
:mod:`xtyserver.server` to carry out. It never does I/O, never reads a clock
and never raises on peer input: anything a peer sends becomes a frame or a
close (v1.md "Session").

States and transitions live in :data:`TRANSITIONS`, the one table of them::

    AWAIT_HELLO --hello ok--> READY --chat accepted--> TURN --reply ended--> READY
         |                      |                        |
         +---------------- close (any) ---------------> CLOSED
"""

from __future__ import annotations

import enum
from collections import deque
from collections.abc import Callable
from typing import Any, Literal

import msgspec

from xtyserver import errors
from xtyserver.config import ServerSettings, Texts
from xtyserver.image import PreparedImage
from xtyserver.memory.retrieval import MemoryBudget, SaveIndex, select_memories
from xtyserver.memory.types import Scope, SharedProfile
from xtyserver.model.prompt import build_messages, render_facts
from xtyserver.protocol.budget import freshness
from xtyserver.protocol.codec import Decoded
from xtyserver.protocol.forbidden import redact
from xtyserver.protocol.frames import (
    ChatCancel,
    ChatDelta,
    ChatDone,
    ChatError,
    ChatSend,
    ContextUse,
    Error,
    Heartbeat,
    Hello,
    Identity,
    ImageInput,
    MemoryForget,
    MemoryGet,
    ModelContext,
    ProfileUpdate,
    ServerFrame,
    ServerHello,
    ServerInfo,
    StateUpdate,
    StatsGet,
    Usage,
)
from xtyserver.protocol.limits import Limits
from xtyserver.ratelimit import TokenBucket, WindowCounter
from xtyserver.token import matches as token_matches

# -- close codes (v1.md "Close codes") -----------------------------------------

CLOSE_UNAUTHORIZED = 4001
CLOSE_HELLO_TIMEOUT = 4002
CLOSE_HEARTBEAT_TIMEOUT = 4003
CLOSE_FLOOD = 4008

TimerKind = Literal["hello", "heartbeat"]


class State(enum.Enum):
    AWAIT_HELLO = "await_hello"
    READY = "ready"
    TURN = "turn"
    CLOSED = "closed"


# The one table of transitions: (state, what happened) -> next state. A pair
# missing here leaves the state unchanged; the handlers below decide what to
# answer. ``close`` is accepted from every state.
TRANSITIONS: dict[tuple[State, str], State] = {
    (State.AWAIT_HELLO, "hello_ok"): State.READY,
    (State.READY, "chat_accepted"): State.TURN,
    (State.TURN, "reply_done"): State.READY,
    (State.TURN, "reply_failed"): State.READY,
    (State.TURN, "cancelled"): State.READY,
    (State.TURN, "image_refused"): State.READY,
    (State.AWAIT_HELLO, "close"): State.CLOSED,
    (State.READY, "close"): State.CLOSED,
    (State.TURN, "close"): State.CLOSED,
    (State.CLOSED, "close"): State.CLOSED,
}


# -- events in ----------------------------------------------------------------


class Event(msgspec.Struct, frozen=True):
    """Something that happened to the connection."""


class Connected(Event, frozen=True):
    pass


class FrameIn(Event, frozen=True):
    decoded: Decoded


class FrameRefused(Event, frozen=True):
    """A frame the codec refused; ``error`` says why."""

    error: errors.PeerError


class ScopeLoaded(Event, frozen=True):
    """The shell loaded the memory of ``scope`` (answer to :class:`OpenScope`)."""

    scope: Scope
    profile: SharedProfile | None
    index: SaveIndex | None


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
    turn: int
    text: str
    usage: Usage | None = None


class ModelFailed(Event, frozen=True):
    turn: int
    code: str


class TimerFired(Event, frozen=True):
    kind: TimerKind


class Disconnected(Event, frozen=True):
    pass


# -- actions out --------------------------------------------------------------


class Action(msgspec.Struct, frozen=True):
    """Something the shell must do."""


class Send(Action, frozen=True):
    frame: ServerFrame


class Close(Action, frozen=True):
    code: int
    reason: str


class ArmTimer(Action, frozen=True):
    """(Re)arm the timer ``kind`` to fire after ``seconds``; replaces an armed one."""

    kind: TimerKind
    seconds: float


class CancelTimer(Action, frozen=True):
    kind: TimerKind


class OpenScope(Action, frozen=True):
    """Start a play session for ``scope`` and load its memory; answer with ScopeLoaded."""

    scope: Scope
    timezone: str
    at: float


class CloseScope(Action, frozen=True):
    """End the play session of ``scope`` at ``at`` (its last heartbeat or now)."""

    scope: Scope
    at: float


class PlayBeat(Action, frozen=True):
    scope: Scope
    timezone: str
    at: float


class PrepareImage(Action, frozen=True):
    """Check and downscale a screenshot off the event loop; answer ImageReady/Refused."""

    turn: int
    chat_id: str
    image: ImageInput


class CallModel(Action, frozen=True):
    """Stream one model call; answer ModelDelta..., then ModelDone or ModelFailed."""

    turn: int
    chat_id: str
    messages: list[dict[str, Any]]
    image_sent: bool


class CancelModel(Action, frozen=True):
    turn: int


class TouchMemories(Action, frozen=True):
    scope: Scope
    ids: tuple[int, ...]
    at: float


class Remember(Action, frozen=True):
    """Background extraction after a finished reply (never blocks the player)."""

    scope: Scope
    player_text: str
    reply: str
    day: int | None
    at: float


class Summarize(Action, frozen=True):
    """End-of-session summary of at most the last 12 turns (>= 2 turns only)."""

    scope: Scope
    turns: tuple[tuple[str, str], ...]
    day: int | None
    at: float


class Query(Action, frozen=True):
    """A stats/memory frame the shell answers from the store."""

    frame: StatsGet | MemoryGet | MemoryForget | ProfileUpdate
    scope: Scope


class Log(Action, frozen=True):
    event: str
    fields: dict[str, Any]


SUMMARY_TURNS = 12


class GameAgentSession:
    """The protocol/v1 state machine of one adapter connection (v1.md "Session").

    Args:
        session_id: The id reported in ``server.hello``.
        settings: Network-facing limits and deadlines.
        texts: Player-facing texts.
        limits: The budget reported in ``server.hello``.
        budget: Memory retrieval budget.
        token: The expected token.
        authenticated: The upgrade request already carried the right token.
        model_configured: Whether a model is configured at all.
        vision: Whether the model accepts images.
        server_info: Name and version for ``server.hello``.
        timezone_ok: Predicate telling whether an IANA zone name is known here.
        now: When the connection opened.
    """

    def __init__(
        self,
        *,
        session_id: str,
        settings: ServerSettings,
        texts: Texts,
        limits: Limits,
        budget: MemoryBudget,
        token: str,
        authenticated: bool,
        model_configured: bool,
        vision: bool,
        server_info: ServerInfo,
        timezone_ok: Callable[[str], bool],
        now: float,
    ) -> None:
        self.session_id = session_id
        self.state = State.AWAIT_HELLO
        self._settings = settings
        self._texts = texts
        self._limits = limits
        self._budget = budget
        self._token = token
        self._authenticated = authenticated
        self._model_configured = model_configured
        self._vision = vision
        self._server_info = server_info
        self._timezone_ok = timezone_ok
        self._frames = _Buckets(settings, now)
        self.identity: Identity | None = None
        self.timezone = "UTC"
        self._last_beat = now
        self._context: ModelContext | None = None
        self._day: int | None = None
        self._profile: SharedProfile | None = None
        self._index: SaveIndex | None = None
        self._history: deque[tuple[str, str]] = deque(maxlen=SUMMARY_TURNS)
        self._turn_counter = 0
        self._turn: _Turn | None = None

    # -- the one entry point ---------------------------------------------------

    def handle(self, event: Event, now: float) -> list[Action]:
        """Feed one event that happened at ``now``; return what the shell must do."""
        if self.state is State.CLOSED and not isinstance(event, Disconnected):
            return []
        match event:
            case Connected():
                return [ArmTimer("hello", self._settings.hello_timeout)]
            case FrameIn(decoded=decoded):
                return self._admit(now, getattr(decoded.frame, "id", None)) or self._frame(
                    decoded, now
                )
            case FrameRefused(error=error):
                return self._admit(now, error.frame_id) or self._refused(error)
            case ScopeLoaded(scope=scope, profile=profile, index=index):
                if self._scope() == scope:
                    self._profile, self._index = profile, index
                return []
            case ImageReady(turn=turn, image=image):
                return self._image_ready(turn, image, now)
            case ImageRefused(turn=turn, error=error):
                return self._image_refused(turn, error)
            case ModelDelta(turn=turn, text=text):
                return self._delta(turn, text)
            case ModelDone(turn=turn, text=text, usage=usage):
                return self._done(turn, text, usage, now)
            case ModelFailed(turn=turn, code=code):
                return self._failed(turn, code)
            case TimerFired(kind=kind):
                return self._timer(kind, now)
            case Disconnected():
                return self._disconnected(now)
        raise errors.UsageError(f"unknown session event {type(event).__name__}")

    # -- transitions -----------------------------------------------------------

    def _go(self, what: str) -> None:
        nxt = TRANSITIONS.get((self.state, what))
        if nxt is None:
            raise errors.UsageError(f"no transition {self.state.value} --{what}-->")
        self.state = nxt

    def _scope(self) -> Scope | None:
        if self.identity is None:
            return None
        return Scope(self.identity.game_id, self.identity.save_id)

    # -- admission: rate limits and flood ---------------------------------------

    def _admit(self, now: float, frame_id: str | None) -> list[Action]:
        verdict = self._frames.admit(now)
        if verdict == "ok":
            return []
        if verdict == "flood":
            return self._close(CLOSE_FLOOD, "flood", now)
        return [_error("rate_limited", "too many frames; slow down", frame_id)]

    # -- frames ----------------------------------------------------------------

    def _refused(self, error: errors.PeerError) -> list[Action]:
        # Field paths can hold peer-chosen keys: redact before they reach a log.
        fields = [redact(path[:120])[0] for path in error.fields[:20]]
        log = Log("frame.refused", {"code": error.code, "fields": fields})
        return [_error(error.code, error.message, error.frame_id, list(error.fields) or None), log]

    def _frame(self, decoded: Decoded, now: float) -> list[Action]:
        frame = decoded.frame
        actions: list[Action] = []
        if decoded.context_over_target:
            actions.append(Log("context.over_target", {"bytes": decoded.context_bytes}))
        if self.state is State.AWAIT_HELLO:
            if not isinstance(frame, Hello):
                message = "the first frame must be adapter.hello"
                return [*actions, _error("hello_required", message, getattr(frame, "id", None))]
            return actions + self._hello(frame, now)
        match frame:
            case Hello():
                actions.append(_error("already_hello", "adapter.hello was already sent", frame.id))
            case Heartbeat():
                actions += self._heartbeat(now)
            case StateUpdate():
                actions += self._state_update(frame, now)
            case ChatSend():
                actions += self._chat(frame, now)
            case ChatCancel():
                actions += self._cancel(frame)
            case StatsGet() | MemoryGet() | MemoryForget() | ProfileUpdate():
                scope = self._scope()
                assert scope is not None  # READY/TURN always have an identity
                actions.append(Query(frame, scope))
        return actions

    def _hello(self, frame: Hello, now: float) -> list[Action]:
        if not self._authenticated and not token_matches(frame.token, self._token):
            err = _error("unauthorized", "missing or wrong token", frame.id)
            return [err, *self._close(CLOSE_UNAUTHORIZED, "unauthorized", now)]
        timezone = frame.timezone or "UTC"
        if not self._timezone_ok(timezone):
            message = f"unknown IANA time zone {timezone!r}"
            return [_error("invalid_frame", message, frame.id, ["timezone"])]
        self._go("hello_ok")
        self.identity = frame.identity
        self.timezone = timezone
        self._last_beat = now
        scope = self._scope()
        assert scope is not None
        hello = ServerHello(
            protocol="v1",
            session_id=self.session_id,
            heartbeat_ms=self._settings.heartbeat_ms,
            limits=self._limits,
            server=self._server_info,
            id=frame.id,
        )
        return [
            CancelTimer("hello"),
            Send(hello),
            OpenScope(scope, timezone, now),
            ArmTimer("heartbeat", self._heartbeat_deadline()),
            Log("session.hello", {"game": scope.game_id, "adapter": frame.adapter.name}),
        ]

    def _heartbeat_deadline(self) -> float:
        return self._settings.heartbeat_ms / 1000 * self._settings.heartbeat_misses

    def _heartbeat(self, now: float) -> list[Action]:
        scope = self._scope()
        assert scope is not None
        self._last_beat = now
        return [
            PlayBeat(scope, self.timezone, now),
            ArmTimer("heartbeat", self._heartbeat_deadline()),
        ]

    def _switch(self, identity: Identity | None, now: float) -> list[Action]:
        """A different identity on an open session is a save switch (v1.md "Save switch")."""
        current = self.identity
        if identity is None or (
            current is not None
            and (identity.game_id, identity.save_id) == (current.game_id, current.save_id)
        ):
            # Same save (a different or missing saveName is only a display name).
            return []
        old = self._scope()
        assert old is not None
        actions = self._end_scope(old, now)
        self.identity = identity
        self._context, self._day = None, None
        self._profile, self._index = None, None
        new = self._scope()
        assert new is not None
        actions += [
            OpenScope(new, self.timezone, now),
            Log("session.save_switch", {"game": new.game_id}),
        ]
        return actions

    def _end_scope(self, scope: Scope, now: float) -> list[Action]:
        actions: list[Action] = [CloseScope(scope, self._last_beat)]
        if len(self._history) >= 2:
            actions.append(Summarize(scope, tuple(self._history), self._day, now))
        self._history.clear()
        return actions

    def _state_update(self, frame: StateUpdate, now: float) -> list[Action]:
        actions = self._switch(frame.identity, now)
        self._set_context(frame.model_context)
        return actions

    def _set_context(self, context: ModelContext) -> None:
        self._context = context
        if context.world is not None and context.world.day is not None:
            self._day = context.world.day

    # -- turns -----------------------------------------------------------------

    def _chat(self, frame: ChatSend, now: float) -> list[Action]:
        if self.state is State.TURN:
            return [Send(ChatError(id=frame.id, code="busy", message=self._texts.busy))]
        if not self._frames.admit_chat(now):
            return [_error("rate_limited", "too many chat.send frames; slow down", frame.id)]
        actions: list[Action] = []
        if frame.context is not None:
            actions += self._switch(frame.context.identity, now)
            if frame.context.model_context is not None:
                self._set_context(frame.context.model_context)
        if not self._model_configured:
            actions.append(
                Send(
                    ChatError(
                        id=frame.id,
                        code="model_not_configured",
                        message=self._texts.model_not_configured,
                    )
                )
            )
            return actions
        self._go("chat_accepted")
        self._turn_counter += 1
        text, kinds = redact(frame.text)
        if kinds:
            actions.append(Log("chat.redacted", {"kinds": sorted(set(kinds))}))
        scope = self._scope()
        assert scope is not None
        self._turn = _Turn(self._turn_counter, frame.id, text, scope)
        if frame.image is not None and not self._vision:
            actions.append(Log("model.image_dropped", {"reason": "model has no vision"}))
        elif frame.image is not None:
            actions.append(PrepareImage(self._turn.number, frame.id, frame.image))
            return actions
        return actions + self._call(None, now)

    def _image_ready(self, turn: int, image: PreparedImage, now: float) -> list[Action]:
        if self._turn is None or self._turn.number != turn or self._turn.calling:
            return []
        return self._call(image, now)

    def _image_refused(self, turn: int, error: errors.PeerError) -> list[Action]:
        if self._turn is None or self._turn.number != turn:
            return []
        chat_id = self._turn.chat_id
        self._turn = None
        self._go("image_refused")
        error.frame_id = chat_id
        return self._refused(error)

    def _call(self, image: PreparedImage | None, now: float) -> list[Action]:
        turn = self._turn
        scope = self._scope()
        assert turn is not None and scope is not None
        turn.calling = True
        use: ContextUse = "none"
        facts = ""
        if self._context is not None:
            age = now - self._context.captured_at.timestamp()
            use = freshness(
                age, stale_after=self._settings.stale_after, drop_after=self._settings.drop_after
            )
            if use != "dropped":
                facts = render_facts(self._context, use, age)
        turn.context_use = use
        memory_text = ""
        actions: list[Action] = []
        if self._index is not None or self._profile is not None:
            selection = select_memories(
                self._profile,
                self._index if self._index is not None else SaveIndex(scope),
                query_text=turn.text,
                focus_terms=self._focus_terms(),
                current_day=self._day,
                now=now,
                budget=self._budget,
            )
            memory_text = selection.render()
            if selection.used_ids:
                actions.append(TouchMemories(scope, tuple(selection.used_ids), now))
        recent = (
            list(self._history)[-self._settings.history_turns :]
            if self._settings.history_turns
            else []
        )
        messages = build_messages(
            persona=self._texts.persona,
            memory_text=memory_text,
            facts_text=facts,
            history=recent,
            text=turn.text,
            image_url=image.data_url() if image is not None else None,
        )
        turn.image_sent = image is not None
        actions.append(CallModel(turn.number, turn.chat_id, messages, image is not None))
        return actions

    def _focus_terms(self) -> list[str]:
        context = self._context
        if context is None:
            return []
        terms: list[str] = []
        if context.focus is not None:
            terms += [t for t in (context.focus.name, context.focus.kind) if t]
        for entity in context.nearby or ():
            if entity.name:
                terms.append(entity.name)
        if context.world is not None and context.world.location:
            terms.append(context.world.location)
        return terms

    def _delta(self, turn: int, text: str) -> list[Action]:
        current = self._turn
        if current is None or current.number != turn or not text:
            return []
        current.parts.append(text)
        return [Send(ChatDelta(id=current.chat_id, text=text))]

    def _done(self, turn: int, text: str, usage: Usage | None, now: float) -> list[Action]:
        current = self._turn
        if current is None or current.number != turn:
            return []
        self._turn = None
        self._go("reply_done")
        reply = text or "".join(current.parts)
        same_save = current.scope == self._scope()
        if same_save:
            self._history.append((current.text, reply))
        done = ChatDone(
            id=current.chat_id,
            text=reply,
            context=current.context_use,
            usage=usage,
            image_sent=current.image_sent,
        )
        day = self._day if same_save else None
        return [Send(done), Remember(current.scope, current.text, reply, day, now)]

    def _failed(self, turn: int, code: str) -> list[Action]:
        current = self._turn
        if current is None or current.number != turn:
            return []
        self._turn = None
        self._go("reply_failed")
        message = getattr(self._texts, code, self._texts.model_error)
        return [Send(ChatError(id=current.chat_id, code=code, message=str(message)))]

    def _cancel(self, frame: ChatCancel) -> list[Action]:
        current = self._turn
        if current is None or current.chat_id != frame.id:
            return [_error("unknown_chat", "no reply with this id is streaming", frame.id)]
        self._turn = None
        self._go("cancelled")
        return [
            CancelModel(current.number),
            Send(ChatError(id=current.chat_id, code="cancelled", message=self._texts.cancelled)),
        ]

    # -- deadlines and closing -------------------------------------------------

    def _timer(self, kind: TimerKind, now: float) -> list[Action]:
        if kind == "hello" and self.state is State.AWAIT_HELLO:
            return self._close(CLOSE_HELLO_TIMEOUT, "hello timeout", now)
        if kind == "heartbeat" and self.state in (State.READY, State.TURN):
            return self._close(CLOSE_HEARTBEAT_TIMEOUT, "heartbeat timeout", now)
        return []

    def _close(self, code: int, reason: str, now: float) -> list[Action]:
        actions = self._teardown(now)
        return [*actions, Close(code, reason)]

    def _disconnected(self, now: float) -> list[Action]:
        return self._teardown(now)

    def _teardown(self, now: float) -> list[Action]:
        if self.state is State.CLOSED:
            return []
        actions: list[Action] = [CancelTimer("hello"), CancelTimer("heartbeat")]
        if self._turn is not None:
            actions.append(CancelModel(self._turn.number))
            self._turn = None
        scope = self._scope() if self.state is not State.AWAIT_HELLO else None
        self._go("close")
        if scope is not None:
            actions += self._end_scope(scope, now)
        actions.append(Log("session.closed", {}))
        return actions


class _Turn:
    """The one turn in flight on a connection."""

    __slots__ = (
        "calling",
        "chat_id",
        "context_use",
        "image_sent",
        "number",
        "parts",
        "scope",
        "text",
    )

    def __init__(self, number: int, chat_id: str, text: str, scope: Scope) -> None:
        self.number = number
        # The save the turn was asked in: its memory goes there even if the save
        # switches while the reply streams.
        self.scope = scope
        self.chat_id = chat_id
        self.text = text
        self.parts: list[str] = []
        self.calling = False
        self.image_sent = False
        self.context_use: ContextUse = "none"


class _Buckets:
    """Per-connection admission: all frames, chat turns, and flood detection."""

    def __init__(self, settings: ServerSettings, now: float) -> None:
        self._frames = TokenBucket(settings.frames_per_second, settings.frame_burst, now)
        self._chats = TokenBucket(settings.chats_per_minute / 60, settings.chat_burst, now)
        self._refusals = WindowCounter(10.0)
        self._flood = settings.flood_refusals

    def admit(self, now: float) -> Literal["ok", "limited", "flood"]:
        if self._frames.take(now):
            return "ok"
        if self._refusals.add(now) > self._flood:
            return "flood"
        return "limited"

    def admit_chat(self, now: float) -> bool:
        return self._chats.take(now)


def _error(code: str, message: str, frame_id: str | None, fields: list[str] | None = None) -> Send:
    return Send(Error(code=code, message=message, id=frame_id, fields=fields))
