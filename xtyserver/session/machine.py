"""``GameAgentSession``: one connection's protocol/v1 state machine, sans-I/O (v1.md "Session").

The session takes events in (:mod:`xtyserver.session.events`, each with the
time it happened) and hands typed effects out (:mod:`xtyserver.session.effects`)
for a shell to carry out. It never does I/O, never reads a clock and never
raises on peer input: anything a peer sends becomes a frame or a close. Every
frame it sends is built here; every protocol rule is checked here.

What each state accepts lives in :data:`TRANSITIONS`, the one table of
(state, event or frame type) -> handler and the state it leads to::

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
from typing import Any, NamedTuple

import msgspec

from xtyserver import errors
from xtyserver.memory.aliases import read_naming
from xtyserver.memory.manage import Confirmations
from xtyserver.memory.shared_guard import context_names
from xtyserver.memory.tokens import DailyBudget
from xtyserver.memory.types import Scope
from xtyserver.protocol.action_frames import ActionSpec
from xtyserver.protocol.budget import check_secrets, freshness
from xtyserver.protocol.codec import Decoded
from xtyserver.protocol.forbidden import redact, tail
from xtyserver.protocol.frames import (
    ActionResult,
    ActionsDeclare,
    ActionsDeclared,
    AdapterPair,
    ChatCancel,
    ChatError,
    ChatSend,
    ChatTyping,
    GameEvent,
    Heartbeat,
    Hello,
    Identity,
    MemoryConfirm,
    ServerHello,
    StateUpdate,
    VoiceAudio,
    VoiceCancel,
    VoiceStart,
    VoiceStop,
)
from xtyserver.protocol.secret_match import carried
from xtyserver.session import replies
from xtyserver.session.actions import QUESTION_KIND, ActionMode, Actions, Answered
from xtyserver.session.admission import Admission
from xtyserver.session.asking import asks_other
from xtyserver.session.companion import event_query
from xtyserver.session.effects import (
    ArmTimer,
    CancelModel,
    CancelTimer,
    ClaimSeat,
    Close,
    Effect,
    LoadTurnMemory,
    Log,
    NameSaid,
    PrepareImage,
    PrepareQuery,
    RecordAction,
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
    SeatAnswered,
    SpeechReady,
    StoreAnswer,
    TimerFired,
    ToolAnswered,
    TurnMemoryReady,
    VoiceFailed,
    VoiceHeard,
    WorkingFolded,
    WorkingResumed,
)
from xtyserver.session.pairing import Pairing
from xtyserver.session.requests import MANAGEMENT_FRAMES, ManagementFrame, StoreRequests
from xtyserver.session.requests import REFUSED as REQUEST_REFUSED
from xtyserver.session.saves import SaveTracker
from xtyserver.session.settings import SessionSettings
from xtyserver.session.speakup import SpeakUp, SpeakUpSettings
from xtyserver.session.tool_loop import ToolLoop
from xtyserver.session.tools import ToolCall
from xtyserver.session.turn import focus_terms
from xtyserver.session.turns import Turns, shown_reply
from xtyserver.session.voice import VoiceDesk, VoiceRules
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


# A frame that a state has no row for in TRANSITIONS is answered with this error and
# changes nothing (v1.md "States"); a closed session answers nothing at all.
NOT_ACCEPTED: dict[State, tuple[str, str]] = {
    State.AWAIT_HELLO: ("hello_required", "the first frame must be adapter.hello"),
    State.READY: ("already_hello", "adapter.hello was already sent; this frame comes before it"),
    State.TURN: ("already_hello", "adapter.hello was already sent; this frame comes before it"),
}


class GameAgentSession:
    """The protocol/v1 state machine of one adapter connection (v1.md "Session").

    Args:
        authenticated: The upgrade request already carried the right token.
        zone_of: The IANA name of a zone name an adapter sent (IANA or Windows),
            or None when it is unknown here.
        paired: Whether a hello's token is a paired mod's key (v1.md "Pairing");
            None: only ``token`` is accepted.
        action_mode: The page's per-game switch of game actions (v1.md "Actions"):
            ``all``, ``look`` (only), ``off``; None: ``all``.
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
        action_mode: Callable[[str], ActionMode] | None = None,
    ) -> None:
        self.session_id = session_id
        self.state = State.AWAIT_HELLO
        self._settings = settings
        self._texts = settings.texts
        self._token = token
        # The skeleton of the player's last messages: the token typed in pieces
        # over consecutive messages is redacted once the pieces add up.
        self._carry = ""
        # The end of the player's last message (a path completed in the next one).
        self._tail = ""
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
        self._actions = Actions(mode_of=action_mode, texts=settings.texts.actions)
        self._tools = ToolLoop(Confirmations(session_id), settings.texts, self._actions)
        self._voice = VoiceDesk(settings.voice, settings.texts.voice)
        self._speakup = SpeakUp()
        self._lines = 0  # proactive lines started, for their ids

    def model_changed(self, *, configured: bool, vision: bool, daily_budget: DailyBudget) -> None:
        """The server's model settings changed (the settings page): count from the next turn."""
        self._settings = msgspec.structs.replace(
            self._settings, model_configured=configured, vision=vision, daily_budget=daily_budget
        )

    def declared_actions(self) -> tuple[str, list[ActionSpec]] | None:
        """The game and the actions its mod declared now (the page lists them); None before
        the hello, after the end, or when the mod declared none."""
        if self.state in (State.AWAIT_HELLO, State.CLOSED) or not self._actions.specs:
            return None
        return self._saves.save.game_id, list(self._actions.specs.values())

    def speakup_changed(self, speakup: SpeakUpSettings) -> None:
        """The player changed the speak-up settings (the page): they count from the next event."""
        self._settings = msgspec.structs.replace(self._settings, speakup=speakup)

    def voice_changed(self, voice: VoiceRules) -> None:
        """The player turned voice on or off or muted it (the page): from the next ``voice.start``
        (an utterance under way ends as it began)."""
        self._settings = msgspec.structs.replace(self._settings, voice=voice)
        self._voice.rules = voice

    # -- the one entry point ---------------------------------------------------

    def handle(self, event: Event, now: float) -> list[Effect]:
        """Feed one event that happened at ``now``; return what the shell must do.

        The state's row in :data:`TRANSITIONS` handles it; an event without a row
        changes nothing (an answer for a turn or a request that ended).
        """
        row = _row(self.state, type(event))
        if row is None:
            return []
        # A voice turn's reply is spoken sentence by sentence as its frames go out.
        return self._voice.spoken(row.handler(self, event, now))

    @property
    def identity(self) -> Identity | None:
        """The save's identity, from ``adapter.hello`` or the latest switch."""
        return self._saves.identity

    # -- transitions -----------------------------------------------------------

    def _move(self, kind: type[Any]) -> None:
        """A handler took an event of ``kind``: enter the state its row leads to."""
        row = _row(self.state, kind)
        if row is None or row.then is None:
            raise errors.UsageError(f"no transition {self.state.value} --{kind.__name__}-->")
        self.state = row.then

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

    def _frame_refused(self, event: FrameRefused, now: float) -> list[Effect]:
        return self._admit(now, event.error.frame_id) or self._refused(event.error)

    def _frame_in(self, event: FrameIn, now: float) -> list[Effect]:
        frame = event.decoded.frame
        frame_id = getattr(frame, "id", None)
        if isinstance(frame, GameEvent) and self.state is not State.AWAIT_HELLO:
            # Events have their own bucket: a flood of them is refused, never closed.
            if not self._admission.event(now):
                refusal = replies.error("rate_limited", "too many game.event frames", frame_id)
                return [Send(refusal, droppable=True)]
            return self._frame(event.decoded, now)
        return self._admit(now, frame_id) or self._frame(event.decoded, now)

    def _frame(self, decoded: Decoded, now: float) -> list[Effect]:
        """One admitted frame, handled by its own row of the state."""
        frame = decoded.frame
        waiting = self._seat_wanted is not None and not isinstance(frame, Hello)
        if waiting and len(self._held) < HELD_FRAMES:
            # Frames sent right behind the hello wait for its seat, in order.
            self._held.append((decoded, now))
            return []
        effects: list[Effect] = []
        if decoded.context_over_target:
            effects.append(Log("context.over_target", {"bytes": decoded.context_bytes}))
        frame_id = getattr(frame, "id", None)
        if self.state is not State.AWAIT_HELLO:
            # A hello checks its secrets itself, once it knows which key it proved.
            try:
                check_secrets(frame, self._secrets)
            except errors.PeerError as error:
                error.frame_id = frame_id
                return effects + self._refused(error)
        row = _row(self.state, type(frame))
        if row is None:
            code, message = NOT_ACCEPTED[self.state]
            return [*effects, Send(replies.error(code, message, frame_id))]
        return effects + row.handler(self, frame, now)

    def _connected(self, event: Connected, now: float) -> list[Effect]:
        settings = self._settings
        deadline = settings.hello_timeout if self._authenticated else settings.preauth_hello_timeout
        return [ArmTimer("hello", deadline)]

    def _pair(self, frame: AdapterPair, now: float) -> list[Effect]:
        return self._pairing.ask(frame, authenticated=self._authenticated)

    def _already_hello(self, frame: Hello, now: float) -> list[Effect]:
        return [Send(replies.error("already_hello", "adapter.hello was already sent", frame.id))]

    def _request(self, frame: ManagementFrame, now: float) -> list[Effect]:
        return [self._requests.ask_for(frame, self._saves.save, now)]

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
        self._move(Hello)
        opened = self._saves.open(frame.identity, timezone, now)
        hello = ServerHello(
            protocol="v1",
            session_id=self.session_id,
            heartbeat_ms=self._settings.heartbeat_ms,
            limits=self._settings.limits,
            server=self._settings.server,
            id=frame.id,
        )
        declared: list[Effect] = []
        if frame.actions is not None:
            names = self._actions.declare(frame.actions)
            declared.append(Send(ActionsDeclared(names=names, id=frame.id)))
        return [
            CancelTimer("hello"),
            Send(hello),
            *declared,
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
        # Granted: the hello with the new key comes as from a connection with a token.
        timeout = self._settings.hello_timeout
        effects, close = self._pairing.answered(event, hello_timeout=timeout)
        if close:
            effects += self._close(CLOSE_UNAUTHORIZED, f"pair {event.outcome}", now)
        return effects

    def _seated(self, event: SeatAnswered, now: float) -> list[Effect]:
        frame, self._seat_wanted = self._seat_wanted, None
        held, self._held = self._held, []
        if frame is None:
            return []
        if not event.granted:
            full = Send(replies.error("server_full", "too many connections", frame.id))
            return [full, *self._close(CLOSE_SERVER_FULL, "too many connections", now)]
        self._authenticated = True
        effects = self._hello(frame, now)
        for decoded, at in held:
            if self.state is State.CLOSED:
                break
            effects += self._frame(decoded, at)
        return effects

    def _heartbeat_deadline(self) -> float:
        return self._settings.heartbeat_ms / 1000 * self._settings.limits.heartbeat_misses

    def _heartbeat(self, frame: Heartbeat, now: float) -> list[Effect]:
        return [*self._saves.beat(now), ArmTimer("heartbeat", self._heartbeat_deadline())]

    def _state_update(self, frame: StateUpdate, now: float) -> list[Effect]:
        current = self._turns.current
        hushed: list[Effect] = []
        if self._saves.is_switch(frame.identity) and current is not None and current.event:
            hushed = self._hush(now)  # the companion's line is about the save being left
        if self.state is State.TURN and self._saves.is_switch(frame.identity):
            # The reply streams on for the save it was asked in; the frame is refused
            # whole (its modelContext too), so nothing of the other save mixes in.
            message = "a reply is streaming; cancel it or wait for it before switching saves"
            return [Send(replies.error("reply_in_progress", message, frame.id, ["identity"]))]
        effects = hushed + self._saves.switch(frame.identity, now)
        return effects + self._saves.set_context(frame.model_context, now)

    # -- turns -----------------------------------------------------------------

    def _typing(self, frame: ChatTyping, now: float) -> list[Effect]:
        """A hint with no reply: the query the chat.send would embed, embedded now."""
        return self._prepare(frame.text)

    def _prepare(self, said: str) -> list[Effect]:
        """The query a turn on ``said`` would embed, embedded ahead of it (no reply)."""
        if not self._settings.memory or self._saves.identity is None:
            return []
        text, _ = redact(said, secrets=(self._token,), carry=self._carry)
        return [PrepareQuery(self._saves.save, text)]

    def _busy(self, frame: ChatSend, now: float) -> list[Effect]:
        current = self._turns.current
        if current is not None and current.event is not None:
            # The player speaks while the companion's own line streams: the player wins.
            return self._hush(now) + self._chat(frame, now)
        return [Send(ChatError(id=frame.id, code="busy", message=self._texts.busy))]

    def _hush(self, now: float) -> list[Effect]:
        """End the companion's proactive line in flight (``chat.error`` ``cancelled``)."""
        turn = self._turns.end()
        if turn is None:
            return []
        self._move(ChatCancel)
        cancelled = ChatError(
            id=turn.chat_id, code="cancelled", message=self._texts.cancelled, origin="companion"
        )
        return [CancelModel(turn.number), Send(cancelled), *self._voice.hush_reply(turn.chat_id)]

    # -- game events: the companion speaks up (docs/speakup.md) ---------------------------

    def _event(self, frame: GameEvent, now: float) -> list[Effect]:
        """A ``game.event``: refused when stale, else maybe a proactive line about it."""
        saves = self._saves
        stale = self._stale_event(frame, now)
        if stale is not None:
            field, message = stale
            return [Send(replies.error("stale_event", message, frame.id, [field]))]
        settings = self._settings
        game = saves.save.game_id
        rules = settings.speakup.of(game)
        drop_after = settings.limits.context_drop_after_ms / 1000
        context = saves.context if now - saves.context_at <= drop_after else None
        verdict = self._speakup.decide(
            rules,
            frame.kind,
            now=now,
            zone=saves.timezone,
            streaming=self.state is State.TURN,
            context=context,
        )
        if verdict == "speak" and not settings.model_configured:
            verdict = "no_model"
        log = Log("speakup.event", {"game": game, "kind": frame.kind, "verdict": verdict})
        if verdict != "speak":
            return [log]
        self._speakup.spoke(frame.kind, now)
        self._move(GameEvent)
        self._lines += 1
        turn = self._turns.start_line(f"companion-{self._lines}", saves.save, frame)
        self._voice.speak_line(turn.chat_id)
        query = " ".join([event_query(frame), *focus_terms(saves.context)])
        load = LoadTurnMemory(turn.number, turn.save, settings.memory, query=query)
        return [log, load]

    def _stale_event(self, frame: GameEvent, now: float) -> tuple[str, str] | None:
        """The field that makes an event stale and why, or None (docs/speakup.md)."""
        save = self._saves.save
        if frame.save_id is not None and frame.save_id != save.save_id:
            return "saveId", "the event is about another save than this session's"
        if frame.captured_at is not None:
            age = now - frame.captured_at.timestamp()
            stale_after = self._settings.limits.context_stale_after_ms / 1000
            if age > stale_after:
                return "capturedAt", f"the event is {age:.0f} s old; at most {stale_after:g} s"
        return None

    def _chat(self, frame: ChatSend, now: float) -> list[Effect]:
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
        self._move(ChatSend)
        if frame.source != "voice":
            self._voice.typed()
        # The adapter token, and the paired key this connection said hello with; a path
        # begun at the end of the message before is judged with it.
        text, kinds = redact(
            frame.text, secrets=self._secrets, carry=self._carry, before=self._tail
        )
        self._carry = carried(self._carry, frame.text)
        self._tail = tail(frame.text)
        if kinds:
            effects.append(Log("chat.redacted", {"kinds": sorted(set(kinds))}))
        turn = self._turns.start(frame.id, text, self._saves.save)
        answers = turn.answers
        confirming = answers is not None and answers.kind == QUESTION_KIND
        game = turn.save.game_id
        self._actions.offer(turn.number, text, game, confirming=confirming)
        # The player's own names for things: from their typed words only, and never from
        # a message that had something redacted (what must not be stored stays out).
        said = read_naming(frame.text) if self._settings.memory and not kinds else None
        if said is not None:
            effects.append(NameSaid(turn.save, said, now))
        if self._settings.memory or self._settings.daily_budget.limited:
            # The vector is the player's words: the modelContext's names steer the
            # lexical side (focus terms); in the vector they doubled the tokens and
            # the CPU of every query and recalled less (docs/benchmarks.md).
            effects.append(
                LoadTurnMemory(turn.number, turn.save, self._settings.memory, query=text)
            )
        else:
            turn.memory_ready = True
        if frame.image is not None and not self._settings.vision:
            effects.append(Log("model.image_dropped", {"reason": "model has no vision"}))
        elif frame.image is not None:
            turn.image_ready = False
            effects.append(PrepareImage(turn.number, frame.image))
        return effects + self._plan(now)

    # -- voice (v1.md "Voice") -------------------------------------------------------------------

    def _voice_start(self, frame: VoiceStart, now: float) -> list[Effect]:
        return self._voice.refuses(frame) or self._voice.start(frame)

    def _voice_barge(self, frame: VoiceStart, now: float) -> list[Effect]:
        """Push-to-talk while a reply streams: it ends as cancelled, its speech stops now."""
        refusal = self._voice.refuses(frame)
        if refusal is not None:
            return refusal
        turn = self._turns.end()
        self._move(VoiceStart)
        effects: list[Effect] = [Log("voice.barge_in", {})]
        if turn is not None:
            # The companion's own line (speak-up) is cut the same way, and says whose it was.
            message = self._texts.cancelled
            cancelled = ChatError(
                id=turn.chat_id, code="cancelled", message=message, origin=turn.origin
            )
            effects += [CancelModel(turn.number), Send(cancelled)]
        return effects + self._voice.start(frame)

    def _voice_stop(self, frame: VoiceStop, now: float) -> list[Effect]:
        return self._voice.stop(frame)

    def _voice_cancel(self, frame: VoiceCancel, now: float) -> list[Effect]:
        return self._voice.cancel(frame)

    def _voice_audio(self, frame: VoiceAudio, now: float) -> list[Effect]:
        return self._voice.audio(frame)

    def _voice_heard(self, event: VoiceHeard, now: float) -> list[Effect]:
        """A transcript; a final one with words is the player's turn, as if typed."""
        effects, text = self._voice.heard(event)
        if text is None:
            if event.final or not event.text.strip():
                return effects
            # A partial transcript is what the player said so far: its query embedded now
            # (as a chat.typing's), the final one finds it ready when the player stopped
            # after a pause (the final transcript is then the partial one).
            return effects + self._prepare(event.text)
        said = ChatSend(id=event.utterance, text=text, source="voice")
        turn = self._busy(said, now) if self.state is State.TURN else self._chat(said, now)
        return effects + turn

    def _voice_failed(self, event: VoiceFailed, now: float) -> list[Effect]:
        return self._voice.failed(event) or self._voice.speech_failed(event)

    def _speech_ready(self, event: SpeechReady, now: float) -> list[Effect]:
        return self._voice.speech_frame(event)

    def _plan(self, now: float) -> list[Effect]:
        saves = self._saves
        current = self._turns.current
        return self._turns.plan(
            now=now,
            save=saves.save,
            context=saves.context,
            captured=saves.context_at,
            day=saves.day,
            shown=saves.shown.pairs(),
            actions=self._actions.offered(current.number) if current is not None else None,
        )

    def _turn_memory(self, event: TurnMemoryReady, now: float) -> list[Effect]:
        turn = self._turns.get(event.turn)
        if turn is not None and turn.event is not None and not turn.memory_ready:
            rules = self._settings.speakup.of(turn.save.game_id)
            if not self._speakup.within_share(rules, self._settings.daily_budget, event.spent):
                # The mod never asked: the line ends without a frame, and counts for nothing.
                self._speakup.unsaid()
                self._turns.end()
                self._move(TurnMemoryReady)
                fields = {"game": turn.save.game_id, "verdict": "budget_share"}
                return [Log("speakup.event", fields)]
        if not self._settings.daily_budget.allows_chat(event.spent):
            return self._failed(event.turn, "budget_exhausted", TurnMemoryReady)
        if turn is None or turn.memory_ready:
            return []
        turn.memory, turn.memory_ready = event.memory, True
        return self._plan(now)

    def _image_ready(self, event: ImageReady, now: float) -> list[Effect]:
        turn = self._turns.get(event.turn)
        if turn is None or turn.image_ready:
            return []
        turn.image, turn.image_ready = event.image, True
        return self._plan(now)

    def _image_refused(self, event: ImageRefused, now: float) -> list[Effect]:
        turn = self._turns.get(event.turn)
        if turn is None or turn.image_ready:
            return []
        self._turns.end()
        self._move(ImageRefused)
        error = event.error
        error.frame_id = turn.chat_id
        return self._refused(error)

    def _delta(self, event: ModelDelta, now: float) -> list[Effect]:
        return self._turns.delta(event.turn, event.text)

    def _model_done(self, event: ModelDone, now: float) -> list[Effect]:
        if event.tool_calls:
            return self._tool_round(event.turn, event.text, event.tool_calls, now)
        return self._done(event, now)

    def _model_failed(self, event: ModelFailed, now: float) -> list[Effect]:
        return self._failed(event.turn, event.code, ModelFailed)

    def _tool_answered(self, event: ToolAnswered, now: float) -> list[Effect]:
        turn = self._turns.get(event.turn)
        return [] if turn is None else self._tools.answered(turn, event.call_id, event.answer, now)

    def _store_answer(self, event: StoreAnswer, now: float) -> list[Effect]:
        return self._requests.answer(event, now, self._turns.language)

    def _folded(self, event: WorkingFolded, now: float) -> list[Effect]:
        return self._turns.folded(event.generation, event.summary)

    def _resumed(self, event: WorkingResumed, now: float) -> list[Effect]:
        save = event.save if event.save == self._saves.save else None
        return self._turns.resumed(save, event.snapshot)

    def _done(self, done: ModelDone, now: float) -> list[Effect]:
        number = done.turn
        turn = self._turns.get(number)
        if turn is not None and not (done.text or turn.parts or turn.tools_used):
            # Nothing to show (e.g. a reasoning model that only reasoned): a failed turn.
            log = Log("model.empty_reply", {"reasoned": done.reasoned})
            return [log, *self._failed(number, "model_empty_reply", ModelDone)]
        here = self._saves.save
        effects = self._turns.finish(done, now=now, save=here, day=self._saves.day)
        if effects is None:
            return []
        if turn is not None and turn.event is None:
            self._actions.ended(number, asks_other(shown_reply(turn, done.text)))
        self._move(ModelDone)
        # The save's modelContext names never reach the shared profile.
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
        return self._tools.round(turn, text, calls, now, names, self._action_gate(turn.save, now))

    # -- game actions (v1.md "Actions") ------------------------------------------------------

    def _action_gate(self, save: Scope, now: float) -> str | None:
        """Why no game action may run now (the save switched, the state is stale), or None."""
        saves = self._saves
        if save != saves.save:
            return "switched"
        if saves.context is None:
            return "stale"
        limits = self._settings.limits
        fresh = freshness(
            now - saves.context_at,
            stale_after=limits.context_stale_after_ms / 1000,
            drop_after=limits.context_drop_after_ms / 1000,
        )
        return None if fresh == "fresh" else "stale"

    def _declare(self, frame: ActionsDeclare, now: float) -> list[Effect]:
        names = self._actions.declare(frame.actions)
        log = Log("actions.declared", {"count": len(names)})
        return [Send(ActionsDeclared(names=names, id=frame.id)), log]

    def _action_result(self, frame: ActionResult, now: float) -> list[Effect]:
        """The mod answered an ``action.request``; an id nothing waits on is refused."""
        save = self._saves.save
        answered = self._actions.result(frame, now, save.game_id, save.save_id)
        if answered is None:
            late = self._actions.late(frame, now, save.game_id, save.save_id)
            message = "no action.request with this id is waiting (answered, timed out or unknown)"
            error = Send(replies.error("unknown_action", message, frame.id, ["id"]))
            return [error] if late is None else [error, RecordAction(late)]
        effects = self._answered(answered, now)
        if answered.forbidden:
            message = "the outcome text holds content that must stay on this machine; left out"
            effects.append(Send(replies.error("forbidden_content", message, frame.id, ["text"])))
        return effects

    def _timer(self, event: TimerFired, now: float) -> list[Effect]:
        if event.kind == "voice":
            return self._voice.timed_out()
        if event.kind == "action":
            save = self._saves.save
            answered = self._actions.expire(now, save.game_id, save.save_id)
            return [] if answered is None else self._answered(answered, now)
        return self._heartbeat_timer(event, now)

    def _answered(self, answered: Answered, now: float) -> list[Effect]:
        """An action's outcome goes to its turn; a chain's next step is judged as of now."""
        turn = self._turns.current
        gate = None if turn is None else self._action_gate(turn.save, now)
        return self._tools.action_answered(turn, answered, now, gate)

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

    def _failed(self, number: int, code: str, kind: type[Event]) -> list[Effect]:
        """End turn ``number`` with ``code``; ``kind``: the event that ended it."""
        effects = self._turns.fail(number, code)
        if effects is None:
            return []
        self._move(kind)
        return effects

    def _no_reply(self, frame: ChatCancel, now: float) -> list[Effect]:
        message = "no reply with this id is streaming"
        return [Send(replies.error("unknown_chat", message, frame.id))]

    def _cancel(self, frame: ChatCancel, now: float) -> list[Effect]:
        turn = self._turns.current
        if turn is None or turn.chat_id != frame.id:
            return self._no_reply(frame, now)
        self._turns.end()
        self._move(ChatCancel)
        cancelled = ChatError(
            id=turn.chat_id, code="cancelled", message=self._texts.cancelled, origin=turn.origin
        )
        return [CancelModel(turn.number), Send(cancelled), *self._voice.hush()]

    # -- deadlines and closing -------------------------------------------------

    def _hello_timer(self, event: TimerFired, now: float) -> list[Effect]:
        if event.kind != "hello":
            return []
        return self._close(CLOSE_HELLO_TIMEOUT, "hello timeout", now)

    def _heartbeat_timer(self, event: TimerFired, now: float) -> list[Effect]:
        if event.kind != "heartbeat":
            return []
        return self._close(CLOSE_HEARTBEAT_TIMEOUT, "heartbeat timeout", now)

    def _close(self, code: int, reason: str, now: float) -> list[Effect]:
        return [*self._teardown(now), Close(code, reason)]

    def _disconnected(self, event: Disconnected, now: float) -> list[Effect]:
        return self._teardown(now)

    def _teardown(self, now: float) -> list[Effect]:
        if self.state is State.CLOSED:
            return []
        effects: list[Effect] = [
            CancelTimer("hello"),
            CancelTimer("heartbeat"),
            CancelTimer("action"),
        ]
        turn = self._turns.end()
        if turn is not None:
            effects.append(CancelModel(turn.number))
        had_save = self.state is not State.AWAIT_HELLO
        self._move(Disconnected)
        if had_save:
            effects += self._saves.end(now)
        self._requests.clear()
        self._tools.clear()
        if had_save:
            effects += self._voice.close()
        effects.append(Log("session.closed", {}))
        return effects


Handler = Callable[[GameAgentSession, Any, float], list[Effect]]


class Row(NamedTuple):
    """What one state does with one type of event or frame.

    ``then``: the state the session enters when ``handler`` takes the event (None:
    it stays); a handler that refuses it stays, and any handler may close.
    """

    handler: Handler
    then: State | None = None


_S = GameAgentSession
# READY and TURN alike: every frame but adapter.hello (and adapter.pair), and the
# answers to what the session asked for.
_SESSION: dict[type[Any], Row] = {
    FrameIn: Row(_S._frame_in),
    FrameRefused: Row(_S._frame_refused),
    Hello: Row(_S._already_hello),
    Heartbeat: Row(_S._heartbeat),
    StateUpdate: Row(_S._state_update),
    ChatTyping: Row(_S._typing),
    MemoryConfirm: Row(_S._confirm_dialog),
    ActionsDeclare: Row(_S._declare),
    ActionResult: Row(_S._action_result),
    **{kind: Row(_S._request) for kind in MANAGEMENT_FRAMES},
    StoreAnswer: Row(_S._store_answer),
    WorkingFolded: Row(_S._folded),
    WorkingResumed: Row(_S._resumed),
    TimerFired: Row(_S._timer),
    Disconnected: Row(_S._disconnected, State.CLOSED),
    VoiceStop: Row(_S._voice_stop),
    VoiceCancel: Row(_S._voice_cancel),
    VoiceAudio: Row(_S._voice_audio),
    VoiceFailed: Row(_S._voice_failed),
    SpeechReady: Row(_S._speech_ready),
}

# The one table: state -> event or frame type -> its handler and the state it leads to
# (v1.md "States"). A frame's row is found after ``FrameIn``'s (rate limits, secrets).
TRANSITIONS: dict[State, dict[type[Any], Row]] = {
    State.AWAIT_HELLO: {
        Connected: Row(_S._connected),
        FrameIn: Row(_S._frame_in),
        FrameRefused: Row(_S._frame_refused),
        Hello: Row(_S._hello, State.READY),
        AdapterPair: Row(_S._pair),
        SeatAnswered: Row(_S._seated),
        PairingAnswered: Row(_S._pair_answered),
        TimerFired: Row(_S._hello_timer),
        Disconnected: Row(_S._disconnected, State.CLOSED),
    },
    State.READY: {
        **_SESSION,
        ChatSend: Row(_S._chat, State.TURN),
        ChatCancel: Row(_S._no_reply),
        VoiceStart: Row(_S._voice_start),
        # A final transcript with words is a chat.send of the player's.
        VoiceHeard: Row(_S._voice_heard, State.TURN),
        GameEvent: Row(_S._event, State.TURN),
    },
    State.TURN: {
        **_SESSION,
        ChatSend: Row(_S._busy),
        ChatCancel: Row(_S._cancel, State.READY),
        # Barge-in: push-to-talk ends the streaming reply as cancelled.
        VoiceStart: Row(_S._voice_barge, State.READY),
        VoiceHeard: Row(_S._voice_heard),
        GameEvent: Row(_S._event),
        TurnMemoryReady: Row(_S._turn_memory, State.READY),
        ImageReady: Row(_S._image_ready),
        ImageRefused: Row(_S._image_refused, State.READY),
        ModelDelta: Row(_S._delta),
        ModelDone: Row(_S._model_done, State.READY),
        ToolAnswered: Row(_S._tool_answered),
        ModelFailed: Row(_S._model_failed, State.READY),
    },
    State.CLOSED: {},
}


def _row(state: State, kind: type[Any]) -> Row | None:
    """The row of ``state`` for ``kind`` or the nearest of its base classes."""
    rows = TRANSITIONS[state]
    row = rows.get(kind)
    if row is None:
        row = next((rows[base] for base in kind.__mro__[1:] if base in rows), None)
    return row
