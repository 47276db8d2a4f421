"""One server per data folder, its listening sockets, and ``server.json``.

A shell. :func:`xtyserver.server.serving` takes the first two steps
(:func:`hold_instance`) before it touches the store, so a second ``serve`` on
the same data folder or a busy port leaves the running server as it is:

1. :class:`InstanceLock` takes ``<data_dir>/server.lock`` (an OS file lock: a
   crash leaves no stale lock); held elsewhere: :class:`NotStarted`.
2. :func:`bind_listeners` binds one port on 127.0.0.1 and, by default, ``[::1]``
   (v1.md "Transport"); busy: :class:`NotStarted`.
3. Once listening, :func:`write_server_file` writes ``<data_dir>/server.json``
   (owner-only): how a mod finds the server; removed at shutdown.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import socket
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import msgspec

from xtyserver.errors import XtyError
from xtyserver.files import private_dir, replace_private

SERVER_FILE = "server.json"
LOCK_FILE = "server.lock"
# Windows' WSAEADDRINUSE, and WSAEACCES for a port held with SO_EXCLUSIVEADDRUSE.
_WIN_IN_USE = (10048, 10013)


class NotStarted(XtyError):
    """The server did not start, for a reason the player can act on (one line; exit 1)."""

    code = "not_started"


class PortBusy(NotStarted):
    """A port this server needs is held by another program; ``what`` says which one.

    ``what``: ``"mods"`` (the adapter port, ``server.port``) or ``"page"`` (the
    memory page's, ``server.ui_port``). This data folder's lock was taken first,
    so no server of this folder holds it; which program does is not guessed.
    """

    code = "port_busy"

    def __init__(self, port: int, what: str) -> None:
        which = "the memory page's port" if what == "page" else "port"
        super().__init__(
            f"{which} {port} is in use by another program (no xtyserver on this data"
            " folder holds it): choose another port with --port"
            + (" or --ui-port" if what == "page" else "")
        )
        self.port = port
        self.what = what


def port_free(host: str, port: int) -> bool:
    """Whether ``port`` can be bound on ``host`` now (a suggestion's check, nothing held)."""
    try:
        sock = _bind(listen_addresses(host, ipv6_loopback=False)[0], port)
    except OSError:
        return False
    sock.close()
    return True


class ServerFile(msgspec.Struct, rename="camel", frozen=True):
    """``server.json``: where a running server listens (docs/mod-authors.md "For mod authors")."""

    url: str
    port: int
    addresses: tuple[str, ...]
    # The memory page's own listener (docs/memory-page.md); its link needs the launch key.
    ui_port: int
    page_url: str
    token_file: str | None
    pid: int
    started_at: str
    version: str


def server_file_path(data_dir: Path) -> Path:
    return data_dir / SERVER_FILE


def read_server_file(data_dir: Path) -> ServerFile | None:
    """The ``server.json`` of ``data_dir``, or None when absent or unreadable."""
    try:
        return msgspec.json.decode(server_file_path(data_dir).read_bytes(), type=ServerFile)
    except (OSError, msgspec.DecodeError):
        return None


def write_server_file(data_dir: Path, info: ServerFile) -> Path:
    """Write ``server.json`` owner-only (0600 where the OS has modes), atomically."""
    path = server_file_path(data_dir)
    replace_private(path, msgspec.json.format(msgspec.json.encode(info), indent=2) + b"\n")
    return path


def remove_server_file(data_dir: Path, pid: int) -> None:
    """Remove ``server.json`` if it is this process's (never another server's)."""
    found = read_server_file(data_dir)
    if found is not None and found.pid == pid:
        with contextlib.suppress(OSError):
            server_file_path(data_dir).unlink()


def now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class InstanceLock:
    """An exclusive, non-blocking lock on ``<data_dir>/server.lock`` for this process's life."""

    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / LOCK_FILE
        self._file: IO[bytes] | None = None

    def acquire(self) -> bool:
        """Take the lock; False when another process holds it."""
        private_dir(self.path.parent)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        handle = os.fdopen(fd, "r+b")
        try:
            _lock(handle, take=True)
        except OSError:
            handle.close()
            return False
        self._file = handle
        return True

    def release(self) -> None:
        if self._file is None:
            return
        with contextlib.suppress(OSError):
            _lock(self._file, take=False)
        self._file.close()
        self._file = None


def _lock(handle: IO[bytes], *, take: bool) -> None:
    """Take (never waiting: OSError when held) or let go the OS lock on ``handle``."""
    if sys.platform == "win32":
        import msvcrt

        handle.seek(0)
        msvcrt.locking(handle.fileno(), msvcrt.LK_NBLCK if take else msvcrt.LK_UNLCK, 1)
    else:
        import fcntl

        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB if take else fcntl.LOCK_UN)


def _in_use(exc: OSError) -> bool:
    return exc.errno == errno.EADDRINUSE or getattr(exc, "winerror", None) in _WIN_IN_USE


def _bind(address: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if sys.platform == "win32":
            # Windows' SO_REUSEADDR would let a second server steal the port.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
        else:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.bind((address, port))
        sock.listen(128)
        sock.setblocking(False)
    except BaseException:
        sock.close()
        raise
    return sock


def listen_addresses(host: str, *, ipv6_loopback: bool) -> tuple[str, ...]:
    """The addresses to bind for ``server.host``: loopback means both 127.0.0.1 and ::1."""
    if host in ("127.0.0.1", "localhost"):
        return ("127.0.0.1", "::1") if ipv6_loopback else ("127.0.0.1",)
    return (host,)


def bind_listeners(host: str, port: int, *, ipv6_loopback: bool) -> list[socket.socket]:
    """Bind ``port`` on every address of :func:`listen_addresses` (one port for all).

    The first address decides the port (``0`` picks a free one, again while it is
    taken on another address). ``[::1]`` is left out without an IPv6 loopback.

    Raises:
        PortBusy: the port is in use.
    """
    first, *others = listen_addresses(host, ipv6_loopback=ipv6_loopback)
    for _attempt in range(8):
        try:
            main = _bind(first, port)
        except OSError as exc:
            if _in_use(exc):
                raise PortBusy(port, "mods") from None
            raise
        bound = int(main.getsockname()[1])
        sockets = [main]
        for address in others:
            try:
                sockets.append(_bind(address, bound))
            except OSError as exc:
                if not _in_use(exc):
                    continue  # no IPv6 loopback here (EADDRNOTAVAIL, EAFNOSUPPORT): IPv4 only
                for sock in sockets:
                    sock.close()
                if port != 0:
                    raise PortBusy(port, "mods") from None
                break  # the picked port is taken there: pick another
        else:
            return sockets
    raise NotStarted("no free port on both loopback addresses; pass --port (tried 8 times)")


@contextlib.contextmanager
def hold_instance(
    data_dir: Path, host: str, port: int, *, ipv6_loopback: bool, page: str
) -> Iterator[list[socket.socket]]:
    """Steps 1 and 2: the data folder's lock and the bound sockets, both held while inside.

    Args:
        page: The memory page's address, named when this folder or port is taken
            (the running server's own from its ``server.json`` when it has one).

    Raises:
        NotStarted: another server holds the folder, or the port is in use;
            nothing was changed.
    """
    lock = InstanceLock(data_dir)
    if not lock.acquire():
        running = read_server_file(data_dir)
        where = f" (pid {running.pid}, {running.url})" if running else ""
        raise NotStarted(
            f"xtyserver is already running on this data folder{where}:"
            f" the memory page of the running one: {running.page_url if running else page}"
            " (`xtyserver ui` opens it)"
        )
    try:
        sockets = bind_listeners(host, port, ipv6_loopback=ipv6_loopback)
        try:
            yield sockets
        finally:
            for sock in sockets:
                sock.close()
    finally:
        lock.release()
