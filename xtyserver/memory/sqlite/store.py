"""The memory store: one SQLite file per player profile, behind one synchronous facade.

:class:`MemoryStore` composes the modules of this package (connections,
validation, the SQL of each table, compaction, transfer). Every public method
is one read snapshot or one ``BEGIN IMMEDIATE`` transaction, run on the calling
thread, so related rows are saved together or not at all.
"""

from __future__ import annotations

import os
import re
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import apsw
import msgspec

from xtyserver.clock import Clock
from xtyserver.errors import StoreError, UsageError
from xtyserver.files import private_dir
from xtyserver.memory import accounting, game_names
from xtyserver.memory.aliases import MAX_ALIASES, PlayerAlias
from xtyserver.memory.commands import (
    Correct,
    Export,
    Forget,
    ForgetName,
    Import,
    MemoryCommand,
    Outcome,
    Pin,
    Preview,
    Restore,
    View,
)
from xtyserver.memory.compaction import DEFAULT_MAX_IMPORTANCE, DIGEST_PREFIX, plan_compaction
from xtyserver.memory.export import ExportDocument
from xtyserver.memory.manage import (
    TRASH_HOURS,
    ForgetResult,
    ForgetSpec,
    Overview,
    RestoreResult,
    TrashEntry,
    restorable_here,
)
from xtyserver.memory.sqlite import (
    aliases,
    events,
    generation,
    play,
    saves,
    shared_profile,
    transfer,
    trash,
    usage,
    vectors,
)
from xtyserver.memory.sqlite.database import DEFAULT_BUSY_TIMEOUT_MS, Database
from xtyserver.memory.tokens import Purpose
from xtyserver.memory.types import (
    MemoryEvent,
    NewEvent,
    PlayStats,
    Scope,
    SharedProfile,
)
from xtyserver.memory.validation import (
    checked_alias,
    checked_new_event,
    checked_profile_value,
    checked_save_name,
    checked_scope,
)

__all__ = [
    "DB_FILE_NAME",
    "DEFAULT_BUSY_TIMEOUT_MS",
    "DEFAULT_SOFT_CAP",
    "DIGEST_PREFIX",
    "PROFILE_ID_RE",
    "MemoryStore",
]

PROFILE_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
DB_FILE_NAME = "memory-v1.sqlite"
DEFAULT_SOFT_CAP = 300


class MemoryStore:
    """Long-term memory and play statistics of one player profile.

    Open with :meth:`open_profile` (or the constructor for an explicit path),
    call :meth:`recover_open_sessions` once at startup, :meth:`close` at exit.
    Thread-safe: writes are serialized, reads run beside them.

    Attributes:
        soft_cap: Events per save before :meth:`compact_scope` merges.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        clock: Clock,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        max_bytes: int | None = None,
        gap_cap_s: float = accounting.DEFAULT_GAP_CAP_S,
        soft_cap: int = DEFAULT_SOFT_CAP,
        trash_window: float = TRASH_HOURS * 3600,
    ) -> None:
        """Open (creating and migrating if needed) the store at ``path``.

        Args:
            busy_timeout_ms: How long to wait for another process's lock.
            max_bytes: Optional size cap; writes past it fail with ``store_full``.
            gap_cap_s: The most one heartbeat gap adds to active time.
            trash_window: Seconds a forgotten item, save, game or profile stays
                restorable in the trash (0: a forget deletes at once).

        Raises:
            StoreError: The file cannot be opened or is from a newer version.
        """
        self._db = Database(path, busy_timeout_ms=busy_timeout_ms, max_bytes=max_bytes)
        self.path = self._db.path
        self._clock = clock
        self._gap_cap_s = gap_cap_s
        self.soft_cap = soft_cap
        self.trash_window = trash_window

    @classmethod
    def open_profile(
        cls, data_dir: str | os.PathLike[str], profile_id: str, *, clock: Clock, **options: Any
    ) -> MemoryStore:
        """Open ``<data_dir>/profiles/<profile_id>/memory-v1.sqlite``.

        Raises:
            UsageError: ``profile_id`` is not ``[A-Za-z0-9_-]{1,64}``.
            StoreError: The folder or file cannot be created or opened.
        """
        if not PROFILE_ID_RE.fullmatch(profile_id):
            raise UsageError("profile id must match [A-Za-z0-9_-]{1,64}")
        folder = Path(data_dir) / "profiles" / profile_id
        try:
            private_dir(folder)  # profiles/ too: every folder made owner-only
        except OSError as exc:
            raise StoreError("cannot create the profile folder") from exc
        return cls(folder / DB_FILE_NAME, clock=clock, **options)

    @property
    def snapshots(self) -> int:
        """Read snapshots taken since opening (each public read method takes one)."""
        return self._db.snapshots

    def close(self) -> None:
        """Wait for the running write, then close every connection. Idempotent."""
        self._db.close()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def busy_timeout_ms(self) -> int:
        """How long a write waits for another process's lock before ``store_busy``."""
        return self._db.busy_timeout_ms

    def set_size_limit(self, max_bytes: int | None) -> None:
        """Change the size cap (None = no cap beyond SQLite's own)."""
        self._db.set_size_limit(max_bytes)

    # --- shared profile --------------------------------------------------------------------

    def get_profile(self) -> SharedProfile:
        """The shared profile (defaults for fields never set)."""
        return self._db.read(shared_profile.load)

    def set_profile_field(self, name: str, value: Any) -> SharedProfile:
        """Set one shared-profile field after normalising and validating its value.

        Raises:
            UsageError: Unknown field name.
            StoreError: code ``invalid_memory`` when the value breaks a limit.
            StoreContentError: The value carries forbidden content.
        """
        clean = checked_profile_value(name, value)
        now = self._clock.now()

        def write(conn: apsw.Connection) -> SharedProfile:
            shared_profile.set_field(conn, name, clean, now)
            return shared_profile.load(conn)

        return self._db.write(generation.changed(write))

    def record_game(self, game_id: str) -> SharedProfile | None:
        """List a connected game's readable name in ``games``; the new profile, or None
        when unchanged (already listed, or automatic shared memory is off)."""
        games = game_names.with_game(self.get_profile(), game_id)
        return None if games is None else self.set_profile_field("games", games)

    def generation(self, *, wait: bool = True) -> int:
        """How many management changes the store has seen (any process's).

        Args:
            wait: False: fail with ``store_busy`` at once rather than wait for a lock.
        """
        return self._db.read(generation.read, wait=wait)

    # --- game memory -----------------------------------------------------------------------

    def load_scope(self, scope: Scope) -> list[MemoryEvent]:
        """Every event of one save (the scope filter is in the SQL), oldest first."""
        scope = checked_scope(scope)
        return self._db.read(lambda conn: events.load(conn, scope))

    def upsert_event(self, scope: Scope, event: NewEvent, now: float) -> MemoryEvent:
        """Remember ``event`` in ``scope``; one with the same kind and subject is updated
        in place (so conflicting facts never reach a prompt together), staying pinned.

        Raises:
            StoreError: code ``invalid_memory`` when a field breaks its limit.
            StoreContentError: Forbidden content, naming the field.
        """
        scope = checked_scope(scope)
        event = checked_new_event(event)
        return self._db.write(lambda conn: events.upsert(conn, scope, event, now))

    def set_search_keys(self, scope: Scope, keys: Mapping[int, Sequence[str]]) -> list[MemoryEvent]:
        """Store the search keys of events of ``scope``; the events changed.

        Raises:
            StoreError: code ``invalid_memory`` when a key breaks its limits.
            StoreContentError: A key carries forbidden content.
        """
        scope = checked_scope(scope)
        checked: list[tuple[int, tuple[str, ...]]] = []
        for event_id, found in keys.items():
            probe = NewEvent("event", "k", "k", search_keys=tuple(found))
            checked.append((int(event_id), checked_new_event(probe).search_keys or ()))
        return self._db.write(lambda conn: events.set_search_keys(conn, scope, checked))

    def without_search_keys(self, scope: Scope, limit: int) -> list[MemoryEvent]:
        """Up to ``limit`` events of ``scope`` never given search keys (the enrichment job's)."""
        scope = checked_scope(scope)
        return self._db.read(lambda conn: events.without_search_keys(conn, scope, limit))

    # --- memory vectors ------------------------------------------------------------------

    def load_vectors(self, scope: Scope, model: str) -> dict[int, array[float]]:
        """The vectors ``model`` formed for events of ``scope``, by event id."""
        scope = checked_scope(scope)
        return self._db.read(lambda conn: vectors.load_vectors(conn, scope, model))

    def without_vectors(self, scope: Scope, model: str, limit: int) -> list[MemoryEvent]:
        """Up to ``limit`` events of ``scope`` without a vector from ``model``."""
        scope = checked_scope(scope)
        return self._db.read(lambda conn: vectors.without_vectors(conn, scope, model, limit))

    def saves_without_vectors(self, model: str) -> list[tuple[Scope, int]]:
        """Every save with events lacking a vector from ``model``, with their count."""
        return self._db.read(lambda conn: vectors.saves_without_vectors(conn, model))

    def set_vectors(
        self, scope: Scope, model: str, found: Sequence[tuple[int, str, array[float]]]
    ) -> list[int]:
        """Store vectors ``(event id, text embedded, vector)`` of events unchanged; ids stored."""
        scope = checked_scope(scope)
        return self._db.write(lambda conn: vectors.set_vectors(conn, scope, model, found))

    def touch(self, scope: Scope, ids: Sequence[int], now: float) -> None:
        """Mark events of ``scope`` as used at ``now`` (ids of other scopes are ignored)."""
        scope = checked_scope(scope)
        if ids:
            self._db.write(lambda conn: events.touch(conn, scope, ids, now))

    # --- the player's own names for things --------------------------------------------------

    def learn_alias(self, scope: Scope, alias: str, means: str, now: float) -> PlayerAlias:
        """Keep the player's name ``alias`` of ``means`` in ``scope`` (the same name said
        again means the new thing; past ``MAX_ALIASES`` the one said longest ago goes).

        Raises:
            StoreError: code ``invalid_memory`` when a part is empty or too long.
            StoreContentError: A part carries forbidden content (nothing is stored).
        """
        scope = checked_scope(scope)
        alias, means = checked_alias(alias, means)
        # No generation bump: only the server playing the save learns names, and it
        # updates its own index (a bump would reload every save it holds).
        return self._db.write(
            lambda conn: aliases.learn(conn, scope, alias, means, now, MAX_ALIASES)
        )

    def aliases(self, scope: Scope) -> list[PlayerAlias]:
        """The player's names of one save, oldest said first."""
        scope = checked_scope(scope)
        return self._db.read(lambda conn: aliases.load(conn, scope))

    # --- management (v1.md "Memory management") ---------------------------------------------

    def _checked_spec(self, spec: ForgetSpec) -> ForgetSpec:
        problem = spec.problem()
        if problem is not None:
            raise UsageError(problem)
        if spec.scope is not None:
            checked_scope(spec.scope)
        return spec

    def forget(self, spec: ForgetSpec) -> ForgetResult:
        """Delete what ``spec`` names (statistics only with ``include_stats``), leaving tombstones.

        Raises:
            UsageError: ``spec`` lacks a field its kind needs.
        """
        spec = self._checked_spec(spec)
        now = self._clock.now()

        def write(conn: apsw.Connection) -> ForgetResult:
            def keep(
                doomed: list[MemoryEvent],
                was: SharedProfile | None,
                stats: dict[str, Any],
                names: list[PlayerAlias],
            ) -> int | None:
                fields = shared_profile.cleared_fields(was) if was is not None else {}
                return trash.put(conn, spec, doomed, fields, now, stats, names)

            return saves.forget(conn, spec, now, keep if self.trash_window > 0 else None)

        result = self._db.write(generation.changed(write))
        if result.trash_id is None:
            return result
        return msgspec.structs.replace(result, expires_at=now + self.trash_window)

    def execute(self, command: MemoryCommand) -> Outcome:
        """The store's one door for memory commands, admitted by the caller
        (:func:`xtyserver.session.consent.admit`); a search runs over a save's index
        in the memory service, never here.

        Raises:
            UsageError: A search, or a command lacking a field its kind needs.
            StoreError: Refused or not written.
        """
        match command:
            case View(game_id=game_id, scope=scope, since=since):
                return self.overview(game_id=game_id, scope=scope, since=since)
            case Correct(field=field, value=value):
                return self.set_profile_field(field, value)
            case Pin(scope=scope, event_id=event_id, pinned=pinned):
                scope = checked_scope(scope)
                pin = lambda conn: events.set_pinned(conn, scope, event_id, pinned)  # noqa: E731
                return self._db.write(generation.changed(pin))
            case Preview(target=spec):
                spec = self._checked_spec(spec)
                return self._db.read(lambda conn: saves.preview(conn, spec))
            case Forget(target=spec):
                return self.forget(spec)
            case Restore(trash_id=trash_id, game_id=game_id):
                return self.restore(trash_id, game_id=game_id)
            case ForgetName(scope=scope, ids=ids) if ids:
                scope = checked_scope(scope)
                gone = lambda conn: aliases.delete_ids(conn, scope, list(ids))  # noqa: E731
                return self._db.write(generation.changed(gone))
            case ForgetName():
                return 0
            case Export():
                return self.export()
            case Import(document=doc):
                self.import_document(doc)
                return len(doc.events)
        raise UsageError(f"the store does not run {type(command).__name__}")

    # --- the trash ---------------------------------------------------------------------------

    def trash_entries(self) -> list[TrashEntry]:
        """What can be restored now, newest first (each with what it holds, by save name)."""
        now, window = self._clock.now(), self.trash_window
        return self._db.read(lambda conn: trash.entries(conn, now, window))

    def restore(self, trash_id: int | None = None, *, game_id: str | None = None) -> RestoreResult:
        """Put a trash entry back (``trash_id``, else the newest one); with ``game_id`` (a
        game's chat) only entries of that game or of the profile.

        Raises:
            StoreError: ``not_found`` when there is no such restorable entry.
        """
        now, window = self._clock.now(), self.trash_window

        def write(conn: apsw.Connection) -> RestoreResult | None:
            wanted = trash_id
            if wanted is None:
                newest = trash.newest(conn, now, window, game_id)
                if newest is None:
                    return None
                wanted = newest.id
            elif game_id is not None:
                here = [e for e in trash.entries(conn, now, window) if e.id == wanted]
                if not here or not restorable_here(here[0].spec, game_id):
                    return None
            return trash.restore(conn, wanted, now, window)

        result = self._db.write(generation.changed(write))
        if result is None:
            message = "nothing in the trash to restore (or it is past its window)"
            raise StoreError(message, code="not_found")
        return result

    def now(self) -> float:
        """The store's clock (what the trash's window is measured on)."""
        return self._clock.now()

    def purge_trash(self) -> int:
        """Delete trash entries past their window; how many."""
        now, window = self._clock.now(), self.trash_window
        return self._db.write(lambda conn: trash.purge(conn, now, window))

    def trash_rows(self) -> int:
        """Rows in the trash, purged or not yet (tests, diagnostics)."""
        return self._db.read(trash.count)

    def overview(
        self,
        *,
        game_id: str | None = None,
        scope: Scope | None = None,
        since: float | None = None,
    ) -> Overview:
        """The profile, the saves (only ``scope``, or those of ``game_id``, or all), statistics;
        ``since``: also active time per game and local date from then on."""
        if scope is not None:
            scope = checked_scope(scope)
        return self._db.read(
            lambda conn: saves.overview(conn, game_id=game_id, scope=scope, since=since)
        )

    def remember_candidate(
        self, scope: Scope, event: NewEvent, now: float, *, deliberate: bool
    ) -> MemoryEvent | None:
        """Store an extracted ``event`` unless the player forgot its subject before.

        ``deliberate`` (the player said "记住…" on purpose) lifts the tombstone and
        pins the memory; otherwise a tombstoned subject is refused (None).
        """
        scope = checked_scope(scope)
        event = checked_new_event(event)
        if deliberate:
            event = msgspec.structs.replace(event, pinned=True)

        def write(conn: apsw.Connection) -> MemoryEvent | None:
            if deliberate:
                saves.unbury(conn, scope, event.subject)
            elif saves.is_buried(conn, scope, event.subject):
                return None
            return events.upsert(conn, scope, event, now)

        return self._db.write(write)

    def list_scopes(self) -> list[Scope]:
        """Every save that has memories or statistics, sorted."""
        return self._db.read(lambda conn: sorted(events.scopes(conn) | play.scopes(conn)))

    def compact_scope(
        self,
        scope: Scope,
        now: float,
        *,
        max_importance: int = DEFAULT_MAX_IMPORTANCE,
        cap: int | None = None,
    ) -> int:
        """Merge old low-importance events of a save past ``cap`` (default ``soft_cap``)
        as :func:`~xtyserver.memory.compaction.plan_compaction` plans; how many went."""
        scope = checked_scope(scope)
        limit = self.soft_cap if cap is None else cap

        def write(conn: apsw.Connection) -> int:
            if events.count(conn, scope) <= limit:
                return 0  # the common case after each new memory: skip loading the save
            plan = plan_compaction(
                events.load(conn, scope), limit, now, max_importance=max_importance
            )
            for digest in plan.digests:
                events.write_digest(conn, digest)
            return events.delete_ids(conn, scope, plan.merged_ids)

        return self._db.write(write)

    # --- play accounting -------------------------------------------------------------------

    def open_play_session(
        self, scope: Scope, now: float, tz: str, *, save_name: str | None = None
    ) -> int:
        """Start a play session of one save, record today's play day and the save's name.

        Raises:
            UsageError: ``tz`` is not a known IANA timezone.
            StoreContentError: ``save_name`` carries forbidden content.
        """
        scope = checked_scope(scope)
        accounting.timezone(tz)  # refuse a bad zone before taking the write lock
        name = checked_save_name(save_name) if save_name else None

        def write(conn: apsw.Connection) -> int:
            if name:
                saves.set_name(conn, scope, name, now)
            return play.open_session(conn, scope, now, tz)

        return self._db.write(write)

    def record_heartbeat(self, session_id: int, now: float, tz: str) -> None:
        """Add the time since the previous heartbeat (gaps capped) and record the day.

        Raises:
            UsageError: Unknown or closed session, or unknown ``tz``.
        """
        accounting.timezone(tz)
        cap = self._gap_cap_s
        self._db.write(
            lambda conn: play.advance(conn, session_id, now, tz, end=False, gap_cap_s=cap)
        )

    def close_play_session(self, session_id: int, now: float) -> None:
        """End a session: a final heartbeat at ``now``, then closed.

        Raises:
            UsageError: Unknown or already closed session.
        """
        cap = self._gap_cap_s
        self._db.write(
            lambda conn: play.advance(conn, session_id, now, None, end=True, gap_cap_s=cap)
        )

    def ended_sessions(self, scope: Scope, limit: int = 3) -> list[tuple[float, float]]:
        """The latest ended play sessions of one save, (started, ended), oldest first."""
        scope = checked_scope(scope)
        return self._db.read(lambda conn: play.ended_sessions(conn, scope, limit))

    def recover_open_sessions(self) -> int:
        """Close sessions left open by a crash at their last heartbeat (call at startup)."""
        return self._db.write(play.recover)

    def stats(self) -> PlayStats:
        """Per-save and per-game play statistics (game days = union of save dates) and
        the token bill."""

        def read(conn: apsw.Connection) -> PlayStats:
            return msgspec.structs.replace(play.stats(conn), tokens=usage.rows(conn))

        return self._db.read(read)

    def record_usage(
        self, date: str, save: Scope, purpose: Purpose, prompt: int, completion: int
    ) -> None:
        """Add one model call's tokens to the bill of ``save`` on local ``date``."""
        self._db.write(lambda conn: usage.record(conn, date, save, purpose, prompt, completion))

    def tokens_spent(self, date: str) -> int:
        """Every token counted on local ``date``."""
        return self._db.read(lambda conn: usage.spent_on(conn, date))

    # --- export / import / backup --------------------------------------------------------

    def export(self) -> ExportDocument:
        """The whole store as one :class:`ExportDocument` (one consistent snapshot)."""
        now = self._clock.now()
        return self._db.read(lambda conn: transfer.export_document(conn, now))

    def import_document(self, doc: ExportDocument) -> None:
        """Merge an export document into this store, all or nothing (``transfer.import_checked``).

        Raises:
            StoreError: code ``invalid_import`` when a value breaks a limit.
            StoreContentError: A text carries forbidden content.
        """
        doc = transfer.checked_document(doc)
        now = self._clock.now()
        self._db.write(generation.changed(lambda conn: transfer.import_checked(conn, doc, now)))

    def backup(self, path: str | os.PathLike[str]) -> None:
        """Copy the store to ``path`` with SQLite's online backup (consistent, live)."""
        transfer.backup(self._db, path)
