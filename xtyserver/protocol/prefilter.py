"""A cheap, sound pre-check of every string in a msgspec-encoded JSON document.

:func:`strings_clean` answers "could any string value in this encoding hold
forbidden content?" with a handful of C-speed byte operations on the encoding
as a whole, instead of walking the document and running
:func:`~xtyserver.protocol.forbidden.find_forbidden` once per string. It may
say False for a clean document (the caller then runs the exact per-string
check); it never says True when some string would be refused.

Why it is sound. It only answers True for an encoding that is plain: no
backslash (so no string holds a quote, a backslash or a control character,
and every ``"`` is a string delimiter), no DEL, and nothing outside printable
ASCII but the inert characters of :func:`~xtyserver.protocol.normalize.is_plain`
(kana, Hangul, CJK), so every string is already in normal form, its only
whitespace is the space and case-insensitive matching is plain ASCII. For such
text every alternative of the forbidden-content pattern needs one of these
inside a string (see ``forbidden.py``; listed per kind in the tests):

- one of ``\\ / % $ ~ @ _ =`` (paths, e-mail, Steam ``STEAM_``, key=value, ...);
- a colon after a character other than a digit or a quote (drive letters,
  ``[U:1:...]``, ``ERROR:``, ``key: value``, ``stack traceback:``), or a time
  with seconds ``:12:`` (log lines);
- a hyphen after a letter (``sk-``, ``xoxb-``, ``glpat-``), ``--`` (PEM) or
  `` - `` (``ERROR - ``);
- a bracketed log level ``[ERROR]``, ``[INF]``;
- a literal: ``7656119``, the AWS and Google key prefixes, ``eyJ``,
  ``bearer``, ``pid``, ``process``, ``steam`` (``steamid64:...``, whose colon
  follows a digit), ``进程``, ``at `` (.NET/Java frames).

The JSON syntax of a compact msgspec encoding contains none of these (a
structural colon always follows a quote, a structural bracket is followed by
a value, numbers have no letter before their minus), so only strings can set
them off; keys are the protocol's camelCase names, which contain none either.
"""

from __future__ import annotations

import re
from typing import Final

from xtyserver.protocol.normalize import is_plain

__all__ = ["strings_clean"]

_SPECIAL: Final = b"\\/%$~@_="
_LITERALS: Final = (b"7656119", b"eyJ", b"at ")
# Checked only when the encoding has an "A" (none of the keys has one).
_A_LITERALS: Final = (
    b"AKIA",
    b"ASIA",
    b"AGPA",
    b"AIDA",
    b"AROA",
    b"ANPA",
    b"ANVA",
    b"AIPA",
    b"AIza",
)
_LOWER_LITERALS: Final = (b"bearer", b"pid", b"process", b"steam")
_PROCESS_ZH: Final = "进程".encode()
_COLON: Final[re.Pattern[bytes]] = re.compile(rb":(?:(?<![0-9\"]:)|[0-9]{2}:)")
_HYPHEN: Final[re.Pattern[bytes]] = re.compile(rb"-(?:(?<=[A-Za-z]-)|-|(?<= -) )")
_LEVEL: Final[re.Pattern[bytes]] = re.compile(
    rb"\[(?i:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|CRITICAL|FATAL|SEVERE|ALERT|EMERG"
    rb"|ERR|CRIT|INF|WRN|DBG|FTL|VRB|EXCEPTION)\]"
)


def strings_clean(encoded: bytes, *, skip_key: bytes | None = None) -> bool:
    """Whether no string in ``encoded`` can hold forbidden content (see the module).

    Args:
        encoded: A compact JSON document as msgspec encodes it.
        skip_key: A key whose one string value is not free text (a checked
            timestamp such as ``capturedAt``) and is left out.

    Returns:
        True only when every string is certainly clean; False means "run the
        exact check", not "forbidden".
    """
    if b"\\" in encoded or b"\x7f" in encoded:
        return False
    if not encoded.isascii() and (
        not is_plain(encoded.decode("utf-8", "replace")) or _PROCESS_ZH in encoded
    ):
        return False
    if skip_key is not None:
        start = encoded.find(b'"' + skip_key + b'":"')
        if start >= 0:
            end = encoded.find(b'"', start + len(skip_key) + 4)
            encoded = encoded[:start] + encoded[end + 1 :]
    if len(encoded.translate(None, _SPECIAL)) != len(encoded):
        return False
    for literal in _LITERALS:
        if literal in encoded:
            return False
    if b"A" in encoded:
        for literal in _A_LITERALS:
            if literal in encoded:
                return False
    lower = encoded.lower()
    for literal in _LOWER_LITERALS:
        if literal in lower:
            return False
    return (
        _COLON.search(encoded) is None
        and _HYPHEN.search(encoded) is None
        and (b"[" not in encoded or _LEVEL.search(encoded) is None)
    )
