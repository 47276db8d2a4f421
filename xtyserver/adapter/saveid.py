"""An opaque, stable ``saveId`` from the save's own features (v1.md "Identity").

``derive_save_id(features, salt)`` is HMAC-SHA256 keyed with a per-install
random salt (kept beside the adapter's config, never sent) over the save
features the adapter names, and the first 16 bytes of the digest in lowercase
base32 without padding: 26 characters of ``a-z2-7``, which pass the
``saveId`` pattern. The same save gives the same id across restarts; nothing
of the features can be read back from it.

The message is canonical so that the C# and Lua adapters compute the same id:
the features sorted by key (code point order), each written as
``key`` U+001F ``value`` U+001E, all UTF-8.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Mapping

SAVE_ID_CHARS = 26


def new_salt() -> str:
    """A fresh per-install salt: 32 lowercase hex characters (keep it in the mod's config)."""
    return secrets.token_hex(16)


def save_id_message(features: Mapping[str, str]) -> bytes:
    """The canonical bytes hashed for ``features``."""
    return "".join(f"{key}\x1f{features[key]}\x1e" for key in sorted(features)).encode("utf-8")


def derive_save_id(features: Mapping[str, str], salt: str) -> str:
    """The saveId of a save, e.g. ``{"farm": "Sunny", "created": "1714700000", "seed": "42"}``.

    ``features`` are stable features of the save (farm name, creation time, seed,
    DST's session id, ONI's colony name and seed), never a path, a user name or an
    account id; ``salt`` is the install's (:func:`new_salt`).
    """
    if not features or not salt:
        raise ValueError("derive_save_id needs at least one feature and a salt")
    digest = hmac.new(salt.encode("utf-8"), save_id_message(features), hashlib.sha256).digest()
    return base64.b32encode(digest[:16]).decode("ascii").rstrip("=").lower()
