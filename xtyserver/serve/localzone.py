"""The IANA name of this machine's local time zone (v1.md "adapter.hello", ``timezone``).

A shell: it reads the environment and the file system once at startup. The
server runs on the player's own PC, so an adapter that sends no ``timezone``
gets the PC's zone for its play days, not UTC.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from pathlib import Path

from xtyserver.memory.accounting import timezone_known

_MARKER = "zoneinfo/"


def detect_local_timezone(
    env: Mapping[str, str] = os.environ,
    localtime: Path = Path("/etc/localtime"),
    timezone_file: Path = Path("/etc/timezone"),
) -> str | None:
    """The machine's IANA zone name, or None when it cannot be told.

    Looks at ``TZ`` (an IANA name, optionally with a leading ``:``), then where
    ``/etc/localtime`` links to (``.../zoneinfo/Asia/Shanghai``), then
    ``/etc/timezone``. Windows has none of these; there the player sets
    ``server.default_timezone`` (or the adapter sends ``timezone``).
    """
    candidates: list[str] = []
    tz = env.get("TZ", "").strip().removeprefix(":")
    if tz:
        candidates.append(tz)
    try:
        target = str(localtime.resolve(strict=True)).replace(os.sep, "/")
    except (OSError, RuntimeError):
        target = ""
    if _MARKER in target:
        candidates.append(target.rsplit(_MARKER, 1)[1])
    with contextlib.suppress(OSError, UnicodeDecodeError):
        candidates.append(timezone_file.read_text(encoding="utf-8").strip())
    for name in candidates:
        if name and timezone_known(name):
            return name
    return None
