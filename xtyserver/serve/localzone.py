"""This machine's time zone, and the zone table for Windows names (v1.md "adapter.hello").

A shell around ``tzlocal``, read once at startup: the server runs on the
player's own PC, so an adapter that sends no ``timezone`` gets the PC's zone,
not UTC. The pure core gets ``WINDOWS_ZONES`` (Windows zone ids to IANA names)
passed in (:func:`xtyserver.memory.accounting.resolve_zone`).
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

    tzlocal's answer, checked against the zone database (a Windows name mapped).
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
