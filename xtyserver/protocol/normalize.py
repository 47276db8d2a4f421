"""Unicode normalisation of text before it is checked or stored.

Minimal version: NFKC folds compatibility forms (full-width ``ｆｉｓｈ`` becomes
``fish``), then format characters are dropped (zero-width spaces and joiners,
bidi controls, the soft hyphen), so a hidden character cannot split an account
id or a path past :func:`~xtyserver.protocol.forbidden.find_forbidden`.
"""

from __future__ import annotations

import unicodedata

__all__ = ["normalize"]

_SOFT_HYPHEN = "\u00ad"


def normalize(text: str) -> str:
    """``text`` in NFKC with every format character (category Cf) removed."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in folded if ch != _SOFT_HYPHEN and unicodedata.category(ch) != "Cf")
