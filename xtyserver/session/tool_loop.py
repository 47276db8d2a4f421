"""The tool loop of one turn, sans-I/O (v1.md "Memory tools").

Each tool call becomes a ``RunTool`` effect (or, when refused here, an error
result at once); once every call of the round has its result, the conversation
goes back to the model with the calls and their results, each fenced as data.
Past :data:`~xtyserver.session.tools.MAX_CALLS_PER_TURN` calls a call gets an
error result and the next request offers no tools, so the model must answer. A
failing tool is a result the model can explain; the turn never dies of it.
"""

from __future__ import annotations

from typing import Any

import msgspec

from xtyserver.memory.commands import Dialog, Forget, Restore, Words
from xtyserver.memory.manage import (
    MAX_PENDING,
    Confirmations,
    ForgetPreview,
    ForgetResult,
    ForgetSpec,
    Refusal,
    RestoreResult,
)
from xtyserver.protocol.forbidden import redact
from xtyserver.session import asking, replies, tool_results, tools
from xtyserver.session.actions import Actions, Answered, Asked, Sent
from xtyserver.session.consent import admit
from xtyserver.session.effects import (
    ArmTimer,
    CallModel,
    CancelTimer,
    Effect,
    RecordAction,
    RunTool,
    Send,
)
from xtyserver.session.prompt import fence
from xtyserver.session.settings import Texts
from xtyserver.session.tool_schemas import OFFERS
from xtyserver.session.tools import (
    Confirming,
    ToolAnswer,
    ToolCall,
    ToolOp,
    ViewOp,
)
from xtyserver.session.turns import Turn

TOO_MANY = "错误：这一轮已经调用了 4 次记忆工具，不能再调用了。请直接回答玩家。"


class ToolLoop:
    """Runs the tool rounds of the turns of one connection, with its forget tokens."""

    def __init__(
        self, confirmations: Confirmations, texts: Texts, actions: Actions | None = None
    ) -> None:
        self.confirmations = confirmations
        # The mod's declared actions (v1.md "Actions"): tools of the same loop.
        self.actions = actions or Actions()
        self._texts = texts
        self._refused = {**tools.REFUSED, "not_agreed": texts.forget_not_agreed}
        self._tag = texts.data_tag  # the data fence each tool result is put in
        # Tokens the player answered in a memory.confirm dialog: "yes" or "no".
        self._decided: dict[str, str] = {}

    def clear(self) -> None:
        """The connection ends: every token and dialog answer goes."""
        self.confirmations.clear()
        self._decided.clear()
        self.actions.clear()

    def offered(self, turn: Turn) -> list[dict[str, Any]] | None:
        """The turn's tools (``turn.tools``, then its actions) for its next request; None: none."""
        if turn.tools_used >= tools.MAX_CALLS_PER_TURN:
            return None
        memory = OFFERS.get(turn.tools)
        acts = self.actions.offered(turn.number)
        if acts is None:
            return memory
        return [*(memory or ()), *acts]

    def round(
        self,
        turn: Turn,
        text: str,
        calls: tuple[ToolCall, ...],
        now: float,
        context_names: tuple[str, ...] = (),
        gate: str | None = None,
    ) -> list[Effect]:
        """The model asked for ``calls`` (after ``text``): run them or answer them here.

        ``context_names``: the save's modelContext names, which a correction may not name;
        ``gate``: why no game action may run now (v1.md "Actions"), or None.
        """
        turn.round_text, turn.round_calls = text, calls
        turn.results, turn.pending = {}, {}
        effects: list[Effect] = []
        for call in calls:
            turn.tools_used += 1
            if turn.tools_used > tools.MAX_CALLS_PER_TURN:
                turn.results[call.id] = TOO_MANY
                continue
            if self.actions.owns(call.name):
                effects += self._action(turn, call, now, gate)
                continue
            op = self._op(turn, call, now, context_names)
            if isinstance(op, str):
                # An error text may quote the model's arguments: redacted like any result.
                turn.results[call.id] = redact(op)[0]
            else:
                turn.pending[call.id] = op
                effects.append(RunTool(turn.number, call.id, op))
        return effects + self._continue(turn)

    def _action(self, turn: Turn, call: ToolCall, now: float, gate: str | None) -> list[Effect]:
        """A game action call: sent to the mod, asked of the player, or answered here."""
        outcome = self.actions.call(
            turn=turn.number,
            call=call,
            now=now,
            game_id=turn.save.game_id,
            save_id=turn.save.save_id,
            chat_id=turn.chat_id,
            player_text=turn.text,
            answers=turn.answers,
            asking=turn.asked is not None,
            language=turn.language,
            gate=gate,
        )
        match outcome:
            case Sent(frame=frame, seconds=seconds, record=record):
                turn.pending[call.id] = frame
                return [Send(frame), ArmTimer("action", seconds), RecordAction(record)]
            case Asked(result=result, question=question, record=record):
                turn.asked = question
                turn.results[call.id] = result
                return [RecordAction(record)]
            case (text, record):
                turn.results[call.id] = redact(text)[0]
                return [] if record is None else [RecordAction(record)]

    def action_answered(self, turn: Turn | None, answered: Answered) -> list[Effect]:
        """The mod answered the action in flight (or its deadline passed): the loop goes on."""
        effects: list[Effect] = [CancelTimer("action"), RecordAction(answered.record)]
        if turn is None or turn.number != answered.turn:
            return effects  # its turn ended (cancelled): logged, nothing else waits on it
        if turn.pending.pop(answered.call_id, None) is None:
            return effects
        turn.results[answered.call_id] = answered.result
        return effects + self._continue(turn)

    def _op(
        self, turn: Turn, call: ToolCall, now: float, context_names: tuple[str, ...]
    ) -> ToolOp | str:
        op = tools.parse_call(
            call,
            turn.save,
            turn.day,
            player_text=turn.text,
            context_names=context_names,
            offered=turn.tools,
        )
        words = Words(text=turn.text)
        if isinstance(op, Restore):
            # Restoring lifts tombstones: only the player's own words ask for it.
            restore = admit(op, words, self.confirmations, now)
            return self._texts.restore_not_asked if restore == "not_asked" else op
        if not isinstance(op, Confirming):
            return op
        decided = self._decided.get(op.token)
        if decided is not None:
            return tools.DIALOG_DECIDED[decided]
        pending = self.confirmations.peek(op.token, now)
        if isinstance(pending, str):
            return self._refused[pending]
        if not tools.names_target(op.args, turn.save, pending.preview):
            return self._refused["other_target"]
        # The player's words of this turn agree only as the answer to the server's
        # question asked at the end of the turn before; a refusal spends nothing.
        question = turn.answers
        if question is not None and question.token == op.token:
            words = Words(
                token=op.token, text=turn.text, asked=question.text, expected=question.expected
            )
        else:
            words = Words(token=op.token, text=turn.text)
        forget = Forget(target=pending.preview.spec)
        admitted = admit(forget, words, self.confirmations, now, turn=turn.number)
        if admitted == "not_agreed" and words.asked is None:
            return self._texts.forget_lapsed
        return self._refused[admitted] if isinstance(admitted, str) else forget

    def answered(self, turn: Turn, call_id: str, answer: ToolAnswer, now: float) -> list[Effect]:
        """The shell ran the call ``call_id``; render its result and continue when all are in."""
        op = turn.pending.pop(call_id, None)
        if op is None:
            return []
        token = None
        shown: list[Effect] = []
        ask = self._texts.ask
        question = ""
        if isinstance(answer, ForgetPreview) and answer.found:
            token = self.confirmations.issue(answer, now, turn.number)
            # The server asks the player, in its own words; the last preview of a turn asks.
            asked = asking.question(answer, ask, turn.language)
            turn.asked = msgspec.structs.replace(asked, token=token)
            question = asked.text
            ttl = self.confirmations.ttl
            frame = replies.memory_confirm_request(answer, token, ttl, turn.save, turn.chat_id)
            shown.append(Send(msgspec.structs.replace(frame, question=question)))
        elif isinstance(answer, ForgetResult) and isinstance(op, Forget):
            notice = asking.forgotten_notice(
                answer, op.target.kind, ask, turn.language, now=now, chat_id=turn.chat_id
            )
            shown.append(Send(notice))
        elif isinstance(answer, RestoreResult):
            notice = asking.restored_notice(answer, ask, turn.language, chat_id=turn.chat_id)
            shown.append(Send(notice))
        what = op.what if isinstance(op, ViewOp) else "all"
        turn.results[call_id] = tool_results.render(
            answer, current=turn.save, token=token, what=what, question=question
        )
        return shown + self._continue(turn)

    def dialog(self, token: str, yes: bool, now: float) -> ForgetSpec | Refusal | None:
        """The player answered a ``memory.confirm.request`` dialog (v1.md "memory.confirm").

        A yes redeems the token at once, in any turn (the target to delete is
        returned); a no voids it (None); an unknown, spent or expired one is refused.
        Either answer is remembered for a later confirming tool call.
        """
        pending = self.confirmations.peek(token, now)
        if isinstance(pending, str):
            return pending
        forget = Forget(target=pending.preview.spec)
        admitted = admit(forget, Dialog(token=token, yes=yes), self.confirmations, now)
        if isinstance(admitted, str) and admitted != "declined":
            return admitted
        self._decide(token, "yes" if yes else "no")
        return forget.target if yes else None

    def _decide(self, token: str, answer: str) -> None:
        self._decided[token] = answer
        while len(self._decided) > MAX_PENDING:
            del self._decided[next(iter(self._decided))]

    def _continue(self, turn: Turn) -> list[Effect]:
        if turn.pending:
            return []
        calls = turn.round_calls
        turn.messages = [
            *turn.messages,
            tools.assistant_message(turn.round_text, calls),
            # A result carries memory the model or a mod wrote: data, fenced.
            *(
                tools.tool_message(c.id, fence([turn.results.get(c.id, TOO_MANY)], self._tag))
                for c in calls
            ),
        ]
        turn.round_calls, turn.results = (), {}
        return [CallModel(turn.number, turn.messages, turn.image_sent, self.offered(turn))]
