"""Accepting connections: one task per listening socket, one task per connection.

anyio's own ``serve`` ends at the first accept error, which would take the
server down with it; out of file descriptors, :func:`accept_forever` pauses
and tries again, and says so once per :data:`ACCEPT_RETRY` seconds at most.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

import anyio
import anyio.abc

ACCEPT_RETRY = 1.0
"""Seconds between accepts after one failed (too many open files)."""


async def accept_forever(
    listener: anyio.abc.SocketListener,
    handle: Callable[[anyio.abc.SocketStream], Coroutine[Any, Any, None]],
    tg: anyio.abc.TaskGroup,
    logger: Any,
    event: str,
) -> None:
    """Accept until cancelled, each connection handled by ``handle`` in ``tg``.

    A failed accept is logged as ``event`` (with the OS's reason) at most once
    per :data:`ACCEPT_RETRY` seconds, and accepting resumes after that long.
    """
    last_logged = -ACCEPT_RETRY
    while True:
        try:
            stream = await listener.accept()
        except OSError as exc:
            now = anyio.current_time()
            if now - last_logged >= ACCEPT_RETRY:
                last_logged = now
                logger.warning(event, error=exc.strerror or type(exc).__name__)
            await anyio.sleep(ACCEPT_RETRY)
            continue
        tg.start_soon(handle, stream)
