"""The keys of paired mods (v1.md "Pairing"): one per install, stored as a hash only.

``<data_dir>/paired-keys.json`` (owner-only) keeps each key's id, mod, install,
times and SHA-256 (256 random bits: a plain hash is as strong); the key itself is
handed to the mod once (``pair.granted``). It is accepted wherever the token is.

A key belongs to (adapter name, game, install id): pairing again replaces only
the key of the same install, so two installs with their own stores (two Steam
accounts, two SMAPI folders) each keep theirs. A mod that sends no install id
(written before v1.md "Keys per install") has one key per (adapter name, game),
as before; an older file's keys have none.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from pathlib import Path

import msgspec

from xtyserver import log
from xtyserver.clock import Clock
from xtyserver.files import private_dir, replace_private

PAIRED_FILE = "paired-keys.json"
MAX_KEYS = 64  # paired mods kept at once; pairing one more drops the longest unused
USE_WRITE_SECONDS = 3600.0


class PairedKey(msgspec.Struct, rename="camel"):
    """One paired mod, as the page lists it (``digest`` never leaves the server)."""

    id: str
    adapter: str
    game_id: str
    paired_at: float
    digest: str
    last_used: float | None = None
    install: str | None = None  # the mod's installId; never listed on the page


def _digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


class PairedKeys:
    """The paired keys of one data folder, read at start, written on each change.

    Args:
        clock: Pairing and last-use times.
    """

    def __init__(self, data_dir: Path, clock: Clock) -> None:
        self.file = data_dir / PAIRED_FILE
        self._clock = clock
        self._log = log.get("xtyserver.pairing")
        try:
            self._keys = msgspec.json.decode(self.file.read_bytes(), type=list[PairedKey])
        except FileNotFoundError:
            self._keys = []
        except (msgspec.DecodeError, msgspec.ValidationError):
            self._log.warning("pairing.keys_unreadable", path=self.file.name)
            self._keys = []

    def listing(self) -> list[PairedKey]:
        return list(self._keys)

    def add(self, adapter: str, game_id: str, install: str | None = None) -> tuple[PairedKey, str]:
        """A new key for this install of this mod (replacing its older one): the record, the key."""
        key = secrets.token_urlsafe(32)
        record = PairedKey(
            id=secrets.token_hex(8),
            adapter=adapter,
            game_id=game_id,
            paired_at=self._clock.now(),
            digest=_digest(key),
            install=install,
        )
        same = (adapter, game_id, install)
        kept = [k for k in self._keys if (k.adapter, k.game_id, k.install) != same]
        kept.sort(key=lambda k: k.last_used or k.paired_at)
        self._keys = [*kept[-(MAX_KEYS - 1) :], record]
        self._write()
        self._log.info("pairing.paired", adapter=adapter, game=game_id, key_id=record.id)
        return record, key

    def check(self, key: str) -> PairedKey | None:
        """The paired mod whose key ``key`` is (compared in constant time), or None."""
        digest = _digest(key)
        found = None
        for record in self._keys:
            if hmac.compare_digest(record.digest, digest):
                found = record
        return found

    def used(self, record: PairedKey) -> None:
        """Note a use; written at most once an hour per key (a hello must not wait on a disk)."""
        now = self._clock.now()
        written = record.last_used
        record.last_used = now
        if written is None or now - written >= USE_WRITE_SECONDS:
            self._write()

    def revoke(self, key_id: str) -> PairedKey | None:
        """Forget one key; the record, or None when there was none."""
        found = next((k for k in self._keys if k.id == key_id), None)
        if found is not None:
            self._keys = [k for k in self._keys if k is not found]
            self._write()
            self._log.info("pairing.revoked", adapter=found.adapter, key_id=key_id)
        return found

    def _write(self) -> None:
        private_dir(self.file.parent)
        replace_private(self.file, msgspec.json.encode(self._keys))
