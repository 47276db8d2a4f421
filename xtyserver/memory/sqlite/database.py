"""The SQLite file behind the memory store: connections, pragmas, migrations, transactions.

Threading model: ONE writer connection guarded by a lock. A write runs
``fn(writer)`` on the calling thread while it holds that lock, inside one
``BEGIN IMMEDIATE`` transaction, so writes are serialized and an async caller
pays exactly one thread hop. Reads use one read connection per calling thread
(WAL lets them run beside the writer); ``read(fn, wait=False)`` uses a second
one that never waits for another connection's lock (``store_busy`` at once
instead): small enough for an event loop's thread.

No raw apsw exception leaves this module: disk full becomes
``StoreError(code="store_full")``, an exhausted busy timeout ``store_busy``,
anything else ``store_error``.
"""

from __future__ import annotations

import contextlib
import os
import threading
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TypeVar, cast

import apsw

from xtyserver.errors import StoreError, UsageError, XtyError
from xtyserver.memory.sqlite.schema import MIGRATIONS, SCHEMA_VERSION

T = TypeVar("T")

# How long a write waits for another process's lock before ``store_busy``:
# long enough for a backup or a sqlite3 shell to finish a step, short enough
# that a stuck holder (held 30 s) gives a handled error rather than a hang.
DEFAULT_BUSY_TIMEOUT_MS = 5000
_MAX_PAGE_COUNT = 4_294_967_294


def pragma_max_bytes(conn: apsw.Connection, max_bytes: int | None) -> None:
    """Cap the database size (``store_full`` past it); None restores SQLite's maximum."""
    pages = _MAX_PAGE_COUNT
    if max_bytes is not None:
        row = conn.execute("PRAGMA page_size").fetchone()
        pages = max(1, max_bytes // (int(row[0]) if row else 4096))
    # A pragma takes no bindings; ``pages`` is an int computed here.
    conn.execute(f"PRAGMA max_page_count={int(pages)}").fetchall()


# --- migrations ----------------------------------------------------------------------------


def migrate(conn: apsw.Connection) -> None:
    """Bring the schema to ``SCHEMA_VERSION``, one transaction per step.

    Raises:
        StoreError: The file was written by a newer schema.
    """
    version = cast(int, conn.execute("PRAGMA user_version").fetchall()[0][0])
    if version > SCHEMA_VERSION:
        raise StoreError("the memory store was written by a newer xtyserver")
    for target in range(version + 1, SCHEMA_VERSION + 1):
        with write_tx(conn):
            for statement in MIGRATIONS[target - 1]:
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version={int(target)}")


# --- errors and transactions -------------------------------------------------------------


@contextlib.contextmanager
def translated() -> Iterator[None]:
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
def write_tx(conn: apsw.Connection) -> Iterator[None]:
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
def read_tx(conn: apsw.Connection) -> Iterator[None]:
    """One read snapshot, so multi-query reads (stats, export) are consistent."""
    conn.execute("BEGIN")
    try:
        yield
    finally:
        if not conn.getautocommit():
            conn.execute("COMMIT")


def create_private_file(path: Path) -> None:
    """Create ``path`` readable by its owner only (where the OS has such modes)."""
    flags = os.O_CREAT | os.O_WRONLY | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags, 0o600)
    os.close(fd)


class _Reader:
    """One thread's read connection; its lock lets :meth:`Database.close` wait for a read.

    Only its thread's ``threading.local`` holds it strongly. When the thread
    ends (anyio retires a worker thread after 10 s idle, and a player's turns
    are often further apart), the reader is dropped and its connection closed:
    a long session does not keep a connection, its page cache and two file
    descriptors for every worker thread it ever had.
    """

    def __init__(self, conn: apsw.Connection) -> None:
        self.conn = conn
        self.lock = threading.Lock()
        self.busy = False  # only its own thread sets it: a reader is thread-local
        weakref.finalize(self, _close_quietly, conn)


def _close_quietly(conn: apsw.Connection) -> None:
    with contextlib.suppress(apsw.Error):
        conn.close()


class Database:
    """One SQLite file: a locked writer connection and per-thread readers.

    Attributes:
        snapshots: Read snapshots taken since opening (what a view costs, measured).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS,
        max_bytes: int | None = None,
    ) -> None:
        """Open (creating privately and migrating if needed) the file at ``path``.

        Raises:
            StoreError: The file cannot be opened or is from a newer version.
        """
        self.path = Path(path)
        self.snapshots = 0
        self._busy_timeout_ms = busy_timeout_ms
        self._closed = False
        self._write_lock = threading.Lock()
        self._writing_thread: int | None = None
        self._readers_lock = threading.Lock()
        self._readers: weakref.WeakSet[_Reader] = weakref.WeakSet()
        self._local = threading.local()
        with translated():
            if not self.path.exists():
                create_private_file(self.path)
            self._writer = self._connect()
            try:
                # Write-ahead log: readers never block the writer and vice versa.
                self._writer.execute("PRAGMA journal_mode=WAL").fetchall()
                pragma_max_bytes(self._writer, max_bytes)
                migrate(self._writer)
            except BaseException:
                self._writer.close()
                raise

    def __enter__(self) -> Database:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def busy_timeout_ms(self) -> int:
        """How long a write waits for another process's lock before ``store_busy``."""
        return self._busy_timeout_ms

    def _connect(self, busy_timeout_ms: int | None = None) -> apsw.Connection:
        conn = apsw.Connection(
            str(self.path), flags=apsw.SQLITE_OPEN_READWRITE | apsw.SQLITE_OPEN_CREATE
        )
        conn.set_busy_timeout(self._busy_timeout_ms if busy_timeout_ms is None else busy_timeout_ms)
        # NORMAL is durable across process crashes in WAL mode and much faster than FULL.
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def write(self, fn: Callable[[apsw.Connection], T]) -> T:
        """Run ``fn(writer)`` on this thread inside one ``BEGIN IMMEDIATE`` transaction.

        Raises:
            UsageError: Called from inside a write on the same thread.
            StoreError: The store is closed, busy, full or failed.
        """
        return self._with_writer(fn, transaction=True)

    def maintain(self, fn: Callable[[apsw.Connection], T]) -> T:
        """Run ``fn(writer)`` holding the write lock but outside a transaction (pragmas, backup)."""
        return self._with_writer(fn, transaction=False)

    def _with_writer(self, fn: Callable[[apsw.Connection], T], *, transaction: bool) -> T:
        me = threading.get_ident()
        # Only this thread can have stored its own id here, so reading it unlocked is
        # safe; checking before the (non-reentrant) lock turns a deadlock into an error.
        if self._writing_thread == me:
            raise UsageError("nested store write")
        with self._write_lock:
            if self._closed:
                raise StoreError("the memory store is closed")
            self._writing_thread = me
            try:
                with translated():
                    if not transaction:
                        return fn(self._writer)
                    with write_tx(self._writer):
                        return fn(self._writer)
            finally:
                self._writing_thread = None

    def read(self, fn: Callable[[apsw.Connection], T], *, wait: bool = True) -> T:
        """Run ``fn`` on this thread's read connection inside one snapshot.

        Args:
            wait: False: never wait for another connection's lock (WAL readers
                seldom need to; then ``store_busy`` at once).

        Raises:
            UsageError: Called from inside a read on the same thread.
            StoreError: The store is closed, busy or failed.
        """
        slot = "reader" if wait else "quick_reader"
        reader: _Reader | None = getattr(self._local, slot, None)
        if reader is not None and reader.busy:
            raise UsageError("nested store read")
        if reader is None:
            with self._readers_lock:
                if self._closed:
                    raise StoreError("the memory store is closed")
                with translated():
                    reader = _Reader(self._connect(None if wait else 0))
                self._readers.add(reader)
            setattr(self._local, slot, reader)
        with reader.lock:
            if self._closed:
                raise StoreError("the memory store is closed")
            reader.busy = True
            self.snapshots += 1
            try:
                with translated(), read_tx(reader.conn):
                    return fn(reader.conn)
            finally:
                reader.busy = False

    def set_size_limit(self, max_bytes: int | None) -> None:
        """Change the size cap (None = no cap beyond SQLite's own)."""
        self.maintain(lambda conn: pragma_max_bytes(conn, max_bytes))

    def close(self) -> None:
        """Wait for the running write and reads, then close every connection. Idempotent.

        Raises:
            UsageError: Called from inside a write or read (it would wait for itself).
        """
        own: _Reader | None = getattr(self._local, "reader", None)
        if self._writing_thread == threading.get_ident() or (own is not None and own.busy):
            raise UsageError("closing the store inside a write or read")
        with self._write_lock:
            if self._closed:
                return
            # Set under the readers lock too, so no reader is added after the sweep below.
            with self._readers_lock:
                self._closed = True
            with contextlib.suppress(apsw.Error):
                self._writer.close()
        with self._readers_lock:
            readers = list(self._readers)
        for reader in readers:
            with reader.lock, contextlib.suppress(apsw.Error):
                reader.conn.close()
        self._readers.clear()
