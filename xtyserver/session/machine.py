"""``GameAgentSession``: one connection's protocol/v1 state machine, sans-I/O (v1.md "Session").

The session takes events in (:mod:`xtyserver.session.events`, each with the
time it happened) and hands typed effects out (:mod:`xtyserver.session.effects`)
for a shell to carry out. It never does I/O, never reads a clock and never
raises on peer input: anything a peer sends becomes a frame or a close. Every
frame it sends is built here; every protocol rule is checked here.

States and transitions live in :data:`TRANSITIONS`, the one table of them::

    AWAIT_HELLO --hello ok--> READY --chat accepted--> TURN --reply ended--> READY
         |                      |                        |
         +---------------- close (any) ---------------> CLOSED

A turn is planned (:func:`~xtyserver.session.turn.plan_turn`) only once all
of its inputs are there: the save's memory (``TurnMemoryReady``, so a turn
right after a save switch sees the new save's memory) and, when one was sent
and the model has vision, the prepared screenshot (``ImageReady``).
"""

from __future__ import annotations

import enum
from collections.abc import Callable

import msgspec

from xtyserver import errors
from xtyserver.memory.shared_guard import context_names
from xtyserver.memory.tokens import DailyBudget
from xtyserver.protocol.budget import check_secrets
from xtyserver.protocol.codec import Decoded
from xtyserver.protocol.forbidden import redact
from xtyserver.protocol.frames import (
    AdapterPair,
    ChatCancel,
    ChatError,
    ChatSend,
    Heartbeat,
    Hello,
    Identity,
    MemoryConfirm,
    ServerHello,
    StateUpdate,
)
from xtyserver.protocol.images import PreparedImage
from xtyserver.protocol.secret_match import carried
from xtyserver.session import replies
from xtyserver.session.admission import Admission
from xtyserver.session.effects import (
    ArmTimer,
    CancelModel,
    CancelTimer,
    ClaimSeat,
    Close,
    Effect,
    LoadTurnMemory,
    Log,
    PrepareImage,
    Remember,
    Send,
)
from xtyserver.session.events import (
    Connected,
    Disconnected,
    Event,
    FrameIn,
    FrameRefused,
    ImageReady,
    ImageRefused,
    ModelDelta,
    ModelDone,
    ModelFailed,
    PairingAnswered,
    SaveMemory,
    SeatAnswered,
    StoreAnswer,
    TimerFired,
    TimerKind,
    ToolAnswered,
    TurnMemoryReady,
    WorkingFolded,
    WorkingResumed,
)
from xtyserver.session.pairing import Pairing
from xtyserver.session.requests import MANAGEMENT_FRAMES, StoreRequests
from xtyserver.session.requests import REFUSED as REQUEST_REFUSED
from xtyserver.session.saves import SaveTracker
from xtyserver.session.settings import SessionSettings
from xtyserver.session.tool_loop import ToolLoop
from xtyserver.session.tools import Confirmations, ToolCall
from xtyserver.session.turn import focus_terms
from xtyserver.session.turns import Turns
from xtyserver.token import matches as token_matches

# -- close codes (v1.md "Close codes") -----------------------------------------

CLOSE_UNAUTHORIZED = 4001
CLOSE_HELLO_TIMEOUT = 4002
CLOSE_HEARTBEAT_TIMEOUT = 4003
CLOSE_FLOOD = 4008
CLOSE_SERVER_FULL = 1013  # "try again later" (RFC 6455)
# Frames kept while a pre-auth hello waits for its seat (one inbox round trip).
HELD_FRAMES = 64


class State(enum.Enum):
    AWAIT_HELLO = "await_hello"
    READY = "ready"
    TURN = "turn"
    CLOSED = "closed"


# The one table of transitions: (state, what happened) -> next state. A pair
# missing here is a bug of ours (UsageError); the handlers decide what to answer.
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


class GameAgentSession:
    """The protocol/v1 state machine of one adapter connection (v1.md "Session").

    Args:
        session_id: The id reported in ``server.hello``.
        settings: Limits, deadlines, switches and texts.
        token: The expected token.
        authenticated: The upgrade request already carried the right token.
        zone_of: The IANA name of a zone name an adapter sent (IANA or Windows),
            or None when it is unknown here (``accounting.resolve_zone`` with a table).
        now: When the connection opened.
        paired: Whether a hello's token is a paired mod's key (v1.md "Pairing");
            None: only ``token`` is accepted.
    """

    def __init__(
        self,
        *,
        session_id: str,
        settings: SessionSettings,
        token: str,
        authenticated: bool,
        zone_of: Callable[[str], str | None],
        now: float,
        paired: Callable[[str], bool] | None = None,
    ) -> None:
        self.session_id = session_id
        self.state = State.AWAIT_HELLO
        self._settings = settings
        self._texts = settings.texts
        self._token = token
        # The skeleton of the player's last messages: the token typed in pieces
        # over consecutive messages is redacted once the pieces add up.
        self._carry = ""
        self._authenticated = authenticated
        self._paired = paired
        self._pairing = Pairing()
        self._secrets: tuple[str, ...] = (token,)
        self._seat_wanted: Hello | None = None
        self._held: list[tuple[Decoded, float]] = []
        self._zone_of = zone_of
        self._admission = Admission(settings, now)
        self._turns = Turns(settings)
        self._saves = SaveTracker(self._turns, summarize=settings.extraction, now=now)
        self._requests = StoreRequests(Confirmations(f"{session_id}:menu"), settings.texts.ask)
        self._tools = ToolLoop(Confirmations(session_id), settings.texts)

    def model_changed(
        self, *, configured: bool, vision: bool, daily_budget: DailyBudget | None = None
    ) -> None:
        """The server's model settings changed (the settings page): count from the next turn."""
        budget = self._settings.daily_budget if daily_budget is None else daily_budget
        self._settings = msgspec.structs.replace(
            self._settings, model_configured=configured, vision=vision, daily_budget=budget
        )

    # -- the one entry point ---------------------------------------------------

    def handle(self, event: Event, now: float) -> list[Effect]:
        """Feed one event that happened at ``now``; return what the shell must do."""
        if self.state is State.CLOSED and not isinstance(event, Disconnected):
            return []
        match event:
            case Connected():
                settings = self._settings
                deadline = (
                    settings.hello_timeout
                    if self._authenticated
                    else settings.preauth_hello_timeout
                )
                return [ArmTimer("hello", deadline)]
            case SeatAnswered(granted=granted):
                return self._seated(granted, now)
            case PairingAnswered():
                return self._pair_answered(event, now)
            case FrameIn(decoded=decoded):
                frame_id = getattr(decoded.frame, "id", None)
                return self._admit(now, frame_id) or self._frame(decoded, now)
            case FrameRefused(error=error):
                return self._admit(now, error.frame_id) or self._refused(error)
            case TurnMemoryReady(turn=turn, spent=spent) if not (
                self._settings.daily_budget.allows_chat(spent)
            ):
                return self._failed(turn, "budget_exhausted")
            case TurnMemoryReady(turn=turn, memory=memory):
                return self._turn_memory(turn, memory, now)
            case ImageReady(turn=turn, image=image):
                return self._image_ready(turn, image, now)
            case ImageRefused(turn=turn, error=error):
                return self._image_refused(turn, error)
            case ModelDelta(turn=turn, text=text):
                return self._turns.delta(turn, text)
            case ModelDone(turn=turn, text=text, tool_calls=calls) if calls:
                return self._tool_round(turn, text, calls, now)
            case ModelDone():
                return self._done(event, now)
            case ToolAnswered(turn=turn, call_id=call_id, answer=answer):
                current = self._turns.get(turn)
                return (
                    [] if current is None else self._tools.answered(current, call_id, answer, now)
                )
            case ModelFailed(turn=turn, code=code):
                return self._failed(turn, code)
            case StoreAnswer():
                return self._requests.answer(event, now, self._turns.language)
            case WorkingFolded(generation=generation, summary=summary):
                return self._turns.folded(generation, summary)
            case WorkingResumed(save=save, snapshot=snapshot):
                return self._turns.resumed(save if save == self._saves.save else None, snapshot)
            case TimerFired(kind=kind):
                return self._timer(kind, now)
            case Disconnected():
                return self._teardown(now)
        raise errors.UsageError(f"unknown session event {type(event).__name__}")

    @property
    def identity(self) -> Identity | None:
        """The save's identity, from ``adapter.hello`` or the latest switch."""
        return self._saves.identity

    # -- transitions -----------------------------------------------------------

    def _transition(self, what: str) -> None:
        nxt = TRANSITIONS.get((self.state, what))
        if nxt is None:
            raise errors.UsageError(f"no transition {self.state.value} --{what}-->")
        self.state = nxt

    # -- admission: rate limits and flood ---------------------------------------

    def _admit(self, now: float, frame_id: str | None) -> list[Effect]:
        verdict = self._admission.frame(now)
        if verdict == "ok":
            return []
        if verdict == "flood":
            return self._close(CLOSE_FLOOD, "flood", now)
        refusal = replies.error("rate_limited", "too many frames; slow down", frame_id)
        return [Send(refusal, droppable=True)]

    # -- frames ----------------------------------------------------------------

    def _refused(self, error: errors.PeerError) -> list[Effect]:
        # Field paths can hold peer-chosen keys: redact before they reach a log.
        fields = [redact(path[:120])[0] for path in error.fields[:20]]
        log = Log("frame.refused", {"code": error.code, "fields": fields})
        frame = replies.error(error.code, error.message, error.frame_id, error.fields)
        return [Send(frame), log]

    def _frame(self, decoded: Decoded, now: float) -> list[Effect]:
        waiting = self._seat_wanted is not None and not isinstance(decoded.frame, Hello)
        if waiting and len(self._held) < HELD_FRAMES:
            # Frames sent right behind the hello wait for its seat, in order.
            self._held.append((decoded, now))
            return []
        frame = decoded.frame
        effects: list[Effect] = []
        if decoded.context_over_target:
            effects.append(Log("context.over_target", {"bytes": decoded.context_bytes}))
        if self.state is State.AWAIT_HELLO:
            if isinstance(frame, AdapterPair):
                return effects + self._pairing.ask(frame, authenticated=self._authenticated)
            if not isinstance(frame, Hello):
                message = "the first frame must be adapter.hello"
                frame_id = getattr(frame, "id", None)
                return [*effects, Send(replies.error("hello_required", message, frame_id))]
            return effects + self._hello(frame, now)
        try:
            check_secrets(frame, self._secrets)
        except errors.PeerError as error:
            error.frame_id = getattr(frame, "id", None)
            return effects + self._refused(error)
        match frame:
            case Hello():
                message = "adapter.hello was already sent"
                effects.append(Send(replies.error("already_hello", message, frame.id)))
            case Heartbeat():
                effects += self._heartbeat(now)
            case StateUpdate():
                effects += self._state_update(frame, now)
            case ChatSend():
                effects += self._chat(frame, now)
            case ChatCancel():
                effects += self._cancel(frame)
            case MemoryConfirm():
                effects += self._confirm_dialog(frame, now)
            case _ if isinstance(frame, MANAGEMENT_FRAMES):
                effects.append(self._requests.ask_for(frame, self._saves.save, now))
        return effects

    def _hello(self, frame: Hello, now: float) -> list[Effect]:
        if self._seat_wanted is not None:
            return [Send(replies.error("already_hello", "hello already in progress", frame.id))]
        if not self._authenticated and not self._proves(frame.token):
            refusal = Send(replies.error("unauthorized", "missing or wrong token", frame.id))
            return [refusal, *self._close(CLOSE_UNAUTHORIZED, "unauthorized", now)]
        if not self._authenticated and frame.token and frame.token != self._token:
            self._secrets = (self._token, frame.token)  # a paired key is a secret too
        try:
            check_secrets(frame, self._secrets)
        except errors.PeerError as error:
            error.frame_id = frame.id
            return self._refused(error)
        given = frame.timezone or self._settings.default_timezone
        timezone = self._zone_of(given)
        if timezone is None:
            message = f"unknown time zone {given!r} (neither IANA nor Windows)"
            return [Send(replies.error("invalid_frame", message, frame.id, ["timezone"]))]
        if not self._authenticated:
            # Proved by the hello: only now does it count against max_connections.
            self._seat_wanted = frame
            return [ClaimSeat()]
        self._transition("hello_ok")
        opened = self._saves.open(frame.identity, timezone, now)
        hello = ServerHello(
            protocol="v1",
            session_id=self.session_id,
            heartbeat_ms=self._settings.heartbeat_ms,
            limits=self._settings.limits,
            server=self._settings.server,
            id=frame.id,
        )
        return [
            CancelTimer("hello"),
            Send(hello),
            *opened,
            ArmTimer("heartbeat", self._heartbeat_deadline()),
            Log("session.hello", {"game": frame.identity.game_id, "adapter": frame.adapter.name}),
        ]

    def _proves(self, token: str | None) -> bool:
        """Whether a hello's token is the adapter token or a paired mod's key."""
        if token_matches(token, self._token):
            return True
        return token is not None and self._paired is not None and self._paired(token)

    def _pair_answered(self, event: PairingAnswered, now: float) -> list[Effect]:
        if self.state is not State.AWAIT_HELLO:
            return []
        # Granted: the hello with the new key comes as from a connection with a token.
        timeout = self._settings.hello_timeout
        effects, close = self._pairing.answered(event, hello_timeout=timeout)
        if close:
            effects += self._close(CLOSE_UNAUTHORIZED, f"pair {event.outcome}", now)
        return effects

    def _seated(self, granted: bool, now: float) -> list[Effect]:
        frame, self._seat_wanted = self._seat_wanted, None
        held, self._held = self._held, []
        if frame is None or self.state is not State.AWAIT_HELLO:
            return []
        if not granted:
            full = Send(replies.error("server_full", "too many connections", frame.id))
            return [full, *self._close(CLOSE_SERVER_FULL, "too many connections", now)]
        self._authenticated = True
        effects = self._hello(frame, now)
        for decoded, at in held:
            if self.state is State.CLOSED:  # type: ignore[comparison-overlap]
                break
            effects += self._frame(decoded, at)
        return effects

    def _heartbeat_deadline(self) -> float:
        return self._settings.heartbeat_ms / 1000 * self._settings.limits.heartbeat_misses

    def _heartbeat(self, now: float) -> list[Effect]:
        return [*self._saves.beat(now), ArmTimer("heartbeat", self._heartbeat_deadline())]

    def _state_update(self, frame: StateUpdate, now: float) -> list[Effect]:
        if self.state is State.TURN and self._saves.is_switch(frame.identity):
            # The reply streams on for the save it was asked in; the frame is refused
            # whole (its modelContext too), so nothing of the other save mixes in.
            message = "a reply is streaming; cancel it or wait for it before switching saves"
            return [Send(replies.error("reply_in_progress", message, frame.id, ["identity"]))]
        effects = self._saves.switch(frame.identity, now)
        return effects + self._saves.set_context(frame.model_context, now)

    # -- turns -----------------------------------------------------------------

    def _chat(self, frame: ChatSend, now: float) -> list[Effect]:
        if self.state is State.TURN:
            return [Send(ChatError(id=frame.id, code="busy", message=self._texts.busy))]
        if not self._admission.chat(now):
            message = "too many chat.send frames; slow down"
            return [Send(replies.error("rate_limited", message, frame.id), droppable=True)]
        effects: list[Effect] = []
        if frame.context is not None:
            effects += self._saves.switch(frame.context.identity, now)
            if frame.context.model_context is not None:
                effects += self._saves.set_context(frame.context.model_context, now)
        if not self._settings.model_configured:
            message = self._texts.model_not_configured
            refusal = ChatError(id=frame.id, code="model_not_configured", message=message)
            return [*effects, Send(refusal)]
        self._transition("chat_accepted")
        text, kinds = redact(frame.text, secrets=(self._token,), carry=self._carry)
        self._carry = carried(self._carry, frame.text)
        if kinds:
            effects.append(Log("chat.redacted", {"kinds": sorted(set(kinds))}))
        turn = self._turns.start(frame.id, text, self._saves.save)
        if self._settings.memory or self._settings.daily_budget.limited:
            query = " ".join([text, *focus_terms(self._saves.context)])
            effects.append(
                LoadTurnMemory(turn.number, turn.save, self._settings.memory, query=query)
            )
        else:
            turn.memory_ready = True
        if frame.image is not None and not self._settings.vision:
            effects.append(Log("model.image_dropped", {"reason": "model has no vision"}))
        elif frame.image is not None:
            turn.image_ready = False
            effects.append(PrepareImage(turn.number, frame.image))
        return effects + self._plan(now)

    def _plan(self, now: float) -> list[Effect]:
        saves = self._saves
        return self._turns.plan(
            now=now,
            save=saves.save,
            context=saves.context,
            captured=saves.context_at,
            day=saves.day,
            shown=saves.shown.pairs(),
        )

    def _turn_memory(self, number: int, memory: SaveMemory | None, now: float) -> list[Effect]:
        turn = self._turns.get(number)
        if turn is None or turn.memory_ready:
            return []
        turn.memory, turn.memory_ready = memory, True
        return self._plan(now)

    def _image_ready(self, number: int, image: PreparedImage, now: float) -> list[Effect]:
        turn = self._turns.get(number)
        if turn is None or turn.image_ready:
            return []
        turn.image, turn.image_ready = image, True
        return self._plan(now)

    def _image_refused(self, number: int, error: errors.PeerError) -> list[Effect]:
        turn = self._turns.get(number)
        if turn is None or turn.image_ready:
            return []
        self._turns.end()
        self._transition("image_refused")
        error.frame_id = turn.chat_id
        return self._refused(error)

    def _done(self, done: ModelDone, now: float) -> list[Effect]:
        number = done.turn
        turn = self._turns.get(number)
        if turn is not None and not (done.text or turn.parts or turn.tools_used):
            # Nothing to show (e.g. a reasoning model that only reasoned): a failed turn.
            log = Log("model.empty_reply", {"reasoned": done.reasoned})
            return [log, *self._failed(number, "model_empty_reply")]
        here = self._saves.save
        effects = self._turns.finish(done, now=now, save=here, day=self._saves.day)
        if effects is None:
            return []
        self._transition("reply_done")
        # The save's modelContext names never reach the shared profile (issue 9).
        names = context_names(self._saves.context)
        return [
            msgspec.structs.replace(e, context_names=names)
            if isinstance(e, Remember) and e.save == here
            else e
            for e in effects
        ]

    def _tool_round(
        self, number: int, text: str, calls: tuple[ToolCall, ...], now: float
    ) -> list[Effect]:
        """The model asked for tools (v1.md "Memory tools"); past the limit it must answer."""
        turn = self._turns.get(number)
        if turn is None:
            return []
        if self._tools.offered(turn) is None:
            # No tools were offered: whatever it asked for, this is its final answer.
            return self._done(ModelDone(number, text), now)
        names = context_names(self._saves.context) if turn.save == self._saves.save else ()
        return self._tools.round(turn, text, calls, now, names)

    def _confirm_dialog(self, frame: MemoryConfirm, now: float) -> list[Effect]:
        """The mod's dialog answered a ``memory.confirm.request`` (v1.md "memory.confirm")."""
        decided = self._tools.dialog(frame.confirm_id, frame.answer == "yes", now)
        if decided is None:
            return [Log("memory.confirm", {"answer": "no"})]
        if isinstance(decided, str):
            message = REQUEST_REFUSED[decided]
            error = replies.error("confirmation_refused", message, frame.id, ["confirmId"])
            return [Send(error)]
        log = Log("memory.confirm", {"answer": "yes", "target": decided.kind})
        return [self._requests.apply(frame.id, self._saves.save, decided), log]

    def _failed(self, number: int, code: str) -> list[Effect]:
        effects = self._turns.fail(number, code)
        if effects is None:
            return []
        self._transition("reply_failed")
        return effects

    def _cancel(self, frame: ChatCancel) -> list[Effect]:
        turn = self._turns.current
        if turn is None or turn.chat_id != frame.id:
            message = "no reply with this id is streaming"
            return [Send(replies.error("unknown_chat", message, frame.id))]
        self._turns.end()
        self._transition("cancelled")
        cancelled = ChatError(id=turn.chat_id, code="cancelled", message=self._texts.cancelled)
        return [CancelModel(turn.number), Send(cancelled)]

    # -- deadlines and closing -------------------------------------------------

    def _timer(self, kind: TimerKind, now: float) -> list[Effect]:
        if kind == "hello" and self.state is State.AWAIT_HELLO:
            return self._close(CLOSE_HELLO_TIMEOUT, "hello timeout", now)
        if kind == "heartbeat" and self.state in (State.READY, State.TURN):
            return self._close(CLOSE_HEARTBEAT_TIMEOUT, "heartbeat timeout", now)
        return []

    def _close(self, code: int, reason: str, now: float) -> list[Effect]:
        return [*self._teardown(now), Close(code, reason)]

    def _teardown(self, now: float) -> list[Effect]:
        if self.state is State.CLOSED:
            return []
        effects: list[Effect] = [CancelTimer("hello"), CancelTimer("heartbeat")]
        turn = self._turns.end()
        if turn is not None:
            effects.append(CancelModel(turn.number))
        had_save = self.state is not State.AWAIT_HELLO
        self._transition("close")
        if had_save:
            effects += self._saves.end(now)
        self._requests.clear()
        self._tools.clear()
        effects.append(Log("session.closed", {}))
        return effects
