"""The memory store: one SQLite file per player profile, opened with apsw.

Threading model: every write runs on ONE writer thread fed by a queue (the
callers block on a future), so writes are serialized without lock juggling;
reads use one read connection per calling thread (WAL lets them run beside
the writer). The API is synchronous and thread-safe; the async server calls it
through ``anyio.to_thread``.

Every multi-row change runs in one ``BEGIN IMMEDIATE`` transaction, so a
memory row and its related updates are saved together or not at all. SQL
always uses bindings. No raw apsw exception leaves this module: disk full
becomes ``StoreError(code="store_full")``, an exhausted busy timeout
``store_busy``, anything else ``store_error``.

Nothing that must stay on the machine is stored: every text passes
``find_forbidden`` (paths, account ids, keys, e-mails) or is refused with
:class:`~xtyserver.errors.StoreContentError` naming the field.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import Any, TypeVar, cast

import apsw
import msgspec

from xtyserver.clock import Clock
from xtyserver.errors import StoreContentError, StoreError, UsageError, XtyError
from xtyserver.memory import accounting
from xtyserver.memory.export import (
    FORMAT_NAME,
    FORMAT_VERSION,
    ExportDocument,
    PlayDayRecord,
    PlaySessionRecord,
)
from xtyserver.memory.schema import MIGRATIONS, SCHEMA_VERSION
from xtyserver.memory.types import (
    PROFILE_FIELDS,
    GamePlayStats,
    MemoryEvent,
    NewEvent,
    PlayStats,
    SavePlayStats,
    Scope,
    SharedProfile,
    error_field,
    validated,
)
from xtyserver.protocol.forbidden import find_forbidden

T = TypeVar("T")

PROFILE_ID_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
DB_FILE_NAME = "memory-v1.sqlite"
DEFAULT_SOFT_CAP = 300
_SQLITE_INT_MAX = 2**63 - 1
# How long a write waits for another process's lock before ``store_busy``:
# long enough for a backup or a sqlite3 shell to finish a step, short enough
# that a stuck holder (held 30 s) gives a handled error rather than a hang.
DEFAULT_BUSY_TIMEOUT_MS = 5000
DIGEST_PREFIX = "往事汇总"

_EVENT_COLUMNS = (
    "id, game_id, save_id, kind, subject, summary, importance, status, pinned, day, "
    "created_at, updated_at, last_used_at"
)


# --- pragmas: one small function each, applied to every connection -------------------------


def pragma_wal(conn: apsw.Connection) -> None:
    """Write-ahead log: readers never block the writer and vice versa."""
    conn.execute("PRAGMA journal_mode=WAL").fetchall()


def pragma_synchronous_normal(conn: apsw.Connection) -> None:
    """NORMAL is durable across process crashes in WAL mode and much faster than FULL."""
    conn.execute("PRAGMA synchronous=NORMAL")


def pragma_foreign_keys(conn: apsw.Connection) -> None:
    conn.execute("PRAGMA foreign_keys=ON")


def pragma_busy_timeout(conn: apsw.Connection, ms: int) -> None:
    """Wait up to ``ms`` for another process's lock before failing with ``store_busy``."""
    conn.set_busy_timeout(ms)


def pragma_max_bytes(conn: apsw.Connection, max_bytes: int | None) -> None:
    """Cap the database size (``store_full`` past it); None restores SQLite's maximum."""
    pages = 4_294_967_294 if max_bytes is None else max(1, max_bytes // _page_size(conn))
    conn.execute(f"PRAGMA max_page_count={int(pages)}").fetchall()


def _page_size(conn: apsw.Connection) -> int:
    row = conn.execute("PRAGMA page_size").fetchone()
    return int(row[0]) if row else 4096


# --- error translation ------------------------------------------------------------------


@contextlib.contextmanager
def _translated() -> Iterator[None]:
    """Turn apsw exceptions into StoreError with a protocol code."""
    try:
        yield
    except XtyError:
        raise
    except apsw.FullError as exc:
        raise StoreError("the memory store's disk is full", code="store_full") from exc
    except (apsw.BusyError, apsw.LockedError) as exc:
        raise StoreError("the memory store is busy", code="store_busy") from exc
    except apsw.Error as exc:
        raise StoreError(f"the memory store failed: {type(exc).__name__}") from exc
    except OverflowError as exc:
        # An integer past SQLite's 64-bit range: a bad value, not a crash.
        raise StoreError(
            "a number is too large for the memory store", code="invalid_memory"
        ) from exc


@contextlib.contextmanager
def _write_tx(conn: apsw.Connection) -> Iterator[None]:
    """One IMMEDIATE transaction: take the write lock up front, all or nothing."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
        conn.execute("COMMIT")
    except BaseException:
        # COMMIT itself can fail (disk full): the transaction is then still open.
        if not conn.getautocommit():
            conn.execute("ROLLBACK")
        raise


@contextlib.contextmanager
def _read_tx(conn: apsw.Connection) -> Iterator[None]:
    """One read snapshot, so multi-query reads (stats, export) are consistent."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if not conn.getautocommit():
            conn.execute("COMMIT")


# --- validation helpers ------------------------------------------------------------------


def _check_text(field: str, text: str) -> None:
    kind = find_forbidden(text)
    if kind is not None:
        raise StoreContentError(
            f"the memory store refuses {field}: it looks like a {kind}", fields=(field,)
        )


def _check_scope(scope: Scope) -> Scope:
    try:
        scope = validated(scope)
    except msgspec.ValidationError as exc:
        raise StoreError(
            f"invalid scope: {exc}", code="invalid_memory", fields=(error_field(exc) or "scope",)
        ) from exc
    _check_text("gameId", scope.game_id)
    _check_text("saveId", scope.save_id)
    return scope


def _check_new_event(event: NewEvent) -> NewEvent:
    try:
        event = validated(event)
    except msgspec.ValidationError as exc:
        field = error_field(exc) or "event"
        raise StoreError(f"invalid memory: {exc}", code="invalid_memory", fields=(field,)) from exc
    _check_text("subject", event.subject)
    _check_text("summary", event.summary)
    return event


def _check_event(event: MemoryEvent) -> None:
    _check_scope(Scope(event.game_id, event.save_id))
    _check_text("subject", event.subject)
    _check_text("summary", event.summary)


def _profile_strings(name: str, value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        yield from (v for v in value if isinstance(v, str))


def _row_to_event(row: Sequence[Any]) -> MemoryEvent:
    return MemoryEvent(
        id=row[0],
        game_id=row[1],
        save_id=row[2],
        kind=row[3],
        subject=row[4],
        summary=row[5],
        importance=row[6],
        status=row[7],
        pinned=bool(row[8]),
        day=row[9],
        created_at=row[10],
        updated_at=row[11],
        last_used_at=row[12],
    )


def _create_private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (where the OS has such modes)."""
    flags = os.O_CREAT | os.O_WRONLY | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o600)
    os.close(fd)


class MemoryStore:
    """Long-term memory and play statistics of one player profile.

    Open with :meth:`open_profile` (or the constructor for an explicit path),
    call :meth:`recover_open_sessions` once at startup, :meth:`close` at exit.
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
    ) -> None:
        """Open (creating and migrating if needed) the store at ``path``.

        Args:
            path: The SQLite file.
            clock: Time source for ``exportedAt`` and profile update times.
            busy_timeout_ms: How long to wait for another process's lock.
            max_bytes: Optional size cap; writes past it fail with ``store_full``.
            gap_cap_s: The most one heartbeat gap adds to active time.
            soft_cap: Events per save before :meth:`compact_scope` merges.

        Raises:
            StoreError: The file cannot be opened or is from a newer version.
        """
        self.path = Path(path)
        self._clock = clock
        self._busy_timeout_ms = busy_timeout_ms
        self._gap_cap_s = gap_cap_s
        self.soft_cap = soft_cap
        self._closed = False
        self._lock = threading.Lock()
        self._readers: list[apsw.Connection] = []
        self._local = threading.local()
        self._queue: queue.SimpleQueue[
            tuple[Callable[[apsw.Connection], Any], Future[Any]] | None
        ] = queue.SimpleQueue()
        with _translated():
            if not self.path.exists():
                _create_private_file(self.path)
            self._writer = self._connect()
            pragma_wal(self._writer)
            pragma_max_bytes(self._writer, max_bytes)
            self._migrate(self._writer)
        self._thread = threading.Thread(
            target=self._writer_loop, name=f"memory-writer:{self.path.name}", daemon=True
        )
        self._thread.start()

    @classmethod
    def open_profile(
        cls, data_dir: str | os.PathLike[str], profile_id: str, *, clock: Clock, **options: Any
    ) -> MemoryStore:
        """Open ``<data_dir>/profiles/<profile_id>/memory-v1.sqlite``.

        Raises:
            UsageError: ``profile_id`` is not ``[A-Za-z0-9_-]{1,64}``.
        """
        if not PROFILE_ID_RE.fullmatch(profile_id):
            raise UsageError("profile id must match [A-Za-z0-9_-]{1,64}")
        folder = Path(data_dir) / "profiles" / profile_id
        try:
            folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StoreError("cannot create the profile folder") from exc
        return cls(folder / DB_FILE_NAME, clock=clock, **options)

    # --- connections ---------------------------------------------------------------------

    def _connect(self) -> apsw.Connection:
        conn = apsw.Connection(
            str(self.path), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        )
        pragma_busy_timeout(conn, self._busy_timeout_ms)
        pragma_synchronous_normal(conn)
        pragma_foreign_keys(conn)
        return conn

    @staticmethod
    def _migrate(conn: apsw.Connection) -> None:
        version = cast(int, conn.execute("PRAGMA user_version").fetchall()[0][0])
        if version > SCHEMA_VERSION:
            raise StoreError("the memory store was written by a newer xtyserver")
        for target in range(version + 1, SCHEMA_VERSION + 1):
            with _write_tx(conn):
                for statement in MIGRATIONS[target - 1]:
                    conn.execute(statement)
                conn.execute(f"PRAGMA user_version={target}")

    def _writer_loop(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                break
            fn, fut = item
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                with _translated():
                    result = fn(self._writer)
            except BaseException as exc:
                fut.set_exception(exc)
            else:
                fut.set_result(result)
        with contextlib.suppress(apsw.Error):
            self._writer.close()

    def _write(self, fn: Callable[[apsw.Connection], T]) -> T:
        """Run ``fn(writer_connection)`` on the writer thread and wait for it."""
        if threading.current_thread() is self._thread:
            raise UsageError("nested store write")
        fut: Future[T] = Future()
        with self._lock:
            if self._closed:
                raise StoreError("the memory store is closed")
            self._queue.put((fn, fut))
        return fut.result()

    def _read(self, fn: Callable[[apsw.Connection], T]) -> T:
        """Run ``fn`` on this thread's read connection inside one snapshot."""
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            with self._lock:
                if self._closed:
                    raise StoreError("the memory store is closed")
                with _translated():
                    conn = self._connect()
                self._readers.append(conn)
            self._local.conn = conn
        elif self._closed:
            raise StoreError("the memory store is closed")
        with _translated(), _read_tx(conn):
            return fn(conn)

    def close(self) -> None:
        """Finish queued writes, then close every connection. Idempotent."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(None)
        self._thread.join()
        for conn in self._readers:
            with contextlib.suppress(apsw.Error):
                conn.close()
        self._readers.clear()

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def busy_timeout_ms(self) -> int:
        """How long a write waits for another process's lock before ``store_busy``."""
        return self._busy_timeout_ms

    def set_size_limit(self, max_bytes: int | None) -> None:
        """Change the size cap (None = no cap beyond SQLite's own)."""
        self._write(lambda conn: pragma_max_bytes(conn, max_bytes))

    # --- shared profile --------------------------------------------------------------------

    def get_profile(self) -> SharedProfile:
        """The shared profile (defaults for fields never set)."""
        return self._read(self._load_profile)

    @staticmethod
    def _load_profile(conn: apsw.Connection) -> SharedProfile:
        profile = SharedProfile()
        for field, raw in conn.execute("SELECT field, value FROM shared_profile"):
            if field not in PROFILE_FIELDS:
                continue
            with contextlib.suppress(msgspec.ValidationError, msgspec.DecodeError):
                value = msgspec.json.decode(raw)
                candidate = msgspec.structs.replace(profile, **{field: value})
                profile = validated(candidate)
        return profile

    def set_profile_field(self, name: str, value: Any) -> SharedProfile:
        """Set one shared-profile field after validating it.

        Args:
            name: A ``SharedProfile`` attribute name (snake_case).
            value: The new value (a str, list[str] or bool, per the field).

        Returns:
            The updated profile.

        Raises:
            UsageError: Unknown field name.
            StoreError: code ``invalid_memory`` when the value breaks a limit.
            StoreContentError: The value carries forbidden content.
        """
        if name not in PROFILE_FIELDS:
            raise UsageError(f"unknown profile field {name!r}")
        try:
            checked = validated(msgspec.structs.replace(SharedProfile(), **{name: value}))
        except (msgspec.ValidationError, TypeError) as exc:
            raise StoreError(
                f"invalid profile field {name}: {exc}", code="invalid_memory", fields=(name,)
            ) from exc
        clean = getattr(checked, name)
        for text in _profile_strings(name, clean):
            _check_text(name, text)
        encoded = msgspec.json.encode(clean).decode()
        now = self._clock.now()

        def write(conn: apsw.Connection) -> SharedProfile:
            with _write_tx(conn):
                conn.execute(
                    "INSERT INTO shared_profile(field, value, updated_at) VALUES (?, ?, ?) "
                    "ON CONFLICT(field) DO UPDATE SET value=excluded.value, "
                    "updated_at=excluded.updated_at",
                    (name, encoded, now),
                )
                return self._load_profile(conn)

        return self._write(write)

    def clear_profile(self) -> None:
        """Reset every shared-profile field to its default."""
        self._write(lambda conn: conn.execute("DELETE FROM shared_profile"))

    # --- game memory -----------------------------------------------------------------------

    def load_scope(self, scope: Scope) -> list[MemoryEvent]:
        """Every event of one save (the scope filter is in the SQL), oldest first."""
        scope = _check_scope(scope)

        def read(conn: apsw.Connection) -> list[MemoryEvent]:
            rows = conn.execute(
                f"SELECT {_EVENT_COLUMNS} FROM game_memory "
                "WHERE game_id = ? AND save_id = ? ORDER BY id",
                (scope.game_id, scope.save_id),
            )
            return [_row_to_event(r) for r in rows]

        return self._read(read)

    def upsert_event(self, scope: Scope, event: NewEvent, now: float) -> MemoryEvent:
        """Remember ``event`` in ``scope``.

        A fact with the same scope, kind and subject updates that row in place
        (summary, importance, status, day and times), so conflicting facts never
        reach a prompt together. A pinned row stays pinned.

        Raises:
            StoreError: code ``invalid_memory`` when a field breaks its limit.
            StoreContentError: Forbidden content, naming the field.
        """
        scope = _check_scope(scope)
        event = _check_new_event(event)

        def write(conn: apsw.Connection) -> MemoryEvent:
            with _write_tx(conn):
                row = conn.execute(
                    "INSERT INTO game_memory(game_id, save_id, kind, subject, summary, "
                    "importance, status, pinned, day, created_at, updated_at, last_used_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(game_id, save_id, kind, subject) DO UPDATE SET "
                    "summary=excluded.summary, importance=excluded.importance, "
                    "status=excluded.status, pinned=max(pinned, excluded.pinned), "
                    "day=excluded.day, updated_at=excluded.updated_at "
                    f"RETURNING {_EVENT_COLUMNS}",
                    (
                        scope.game_id,
                        scope.save_id,
                        event.kind,
                        event.subject,
                        event.summary,
                        event.importance,
                        event.status,
                        int(event.pinned),
                        event.day,
                        now,
                        now,
                        now,
                    ),
                ).fetchall()
            return _row_to_event(row[0])

        return self._write(write)

    def set_pinned(self, scope: Scope, event_id: int, pinned: bool) -> bool:
        """Pin (the player asked to keep it) or unpin one event. True if it exists."""
        scope = _check_scope(scope)

        def write(conn: apsw.Connection) -> bool:
            with _write_tx(conn):
                conn.execute(
                    "UPDATE game_memory SET pinned = ? "
                    "WHERE id = ? AND game_id = ? AND save_id = ?",
                    (int(pinned), event_id, scope.game_id, scope.save_id),
                )
                return bool(conn.changes())

        return self._write(write)

    def touch(self, scope: Scope, ids: Sequence[int], now: float) -> None:
        """Mark events of ``scope`` as used at ``now`` (ids of other scopes are ignored)."""
        scope = _check_scope(scope)
        if not ids:
            return
        params = [(now, int(i), scope.game_id, scope.save_id) for i in ids]

        def write(conn: apsw.Connection) -> None:
            with _write_tx(conn):
                conn.executemany(
                    "UPDATE game_memory SET last_used_at = max(last_used_at, ?) "
                    "WHERE id = ? AND game_id = ? AND save_id = ?",
                    params,
                )

        self._write(write)

    def forget_event(self, scope: Scope, event_id: int) -> bool:
        """Delete one event of ``scope``. True if it existed."""
        scope = _check_scope(scope)

        def write(conn: apsw.Connection) -> bool:
            with _write_tx(conn):
                conn.execute(
                    "DELETE FROM game_memory WHERE id = ? AND game_id = ? AND save_id = ?",
                    (event_id, scope.game_id, scope.save_id),
                )
                return bool(conn.changes())

        return self._write(write)

    def forget_scope(self, scope: Scope) -> int:
        """Delete every event of one save (statistics stay). Returns the count."""
        scope = _check_scope(scope)

        def write(conn: apsw.Connection) -> int:
            with _write_tx(conn):
                conn.execute(
                    "DELETE FROM game_memory WHERE game_id = ? AND save_id = ?",
                    (scope.game_id, scope.save_id),
                )
                return int(conn.changes())

        return self._write(write)

    def forget_all(self) -> None:
        """Delete everything: profile, events, sessions and days, in one transaction."""

        def write(conn: apsw.Connection) -> None:
            with _write_tx(conn):
                for table in ("shared_profile", "game_memory", "play_session", "play_day"):
                    conn.execute(f"DELETE FROM {table}")

        self._write(write)

    def list_scopes(self) -> list[Scope]:
        """Every save that has memories or statistics, sorted."""

        def read(conn: apsw.Connection) -> list[Scope]:
            rows = conn.execute(
                "SELECT game_id, save_id FROM game_memory UNION "
                "SELECT game_id, save_id FROM play_session UNION "
                "SELECT game_id, save_id FROM play_day ORDER BY 1, 2"
            )
            return [Scope(g, s) for g, s in rows]

        return self._read(read)

    def compact_scope(
        self, scope: Scope, now: float, *, max_importance: int = 2, cap: int | None = None
    ) -> int:
        """Merge old low-importance events of a save past its soft cap.

        Candidates are unpinned events of importance <= ``max_importance`` that
        have ended (done/dropped) or are plain ``event`` facts; ended ones and
        the least important, least recently used go first. Active goals,
        promises and decisions and pinned events are never touched. The
        candidates fold into one digest row per kind (subject ``往事汇总·<kind>``,
        done, importance 1, day = the latest day merged), so the save drops back
        under the cap when enough candidates exist.

        Args:
            scope: The save.
            now: Epoch seconds.
            max_importance: Highest importance that may be merged.
            cap: The soft cap; defaults to the store's ``soft_cap``.

        Returns:
            How many events were merged away.
        """
        scope = _check_scope(scope)
        cap = self.soft_cap if cap is None else cap
        key = (scope.game_id, scope.save_id)

        def write(conn: apsw.Connection) -> int:
            with _write_tx(conn):
                count = conn.execute(
                    "SELECT count(*) FROM game_memory WHERE game_id = ? AND save_id = ?", key
                ).fetchall()[0][0]
                excess = cast(int, count) - cap
                if excess <= 0:
                    return 0
                rows = conn.execute(
                    f"SELECT {_EVENT_COLUMNS} FROM game_memory "
                    "WHERE game_id = ? AND save_id = ? AND pinned = 0 AND importance <= ? "
                    "AND (status != 'active' OR kind = 'event') "
                    "AND subject NOT LIKE ? || '%' "
                    "ORDER BY status = 'active', importance, max(last_used_at, updated_at), id "
                    "LIMIT ?",
                    (*key, max_importance, DIGEST_PREFIX, excess + 6),
                )
                victims = [_row_to_event(r) for r in rows]
                by_kind: dict[str, list[MemoryEvent]] = {}
                for ev in victims:
                    by_kind.setdefault(ev.kind, []).append(ev)
                for kind, evs in sorted(by_kind.items()):
                    self._merge_into_digest(conn, scope, kind, evs, now)
                conn.executemany(
                    "DELETE FROM game_memory WHERE id = ?", [(ev.id,) for ev in victims]
                )
                return len(victims)

        return self._write(write)

    @staticmethod
    def _merge_into_digest(
        conn: apsw.Connection, scope: Scope, kind: str, evs: list[MemoryEvent], now: float
    ) -> None:
        subject = f"{DIGEST_PREFIX}·{kind}"
        old = conn.execute(
            "SELECT summary, day FROM game_memory "
            "WHERE game_id = ? AND save_id = ? AND kind = ? AND subject = ?",
            (scope.game_id, scope.save_id, kind, subject),
        ).fetchall()
        parts = [cast(str, old[0][0])] if old else []
        parts.extend(ev.subject for ev in evs)
        summary = "、".join(parts)
        if len(summary) > 160:  # keep the newest names: the oldest fall off the front
            summary = "…" + summary[-159:]
        days = [ev.day for ev in evs if ev.day is not None]
        if old and old[0][1] is not None:
            days.append(int(old[0][1]))
        day = max(days) if days else None
        conn.execute(
            "INSERT INTO game_memory(game_id, save_id, kind, subject, summary, importance, "
            "status, pinned, day, created_at, updated_at, last_used_at) "
            "VALUES (?, ?, ?, ?, ?, 1, 'done', 0, ?, ?, ?, ?) "
            "ON CONFLICT(game_id, save_id, kind, subject) DO UPDATE SET "
            "summary=excluded.summary, day=excluded.day, updated_at=excluded.updated_at",
            (scope.game_id, scope.save_id, kind, subject, summary, day, now, now, now),
        )

    # --- play accounting -------------------------------------------------------------------

    def open_play_session(self, scope: Scope, now: float, tz: str) -> int:
        """Start a play session of one save and record today's play day.

        Raises:
            UsageError: ``tz`` is not a known IANA timezone.
        """
        scope = _check_scope(scope)
        date = accounting.local_date(now, tz)

        def write(conn: apsw.Connection) -> int:
            with _write_tx(conn):
                # started_at is unique per save; nudge a same-instant reopen by 1 µs.
                started = now
                while conn.execute(
                    "SELECT 1 FROM play_session WHERE game_id=? AND save_id=? AND started_at=?",
                    (scope.game_id, scope.save_id, started),
                ).fetchall():
                    started += 1e-6
                conn.execute(
                    "INSERT INTO play_session(game_id, save_id, tz, started_at, "
                    "last_heartbeat_at, active_ms) VALUES (?, ?, ?, ?, ?, 0)",
                    (scope.game_id, scope.save_id, tz, started, started),
                )
                session_id = conn.last_insert_rowid()
                self._record_day(conn, scope.game_id, scope.save_id, date)
                return int(session_id)

        return self._write(write)

    @staticmethod
    def _record_day(conn: apsw.Connection, game_id: str, save_id: str, date: str) -> None:
        conn.execute(
            "INSERT OR IGNORE INTO play_day(game_id, save_id, date) VALUES (?, ?, ?)",
            (game_id, save_id, date),
        )

    def _advance_session(self, session_id: int, now: float, tz: str | None, end: bool) -> None:
        cap = self._gap_cap_s

        def write(conn: apsw.Connection) -> None:
            with _write_tx(conn):
                rows = conn.execute(
                    "SELECT game_id, save_id, tz, last_heartbeat_at, ended_at "
                    "FROM play_session WHERE id = ?",
                    (session_id,),
                ).fetchall()
                if not rows:
                    raise UsageError(f"no play session {session_id}")
                game_id, save_id, stored_tz = (cast(str, v) for v in rows[0][:3])
                last = cast(float, rows[0][3])
                ended = rows[0][4]
                if ended is not None:
                    raise UsageError(f"play session {session_id} is closed")
                inc = accounting.heartbeat_increment_ms(last, now, gap_cap_s=cap)
                conn.execute(
                    "UPDATE play_session SET active_ms = active_ms + ?, "
                    "last_heartbeat_at = max(last_heartbeat_at, ?), ended_at = ? WHERE id = ?",
                    (inc, now, max(last, now) if end else None, session_id),
                )
                date = accounting.local_date(now, tz or stored_tz)
                self._record_day(conn, game_id, save_id, date)

        self._write(write)

    def record_heartbeat(self, session_id: int, now: float, tz: str) -> None:
        """Add the time since the previous heartbeat (gaps capped) and record the day.

        Raises:
            UsageError: Unknown or closed session, or unknown ``tz``.
        """
        accounting.timezone(tz)
        self._advance_session(session_id, now, tz, end=False)

    def close_play_session(self, session_id: int, now: float) -> None:
        """End a session: a final heartbeat at ``now``, then closed.

        Raises:
            UsageError: Unknown or already closed session.
        """
        self._advance_session(session_id, now, None, end=True)

    def recover_open_sessions(self) -> int:
        """Close sessions left open by a crash at their last heartbeat (call at startup)."""

        def write(conn: apsw.Connection) -> int:
            with _write_tx(conn):
                conn.execute(
                    "UPDATE play_session SET ended_at = last_heartbeat_at WHERE ended_at IS NULL"
                )
                return int(conn.changes())

        return self._write(write)

    def stats(self) -> PlayStats:
        """Per-save and per-game play statistics (game days = union of save dates)."""

        def read(conn: apsw.Connection) -> PlayStats:
            saves: dict[tuple[str, str], list[Any]] = {}
            for g, s, n, ms, last in conn.execute(
                "SELECT game_id, save_id, count(*), sum(active_ms), "
                "max(coalesce(ended_at, last_heartbeat_at)) FROM play_session "
                "GROUP BY game_id, save_id"
            ):
                saves[(g, s)] = [0, int(n), int(ms or 0), last]
            for g, s, d in conn.execute(
                "SELECT game_id, save_id, count(*) FROM play_day GROUP BY game_id, save_id"
            ):
                saves.setdefault((g, s), [0, 0, 0, None])[0] = int(d)
            game_days = dict(
                conn.execute("SELECT game_id, count(DISTINCT date) FROM play_day GROUP BY 1")
            )
            save_rows = [
                SavePlayStats(g, s, v[0], v[1], v[2], v[3]) for (g, s), v in sorted(saves.items())
            ]
            games: list[GamePlayStats] = []
            for game_id in sorted({g for g, _ in saves}):
                rows = [r for r in save_rows if r.game_id == game_id]
                lasts = [r.last_played for r in rows if r.last_played is not None]
                games.append(
                    GamePlayStats(
                        game_id=game_id,
                        days=int(game_days.get(game_id, 0)),
                        sessions=sum(r.sessions for r in rows),
                        active_ms=sum(r.active_ms for r in rows),
                        last_played=max(lasts) if lasts else None,
                    )
                )
            return PlayStats(games=games, saves=save_rows)

        return self._read(read)

    # --- export / import / backup --------------------------------------------------------

    def export(self) -> ExportDocument:
        """The whole store as one :class:`ExportDocument` (one consistent snapshot)."""
        now = self._clock.now()

        def read(conn: apsw.Connection) -> ExportDocument:
            events = [
                _row_to_event(r)
                for r in conn.execute(f"SELECT {_EVENT_COLUMNS} FROM game_memory ORDER BY id")
            ]
            sessions = [
                PlaySessionRecord(*r)
                for r in conn.execute(
                    "SELECT id, game_id, save_id, tz, started_at, last_heartbeat_at, ended_at, "
                    "active_ms FROM play_session ORDER BY id"
                )
            ]
            days = [
                PlayDayRecord(*r)
                for r in conn.execute(
                    "SELECT game_id, save_id, date FROM play_day ORDER BY 1, 2, 3"
                )
            ]
            return ExportDocument(
                format=FORMAT_NAME,
                version=FORMAT_VERSION,
                exported_at=now,
                profile=self._load_profile(conn),
                events=events,
                sessions=sessions,
                days=days,
            )

        return self._read(read)

    def import_document(self, doc: ExportDocument) -> None:
        """Merge an export document into this store, all or nothing.

        Profile fields in the document overwrite this store's; an event with
        the same scope, kind and subject keeps whichever copy was updated
        later; sessions (keyed by save and start time) and days already present
        are skipped, so importing twice changes nothing the second time.

        Raises:
            StoreError: code ``invalid_import`` when a value breaks a limit.
            StoreContentError: A text carries forbidden content.
        """
        try:
            doc = validated(doc)
        except msgspec.ValidationError as exc:
            raise StoreError(f"not a valid memory export: {exc}", code="invalid_import") from exc
        if doc.format != FORMAT_NAME or doc.version != FORMAT_VERSION:
            raise StoreError("unsupported memory export format", code="invalid_import")
        for name in PROFILE_FIELDS:
            for text in _profile_strings(name, getattr(doc.profile, name)):
                _check_text(name, text)
        for ev in doc.events:
            _check_event(ev)
        for scope in {Scope(r.game_id, r.save_id) for r in doc.sessions} | {
            Scope(r.game_id, r.save_id) for r in doc.days
        }:
            _check_scope(scope)
        for s in doc.sessions:
            try:
                accounting.timezone(s.tz)
            except UsageError as exc:
                raise StoreError("unknown timezone in sessions", code="invalid_import") from exc
        too_big = [s.active_ms for s in doc.sessions if s.active_ms > _SQLITE_INT_MAX]
        too_big += [e.day for e in doc.events if e.day is not None and e.day > _SQLITE_INT_MAX]
        if too_big:
            raise StoreError("a number in the export is too large", code="invalid_import")
        now = self._clock.now()

        def write(conn: apsw.Connection) -> None:
            with _write_tx(conn):
                for name in PROFILE_FIELDS:
                    conn.execute(
                        "INSERT INTO shared_profile(field, value, updated_at) VALUES (?, ?, ?) "
                        "ON CONFLICT(field) DO UPDATE SET value=excluded.value, "
                        "updated_at=excluded.updated_at",
                        (name, msgspec.json.encode(getattr(doc.profile, name)).decode(), now),
                    )
                conn.executemany(
                    "INSERT INTO game_memory(game_id, save_id, kind, subject, summary, "
                    "importance, status, pinned, day, created_at, updated_at, last_used_at) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(game_id, save_id, kind, subject) DO UPDATE SET "
                    "summary=excluded.summary, importance=excluded.importance, "
                    "status=excluded.status, pinned=excluded.pinned, day=excluded.day, "
                    "created_at=excluded.created_at, updated_at=excluded.updated_at, "
                    "last_used_at=excluded.last_used_at "
                    "WHERE excluded.updated_at > game_memory.updated_at",
                    [
                        (
                            e.game_id,
                            e.save_id,
                            e.kind,
                            e.subject,
                            e.summary,
                            e.importance,
                            e.status,
                            int(e.pinned),
                            e.day,
                            e.created_at,
                            e.updated_at,
                            e.last_used_at,
                        )
                        for e in doc.events
                    ],
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO play_session(game_id, save_id, tz, started_at, "
                    "last_heartbeat_at, ended_at, active_ms) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [
                        (
                            s.game_id,
                            s.save_id,
                            s.tz,
                            s.started_at,
                            s.last_heartbeat_at,
                            s.ended_at,
                            s.active_ms,
                        )
                        for s in doc.sessions
                    ],
                )
                conn.executemany(
                    "INSERT OR IGNORE INTO play_day(game_id, save_id, date) VALUES (?, ?, ?)",
                    [(d.game_id, d.save_id, d.date) for d in doc.days],
                )

        self._write(write)

    def backup(self, path: str | os.PathLike[str]) -> None:
        """Copy the store to ``path`` with SQLite's online backup (consistent, live)."""
        dest_path = Path(path)

        def write(conn: apsw.Connection) -> None:
            if not dest_path.exists():
                _create_private_file(dest_path)
            dest = apsw.Connection(str(dest_path))
            try:
                with dest.backup("main", conn, "main") as b:
                    while not b.done:
                        b.step(256)
            finally:
                dest.close()

        try:
            self._write(write)
        except OSError as exc:
            raise StoreError("cannot write the backup file") from exc
