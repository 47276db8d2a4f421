"""WebSocket messages as bytes: a text message's UTF-8 checked without building a str.

A shell. The codec wants a message's bytes, and decoding a 1.6 MB screenshot
frame with Chinese text into a ``str`` only to encode it again costs a 3.2 MB
string (``scripts/bench/image_turn_steps.py``); invalid UTF-8 ends the
connection with 1007 and websockets' own reason text (v1.md "Transport").
"""

from __future__ import annotations

import codecs
from typing import Final

__all__ = ["CHUNK_BYTES", "Message", "utf8_error", "valid_utf8"]

Message = tuple[bytes, bool]
"""One received message: its payload and whether it came as a text message."""

CHUNK_BYTES: Final = 64 * 1024
"""A large message's UTF-8 is checked in slices of this size: each decoded slice
is a small string the allocator reuses, never a megabyte one."""

_UTF8 = codecs.getincrementaldecoder("utf-8")


def valid_utf8(data: bytes) -> bool:
    """Whether ``data`` is strict UTF-8 (no surrogates, no overlong forms), as ``bytes.decode()``.

    ASCII (most frames) is one pass that builds nothing; otherwise the incremental
    decoder checks slice by slice and the text is thrown away.
    """
    if data.isascii():
        return True
    if len(data) <= CHUNK_BYTES:
        return utf8_error(data) is None
    decoder = _UTF8()
    view = memoryview(data)
    try:
        for start in range(0, len(data), CHUNK_BYTES):
            decoder.decode(view[start : start + CHUNK_BYTES])
        decoder.decode(b"", True)
    except UnicodeDecodeError:
        return False
    return True


def utf8_error(data: bytes) -> UnicodeDecodeError | None:
    """The error ``data.decode()`` raises, or None when ``data`` is UTF-8."""
    try:
        data.decode()
    except UnicodeDecodeError as exc:
        return exc
    return None
