"""Game actions a mod declares, offered to the model as tools, sans-I/O (v1.md "Actions").

One :class:`Actions` per connection keeps what the mod declared and the one
action in flight. A turn offers the declared actions (:meth:`Actions.offer`)
when the player's words call for them (:data:`CUES`, or a word of an action's
enum), in the same bounded tool loop as the memory tools. A model's call is
checked here against the declared schema, the per-game mode (``off``,
``look`` only, ``all``), the turn's limit (:data:`MAX_ACTIONS_PER_TURN`), the
action's cooldown, the freshness of the game state and the save, and then
sent to the mod as ``action.request`` with a deadline; the mod has the last
word (``action.result``). The result goes back to the model fenced as data.

A ``risky`` action is never requested on the model's word: its first call
makes the server ask the player (the question ends the reply, and lapses when
the reply asks anything else, as a forget's does: :mod:`~xtyserver.session.asking`);
only the same call (same name, same arguments) in the very next turn, whose
words are the player's own yes (:func:`~xtyserver.session.consent.verdict`)
to that question, is requested, marked ``confirmed``. Text of the game (an
NPC's name, a sign) never reaches that judgement: only the player's chat text.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import Any, Final, Literal

import msgspec

from xtyserver.protocol.action_frames import (
    ACTION_DEADLINE_MS,
    ACTION_RESULT_TEXT_MAX,
    ActionRequest,
    ActionResult,
    ActionSpec,
    ArgSpec,
    BooleanArg,
    IntegerArg,
    StringArg,
    arg_type_name,
)
from xtyserver.protocol.forbidden import find_forbidden, redact
from xtyserver.protocol.judged import judged
from xtyserver.protocol.normalize import normalize, visible
from xtyserver.session.asking import Question, is_english
from xtyserver.session.consent import alternation, verdict
from xtyserver.session.tools import ToolCall

PREFIX: Final = "game_"
"""Tool names of actions: ``game_`` + the declared name (never a memory tool's name)."""
MAX_ACTIONS_PER_TURN: Final = 3
"""Action calls one turn may make; past it a call is refused and no action is offered."""
MAX_PENDING: Final = 4
"""Risky calls waiting for the player's yes, at most (the oldest goes)."""
QUESTION_KIND: Final = "action"
"""The ``kind`` of the server's question about a risky action (:class:`Question`)."""

ActionMode = Literal["all", "look", "off"]
"""Per game: every declared action, ``look`` ones only, or none (the page's switch)."""

Status = Literal["done", "refused", "failed", "timed_out"]

CUES: Final[tuple[str, ...]] = (
    "带我",
    "带路",
    "去",
    "走",
    "帮我",
    "给我",
    "替我",
    "做",
    "造",
    "制作",
    "合成",
    "丢",
    "扔",
    "放下",
    "指",
    "标",
    "在哪",
    "哪里",
    "哪儿",
    "找",
    "看看",
    "显示",
    "高亮",
    "镜头",
    "优先",
    "卖",
    "种",
    "挖",
    "移",
)
"""Chinese words that ask the companion to do or show something: actions are offered."""

CUES_EN: Final[tuple[str, ...]] = (
    "go",
    "take me",
    "walk",
    "lead",
    "where",
    "show",
    "point",
    "mark",
    "highlight",
    "craft",
    "make",
    "build",
    "drop",
    "throw",
    "pan",
    "camera",
    "priority",
    "help me",
    "sell",
    "find",
    "waypoint",
)
"""English words that ask for an action (whole words)."""

_CUE: Final = re.compile(f"{alternation(CUES)}|(?<![a-z])(?:{alternation(CUES_EN)})(?![a-z])")
_SPACES: Final = re.compile(r"\s+")


class ActionTexts(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """What the player and the model are told about actions, Chinese and English.

    Attributes:
        question: The server's question before a risky action (``{action}``: its
            description, ``{args}``: its arguments).
        question_en: ``question`` in English.
    """

    question: str = "要让小汤圆{action}（{args}）吗？（说“好”就做，说“不”就不做）"
    question_en: str = 'Shall XiaoTangYuan {action} ({args})? (say "yes" to do it, "no" not to)'


# Result texts for the model (Chinese: the model's instructions are Chinese).
STATUS_TEXT: Final[dict[str, str]] = {
    "done": "游戏执行了这个动作",
    "refused": "游戏拒绝了这个动作（没有执行）",
    "failed": "游戏试着执行但失败了",
    "timed_out": "游戏没有及时回答（timed_out）：不知道有没有执行，不要说已经做了",
}


class ActionRecord(msgspec.Struct, frozen=True, kw_only=True):
    """One action event in the injection log ("why did it do that"); never the player's text.

    Attributes:
        kind: Always ``"action"`` (the log's turn records have none).
        event: ``request`` (sent to the mod), ``result`` (the mod answered),
            ``timed_out``, ``late`` (an answer after its deadline), ``asked``
            (a risky call waits for the player's yes), ``refused`` (the server
            refused the call: ``reason`` says why).
        name: The declared action's name.
        risk: Its risk class.
        request: The ``action.request`` id (empty when none was sent).
        args: The arguments sent (redacted).
        status: The mod's status or ``timed_out``.
        text: The mod's outcome text (redacted, at most 200 characters).
        reason: Why the server refused a call.
        confirmed: The player said yes to the server's question for it.
    """

    at: float
    game_id: str
    save_id: str
    name: str
    risk: str
    event: str
    kind: str = "action"
    request: str = ""
    args: dict[str, Any] = msgspec.field(default_factory=dict)
    status: str = ""
    text: str = ""
    reason: str = ""
    confirmed: bool = False


class InFlight(msgspec.Struct, frozen=True):
    """The one action sent and not answered yet."""

    request: str
    turn: int
    call_id: str
    name: str
    risk: str
    args: dict[str, Any]
    deadline: float
    confirmed: bool


class Pending(msgspec.Struct, frozen=True):
    """A risky call the server asked the player about."""

    token: str
    name: str
    args: dict[str, Any]


class Sent(msgspec.Struct, frozen=True):
    """A call that became an ``action.request``: the frame, its deadline in seconds, its record."""

    frame: ActionRequest
    seconds: float
    record: ActionRecord


class Asked(msgspec.Struct, frozen=True):
    """A risky call that waits for the player's yes: the result text and the question."""

    result: str
    question: Question
    record: ActionRecord


class Answered(msgspec.Struct, frozen=True):
    """The mod answered (or the deadline passed): the turn and call it answers, the text."""

    turn: int
    call_id: str
    result: str
    record: ActionRecord
    # The outcome text held forbidden content and was left out.
    forbidden: bool = False


class Actions:
    """The declared actions of one connection and the one action in flight.

    Args:
        mode_of: The page's per-game switch (``all``, ``look``, ``off``), asked per turn.
        deadline: Seconds a mod has to answer an ``action.request``.
    """

    def __init__(
        self,
        *,
        mode_of: Callable[[str], ActionMode] | None = None,
        deadline: float = ACTION_DEADLINE_MS / 1000,
        texts: ActionTexts | None = None,
    ) -> None:
        self._mode_of = mode_of or (lambda _game: "all")
        self.deadline = deadline
        self._texts = texts or ActionTexts()
        self.specs: dict[str, ActionSpec] = {}
        self._offers: dict[ActionMode, list[dict[str, Any]]] = {}
        self._words: tuple[str, ...] = ()
        self.in_flight: InFlight | None = None
        self._cooldown: dict[str, float] = {}  # name -> when it may run again
        self._pending: dict[str, Pending] = {}
        self._late: dict[str, InFlight] = {}  # timed out: a late answer is logged, not used
        self._ids = itertools.count(1)
        # The turn whose tools include actions, and the action calls it made.
        self._turn = 0
        self._offered: list[dict[str, Any]] | None = None
        self._used = 0

    # -- the declaration ---------------------------------------------------------------------

    def declare(self, specs: list[ActionSpec] | None) -> list[str]:
        """Replace the declared actions whole (``adapter.hello``, ``actions.declare``)."""
        self.specs = {s.name: s for s in specs or ()}
        self._offers = {}
        self._pending.clear()
        words = {v for s in self.specs.values() for v in _enum_values(s)}
        self._words = tuple(judged(w).casefold() for w in words if len(w) >= 2)
        return list(self.specs)

    def owns(self, tool: str) -> bool:
        """Whether ``tool`` is an action tool name (declared or not: it is never a memory tool)."""
        return tool.startswith(PREFIX)

    def _specs(self, mode: ActionMode) -> list[dict[str, Any]]:
        offer = self._offers.get(mode)
        if offer is None:
            allowed = [s for s in self.specs.values() if mode == "all" or s.risk == "look"]
            offer = self._offers[mode] = [tool_spec(s) for s in allowed]
        return offer

    # -- a turn ------------------------------------------------------------------------------

    def offer(
        self, turn: int, text: str, game_id: str, *, confirming: bool = False
    ) -> list[dict[str, Any]] | None:
        """The action tools turn ``turn`` offers (None: none), decided once per turn.

        ``confirming``: the turn answers the server's question about a risky action.
        """
        self._turn, self._offered, self._used = turn, None, 0
        if not self.specs:
            return None
        mode = self._mode_of(game_id)
        if mode == "off":
            return None
        plain = _SPACES.sub(" ", judged(text).casefold())
        if confirming or _CUE.search(plain) or any(w in plain for w in self._words):
            self._offered = self._specs(mode) or None
        return self._offered

    def offered(self, turn: int) -> list[dict[str, Any]] | None:
        """The action tools of ``turn``'s next request: none once its limit is reached."""
        if turn != self._turn or self._used >= MAX_ACTIONS_PER_TURN:
            return None
        return self._offered

    def call(
        self,
        *,
        turn: int,
        call: ToolCall,
        now: float,
        game_id: str,
        save_id: str,
        chat_id: str,
        player_text: str,
        answers: Question | None,
        asking: bool,
        language: str,
        gate: str | None,
    ) -> Sent | Asked | tuple[str, ActionRecord | None]:
        """What the model's call of an action tool becomes.

        ``answers``: the server's question this turn's words may answer; ``asking``:
        the turn already asks the player something; ``gate``: why no action may run
        now (a stale or missing game state, a save switch), or None.

        Returns the request to send, the question to ask, or the error text for
        the model with the refusal's record (None when nothing is worth logging).
        """
        name = call.name[len(PREFIX) :]
        spec = self.specs.get(name)
        if spec is None:
            return f"错误：游戏没有提供动作 {call.name[:60]!r}，什么都没做。", None

        def refused(reason: str, text: str) -> tuple[str, ActionRecord]:
            record = ActionRecord(
                at=now,
                game_id=game_id,
                save_id=save_id,
                name=name,
                risk=spec.risk,
                event="refused",
                reason=reason,
            )
            return text, record

        mode = self._mode_of(game_id)
        if turn != self._turn or self._offered is None or mode == "off":
            return refused("not_offered", f"错误：这一轮没有提供动作 {name}，什么都没做。")
        if mode == "look" and spec.risk != "look":
            return refused("look_only", f"没有做：玩家只允许小汤圆做查看类动作，{name} 不是。")
        self._used += 1
        if self._used > MAX_ACTIONS_PER_TURN:
            return refused(
                "too_many",
                f"没有做：这一轮已经做了 {MAX_ACTIONS_PER_TURN} 个动作，不能再做了。"
                "请直接回答玩家。",
            )
        args = check_args(spec, call.arguments)
        if isinstance(args, str):
            return refused("bad_arguments", f"错误：动作 {name} 的参数不对：{args}。什么都没做。")
        if gate is not None:
            return refused(gate, GATES.get(gate, GATES["stale"]))
        if self.in_flight is not None:
            return refused("busy", "没有做：上一个动作还在进行，等它有结果再说。")
        until = self._cooldown.get(name, 0.0)
        if now < until:
            wait = max(1, round(until - now))
            return refused("cooldown", f"没有做：{name} 刚做过，{wait} 秒后才能再做。")
        confirmed = False
        if spec.risk == "risky":
            waiting = self._answered(answers, name, args, player_text)
            if waiting is None:
                if asking:
                    return refused(
                        "asking", "没有做：这一轮已经在问玩家别的事，高风险动作下一轮再说。"
                    )
                return self._ask(spec, args, now, game_id, save_id, language)
            confirmed = True
        request = f"act-{next(self._ids)}"
        self._cooldown[name] = now + spec.cooldown_ms / 1000
        self.in_flight = InFlight(
            request, turn, call.id, name, spec.risk, args, now + self.deadline, confirmed
        )
        frame = ActionRequest(
            id=request,
            name=name,
            args=args,
            risk=spec.risk,
            deadline_ms=round(self.deadline * 1000),
            confirmed=confirmed,
            chat_id=chat_id,
        )
        record = ActionRecord(
            at=now,
            game_id=game_id,
            save_id=save_id,
            name=name,
            risk=spec.risk,
            event="request",
            request=request,
            args=_logged(args),
            confirmed=confirmed,
        )
        return Sent(frame, self.deadline, record)

    def _answered(
        self, answers: Question | None, name: str, args: dict[str, Any], player_text: str
    ) -> Pending | None:
        """The risky call this turn's words agree to, when it is this very call; spent once."""
        if answers is None or answers.kind != QUESTION_KIND:
            return None
        pending = self._pending.get(answers.token)
        if pending is None or pending.name != name or pending.args != args:
            return None
        if verdict(player_text) != "yes":
            return None
        del self._pending[answers.token]
        return pending

    def _ask(
        self,
        spec: ActionSpec,
        args: dict[str, Any],
        now: float,
        game_id: str,
        save_id: str,
        language: str,
    ) -> Asked:
        token = f"risky-{next(self._ids)}"
        self._pending[token] = Pending(token, spec.name, args)
        while len(self._pending) > MAX_PENDING:
            del self._pending[next(iter(self._pending))]
        english = is_english(language)
        shown = "、".join(f"{k}={v}" for k, v in args.items()) or "-"
        if english:
            what = spec.description_en or spec.description
            text = self._texts.question_en.format(action=what, args=shown)
        else:
            text = self._texts.question.format(action=spec.description, args=shown)
        text = redact(visible(text))[0]
        result = (
            f"还没有做：{spec.name} 是高风险动作。"
            f"服务器会在你这次回复的末尾亲自问玩家：「{text}」。"
            "请简短告诉玩家你打算做什么，不要自己再问玩家任何问题（回复里问了别的，这次确认就作废）。"
            "只有玩家紧接着的下一句明确同意，用完全相同的参数再调用一次才会执行。"
        )
        record = ActionRecord(
            at=now,
            game_id=game_id,
            save_id=save_id,
            name=spec.name,
            risk=spec.risk,
            event="asked",
            args=_logged(args),
        )
        return Asked(result, Question(token, QUESTION_KIND, text), record)

    # -- the mod's answer --------------------------------------------------------------------

    def result(
        self, frame: ActionResult, now: float, game_id: str, save_id: str
    ) -> Answered | None:
        """The mod's ``action.result``: what it answers, or None for an id nothing waits on."""
        flight = self.in_flight
        if flight is None or flight.request != frame.id:
            return None
        self.in_flight = None
        text = frame.text
        forbidden = bool(text) and find_forbidden(text) is not None
        # Kept as the game wrote it (invisibles removed), judged on its normal form.
        shown = "" if forbidden else redact(text.strip())[0][:ACTION_RESULT_TEXT_MAX]
        return self._answer(flight, frame.status, shown, now, game_id, save_id, forbidden)

    def expire(self, now: float, game_id: str, save_id: str) -> Answered | None:
        """The deadline passed: the action in flight ends as ``timed_out`` (None: nothing was)."""
        flight = self.in_flight
        if flight is None:
            return None
        self.in_flight = None
        self._late[flight.request] = flight
        while len(self._late) > MAX_PENDING:
            del self._late[next(iter(self._late))]
        return self._answer(flight, "timed_out", "", now, game_id, save_id, False)

    def late(
        self, frame: ActionResult, now: float, game_id: str, save_id: str
    ) -> ActionRecord | None:
        """An answer after its deadline (the model heard ``timed_out``): its record, once."""
        flight = self._late.pop(frame.id, None)
        if flight is None:
            return None
        text = "" if find_forbidden(frame.text) else redact(frame.text.strip())[0]
        return ActionRecord(
            at=now,
            game_id=game_id,
            save_id=save_id,
            name=flight.name,
            risk=flight.risk,
            event="late",
            request=flight.request,
            args=_logged(flight.args),
            status=frame.status,
            text=text,
            confirmed=flight.confirmed,
        )

    def _answer(
        self,
        flight: InFlight,
        status: Status,
        text: str,
        now: float,
        game_id: str,
        save_id: str,
        forbidden: bool,
    ) -> Answered:
        outcome = f"：{text}" if text else ""
        if forbidden:
            outcome = "（游戏的说明含有不能转给模型的内容，已省略）"
        result = f"动作 {flight.name}：{STATUS_TEXT[status]}{outcome}"
        record = ActionRecord(
            at=now,
            game_id=game_id,
            save_id=save_id,
            name=flight.name,
            risk=flight.risk,
            event="timed_out" if status == "timed_out" else "result",
            request=flight.request,
            args=_logged(flight.args),
            status=status,
            text=text,
            confirmed=flight.confirmed,
        )
        return Answered(flight.turn, flight.call_id, result, record, forbidden)

    def clear(self) -> None:
        """The connection ends: nothing is in flight or waiting any more."""
        self.in_flight = None
        self._pending.clear()
        self._late.clear()


GATES: Final[dict[str, str]] = {
    "stale": "没有做：游戏状态太旧或还没有收到，不能凭旧状态操作游戏。",
    "switched": "没有做：存档刚刚切换了，这个动作属于之前的存档。",
}
"""Why no action may run now, told to the model (the session decides which)."""


# -- the schema subset ------------------------------------------------------------------------


def _enum_values(spec: ActionSpec) -> list[str]:
    return [
        v
        for arg in spec.parameters.properties.values()
        if isinstance(arg, StringArg) and arg.enum
        for v in arg.enum
    ]


def tool_spec(spec: ActionSpec) -> dict[str, Any]:
    """The OpenAI tool of an action: its description (with the risk) and its JSON Schema."""
    risk = {"look": "查看类", "act": "会改变游戏", "risky": "高风险，需要玩家确认"}[spec.risk]
    properties = {name: _arg_schema(arg) for name, arg in spec.parameters.properties.items()}
    parameters: dict[str, Any] = {"type": "object", "properties": properties}
    if spec.parameters.required:
        parameters["required"] = list(spec.parameters.required)
    function = {
        "name": PREFIX + spec.name,
        "description": f"{visible(spec.description)}（{risk}）",
        "parameters": parameters,
    }
    return {"type": "function", "function": function}


def _arg_schema(arg: ArgSpec) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": arg_type_name(arg)}
    if arg.description is not None:
        schema["description"] = visible(arg.description)
    match arg:
        case StringArg(enum=list() as values):
            schema["enum"] = [visible(v) for v in values]
        case IntegerArg(minimum=low, maximum=high):
            schema["minimum"], schema["maximum"] = low, high
    return schema


def check_args(spec: ActionSpec, arguments: str) -> dict[str, Any] | str:
    """The call's arguments checked against the declared schema, or what is wrong (Chinese)."""
    try:
        value = msgspec.json.decode(arguments or "{}")
    except msgspec.DecodeError:
        return "参数不是 JSON"
    if not isinstance(value, dict):
        return "参数必须是一个 JSON 对象"
    value = {k: v for k, v in value.items() if v is not None}
    props = spec.parameters.properties
    problems = [f"没有参数 {k[:32]}" for k in value if k not in props]
    problems += [f"缺少参数 {k}" for k in spec.parameters.required if k not in value]
    args: dict[str, Any] = {}
    for name, arg in props.items():
        if name not in value:
            continue
        checked = _check_arg(arg, value[name])
        if isinstance(checked, _Bad):
            problems.append(f"{name} {checked.why}")
        else:
            args[name] = checked
    return "；".join(problems[:4]) if problems else args


class _Bad(msgspec.Struct, frozen=True):
    why: str


def _check_arg(arg: ArgSpec, value: Any) -> str | int | bool | _Bad:
    match arg:
        case BooleanArg():
            return value if isinstance(value, bool) else _Bad("必须是 true 或 false")
        case IntegerArg(minimum=low, maximum=high):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            if not isinstance(value, int) or isinstance(value, bool):
                return _Bad("必须是整数")
            return value if low <= value <= high else _Bad(f"必须在 {low} 到 {high} 之间")
        case StringArg(enum=values, min_length=low, max_length=high):
            if not isinstance(value, str):
                return _Bad("必须是文字")
            text = normalize(value).strip()
            if values is not None:
                match = next((v for v in values if normalize(v) == text), None)
                if match is None:
                    return _Bad("必须是 " + "、".join(values[:8]) + " 之一")
                return match
            if low is not None and len(text) < low:
                return _Bad(f"至少 {low} 个字")
            if len(text) > (high if high is not None else 100):
                return _Bad(f"最多 {high if high is not None else 100} 个字")
            if find_forbidden(text) is not None:
                return _Bad("含有不能发给游戏的内容")
            return text
    return _Bad("类型不对")  # pragma: no cover - every ArgSpec is matched


def _logged(args: dict[str, Any]) -> dict[str, Any]:
    return {k: redact(v)[0] if isinstance(v, str) else v for k, v in args.items()}
