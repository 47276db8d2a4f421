"""How a player stops the server: Ctrl+C, SIGTERM, and on Windows Ctrl+Break or closing the window.

Each of them sets one event; ``xtyserver serve`` then leaves
:func:`xtyserver.server.serving` the ordinary way. Plain ``signal.signal``
handlers on every OS (``SIGBREAK`` too on Windows); closing the console window,
logging off or shutting down calls a console control handler on a thread of
Windows' own, which ends the process when it returns or after about 5 s, so the
handler asks for the stop and waits (at most 4.5 s) for the shutdown to finish
(docs/windows.md "Windows notes"). The stop itself is bounded (``server.stop_timeout``);
should it still not end, :func:`hard_exit_after` ends the process.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import anyio

# CTRL_CLOSE_EVENT, CTRL_LOGOFF_EVENT, CTRL_SHUTDOWN_EVENT (wincon.h).
_WINDOWS_CLOSE_EVENTS = (2, 5, 6)
_CLOSE_WAIT_S = 4.5
BACKSTOP_S = 2.0
"""Seconds past ``server.stop_timeout`` after which :func:`hard_exit_after` ends the process."""


@contextmanager
def stop_requests() -> Iterator[anyio.Event]:
    """An event set by the first stop request; handlers restored on exit.

    Enter it inside the running event loop, and leave it only once the server
    has shut down (a closing Windows console waits for that).
    """
    loop = asyncio.get_running_loop()
    stop = anyio.Event()
    finished = threading.Event()

    def request(*_: Any) -> None:
        loop.call_soon_threadsafe(stop.set)

    wanted = [signal.SIGINT, signal.SIGTERM]
    if sys.platform == "win32":
        wanted.append(signal.SIGBREAK)
    previous = {sig: signal.signal(sig, request) for sig in wanted}
    keep = _console_close_handler(request, finished) if sys.platform == "win32" else None
    try:
        yield stop
    finally:
        finished.set()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        del keep


def _console_close_handler(request: Callable[[], None], finished: threading.Event) -> object:
    """Register a console control handler for window close, logoff and shutdown (Windows)."""
    if sys.platform != "win32":  # pragma: no cover - for mypy on other platforms
        return None
    import ctypes
    from ctypes import wintypes

    prototype = ctypes.WINFUNCTYPE(wintypes.BOOL, wintypes.DWORD)

    def handler(event: int) -> bool:
        if event not in _WINDOWS_CLOSE_EVENTS:
            return False  # Ctrl+C and Ctrl+Break arrive as signals (above)
        request()
        finished.wait(_CLOSE_WAIT_S)
        return True

    callback = prototype(handler)
    ctypes.windll.kernel32.SetConsoleCtrlHandler(callback, True)
    return callback  # kept alive by the caller while the server runs


@contextmanager
def hard_exit_after(seconds: float, before: Callable[[], None]) -> Iterator[None]:
    """End the process ``seconds`` from now unless the block is left first (the backstop).

    ``before`` runs first (on the timer's thread); then ``os._exit(1)``, which
    does not wait for the event loop that failed to stop.
    """

    def force() -> None:
        try:
            print("xtyserver: the stop took too long; exiting now", file=sys.stderr, flush=True)
            before()
        finally:
            os._exit(1)

    timer = threading.Timer(seconds, force)
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
