"""The tool loop of one turn, sans-I/O (v1.md "Memory tools").

When the model answers with tool calls, each call becomes a ``RunTool``
effect (or, when refused here, an error result at once); once every call of
the round has its result, the conversation goes back to the model with the
assistant's calls and the ``tool`` results, and the model continues (each
result fenced as data, like every text the model or a mod wrote:
``xtyserver.session.prompt.fence``). At most
:data:`~xtyserver.session.tools.MAX_CALLS_PER_TURN` calls run per turn: a
further call gets an error result, and the next request offers no tools, so
the model must answer. A failing tool is a result the model can explain;
the turn never dies of it.
"""

from __future__ import annotations

from xtyserver.memory.manage import ForgetPreview
from xtyserver.session import tools
from xtyserver.session.effects import CallModel, Effect, RunTool
from xtyserver.session.prompt import DATA_TAG, fence
from xtyserver.session.tools import ApplyOp, Confirmations, ToolAnswer, ToolCall, ToolOp, ViewOp
from xtyserver.session.turns import Turn

TOO_MANY = "错误：这一轮已经调用了 4 次记忆工具，不能再调用了。请直接回答玩家。"


class ToolLoop:
    """Runs the tool rounds of the turns of one connection.

    Args:
        confirmations: The connection's forget tokens.
        tag: The name of the data fence each tool result is put in (``Texts.data_tag``).
    """

    def __init__(self, confirmations: Confirmations, tag: str = DATA_TAG) -> None:
        self.confirmations = confirmations
        self._tag = tag

    def offered(self, turn: Turn) -> list[dict[str, object]] | None:
        """The tools to offer with the turn's next model request (none once the limit is hit)."""
        return tools.TOOL_SPECS if turn.tools_used < tools.MAX_CALLS_PER_TURN else None

    def round(self, turn: Turn, text: str, calls: tuple[ToolCall, ...], now: float) -> list[Effect]:
        """The model asked for ``calls`` (after ``text``): run them or answer them here."""
        turn.round_text, turn.round_calls = text, calls
        turn.results, turn.pending = {}, {}
        effects: list[Effect] = []
        for call in calls:
            turn.tools_used += 1
            if turn.tools_used > tools.MAX_CALLS_PER_TURN:
                turn.results[call.id] = TOO_MANY
                continue
            op = self._op(turn, call, now)
            if isinstance(op, str):
                turn.results[call.id] = op
            else:
                turn.pending[call.id] = op
                effects.append(RunTool(turn.number, call.id, op))
        return effects + self._continue(turn)

    def _op(self, turn: Turn, call: ToolCall, now: float) -> ToolOp | str:
        token = tools.confirm_token(call)
        if token is None:
            return tools.parse_call(call, turn.save, turn.day)

        def same_target(preview: ForgetPreview) -> bool:
            return tools.names_target(call, turn.save, preview)

        redeemed = self.confirmations.redeem(token, same_target, now, turn.number)
        return tools.REFUSED[redeemed] if isinstance(redeemed, str) else ApplyOp(redeemed)

    def answered(self, turn: Turn, call_id: str, answer: ToolAnswer, now: float) -> list[Effect]:
        """The shell ran the call ``call_id``; render its result and continue when all are in."""
        op = turn.pending.pop(call_id, None)
        if op is None:
            return []
        token = None
        if isinstance(answer, ForgetPreview) and answer.found:
            token = self.confirmations.issue(answer, now, turn.number)
        what = op.what if isinstance(op, ViewOp) else "all"
        turn.results[call_id] = tools.render(answer, current=turn.save, token=token, what=what)
        return self._continue(turn)

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
