"""This machine's time zone, and the zone table for Windows names (v1.md "adapter.hello").

A shell: ``tzlocal`` reads the ``TZ`` variable and ``/etc`` on Linux and macOS
and the registry on Windows, once at startup. The server runs on the player's
own PC, so an adapter that sends no ``timezone`` gets the PC's zone for its
play days, not UTC. ``WINDOWS_ZONES`` is tzlocal's table of Windows zone ids
(``"China Standard Time"``) to IANA names; the pure core gets it passed in
(:func:`xtyserver.memory.accounting.resolve_zone`) and never imports tzlocal.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable, Mapping

import tzlocal
from tzlocal.windows_tz import win_tz

from xtyserver.errors import UsageError
from xtyserver.memory.accounting import resolve_zone

WINDOWS_ZONES: Mapping[str, str] = win_tz


def zone_resolver() -> Callable[[str], str | None]:
    """IANA or Windows zone name -> IANA name (None when unknown), with tzlocal's table."""
    return functools.partial(resolve_zone, windows=WINDOWS_ZONES)


def detect_local_timezone() -> str | None:
    """The machine's IANA zone name, or None when it cannot be told.

    tzlocal's answer, checked against the zone database (a Windows name is
    mapped). None when tzlocal finds nothing or something unknown (then the
    server falls back to ``server.default_timezone``, else UTC, and says so).
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tzlocal warns about inconsistent configs
            name = tzlocal.get_localzone_name()
    except Exception:  # tzlocal raises several kinds (LookupError, ValueError, ZoneInfo...)
        return None
    if not name:
        return None
    return resolve_zone(name, WINDOWS_ZONES)


def server_zone(configured: str) -> str:
    """The zone of this server's own days (``server.default_timezone``, else the PC's, else UTC).

    Raises:
        UsageError: ``configured`` is neither an IANA nor a Windows zone name.
    """
    if configured:
        zone = resolve_zone(configured, WINDOWS_ZONES)
        if zone is None:
            raise UsageError("server.default_timezone is not a known IANA or Windows time zone")
        return zone
    return detect_local_timezone() or "UTC"
