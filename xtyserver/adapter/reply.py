"""One streaming reply of the adapter client: an async iterator of deltas, then an outcome."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable

import anyio
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from xtyserver.protocol.frames import ChatDone, ChatError, Error

ChatOutcome = ChatDone | ChatError | Error
"""How a turn ended: ``chat.done``, ``chat.error``, or an ``error`` refusing the ``chat.send``."""

CONNECTION_LOST = "connection_lost"
"""The client's own ``chat.error`` code (never sent by a server) for a turn cut by a disconnect."""

DELTA_QUEUE = 256
"""Deltas a reply holds before the reader waits for the adapter to take them."""


class ChatReply:
    """The answer to one ``chat.send``: iterate for the deltas, await :meth:`result` for the end.

    ``async for piece in reply`` yields each ``chat.delta`` text in order and
    stops at the end of the turn; :meth:`result` returns how it ended (it takes
    any deltas not iterated yet, so awaiting it alone is fine too). ``text``
    holds the deltas taken so far, joined.
    """

    def __init__(self, chat_id: str, cancel: Callable[[str], Awaitable[None]]) -> None:
        self.id = chat_id
        self.text = ""
        self._cancel = cancel
        self._in: MemoryObjectSendStream[str]
        self._out: MemoryObjectReceiveStream[str]
        self._in, self._out = anyio.create_memory_object_stream[str](DELTA_QUEUE)
        self._outcome: ChatOutcome | None = None
        self._ended = anyio.Event()

    @property
    def ended(self) -> bool:
        """Whether the turn has ended (its outcome arrived)."""
        return self._ended.is_set()

    async def __aiter__(self) -> AsyncIterator[str]:
        async for piece in self._out:
            self.text += piece
            yield piece

    async def result(self) -> ChatOutcome:
        """Wait for the end of the turn; the deltas not yet iterated are joined into ``text``."""
        async for _ in self:
            pass
        await self._ended.wait()
        assert self._outcome is not None
        return self._outcome

    async def cancel(self) -> None:
        """Send ``chat.cancel`` for this reply (it then ends with ``chat.error`` ``cancelled``)."""
        if not self.ended:
            await self._cancel(self.id)

    async def _delta(self, text: str) -> None:
        if not self.ended:
            await self._in.send(text)

    def _end(self, outcome: ChatOutcome) -> None:
        if not self.ended:
            self._outcome = outcome
            self._in.close()
            self._ended.set()


class CompanionLine(msgspec.Struct, frozen=True):
    """A line the companion spoke up with by itself about a ``game.event`` (v1.md "game.event").

    ``text``: the whole line (what streamed, for a line cut short); ``why``: why it spoke and
    how to turn it off, in the player's language (``chat.done`` only: show it beside the
    line); ``outcome``: the frame that ended it (``chat.error`` ``cancelled`` when the
    player's own words or ``chat.cancel`` cut it).
    """

    id: str
    text: str
    why: str | None
    outcome: ChatDone | ChatError
