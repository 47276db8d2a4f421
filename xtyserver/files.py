"""Owner-only folders and files: everything the server writes is the player's alone.

A foundation (v1.md "Privacy"): the data folder, every folder and file under it,
``memory export --out`` files and ``serve --record`` folders and files are made
readable by their owner only (0700 folders, 0600 files). On Windows, where POSIX
modes mean little, these calls change nothing (docs/windows.md "Windows notes").
"""

from __future__ import annotations

import contextlib
import os
import stat
from pathlib import Path
from typing import IO

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_POSIX = os.name == "posix"


def private_dir(path: Path) -> Path:
    """Create ``path`` and every missing parent owner-only; tighten it when it exists wider.

    ``Path.mkdir(parents=True, mode=...)`` gives the parents it creates the
    default mode (0755 under the usual umask), so each missing folder is made
    here one by one, and the umask cannot widen any of them.
    """
    missing: list[Path] = []
    for folder in (path, *path.parents):
        if folder.exists():
            break
        missing.append(folder)
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            folder.mkdir(mode=PRIVATE_DIR)
        if _POSIX:
            folder.chmod(PRIVATE_DIR)  # the umask applied to mkdir's mode
    path.mkdir(parents=True, exist_ok=True, mode=PRIVATE_DIR)  # a file in the way raises
    home = path.resolve() == Path.home().resolve()
    if _POSIX and not home and stat.S_IMODE(path.stat().st_mode) & 0o077:
        path.chmod(PRIVATE_DIR)
    return path


def _private_fd(path: Path) -> int:
    """``path`` opened for writing as a new or truncated owner-only file."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        if _POSIX:
            os.fchmod(fd, PRIVATE_FILE)  # an existing file keeps its mode through O_CREAT
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_private(path: Path, mode: str = "w", **kwargs: object) -> IO[str]:
    """Open ``path`` for writing as a new or truncated owner-only file (text mode)."""
    return os.fdopen(_private_fd(path), mode, **kwargs)  # type: ignore[call-overload,no-any-return]


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` as an owner-only file."""
    fd = _private_fd(path)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)


def replace_private(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` as an owner-only file, whole or not at all.

    Written to a temporary file beside it, flushed to the disk, then renamed over
    it: a crash or a full disk leaves the old file or the new one, never a mix.
    """
    tmp = path.with_name(f".{path.name}.tmp")
    fd = _private_fd(tmp)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    os.close(fd)
    os.replace(tmp, path)


# What the server keeps in its data folder: only these are tightened, so a data
# folder set to a shared place never has the player's other files changed.
OWNED = (
    "token",
    "server.json",
    "server.lock",
    "settings.json",
    "model-key",
    "model-key.in-keyring",
    "provider.json",
    "page-secret",
    "profiles",
    "glossary",
)


def tighten_data_dir(data_dir: Path) -> list[Path]:
    """Make the data folder and what the server keeps in it owner-only; return what was wider.

    Called at start, so a folder made readable by others (copied, unpacked, made
    by an older version) is fixed. Never touches a home folder itself.
    """
    if not _POSIX or not data_dir.is_dir():
        return []
    tightened = [] if data_dir.resolve() == Path.home().resolve() else _tighten(data_dir, False)
    for name in OWNED:
        tightened += _tighten(data_dir / name, True)
    return tightened


def _tighten(root: Path, recurse: bool) -> list[Path]:
    if not root.exists() or root.is_symlink():
        return []
    if not root.is_dir() or not recurse:
        return _tighten_one(root)
    tightened: list[Path] = []
    for folder, dirs, names in os.walk(root, followlinks=False):
        here = Path(folder)
        for item in [here, *(here / n for n in names)]:
            tightened += _tighten_one(item)
        dirs[:] = [d for d in dirs if not (here / d).is_symlink()]
    return tightened


def _tighten_one(item: Path) -> list[Path]:
    try:
        info = item.lstat()
        if stat.S_ISLNK(info.st_mode) or not stat.S_IMODE(info.st_mode) & 0o077:
            return []
        item.chmod(PRIVATE_DIR if stat.S_ISDIR(info.st_mode) else PRIVATE_FILE)
    except OSError:
        return []
    return [item]
