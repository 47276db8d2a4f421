"""WebSocket messages as bytes: a text message's UTF-8 checked without building a str.

A shell (issue 22, screenshots). websockets decodes every text message into a
``str``; the codec wants the bytes (its error positions are byte positions) and
encoded the ``str`` straight back. For a 1.6 MB screenshot frame with Chinese
text that is a 3.2 MB UCS-2 string and a 1.6 MB re-encoding: about 3 ms of
CPU and 1,200 page faults a turn on the benchmark machine
(``scripts/bench/image_turn_steps.py``). So
:class:`BytesConnection` receives with ``recv(decode=False)``, notes each
message's opcode as its first frame arrives (``recv(decode=False)`` alone
cannot tell text from binary), and checks a text message's UTF-8 itself
(:func:`valid_utf8`); a message that is not valid UTF-8 still ends the
connection with 1007, as websockets' own decoding would (v1.md "Transport"),
with the same reason text.
"""

from __future__ import annotations

import codecs
from collections import deque
from collections.abc import AsyncIterator
from typing import Any, Final

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosedOK
from websockets.frames import CloseCode, Frame, Opcode

__all__ = ["CHUNK_BYTES", "BytesConnection", "Message", "utf8_error", "valid_utf8"]

Message = tuple[bytes, bool]
"""One received message: its payload and whether it came as a text message."""

CHUNK_BYTES: Final = 64 * 1024
"""A large message's UTF-8 is checked in slices of this size: each decoded slice
is a small string the allocator reuses, never a megabyte one."""

_UTF8 = codecs.getincrementaldecoder("utf-8")


def valid_utf8(data: bytes) -> bool:
    """Whether ``data`` is strict UTF-8 (no surrogates, no overlong forms), as ``bytes.decode()``.

    ASCII (every state.update, most frames) is one pass that builds nothing.
    Otherwise the bytes are decoded slice by slice by the incremental decoder
    (which carries a sequence split between two slices) and the text thrown
    away: strict decoding is the definition, only the big string is avoided.
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


class BytesConnection(ServerConnection):
    """A websockets ``ServerConnection`` whose :meth:`messages` are bytes with their kind."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # True (text) or False (binary) per message whose first frame has come
        # and which recv() has not returned yet; frames arrive in order.
        self._kinds: deque[bool] = deque()
        self._held: Message | None = None

    def process_event(self, event: object) -> None:
        """Note a data message's opcode as its first frame arrives, then process as usual."""
        if isinstance(event, Frame) and event.opcode in (Opcode.TEXT, Opcode.BINARY):
            self._kinds.append(event.opcode is Opcode.TEXT)
        super().process_event(event)  # type: ignore[arg-type]

    async def first_message(self) -> Message:
        """Receive the first message ahead of :meth:`messages`, which then yields it first.

        Cancelling it loses nothing (websockets' ``recv`` is cancel-safe).
        """
        data = await self.recv(decode=False)
        self._held = (data, self._kinds.popleft())
        return self._held

    async def messages(self) -> AsyncIterator[Message]:
        """Each message as (bytes, is text) until the peer closes.

        Raises:
            websockets.ConnectionClosedError: The connection broke (as iterating
                a ``ServerConnection`` does); a text message that is not UTF-8
                closes it with 1007 and ends the iteration.
        """
        try:
            while True:
                if self._held is not None:
                    (data, text), self._held = self._held, None
                else:
                    data = await self.recv(decode=False)
                    text = self._kinds.popleft()
                if text and not valid_utf8(data):
                    error = utf8_error(data)
                    assert error is not None
                    # websockets' own words for it.
                    reason = f"{error.reason} at position {error.start}"
                    await self.close(CloseCode.INVALID_DATA, reason)
                    return
                yield data, text
        except ConnectionClosedOK:
            return
