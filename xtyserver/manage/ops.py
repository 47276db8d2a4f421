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

import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from xtyserver.clock import Clock
from xtyserver.errors import StoreContentError, StoreError, XtyError
from xtyserver.memory.accounting import local_date
from xtyserver.memory.export import ExportDocument, decode_document, save_document
from xtyserver.memory.manage import Confirmations, ForgetRequest
from xtyserver.memory.types import PROFILE_TABLE, Scope, SharedProfile, profile_field
from xtyserver.protocol.memory_frames import MemoryForgotten, MemoryPreview
from xtyserver.serve.memory_service import MemoryService
from xtyserver.session import replies
from xtyserver.session.requests import REFUSED

DAY = 86400.0


class Refused(Exception):
    """A management call that cannot be done; ``message`` is safe to show.

    ``status`` is the page's HTTP answer, ``fields`` the wire names at fault,
    ``os_error`` the OS's reason (``strerror``) when the OS refused the work and
    ``code`` what the page says in the player's language instead of ``message``.
    """

    def __init__(
        self,
        message: str,
        status: int = 400,
        fields: Sequence[str] = (),
        *,
        os_error: str = "",
        code: str = "",
    ) -> None:
        super().__init__(message)
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
        raise Refused(exc.message, 503 if exc.code.startswith("store") else 400) from exc


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
    with _refusing():
        overview = await memory.overview(game_id=game_id, scope=scope, since=since)
    return replies.memory_view(overview, today=local_date(now, timezone), days=days)


async def correct(memory: MemoryService, field: str, value: Any) -> SharedProfile:
    """Replace one shared-profile field (wire name; ``autoShared`` takes true or false)."""
    known = profile_field(field)
    if known is None or known.wire != field:
        names = ", ".join(f.wire for f in PROFILE_TABLE)
        raise Refused(f"unknown shared field {field[:40]!r}; one of {names}", 400, ["field"])
    if not known.editable and not isinstance(value, bool):
        raise Refused(f"{field} takes true or false", 400, ["value"])
    with _refusing():
        return await memory.set_profile_field(known.name, value)


async def pin(memory: MemoryService, scope: Scope, event_id: int, pinned: bool) -> None:
    """Pin (compaction never merges it) or unpin one item."""
    with _refusing():
        found = await memory.set_pinned(scope, event_id, pinned)
    if not found:
        raise Refused("no item with this eventId in that save", 404, ["eventId"])


async def forget_name(memory: MemoryService, scope: Scope, name_id: int) -> None:
    """Delete one of the player's own names for a thing (one step, like a pin: saying the
    name again brings it back)."""
    with _refusing():
        gone = await memory.forget_aliases(scope, [name_id])
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

    Refused: 400 for a missing or extra field, 404 for no such item, 409 for a
    token unknown, spent, another asker's, expired or for another target.
    """
    spec = request.spec()
    if isinstance(spec, tuple):
        raise Refused("; ".join(f"{f}: {why}" for f, why in spec), 400, [f for f, _ in spec])
    with _refusing():
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
    return replies.memory_forgotten(result, request.target, None)


async def export(memory: MemoryService, scope: Scope | None = None) -> ExportDocument:
    """The export document of the whole store, or of the one save ``scope``
    (docs/memory-export.md; ``xtyserver memory import`` loads either)."""
    with _refusing():
        doc = await memory.export()
    if scope is None:
        return doc
    one = save_document(doc, scope.game_id, scope.save_id)
    if not (one.events or one.sessions or one.days or one.save_names or one.tombstones):
        raise Refused("no such save", 404, ["saveId"])
    return one


async def import_document(memory: MemoryService, body: bytes) -> dict[str, int]:
    """Merge an export document (the page's 导出全部 file) into the store, all or nothing.

    Nothing is deleted, so no confirmation is asked. A file that is no export
    document, or breaks a limit, is refused (400, ``not_an_export``) and nothing changes.
    """
    try:
        doc = decode_document(body)
    except StoreError as exc:
        raise Refused(exc.message, 400, ["file"], code="not_an_export") from None
    with _refusing():
        await memory.import_document(doc)
    return {"items": len(doc.events)}


async def trash(memory: MemoryService, clock: Clock) -> replies.TrashView:
    """What the trash holds and can still restore, newest first, and its window."""
    with _refusing():
        entries = await memory.trash_entries()
    return replies.trash_view(entries, memory.trash_window, clock.now())


async def restore(memory: MemoryService, trash_id: int) -> replies.Restored:
    """Put one trash entry back (no confirmation: restoring deletes nothing)."""
    with _refusing():
        try:
            result = await memory.restore(trash_id)
        except XtyError as exc:
            if exc.code != "not_found":
                raise
            raise Refused(exc.message, 404, ["trashId"]) from exc
    return replies.restored(result)
