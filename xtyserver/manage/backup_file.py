"""A ``xtyserver memory backup`` file brought to the page's 导入: its export document.

The page's 导入 takes either file a player keeps: the 导出全部 JSON, or the
``.sqlite`` copy ``xtyserver memory backup`` writes. The copy is written to a
private scratch file beside the store, opened as a store of its own (a backup
of an older version is migrated there, a newer one refused), exported and
deleted; the document is then imported like the JSON one, so the two doors
merge the same way and nothing in the live store is replaced.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

import msgspec

from xtyserver.clock import Clock
from xtyserver.errors import StoreError
from xtyserver.memory.export import ExportDocument
from xtyserver.memory.sqlite.store import MemoryStore

SQLITE_MAGIC = b"SQLite format 3\x00"


class BackupBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``POST /ui/api/import`` with a backup: ``{"backup": "<its bytes, base64>"}``."""

    backup: bytes


def backup_bytes(body: bytes) -> bytes:
    """The backup's bytes when ``body`` is a :class:`BackupBody`, else ``body`` itself
    (an export document: its first key is no ``backup``, so this stops there)."""
    try:
        return msgspec.json.decode(body, type=BackupBody).backup
    except msgspec.MsgspecError:
        return body


def is_backup(body: bytes) -> bool:
    """Whether ``body`` is an SQLite file (what ``memory backup`` writes)."""
    return body.startswith(SQLITE_MAGIC)


def backup_document(body: bytes, folder: Path, clock: Clock) -> ExportDocument:
    """The export document of the backup ``body``; the scratch file is gone after.

    Raises:
        StoreError: Not a store of this program, a newer version, or unreadable.
    """
    scratch = folder / f".import-{secrets.token_hex(8)}.sqlite"
    try:
        fd = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(body)
        with MemoryStore(scratch, clock=clock) as store:
            return store.export()
    except OSError as exc:
        raise StoreError("the backup could not be read", code="invalid_import") from exc
    finally:
        for leftover in (scratch, *(Path(f"{scratch}{s}") for s in ("-wal", "-shm", "-journal"))):
            with contextlib.suppress(OSError):
                leftover.unlink()
