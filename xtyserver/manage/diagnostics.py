"""The page's 「复制诊断信息」: what a mod author needs to help, and nothing private.

``GET /ui/api/diagnostics`` answers the version, the OS, Python and the last
lines of the player's log (``logs/xtyserver.log``), each line cut to its time,
level, event and plain fields, every value run through
:func:`~xtyserver.protocol.forbidden.redact` (paths, keys, e-mail, addresses ...)
with the provider key, the adapter token, this PC's user name and home folder
as secrets. The page adds its 测试连接 table and lets the player copy it all.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from xtyserver import __version__
from xtyserver.protocol.forbidden import redact

LOG_LINES = 30
TAIL_BYTES = 64 * 1024
VALUE_CHARS = 200
# Log fields that name a place or a peer, never worth sending even redacted.
_DROPPED = frozenset({"path", "file", "folder", "data_dir", "peer", "remote", "addresses"})


def diagnostics(data_dir: Path, secrets: Sequence[str] = ()) -> dict[str, Any]:
    """Version, OS, Python and the log's last :data:`LOG_LINES` lines, redacted."""
    private = _private_words()
    lines = [_line(raw, private, tuple(s for s in secrets if s)) for raw in _tail(data_dir)]
    return {
        "version": __version__,
        "os": f"{platform.system()} {platform.release()} ({platform.machine()})",
        "python": platform.python_version(),
        "log": [line for line in lines if line][-LOG_LINES:],
    }


def _private_words() -> list[str]:
    """This PC's user name and home folder: replaced before the shapes are judged."""
    words = [str(Path.home())]
    with contextlib.suppress(OSError, KeyError, ImportError):  # no user name: none to hide
        words.append(getpass.getuser())
    words += [os.environ.get(n, "") for n in ("USERNAME", "USER", "USERPROFILE", "HOME")]
    return sorted({w for w in words if len(w) >= 2 and w not in ("/", "root")}, key=len)[::-1]


def _tail(data_dir: Path) -> list[str]:
    path = data_dir / "logs" / "xtyserver.log"
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - TAIL_BYTES))
            data = f.read()
    except OSError:
        return []
    lines = data.decode("utf-8", "replace").splitlines()
    return lines[1:] if len(data) == TAIL_BYTES else lines  # the first may be cut


def _line(raw: str, private: list[str], secrets: tuple[str, ...]) -> str:
    """One log line as ``time level event key=value ...``, each value redacted; "" if none."""
    try:
        record = json.loads(raw)
    except ValueError:
        return ""  # a line of another shape (a traceback's): not sent
    if not isinstance(record, dict):
        return ""
    parts = [str(record.get(k, "")) for k in ("timestamp", "level", "event")]
    for key, value in record.items():
        if key in ("timestamp", "level", "event") or key in _DROPPED:
            continue
        if isinstance(value, (str, int, float, bool)) or value is None:
            parts.append(f"{key}={value}")
    text = " ".join(p for p in parts if p)[: VALUE_CHARS * 4]
    for word in private:
        text = text.replace(word, "~" if os.sep in word or "\\" in word else "<user>")
    kept, _ = redact(text, secrets=secrets)
    return kept
