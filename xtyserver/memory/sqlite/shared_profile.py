"""The ``shared_profile`` table: one row per set field, the value as JSON."""

from __future__ import annotations

import contextlib
from typing import Any

import apsw
import msgspec

from xtyserver.memory.types import PROFILE_FIELDS, SharedProfile, validated

# The player's "form shared memory automatically" choice is a setting, not a memory:
# forgetting the profile must not silently switch background extraction back on.
KEPT_ON_CLEAR = "auto_shared"

_UPSERT = (
    "INSERT INTO shared_profile(field, value, updated_at) VALUES (?, ?, ?) "
    "ON CONFLICT(field) DO UPDATE SET value=excluded.value, updated_at=excluded.updated_at"
)


def load(conn: apsw.Connection) -> SharedProfile:
    """The shared profile; a field never set, unknown or unreadable has its default."""
    profile = SharedProfile()
    for field, raw in conn.execute("SELECT field, value FROM shared_profile"):
        if field not in PROFILE_FIELDS:
            continue
        # One damaged field must not cost the player the whole profile.
        with contextlib.suppress(msgspec.ValidationError, msgspec.DecodeError):
            value = msgspec.json.decode(raw)
            profile = validated(msgspec.structs.replace(profile, **{field: value}))
    return profile


def set_field(conn: apsw.Connection, name: str, value: Any, now: float) -> None:
    """Store one (already checked) field value."""
    conn.execute(_UPSERT, (name, msgspec.json.encode(value).decode(), now))


def set_all(conn: apsw.Connection, profile: SharedProfile, now: float) -> None:
    """Store every field of ``profile`` (an import)."""
    conn.executemany(
        _UPSERT,
        [
            (name, msgspec.json.encode(getattr(profile, name)).decode(), now)
            for name in PROFILE_FIELDS
        ],
    )


def cleared_fields(profile: SharedProfile) -> dict[str, Any]:
    """The fields of ``profile`` a clear would empty that hold a value."""
    return {
        name: getattr(profile, name)
        for name in PROFILE_FIELDS
        if name != KEPT_ON_CLEAR and getattr(profile, name)
    }


def clear(conn: apsw.Connection) -> None:
    """Reset every field to its default, except the ``autoShared`` setting."""
    conn.execute("DELETE FROM shared_profile WHERE field != ?", (KEPT_ON_CLEAR,))
