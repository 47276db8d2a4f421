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

- one of ``\\ / % $ ~ @ _ = < >`` (paths, e-mail, Steam ``STEAM_``, key=value,
  ``<at>``, an Explorer address ``此电脑 > 用户 > 张伟``, ...);
- a colon after a character other than a digit or a quote (drive letters,
  ``[U:1:...]``, ``ERROR:``, ``key: value``, ``stack traceback:``), or a time
  with seconds ``:12:`` (log lines);
- a hyphen after a letter (``sk-``, ``xoxb-``, ``glpat-``), ``--`` (PEM) or
  `` - `` (``ERROR - ``);
- a bracketed log level ``[ERROR]``, ``[INF]``;
- a literal: ``7656`` (also with its digits joined), the AWS and Google key
  prefixes, ``eyJ`` (so a ``J``), ``bearer``, ``pid``, ``process``, ``steam``
  (``steamid64:...``, whose colon follows a digit), ``qq``, ``wx``,
  ``wechat``, ``weixin``, ``进程``, ``微信``, ``扣扣``, ``at `` together with
  ``(`` (.NET/Java frames need both), a bracketed ``at`` or ``dot``;
- eleven digits or more, groups joined by up to two spaces, dashes or dots
  (Steam ids, phone and id card numbers), an IPv4 address's three dots
  between digits, or a base64 run of 16 characters.

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

_SPECIAL: Final = b"\\/%$~@_=<>\x7f"
# One search: a pattern with a literal first byte is scanned for that byte at
# C speed, where nine substring searches would each walk the whole encoding.
_A_LITERALS: Final[re.Pattern[bytes]] = re.compile(rb"A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|Iza)")
# Lower case for the case-blind literals; ] and } as ) for a spelled "(at)",
# whose closing bracket follows its "at" directly (in JSON a string's last
# letter is followed by a quote, never by a bracket).
_TO_LOWER: Final = bytes.maketrans(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZ]}", b"abcdefghijklmnopqrstuvwxyz))"
)
_LOWER_LITERALS: Final = (b"bearer", b"pid", b"process", b"steam", b"wechat")
_CJK_LITERALS: Final = tuple(word.encode() for word in ("进程", "微信", "扣扣"))
# Digit runs, Steam ids, IPv4 addresses and base64 runs are found on shapes of
# the encoding made by bytes.translate, then substring searches: both run at C
# speed, where a pattern starting with a character class is tried at every
# position (several microseconds for a 1 KB encoding). Joins (spaces, dashes,
# dots) are deleted whatever their number, which only makes a check stricter.
_JOINS: Final = b" .-"
_DIGIT_SHAPE: Final = bytes(
    0x30 if 0x30 <= b <= 0x39 else 0x2E if b == 0x2E else 0x78 for b in range(256)
)
_ELEVEN_DIGITS: Final = b"0" * 11
# An IPv4 address a.b.c.d holds "0." then one to three digits then "." (a
# pattern with a literal start is scanned for that literal quickly).
_IPV4_SHAPE: Final[re.Pattern[bytes]] = re.compile(rb"0\.0{1,3}\.")
_BASE64_SHAPE: Final = bytes(
    0x61 if chr(b).isascii() and (chr(b).isalnum() or b == 0x2B) else 0x2E for b in range(256)
)
_BASE64_RUN: Final = b"a" * 16
_SPELLED_AT: Final = (b"at)", b"at )", b"dot)", b"dot )")

_COLON: Final[re.Pattern[bytes]] = re.compile(rb":(?:(?<![0-9\"]:)|[0-9]{2}:)")
_HYPHEN: Final[re.Pattern[bytes]] = re.compile(rb"-(?:(?<=[A-Za-z]-)|-|(?<= -) )")
# A JSON array opens with "[" followed by a value, never by a letter.
_LETTER_AFTER_BRACKET: Final[re.Pattern[bytes]] = re.compile(rb"\[[A-Za-z]")
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
    # One pass deletes every special byte, the backslash and DEL included (a
    # capturedAt value, left out below, never holds any of them), and lowers
    # the case for the case-blind literals below.
    lower = encoded.translate(_TO_LOWER, _SPECIAL)
    if len(lower) != len(encoded):
        return False
    if not encoded.isascii() and (
        not is_plain(encoded.decode("utf-8", "replace"))
        or any(word in encoded for word in _CJK_LITERALS)
    ):
        return False
    if skip_key is not None:
        start = encoded.find(b'"' + skip_key + b'":"')
        if start >= 0:
            end = encoded.find(b'"', start + len(skip_key) + 4)
            encoded = encoded[:start] + encoded[end + 1 :]
    if _A_LITERALS.search(encoded) is not None:
        return False
    # Four digits in a row (joins deleted) before the costlier searches: a
    # split Steam id's first half and every longer number have them.
    joined = encoded.translate(None, _JOINS)
    digits = joined.translate(_DIGIT_SHAPE)
    if b"0000" in digits and (b"7656" in joined or _ELEVEN_DIGITS in digits):
        return False
    if _IPV4_SHAPE.search(encoded.translate(_DIGIT_SHAPE)) is not None:
        return False
    if _BASE64_RUN in encoded.translate(_BASE64_SHAPE):
        return False
    # A JWT needs "eyJ" and a .NET/Java frame "at " and parentheses: a byte
    # search (memchr) for the rarer "J" and "(" spares most encodings the
    # slower substring search.
    if b"J" in encoded and b"eyJ" in encoded:
        return False
    if b"(" in encoded and b"at " in encoded:
        return False
    for literal in _LOWER_LITERALS:
        if literal in lower:
            return False
    # One-byte searches (memchr) first: q and x are rare, "t)" rarer still.
    if b"q" in lower and b"qq" in lower:
        return False
    if b"x" in lower and (b"wx" in lower or b"weixin" in lower):
        return False
    if b"t)" in lower and any(spelled in lower for spelled in _SPELLED_AT):
        return False
    return (
        _COLON.search(encoded) is None
        and _HYPHEN.search(encoded) is None
        and (_LETTER_AFTER_BRACKET.search(encoded) is None or _LEVEL.search(encoded) is None)
    )
