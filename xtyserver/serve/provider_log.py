"""Which provider the stored key belongs to, and the log of provider changes.

The stored key is sent only to the origin (:func:`xtyserver.model.routing.origin`)
of the chat base URL it was saved with. Each change of an origin and each key
saved or forgotten is kept in ``<data_dir>/provider.json`` (owner-only, the last
:data:`MAX_CHANGES`) and logged: origins only, never a key, path or user part.
A key from the environment or the TOML is bound the same way (by its SHA-256).
"""

from __future__ import annotations

import hashlib
import hmac
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import msgspec

from xtyserver import log
from xtyserver.files import private_dir, replace_private

PROVIDER_FILE = "provider.json"
MAX_CHANGES = 20

What = Literal["base_url", "key_saved", "key_cleared", "key_adopted"]


class ProviderChange(msgspec.Struct, frozen=True, rename="camel"):
    """One change of the provider or its key, as the page shows it.

    Attributes:
        what: ``base_url`` (a base URL now names another origin), ``key_saved``,
            ``key_cleared``, or ``key_adopted`` (a key stored before keys had an
            origin, bound to the provider it was in use with).
        setting: The dotted setting of a ``base_url`` change ("" otherwise).
        before: The origin before ("" for none).
        after: The origin after ("" for none).
    """

    at: float
    what: What
    setting: str = ""
    before: str = ""
    after: str = ""


class _Pinned(msgspec.Struct, rename="camel"):
    digest: str
    origin: str


class _Record(msgspec.Struct, rename="camel"):
    key_origin: str | None = None
    changes: list[ProviderChange] = msgspec.field(default_factory=list)
    pinned: _Pinned | None = None


class ProviderBook:
    """The key's origin and the provider changes of one data folder.

    Args:
        clock: Epoch seconds for each change.
    """

    def __init__(self, data_dir: Path, clock: Callable[[], float] = time.time) -> None:
        self.file = data_dir / PROVIDER_FILE
        self._clock = clock
        self._log = log.get("xtyserver.keys")

    def _read(self) -> _Record:
        try:
            return msgspec.json.decode(self.file.read_bytes(), type=_Record)
        except (FileNotFoundError, msgspec.DecodeError, msgspec.ValidationError):
            return _Record()

    def key_origin(self) -> str | None:
        """The origin the stored key was saved for; None when none is recorded."""
        return self._read().key_origin

    def changes(self) -> list[ProviderChange]:
        """The recorded changes, newest last."""
        return self._read().changes

    def bind_key(self, origin: str, what: What = "key_saved") -> None:
        """Record that the stored key is now ``origin``'s."""
        record = self._read()
        before = record.key_origin or ""
        record.key_origin = origin
        self._write(record, ProviderChange(self._clock(), what, "", before, origin))

    def pinned_key_goes_to(self, key: str, here: str) -> bool:
        """Whether a key from the environment or the TOML is ``here``'s provider's.

        Such a key is bound to the origin it was first used with, like a stored
        one; a different key (the player changed it) is bound afresh.
        """
        if not here:
            return False
        record = self._read()
        digest = hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()
        if record.pinned is None or not hmac.compare_digest(record.pinned.digest, digest):
            before = record.pinned.origin if record.pinned is not None else ""
            record.pinned = _Pinned(digest, here)
            self._write(record, ProviderChange(self._clock(), "key_adopted", "", before, here))
            return True
        return record.pinned.origin == here

    def unbind_key(self) -> None:
        record = self._read()
        before, record.key_origin = record.key_origin or "", None
        self._write(record, ProviderChange(self._clock(), "key_cleared", "", before, ""))

    def note_origins(self, before: dict[str, str], after: dict[str, str]) -> None:
        """Record each base URL setting whose origin changed (dotted key -> origin)."""
        record = self._read()
        moved = [
            ProviderChange(self._clock(), "base_url", k, before.get(k, ""), after.get(k, ""))
            for k in sorted(set(before) | set(after))
            if before.get(k, "") != after.get(k, "")
        ]
        if moved:
            self._write(record, *moved)

    def _write(self, record: _Record, *changes: ProviderChange) -> None:
        for change in changes:
            self._log.info(
                "provider.changed",
                what=change.what,
                setting=change.setting,
                before=change.before,
                after=change.after,
            )
        record.changes = [*record.changes, *changes][-MAX_CHANGES:]
        private_dir(self.file.parent)
        replace_private(self.file, msgspec.json.encode(record))
