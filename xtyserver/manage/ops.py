"""The memory operations of the page and MCP: thin steps over the memory service.

No types or rules of their own: each translates its input into a command of
:mod:`xtyserver.memory.commands`, a forget is admitted by
:func:`xtyserver.session.consent.admit` with how the person answered, and
every command runs through ``MemoryService.execute``. A target is a
:class:`~xtyserver.memory.manage.ForgetRequest` (the one vocabulary, ``item``,
``save``, ``game``, ``profile``, ``all``), tokens come from a
:class:`~xtyserver.memory.manage.Confirmations` the caller owns (single-use,
bound to the target and to who asked, :data:`~xtyserver.memory.manage.TOKEN_TTL`
seconds, as for frames and tools), and answers are the shapes of
:mod:`xtyserver.session.replies` (RFC 3339 times). A view is one store
snapshot.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any, cast

from xtyserver.clock import Clock
from xtyserver.errors import StoreContentError, XtyError
from xtyserver.memory.accounting import local_date
from xtyserver.memory.commands import (
    Answer,
    Correct,
    Export,
    Forget,
    ForgetName,
    MemoryCommand,
    Outcome,
    Pin,
    Restore,
    Unasked,
    View,
)
from xtyserver.memory.export import ExportDocument, save_document
from xtyserver.memory.manage import (
    Confirmations,
    ForgetPreview,
    ForgetRequest,
    ForgetResult,
    Overview,
    RestoreResult,
)
from xtyserver.memory.types import PROFILE_TABLE, Scope, SharedProfile, profile_field
from xtyserver.protocol.memory_frames import MemoryForgotten, MemoryPreview
from xtyserver.serve.memory_service import MemoryService
from xtyserver.session import replies
from xtyserver.session.consent import admit
from xtyserver.session.requests import REFUSED

DAY = 86400.0


class Refused(Exception):
    """A management call that cannot be done; ``message`` is safe to show.

    ``status`` is the page's HTTP answer, ``fields`` the wire names at fault,
    ``os_error`` the OS's reason (``strerror``) when the OS refused the work and
    ``code`` what the page says in the player's language instead of ``message``.
    ``reason`` the :data:`~xtyserver.memory.manage.Refusal` of a forget not admitted.
    """

    def __init__(
        self,
        message: str,
        status: int = 400,
        fields: Sequence[str] = (),
        *,
        os_error: str = "",
        code: str = "",
        reason: str = "",
    ) -> None:
        super().__init__(message)
        self.reason = reason  # a forget's Refusal, when consent refused it
        self.message = message
        self.status = status
        self.fields = tuple(fields)
        self.os_error = os_error
        self.code = code


@contextlib.contextmanager
def _refusing() -> Iterator[None]:
    """A store or usage error as its :class:`Refused` (a store failure is 503)."""
    try:
        yield
    except StoreContentError as exc:
        raise Refused(exc.message, 400, ["value"]) from exc
    except XtyError as exc:
        status = 404 if exc.code == "not_found" else 400
        raise Refused(exc.message, 503 if exc.code.startswith("store") else status) from exc


async def view(
    memory: MemoryService,
    clock: Clock,
    timezone: str,
    *,
    game_id: str | None = None,
    scope: Scope | None = None,
    days: int = replies.STATS_DAYS,
) -> replies.MemoryView:
    """The profile, every save (of ``game_id``, or ``scope`` alone) with its items, and the
    statistics: one read."""
    now = clock.now()
    since = now - (days + 1) * DAY
    seen = await _execute(memory, View(game_id=game_id, scope=scope, since=since))
    return replies.memory_view(cast(Overview, seen), today=local_date(now, timezone), days=days)


async def correct(memory: MemoryService, field: str, value: Any) -> SharedProfile:
    """Replace one shared-profile field (wire name; ``autoShared`` takes true or false)."""
    known = profile_field(field)
    if known is None or known.wire != field:
        names = ", ".join(f.wire for f in PROFILE_TABLE)
        raise Refused(f"unknown shared field {field[:40]!r}; one of {names}", 400, ["field"])
    if not known.editable and not isinstance(value, bool):
        raise Refused(f"{field} takes true or false", 400, ["value"])
    return cast(SharedProfile, await _execute(memory, Correct(field=known.name, value=value)))


async def pin(memory: MemoryService, scope: Scope, event_id: int, pinned: bool) -> None:
    """Pin (compaction never merges it) or unpin one item."""
    if not await _execute(memory, Pin(scope=scope, event_id=event_id, pinned=pinned)):
        raise Refused("no item with this eventId in that save", 404, ["eventId"])


async def forget_name(memory: MemoryService, scope: Scope, name_id: int) -> None:
    """Delete one of the player's own names for a thing (one step, like a pin: saying the
    name again brings it back)."""
    if not await _execute(memory, ForgetName(scope=scope, ids=(name_id,))):
        raise Refused("no name with this nameId in that save", 404, ["nameId"])


async def forget(
    memory: MemoryService,
    confirmations: Confirmations,
    request: ForgetRequest,
    answer: Answer | None,
    *,
    asker: str,
    now: float,
) -> MemoryPreview | MemoryForgotten:
    """Step one (no answer): what would go and a token; step two (the person's answer to
    that token, admitted by :func:`~xtyserver.session.consent.admit`): delete it.

    Refused: 400 for a missing or extra field, 404 for no such item, 409 for an
    answer not admitted (a token unknown, spent, another asker's, expired or for
    another target; a no; nobody asked where a person must be).
    """
    spec = request.spec()
    if isinstance(spec, tuple):
        raise Refused("; ".join(f"{f}: {why}" for f, why in spec), 400, [f for f, _ in spec])
    recent: list[float] = []
    if isinstance(answer, Unasked):
        recent = [e.trashed_at for e in await memory.trash_entries()]
    trash_on = memory.trash_window > 0
    admitted = admit(
        Forget(target=spec),
        answer,
        confirmations,
        now,
        asker=asker,
        trash_on=trash_on,
        recent=recent,
    )
    if isinstance(admitted, str):
        raise Refused(REFUSED[admitted], 409, ["confirmToken"], reason=admitted)
    done = await _execute(memory, admitted)
    if isinstance(done, ForgetPreview):
        if not done.found:
            message = "no item with this eventId in that save; nothing would be deleted"
            raise Refused(message, 404, ["eventId"])
        token = confirmations.issue(done, now, asker=asker)
        return replies.memory_preview(done, request.target, token, confirmations.ttl, None, None)
    return replies.memory_forgotten(cast(ForgetResult, done), request.target, None)


async def export(memory: MemoryService, scope: Scope | None = None) -> ExportDocument:
    """The export document of the whole store, or of the one save ``scope``
    (docs/memory-export.md; ``xtyserver memory import`` loads either)."""
    doc = cast(ExportDocument, await _execute(memory, Export()))
    if scope is None:
        return doc
    one = save_document(doc, scope.game_id, scope.save_id)
    if not (one.events or one.sessions or one.days or one.save_names or one.tombstones):
        raise Refused("no such save", 404, ["saveId"])
    return one


async def trash(memory: MemoryService, clock: Clock) -> replies.TrashView:
    """What the trash holds and can still restore, newest first, and its window."""
    with _refusing():
        entries = await memory.trash_entries()
    return replies.trash_view(entries, memory.trash_window, clock.now())


async def restore(memory: MemoryService, trash_id: int) -> replies.Restored:
    """Put one trash entry back (no confirmation: restoring deletes nothing)."""
    try:
        result = await _execute(memory, Restore(trash_id=trash_id))
    except Refused as exc:
        if exc.status != 404:
            raise
        raise Refused(exc.message, 404, ["trashId"]) from exc
    return replies.restored(cast(RestoreResult, result))


async def _execute(memory: MemoryService, command: MemoryCommand) -> Outcome:
    """The page's and MCP's way through the one door (their commands need no answer, or
    were admitted); a store or usage error as its :class:`Refused`."""
    with _refusing():
        return await memory.execute(command)
