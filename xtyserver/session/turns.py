"""The turns of one session: the one in flight and the recent ones (v1.md "chat.send").

Pure bookkeeping: a turn starts, waits for its inputs, is planned, streams, and
ends exactly once (done, failed, cancelled or refused). Each method returns the
effects; the session applies the matching transition of its table.
"""

from __future__ import annotations

from typing import Any

import msgspec

from xtyserver.memory.types import Scope
from xtyserver.protocol.event_frames import GameEvent
from xtyserver.protocol.frames import (
    ActionRequest,
    ChatDelta,
    ChatDone,
    ChatError,
    ContextUse,
    ModelContext,
    Origin,
)
from xtyserver.protocol.images import PreparedImage
from xtyserver.session.asking import Question, asks_other, is_english
from xtyserver.session.companion import event_text, plan_line
from xtyserver.session.effects import (
    CallModel,
    Effect,
    FoldWorking,
    Log,
    ParkWorking,
    RecordInjection,
    Remember,
    Send,
    Summarize,
    TouchMemories,
)
from xtyserver.session.events import ModelDone, SaveMemory
from xtyserver.session.layers import cost
from xtyserver.session.prompt import PromptTexts
from xtyserver.session.settings import SessionSettings
from xtyserver.session.tool_offer import offered_tools
from xtyserver.session.tool_schemas import OFFER_TEXTS, OFFERS
from xtyserver.session.tools import ToolCall, ToolOp
from xtyserver.session.turn import plan_turn
from xtyserver.session.working import SessionSummary, WorkingMemory, WorkingSnapshot

SUMMARY_TURNS = 12


class Turn(msgspec.Struct):
    """The one turn in flight on a connection."""

    number: int
    chat_id: str
    text: str
    # The save the turn was asked in: its memory goes there even if the save
    # switches while the reply streams.
    save: Scope
    # The save's in-game day when the turn was planned (the search tool's filter).
    day: int | None = None
    parts: list[str] = msgspec.field(default_factory=list)
    memory: SaveMemory | None = None
    memory_ready: bool = False
    image: PreparedImage | None = None
    image_ready: bool = True
    calling: bool = False
    image_sent: bool = False
    context_use: ContextUse = "none"
    # The shared profile's language, for a notice in the player's language.
    language: str = ""
    # The tool loop (v1.md "Memory tools"): the request so far and the round in flight.
    messages: list[dict[str, Any]] = msgspec.field(default_factory=list)
    # The names of the tools this turn offers (tool_offer.offered_tools), decided once.
    tools: tuple[str, ...] = ()
    tools_used: int = 0
    round_text: str = ""
    round_calls: tuple[ToolCall, ...] = ()
    # Calls sent and not answered: a memory operation, or a game action (v1.md "Actions").
    pending: dict[str, ToolOp | ActionRequest] = msgspec.field(default_factory=dict)
    results: dict[str, str] = msgspec.field(default_factory=dict)
    # The server's question this turn's words may answer (asked at the end of the
    # turn before), and the question this turn's own preview asks.
    answers: Question | None = None
    asked: Question | None = None
    # A proactive line (docs/speakup.md): the event it speaks up about; its frames
    # carry origin "companion".
    event: GameEvent | None = None
    origin: Origin = "player"


class Turns:
    """The turn in flight, the turn counter, the rounds for the stage summary and working memory.

    ``history``: the last :data:`SUMMARY_TURNS` rounds since the session (or its
    resume) began, for the end-of-session summary.
    """

    def __init__(self, settings: SessionSettings) -> None:
        self._settings = settings
        self._texts = settings.texts
        self.current: Turn | None = None
        self._counter = 0
        # The last SUMMARY_TURNS rounds (a list: an empty deque is ten times its size).
        self.history: list[tuple[str, str]] = []
        self.working = WorkingMemory(settings.working)
        # The shared profile's language as of the latest turn (notices outside a turn).
        self.language = ""
        # The server's question the next turn may answer (one turn only).
        self.question: Question | None = None
        # The in-game day of a resumed working memory: an earlier day drops it.
        self._resumed_day: int | None = None
        # The companion's last proactive line (what happened, what it said): the next
        # player turn sees it as the round before, then it goes (never remembered).
        self.spoke: tuple[str, str] | None = None

    def start(self, chat_id: str, text: str, save: Scope) -> Turn:
        """A new turn; it alone may answer the server's pending question, which then lapses."""
        self._counter += 1
        self.current = Turn(self._counter, chat_id, text, save)
        self.current.answers, self.question = self.question, None
        return self.current

    def start_line(self, chat_id: str, save: Scope, event: GameEvent) -> Turn:
        """A proactive line about ``event``; the server's pending question stays the player's."""
        self._counter += 1
        self.current = Turn(self._counter, chat_id, "", save, event=event, origin="companion")
        return self.current

    def get(self, number: int) -> Turn | None:
        """The turn in flight if it is ``number`` (answers for an ended turn are ignored)."""
        current = self.current
        return current if current is not None and current.number == number else None

    def end(self) -> Turn | None:
        """Forget the turn in flight (it was refused, cancelled or torn down); return it."""
        current, self.current = self.current, None
        return current

    def plan(
        self,
        *,
        now: float,
        save: Scope,
        context: ModelContext | None,
        captured: float | None,
        day: int | None,
        shown: tuple[tuple[str, str], ...] = (),
        actions: list[dict[str, Any]] | None = None,
    ) -> list[Effect]:
        """Plan and start the model call once the turn's memory and image are there.

        ``save`` is the session's current save, which ``context``, ``captured``,
        ``day`` and ``shown`` belong to (see :func:`~xtyserver.session.turn.plan_turn`);
        the turn's own save may be another one. ``actions``: the game action tools
        the turn offers (v1.md "Actions"), after the memory tools.
        """
        turn = self.current
        if turn is None or turn.calling or not (turn.memory_ready and turn.image_ready):
            return []
        turn.calling = True
        same_save = turn.save == save
        turn.day = day if same_save else None
        if turn.event is not None:
            if not same_save:
                context, captured, day = None, None, None
            return self._plan_line(turn, now, context, captured, day)
        history = self.working.rounds()
        if self.spoke is not None:
            history = [*history, self.spoke]
        plan = plan_turn(
            save=turn.save,
            text=turn.text,
            context=context if same_save else None,
            captured=captured if same_save else None,
            day=day if same_save else None,
            memory=turn.memory,
            history=history,
            summary=self.working.summary.render(),
            image=turn.image,
            now=now,
            persona=self._texts.persona,
            texts=PromptTexts(
                rules=self._texts.data_rules, ack=self._texts.data_ack, tag=self._texts.data_tag
            ),
            budget=self._settings.budget,
            layers=self._settings.layers,
            stale_after=self._settings.limits.context_stale_after_ms / 1000,
            drop_after=self._settings.limits.context_drop_after_ms / 1000,
            shown=shown if same_save else (),
        )
        # The turn keeps nothing of the memory: the index belongs to the memory service.
        profile = turn.memory.profile if turn.memory is not None else None
        turn.language = profile.language if profile is not None else ""
        self.language = turn.language
        turn.memory, turn.image = None, None
        turn.context_use, turn.image_sent = plan.context_use, plan.image_sent
        turn.messages = plan.messages
        if self._settings.memory:
            turn.tools = offered_tools(turn.text, confirming=turn.answers is not None)
        tools = cost("tools", [OFFER_TEXTS.get(turn.tools, "")])
        layers = (*plan.injection.layers, tools)
        offered = OFFERS.get(turn.tools)
        if actions:
            layers += (cost("actions", [msgspec.json.encode(actions).decode()]),)
            offered = [*(offered or ()), *actions]
        injection = msgspec.structs.replace(plan.injection, layers=layers)
        effects: list[Effect] = [
            CallModel(turn.number, plan.messages, plan.image_sent, offered),
            RecordInjection(injection),
        ]
        if plan.used_ids:
            # After the call has started: marking memories as used never delays a reply.
            effects.append(TouchMemories(turn.save, plan.used_ids, now))
        return effects

    def _plan_line(
        self,
        turn: Turn,
        now: float,
        context: ModelContext | None,
        captured: float | None,
        day: int | None,
    ) -> list[Effect]:
        """A proactive line's call: a small prompt, no tools, nothing marked as used."""
        assert turn.event is not None
        texts = self._texts
        plan = plan_line(
            save=turn.save,
            event=turn.event,
            context=context,
            captured=captured,
            day=day,
            memory=turn.memory,
            now=now,
            persona=texts.persona,
            rules=texts.speakup_rules.replace("{tag}", texts.data_tag),
            cue=texts.speakup_cue,
            texts=PromptTexts(rules=texts.data_rules, ack=texts.data_ack, tag=texts.data_tag),
            layers=self._settings.layers,
            stale_after=self._settings.limits.context_stale_after_ms / 1000,
            drop_after=self._settings.limits.context_drop_after_ms / 1000,
        )
        profile = turn.memory.profile if turn.memory is not None else None
        turn.language = profile.language if profile is not None else ""
        turn.memory = None
        turn.context_use, turn.messages = plan.context_use, plan.messages
        return [CallModel(turn.number, plan.messages, False), RecordInjection(plan.injection)]

    # -- working memory across the save's sessions ---------------------------------------------

    def park(self, save: Scope, day: int | None, now: float, summarize: bool) -> list[Effect]:
        """The save's session ends: its stage summary, and its working memory parked."""
        effects: list[Effect] = []
        if len(self.history) >= 2 and summarize:
            effects.append(Summarize(save, tuple(self.history), day, now))
        if len(self.working) or self.working.summary.render():
            effects.append(ParkWorking(save, self.working.snapshot(day), now))
        self.history.clear()
        self.working.clear()
        self._resumed_day = None
        self.spoke = None
        return effects

    def resumed(self, save: Scope | None, snapshot: WorkingSnapshot | None) -> list[Effect]:
        """A parked working memory came back (``save`` None: the session moved on)."""
        if save is None or snapshot is None or len(self.working):
            return []
        self.working.restore(snapshot)
        self._resumed_day = snapshot.day
        rounds = len(snapshot.window) + len(snapshot.pending)
        return [Log("session.resumed", {"game": save.game_id, "rounds": rounds})]

    def saw_day(self, day: int) -> list[Effect]:
        """An in-game day before the resumed one: an older save was loaded, forget the session."""
        resumed, self._resumed_day = self._resumed_day, None
        if resumed is None or day >= resumed:
            return []
        self.working.clear()
        return [Log("session.resume_dropped", {"reason": "earlier in-game day"})]

    def folded(self, generation: int, summary: SessionSummary | None) -> list[Effect]:
        self.working.folded(generation, summary)
        return [] if summary is not None else [Log("session.fold_failed", {})]

    def delta(self, number: int, text: str) -> list[Effect]:
        turn = self.get(number)
        if turn is None or not text:
            return []
        turn.parts.append(text)
        return [Send(ChatDelta(id=turn.chat_id, text=text, origin=turn.origin))]

    def finish(
        self,
        answer: ModelDone,
        *,
        now: float,
        save: Scope,
        day: int | None,
    ) -> list[Effect] | None:
        """End the answer's turn with its reply; None when it is not the turn in flight.

        Only the text the player saw enters the window; an ``incomplete`` reply is
        not handed to extraction.
        """
        number, text, usage = answer.turn, answer.text, answer.usage
        turn = self.get(number)
        if turn is None:
            return None
        self.current = None
        if turn.event is not None:
            return self._line_said(turn, answer, save)
        reply = "".join(turn.parts) if turn.tools_used else text or "".join(turn.parts)
        if not reply and turn.tools_used:
            reply = self._texts.memory_tools_exhausted
        effects: list[Effect] = []
        asked = turn.asked if turn.asked is not None and not asks_other(reply) else None
        if asked is not None:
            # The server's question ends the reply: it is what the player's next words answer.
            tail = f"\n\n{asked.text}" if reply else asked.text
            reply += tail
            effects.append(Send(ChatDelta(id=turn.chat_id, text=tail)))
        elif turn.asked is not None:
            effects.append(Log("memory.question_lapsed", {"reason": "the reply asked another"}))
        self.question = asked
        same_save = turn.save == save
        self.spoke = None  # this turn saw the companion's line: it has had its say
        if same_save:
            self.history.append((turn.text, reply))
            del self.history[:-SUMMARY_TURNS]
            fold = self.working.add((turn.text, reply))
            if fold is not None:
                effects.append(FoldWorking(save, fold.generation, fold.previous, fold.rounds))
        notice = None
        if answer.image_refused:
            english = is_english(turn.language)
            notice = self._texts.image_refused_en if english else self._texts.image_refused
        done = ChatDone(
            id=turn.chat_id,
            text=reply,
            context=turn.context_use,
            usage=usage,
            image_sent=turn.image_sent and not (answer.image_refused or answer.image_dropped),
            truncated=answer.truncated,
            incomplete=answer.incomplete,
            notice=notice,
            question=asked.text if asked is not None else None,
            confirm_id=asked.token if asked is not None else None,
        )
        if self._settings.memory and self._settings.extraction and not answer.incomplete:
            # Queued before the reply goes out, so "the reply arrived" implies
            # "its extraction job is queued" (tests wait on the memory worker).
            effects.append(Remember(turn.save, turn.text, reply, day if same_save else None, now))
        return [*effects, Send(done)]

    def _line_said(self, turn: Turn, answer: ModelDone, save: Scope) -> list[Effect]:
        """A proactive line ended: sent, kept for the player's answer, never remembered."""
        reply = answer.text or "".join(turn.parts)
        assert turn.event is not None
        if turn.save == save and reply and not answer.incomplete:
            self.spoke = (event_text(turn.event), reply)
        done = ChatDone(
            id=turn.chat_id,
            text=reply,
            context=turn.context_use,
            usage=answer.usage,
            truncated=answer.truncated,
            incomplete=answer.incomplete,
            origin="companion",
            why=self.why(turn.event.kind, turn.language),
        )
        return [Send(done)]

    def why(self, kind: str, language: str) -> str:
        """Why the companion spoke up about ``kind`` and how to stop it, in ``language``."""
        texts = self._texts
        if is_english(language):
            what = texts.speakup_what_en.get(kind, kind.replace("_", " "))
            return texts.speakup_why_en.replace("{what}", what)
        return texts.speakup_why.replace("{what}", texts.speakup_what.get(kind, kind))

    def fail(self, number: int, code: str) -> list[Effect] | None:
        """End turn ``number`` with ``chat.error``; None when it is not the turn in flight."""
        turn = self.get(number)
        if turn is None:
            return None
        self.current = None
        message = getattr(self._texts, code, self._texts.model_error)
        error = ChatError(id=turn.chat_id, code=code, message=str(message), origin=turn.origin)
        return [Send(error)]
