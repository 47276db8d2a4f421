"""Play-time accounting (pure): heartbeat increments and local play dates.

Each heartbeat adds the time since the previous one, capped at ``gap_cap_s``
(a suspended PC must not inflate play time). A play day is the local date in
the adapter's IANA timezone, recorded at session open and on every heartbeat,
so a session crossing midnight counts both days. An unknown timezone is the
caller's bug (validated at hello): :class:`~xtyserver.errors.UsageError`, no
silent UTC fallback that would shift days.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from functools import lru_cache
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from xtyserver.errors import UsageError

DEFAULT_GAP_CAP_S = 120.0


def heartbeat_increment_ms(
    previous: float, now: float, *, gap_cap_s: float = DEFAULT_GAP_CAP_S
) -> int:
    """Active milliseconds a heartbeat at ``now`` adds after one (or the session start) at
    ``previous``: ``min(now - previous, gap_cap_s)``, 0 when time went backward."""
    if gap_cap_s < 0:
        raise UsageError("gap_cap_s must be >= 0")
    delta = max(0.0, now - previous)
    return round(min(delta, gap_cap_s) * 1000)


@lru_cache(maxsize=64)
def timezone(name: str) -> ZoneInfo:
    """The IANA zone ``name``.

    Raises:
        UsageError: ``name`` is not a known IANA timezone.
    """
    if not name or len(name) > 64:
        raise UsageError(f"unknown timezone {name[:64]!r}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        raise UsageError(f"unknown timezone {name!r}") from exc


def timezone_known(name: str) -> bool:
    """Whether ``name`` is an IANA zone this machine knows (v1.md "adapter.hello")."""
    try:
        timezone(name)
    except UsageError:
        return False
    return True


def resolve_zone(
    name: str, windows: Mapping[str, str], known: Callable[[str], bool] = timezone_known
) -> str | None:
    """The IANA name for an IANA or Windows zone name, or None when neither is known.

    ``windows`` maps Windows zone ids (``"China Standard Time"``, what .NET's
    ``TimeZoneInfo.Local.Id`` gives a C# mod) to IANA names; the shell passes
    the table of a library (tzlocal's), so this stays a pure lookup (v1.md
    "adapter.hello"). An IANA name wins; a Windows id is matched exactly, then
    ignoring case.
    """
    if known(name):
        return name
    iana = windows.get(name)
    if iana is None:
        folded = name.casefold()
        iana = next((v for k, v in windows.items() if k.casefold() == folded), None)
    return iana if iana is not None and known(iana) else None


def local_date(ts: float, tz: str) -> str:
    """The ISO date (``YYYY-MM-DD``) of epoch seconds ``ts`` in timezone ``tz``.

    Raises:
        UsageError: ``tz`` is not a known IANA timezone.
    """
    zone = timezone(tz)
    return dt.datetime.fromtimestamp(ts, tz=zone).date().isoformat()
