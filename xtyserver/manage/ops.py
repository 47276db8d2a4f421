"""The memory operations of the page and MCP: thin steps over the memory service.

No types or rules of their own: a target is a
:class:`~xtyserver.memory.manage.ForgetRequest` (the one vocabulary, ``item``,
``save``, ``game``, ``profile``, ``all``), tokens come from a
:class:`~xtyserver.memory.manage.Confirmations` the caller owns (single-use,
bound to the target and to who asked, :data:`~xtyserver.memory.manage.TOKEN_TTL`
seconds, as for frames and tools), and answers are the shapes of
:mod:`xtyserver.session.replies` (RFC 3339 times). A view is one store
snapshot.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from xtyserver.clock import Clock
from xtyserver.errors import StoreContentError, XtyError
from xtyserver.memory.accounting import local_date
from xtyserver.memory.export import ExportDocument, save_document
from xtyserver.memory.manage import Confirmations, ForgetRequest
from xtyserver.memory.types import PROFILE_TABLE, Scope, SharedProfile, profile_field
from xtyserver.protocol.memory_frames import MemoryForgotten, MemoryPreview
from xtyserver.serve.memory_service import MemoryService
from xtyserver.session import replies
from xtyserver.session.requests import REFUSED

DAY = 86400.0


class Refused(Exception):
    """A management call that cannot be done; ``message`` is safe to show.

    Attributes:
        status: The HTTP status the page answers with.
        fields: The request's fields at fault (wire names), if any.
        os_error: The OS's reason (``strerror``) when the OS refused the work.
    """

    def __init__(
        self, message: str, status: int = 400, fields: Sequence[str] = (), *, os_error: str = ""
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.fields = tuple(fields)
        # The OS's reason when the OS refused (the page shows it in its language).
        self.os_error = os_error


def refused_by(exc: XtyError) -> Refused:
    """The :class:`Refused` for a store or usage error (a store failure is 503)."""
    if isinstance(exc, StoreContentError):
        return Refused(exc.message, 400, ["value"])
    return Refused(exc.message, 503 if exc.code.startswith("store") else 400)


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
    try:
        overview = await memory.overview(game_id=game_id, scope=scope, since=since)
    except XtyError as exc:
        raise refused_by(exc) from exc
    return replies.memory_view(overview, today=local_date(now, timezone), days=days)


async def correct(memory: MemoryService, field: str, value: Any) -> SharedProfile:
    """Replace one shared-profile field (wire name; ``autoShared`` takes true or false)."""
    known = profile_field(field)
    if known is None or known.wire != field:
        names = ", ".join(f.wire for f in PROFILE_TABLE)
        raise Refused(f"unknown shared field {field[:40]!r}; one of {names}", 400, ["field"])
    if not known.editable and not isinstance(value, bool):
        raise Refused(f"{field} takes true or false", 400, ["value"])
    try:
        return await memory.set_profile_field(known.name, value)
    except XtyError as exc:
        raise refused_by(exc) from exc


async def pin(memory: MemoryService, scope: Scope, event_id: int, pinned: bool) -> None:
    """Pin (compaction never merges it) or unpin one item."""
    try:
        found = await memory.set_pinned(scope, event_id, pinned)
    except XtyError as exc:
        raise refused_by(exc) from exc
    if not found:
        raise Refused("no item with this eventId in that save", 404, ["eventId"])


async def forget_name(memory: MemoryService, scope: Scope, name_id: int) -> None:
    """Delete one of the player's own names for a thing (one step, like a pin: saying the
    name again brings it back)."""
    try:
        gone = await memory.forget_aliases(scope, [name_id])
    except XtyError as exc:
        raise refused_by(exc) from exc
    if not gone:
        raise Refused("no name with this nameId in that save", 404, ["nameId"])


async def forget(
    memory: MemoryService,
    confirmations: Confirmations,
    request: ForgetRequest,
    *,
    asker: str,
    now: float,
) -> MemoryPreview | MemoryForgotten:
    """Step one (no token): what would go and a token; step two (the token): delete it.

    Raises:
        Refused: A field is missing or extra (400), the item does not exist
            (404), or the token is refused (409: unknown, spent, another
            asker's, expired or for another target).
    """
    spec = request.spec()
    if isinstance(spec, tuple):
        raise Refused("; ".join(f"{f}: {why}" for f, why in spec), 400, [f for f, _ in spec])
    try:
        if request.confirm_token is None:
            preview = await memory.preview_forget(spec)
            if not preview.found:
                message = "no item with this eventId in that save; nothing would be deleted"
                raise Refused(message, 404, ["eventId"])
            token = confirmations.issue(preview, now, asker=asker)
            ttl = confirmations.ttl
            return replies.memory_preview(preview, request.target, token, ttl, None, None)
        redeemed = confirmations.redeem(
            request.confirm_token, lambda p: p.spec == spec, now, asker=asker
        )
        if isinstance(redeemed, str):
            raise Refused(REFUSED[redeemed], 409, ["confirmToken"])
        result = await memory.forget(redeemed)
    except XtyError as exc:
        raise refused_by(exc) from exc
    return replies.memory_forgotten(result, request.target, None)


async def export(memory: MemoryService, scope: Scope | None = None) -> ExportDocument:
    """The export document of the whole store, or of the one save ``scope``
    (docs/memory-export.md; ``xtyserver memory import`` loads either)."""
    try:
        doc = await memory.export()
    except XtyError as exc:
        raise refused_by(exc) from exc
    if scope is None:
        return doc
    one = save_document(doc, scope.game_id, scope.save_id)
    if not (one.events or one.sessions or one.days or one.save_names or one.tombstones):
        raise Refused("no such save", 404, ["saveId"])
    return one


async def trash(memory: MemoryService, clock: Clock) -> replies.TrashView:
    """What the trash holds and can still restore, newest first, and its window."""
    try:
        entries = await memory.trash_entries()
    except XtyError as exc:
        raise refused_by(exc) from exc
    return replies.trash_view(entries, memory.trash_window, clock.now())


async def restore(memory: MemoryService, trash_id: int) -> replies.Restored:
    """Put one trash entry back (no confirmation: restoring deletes nothing).

    Raises:
        Refused: No such entry, or past its window (404).
    """
    try:
        result = await memory.restore(trash_id)
    except XtyError as exc:
        if exc.code == "not_found":
            raise Refused(exc.message, 404, ["trashId"]) from exc
        raise refused_by(exc) from exc
    return replies.restored(result)
