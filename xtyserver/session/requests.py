"""Store requests of a mod's menu frames: numbered, remembered, answered (v1.md "memory.get").

Pure. A management frame becomes a typed request effect with a number; the
shell's answer event carries the same number, and the reply frame is built
here, for the frame id the adapter used. Every rule is checked here (which
fields a target needs, which save a frame names, the forget's tokens); a bad
field is an ``error`` naming it.
"""

from __future__ import annotations

from collections.abc import Callable

import msgspec

from xtyserver.memory.commands import Correct, Forget, MemoryCommand, Menu, Pin, View
from xtyserver.memory.manage import (
    Confirmations,
    ForgetPreview,
    ForgetRequest,
    ForgetResult,
    ForgetSpec,
    Overview,
    Refusal,
)
from xtyserver.memory.types import Scope, profile_field
from xtyserver.protocol.frames import StatsGet
from xtyserver.protocol.memory_frames import (
    MemoryForget,
    MemoryGet,
    MemoryPin,
    MemoryScope,
    ProfileUpdate,
)
from xtyserver.session import asking, replies
from xtyserver.session.consent import admit
from xtyserver.session.effects import Effect, LoadStats, RunCommands, Send, StoreRequest
from xtyserver.session.events import (
    CommandsDone,
    StatsLoaded,
    StoreAnswer,
    StoreFailed,
)

ManagementFrame = StatsGet | MemoryGet | MemoryForget | MemoryPin | ProfileUpdate
MANAGEMENT_FRAMES = (StatsGet, MemoryGet, MemoryForget, MemoryPin, ProfileUpdate)

MIGRATE_CONFIRM = (
    "memory.forget no longer takes confirm: send it without confirm to get a memory.preview "
    "with a confirmToken, then send it again with that confirmToken (v1.md memory.forget)"
)
MIGRATE_EVENT = 'target "event" is now "item" (v1.md memory.forget)'
REFUSED: dict[Refusal, str] = {
    "unknown": "unknown or already used confirmToken; nothing deleted",
    "expired": "confirmToken expired; nothing deleted; preview again",
    "other_target": "confirmToken was issued for another target; nothing deleted",
    "too_soon": "confirmToken not yet confirmed; nothing deleted",
    "not_agreed": "the player did not agree; nothing deleted",
    "unquoted": "the preview's quote was not given back; nothing deleted",
    "declined": "the player said no; nothing deleted; the confirmToken is void",
    "needs_person": "this needs the player's own answer; nothing deleted",
    "too_many": "too many deletions without the player's answer lately; nothing deleted",
    "not_asked": "the player did not ask for it; nothing restored",
}


class _Pending(msgspec.Struct, frozen=True):
    """What a request in flight needs for its reply."""

    frame_id: str | None
    request: StoreRequest
    current: Scope
    scope: MemoryScope = "save"
    target: str = ""


class StoreRequests:
    """Requests in flight (request number -> what was asked) and the menu's forget tokens."""

    def __init__(self, confirmations: Confirmations, texts: asking.AskTexts) -> None:
        self._count = 0
        self._pending: dict[int, _Pending] = {}
        self.confirmations = confirmations
        self._texts = texts

    def ask_for(self, frame: ManagementFrame, save: Scope, now: float) -> Effect:
        """The store request for a management frame of the session on ``save``, or a refusal."""
        game = save.game_id
        match frame:
            case StatsGet():
                return self._ask(frame.id, save, LoadStats)
            case MemoryGet(scope=scope, save_id=save_id):
                if save_id is not None and scope != "save":
                    return _invalid(frame.id, "saveId is only for scope save", "saveId")
                viewed = Scope(game, save_id) if save_id is not None else save
                view = View(game_id=game, scope=None if scope == "game" else viewed)
                return self._run(frame.id, save, view, scope=scope)
            case MemoryPin(event_id=event_id, pinned=pinned, save_id=save_id):
                where = Scope(game, save_id) if save_id is not None else save
                pin = Pin(scope=where, event_id=event_id, pinned=pinned)
                return self._run(frame.id, save, pin, View(scope=where))
            case ProfileUpdate(field=name, value=value):
                correct = Correct(field=store_name(name), value=value)
                return self._run(frame.id, save, correct, View(scope=save))
            case MemoryForget():
                return self._forget(frame, save, now)

    def _forget(self, frame: MemoryForget, save: Scope, now: float) -> Effect:
        spec = forget_spec(frame, save)
        if isinstance(spec, Send):
            return spec
        # The mod's own menu asked its player before sending the token back.
        token = frame.confirm_token
        answer = Menu(token=token) if token is not None else None
        admitted = admit(Forget(target=spec), answer, self.confirmations, now)
        if isinstance(admitted, str):
            why = REFUSED[admitted]
            return _invalid(frame.id, why, "confirmToken", "confirmation_refused")
        return self._run(frame.id, save, admitted, target=frame.target)

    def apply(self, frame_id: str | None, save: Scope, spec: ForgetSpec) -> StoreRequest:
        """Delete what ``spec`` names (admitted elsewhere); answered by ``memory.forgotten``."""
        return self._run(frame_id, save, Forget(target=spec), target=spec.kind)

    def _run(
        self,
        frame_id: str | None,
        current: Scope,
        *commands: MemoryCommand,
        scope: MemoryScope = "save",
        target: str = "",
    ) -> StoreRequest:
        run = lambda n: RunCommands(n, commands)  # noqa: E731 - one line per frame
        return self._ask(frame_id, current, run, scope=scope, target=target)

    def _ask(
        self,
        frame_id: str | None,
        current: Scope,
        make: Callable[[int], StoreRequest],
        *,
        scope: MemoryScope = "save",
        target: str = "",
    ) -> StoreRequest:
        self._count += 1
        request = make(self._count)
        self._pending[request.request] = _Pending(frame_id, request, current, scope, target)
        return request

    def answer(self, answer: StoreAnswer, now: float, language: str = "") -> list[Effect]:
        """The reply frame for ``answer``; nothing for an unknown or repeated answer.

        ``language``: the shared profile's, for the announcement of a deletion.
        """
        pending = self._pending.pop(answer.request, None)
        if pending is None:
            return []
        frame_id, request, current = pending.frame_id, pending.request, pending.current
        match answer:
            case StatsLoaded(stats=stats):
                return [Send(replies.stats_result(stats, frame_id))]
            case CommandsDone(outcomes=(False, *_)):
                message = "no item with this eventId in that save"
                return [_invalid(frame_id, message, "eventId", "not_found")]
            case CommandsDone(outcomes=(*_, Overview() as overview)):
                return [Send(replies.memory_result(overview, pending.scope, current, frame_id))]
            case CommandsDone(outcomes=(ForgetPreview(found=False),)):
                message = "no item with this eventId in that save; nothing would be deleted"
                return [_invalid(frame_id, message, "eventId", "not_found")]
            case CommandsDone(outcomes=(ForgetPreview() as preview,)):
                token = self.confirmations.issue(preview, now)
                ttl = self.confirmations.ttl
                frame = replies.memory_preview(
                    preview, pending.target, token, ttl, current, frame_id
                )
                return [Send(frame)]
            case CommandsDone(outcomes=(ForgetResult() as result,)):
                notice = asking.forgotten_notice(
                    result, pending.target, self._texts, language, now=now, frame_id=frame_id
                )
                return [
                    Send(replies.memory_forgotten(result, pending.target, frame_id)),
                    Send(notice),
                ]
            case StoreFailed(code=code, message=message):
                # A refused profile value names the field the adapter sent.
                correcting = isinstance(request, RunCommands) and isinstance(
                    request.commands[0], Correct
                )
                fields = ["value"] if correcting else None
                return [Send(replies.error(code, message, frame_id, fields))]
        return []

    def clear(self) -> None:
        self._pending.clear()
        self.confirmations.clear()


def forget_spec(frame: MemoryForget, save: Scope) -> ForgetSpec | Send:
    """The target a ``memory.forget`` names within ``save``'s game, or the error naming fields:
    the page's and MCP's :class:`ForgetRequest`, with this game and save filled in."""
    problems: list[tuple[str, str]] = []
    if frame.confirm is not None:
        problems.append(("confirm", MIGRATE_CONFIRM))
    if frame.target == "event":
        problems.append(("target", MIGRATE_EVENT))
    else:
        kind = frame.target
        in_game, in_save = kind in ("item", "save", "game"), kind in ("item", "save")
        spec = ForgetRequest(
            target=kind,
            game_id=save.game_id if in_game else None,
            save_id=(frame.save_id or save.save_id) if in_save else frame.save_id,
            event_id=frame.event_id,
            include_stats=frame.include_stats,
        ).spec()
        if isinstance(spec, ForgetSpec) and not problems:
            return spec
        problems += [] if isinstance(spec, ForgetSpec) else spec
    message = "; ".join(f"{path}: {why}" for path, why in problems)
    fields = [path for path, _ in problems]
    return Send(replies.error("invalid_frame", message, frame.id, fields))


def _invalid(frame_id: str | None, message: str, field: str, code: str = "invalid_frame") -> Send:
    return Send(replies.error(code, message, frame_id, [field]))


def store_name(wire: str) -> str:
    """``replyStyle`` -> ``reply_style`` (the profile field table; unknown names pass as is)."""
    field = profile_field(wire)
    return field.name if field is not None else wire
