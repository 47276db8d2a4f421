"""Store requests of one session: numbered, remembered, answered with frames (v1.md "stats.get").

Pure. A management frame becomes a typed request effect with a number; the
shell's answer event carries the same number, and the reply frame is built
here, for the frame id the adapter used.
"""

from __future__ import annotations

from collections.abc import Callable

from xtyserver.memory.types import Scope
from xtyserver.protocol import replies
from xtyserver.protocol.frames import MemoryForget, MemoryGet, ProfileUpdate, StatsGet
from xtyserver.session.effects import (
    Effect,
    Forget,
    LoadMemory,
    LoadStats,
    Send,
    SetProfileField,
    StoreRequest,
)
from xtyserver.session.events import MemoryLoaded, StatsLoaded, StoreFailed

StoreAnswer = StatsLoaded | MemoryLoaded | StoreFailed
ManagementFrame = StatsGet | MemoryGet | MemoryForget | ProfileUpdate


class StoreRequests:
    """Requests in flight: request number -> (the frame's id, what was asked)."""

    def __init__(self) -> None:
        self._count = 0
        self._pending: dict[int, tuple[str | None, StoreRequest]] = {}

    def ask_for(self, frame: ManagementFrame, save: Scope) -> Effect:
        """The store request for a management frame of the session on ``save``.

        ``memory.forget`` of one event without ``eventId`` is refused here
        (``invalid_frame`` naming ``eventId``): nothing is asked of the store.
        """
        match frame:
            case StatsGet():
                return self._ask(frame.id, lambda n: LoadStats(n))
            case MemoryGet():
                return self._ask(frame.id, lambda n: LoadMemory(n, save))
            case MemoryForget(target="event", event_id=None):
                message = "target event needs eventId"
                return Send(replies.error("invalid_frame", message, frame.id, ["eventId"]))
            case MemoryForget(target=target, event_id=event_id):
                return self._ask(frame.id, lambda n: Forget(n, save, target, event_id))
            case ProfileUpdate(field=name, value=value):
                field = snake_case(name)
                return self._ask(frame.id, lambda n: SetProfileField(n, save, field, value))

    def _ask(self, frame_id: str | None, make: Callable[[int], StoreRequest]) -> StoreRequest:
        self._count += 1
        request = make(self._count)
        self._pending[request.request] = (frame_id, request)
        return request

    def answer(self, answer: StoreAnswer) -> list[Effect]:
        """The reply frame for ``answer``; nothing for an unknown or repeated answer."""
        pending = self._pending.pop(answer.request, None)
        if pending is None:
            return []
        frame_id, request = pending
        match answer:
            case StatsLoaded(stats=stats):
                return [Send(replies.stats_result(stats, frame_id))]
            case MemoryLoaded(profile=profile, events=events):
                return [Send(replies.memory_result(profile, events, frame_id))]
            case StoreFailed(code=code, message=message):
                # A refused profile value names the field the adapter sent.
                fields = ["value"] if isinstance(request, SetProfileField) else None
                return [Send(replies.error(code, message, frame_id, fields))]

    def clear(self) -> None:
        self._pending.clear()


def snake_case(name: str) -> str:
    """``replyStyle`` -> ``reply_style`` (wire field names to store field names)."""
    return "".join("_" + c.lower() if c.isupper() else c for c in name)
