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

from xtyserver.memory.manage import Confirmations, ForgetPreview, ForgetSpec, Refusal
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
from xtyserver.session.effects import (
    ApplyForget,
    Effect,
    LoadStats,
    PinItem,
    PreviewForget,
    Send,
    SetProfileField,
    StoreRequest,
    ViewMemory,
)
from xtyserver.session.events import (
    ForgetPreviewed,
    Forgotten,
    OverviewLoaded,
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
                view = (lambda n: ViewMemory(n, game, None)) if scope == "game" else None
                make = view or (lambda n: ViewMemory(n, game, viewed))
                return self._ask(frame.id, save, make, scope=scope)
            case MemoryPin(event_id=event_id, pinned=pinned, save_id=save_id):
                where = Scope(game, save_id) if save_id is not None else save
                return self._ask(frame.id, save, lambda n: PinItem(n, where, event_id, pinned))
            case ProfileUpdate(field=name, value=value):
                field = store_name(name)
                return self._ask(frame.id, save, lambda n: SetProfileField(n, save, field, value))
            case MemoryForget():
                return self._forget(frame, save, now)

    def _forget(self, frame: MemoryForget, save: Scope, now: float) -> Effect:
        spec = forget_spec(frame, save)
        if isinstance(spec, Send):
            return spec
        token = frame.confirm_token
        if token is None:
            return self._ask(frame.id, save, lambda n: PreviewForget(n, spec), target=frame.target)

        def same(preview: ForgetPreview) -> bool:
            return preview.spec == spec

        redeemed = self.confirmations.redeem(token, same, now)
        if isinstance(redeemed, str):
            why = REFUSED[redeemed]
            return _invalid(frame.id, why, "confirmToken", "confirmation_refused")
        return self._ask(frame.id, save, lambda n: ApplyForget(n, redeemed), target=frame.target)

    def apply(self, frame_id: str | None, save: Scope, spec: ForgetSpec) -> StoreRequest:
        """Delete what ``spec`` names (confirmed elsewhere); answered by ``memory.forgotten``."""
        return self._ask(frame_id, save, lambda n: ApplyForget(n, spec), target=spec.kind)

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
            case OverviewLoaded(found=False):
                message = "no item with this eventId in that save"
                return [_invalid(frame_id, message, "eventId", "not_found")]
            case OverviewLoaded(overview=overview):
                return [Send(replies.memory_result(overview, pending.scope, current, frame_id))]
            case ForgetPreviewed(preview=preview) if not preview.found:
                message = "no item with this eventId in that save; nothing would be deleted"
                return [_invalid(frame_id, message, "eventId", "not_found")]
            case ForgetPreviewed(preview=preview):
                token = self.confirmations.issue(preview, now)
                ttl = self.confirmations.ttl
                frame = replies.memory_preview(
                    preview, pending.target, token, ttl, current, frame_id
                )
                return [Send(frame)]
            case Forgotten(result=result):
                notice = asking.forgotten_notice(
                    result, pending.target, self._texts, language, now=now, frame_id=frame_id
                )
                return [
                    Send(replies.memory_forgotten(result, pending.target, frame_id)),
                    Send(notice),
                ]
            case StoreFailed(code=code, message=message):
                # A refused profile value names the field the adapter sent.
                fields = ["value"] if isinstance(request, SetProfileField) else None
                return [Send(replies.error(code, message, frame_id, fields))]
        return []

    def clear(self) -> None:
        self._pending.clear()
        self.confirmations.clear()


def forget_spec(frame: MemoryForget, save: Scope) -> ForgetSpec | Send:
    """The target a ``memory.forget`` names within ``save``'s game, or the error naming fields."""
    problems: list[tuple[str, str]] = []
    if frame.confirm is not None:
        problems.append(("confirm", MIGRATE_CONFIRM))
    if frame.target == "event":
        problems.append(("target", MIGRATE_EVENT))
    kind = frame.target
    if kind == "item" and frame.event_id is None:
        problems.append(("eventId", "target item needs eventId"))
    if kind not in ("item", "event") and frame.event_id is not None:
        problems.append(("eventId", "eventId is only for target item"))
    if kind in ("game", "profile", "all") and frame.save_id is not None:
        problems.append(("saveId", "saveId is only for targets item and save"))
    if kind in ("item", "profile") and frame.include_stats:
        problems.append(("includeStats", f"target {kind} has no statistics"))
    if problems or kind == "event":
        message = "; ".join(f"{path}: {why}" for path, why in problems)
        fields = [path for path, _ in problems]
        return Send(replies.error("invalid_frame", message, frame.id, fields))
    where = Scope(save.game_id, frame.save_id) if frame.save_id is not None else save
    in_save = kind in ("item", "save")
    return ForgetSpec(
        kind=kind,
        game_id=save.game_id if kind in ("item", "save", "game") else None,
        save_id=where.save_id if in_save else None,
        item_id=frame.event_id if kind == "item" else None,
        include_stats=frame.include_stats,
    )


def _invalid(frame_id: str | None, message: str, field: str, code: str = "invalid_frame") -> Send:
    return Send(replies.error(code, message, frame_id, [field]))


def store_name(wire: str) -> str:
    """``replyStyle`` -> ``reply_style`` (the profile field table; unknown names pass as is)."""
    field = profile_field(wire)
    return field.name if field is not None else wire
