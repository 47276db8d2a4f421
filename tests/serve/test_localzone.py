"""The PC's own time zone for adapters that send none (v1.md "adapter.hello")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import TOKEN, recv, running, send
from xtyserver.clock import ManualClock
from xtyserver.errors import UsageError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.frames import Hello
from xtyserver.serve.localzone import WINDOWS_ZONES, server_zone, zone_resolver

pytestmark = pytest.mark.anyio


def detected(**env: str) -> str:
    """What a fresh process detects as this machine's zone (tzlocal reads TZ and /etc)."""
    probe = "from xtyserver.serve.localzone import detect_local_timezone as d; print(d())"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, **env},
    )
    return done.stdout.strip()


def test_tz_variable_wins_when_it_is_an_iana_name() -> None:
    assert detected(TZ="Asia/Tokyo") == "Asia/Tokyo"
    assert detected(TZ=":Europe/Berlin") == "Europe/Berlin"
    # an unknown TZ is passed over for the system's own configuration (/etc/localtime)
    assert detected(TZ="Mars/Base") not in ("Mars/Base", "")


def test_windows_names_map_to_iana_with_tzlocals_table() -> None:
    zone_of = zone_resolver()
    assert zone_of("China Standard Time") == "Asia/Shanghai"
    assert zone_of("china standard time") == "Asia/Shanghai"
    assert zone_of("W. Europe Standard Time") == "Europe/Berlin"
    assert zone_of("Pacific Standard Time (Mexico)") == "America/Tijuana"
    assert zone_of("UTC") == "UTC"
    assert zone_of("Asia/Shanghai") == "Asia/Shanghai"
    assert zone_of("Mars Standard Time") is None
    assert server_zone("Tokyo Standard Time") == "Asia/Tokyo"
    with pytest.raises(UsageError):
        server_zone("Mars Standard Time")


def test_every_windows_zone_id_passes_the_hello_pattern() -> None:
    """The wire pattern of ``timezone`` admits every id of the table (spaces, dots, brackets)."""
    hello = {
        "type": "adapter.hello",
        "protocol": "v1",
        "adapter": {"name": "xty-stardew", "version": "0.1.0"},
        "identity": {"gameId": "stardew-valley", "saveId": "farm-a"},
    }
    for name in WINDOWS_ZONES:
        decoded = decode_client_frame(json.dumps({**hello, "timezone": name}).encode())
        assert isinstance(decoded.frame, Hello) and decoded.frame.timezone == name


async def test_hello_without_timezone_counts_play_days_in_the_pcs_zone(tmp_path: Path) -> None:
    # 2026-09-21 20:00 UTC is already 2026-09-22 in Tokyo.
    clock = ManualClock(datetime(2026, 9, 21, 20, 0, tzinfo=UTC).timestamp())
    settings = {"server.default_timezone": "Asia/Tokyo"}
    async with running(tmp_path, clock=clock, overrides=settings) as h, h.client() as ws:
        hello = {
            "type": "adapter.hello",
            "protocol": "v1",
            "adapter": {"name": "xty-stardew", "version": "0.1.0"},
            "identity": {"gameId": "stardew-valley", "saveId": "farm-a"},
            "token": TOKEN,
        }
        await send(ws, hello)
        assert (await recv(ws))["type"] == "server.hello"
        await send(ws, {"type": "stats.get", "id": "q"})
        await recv(ws)
        [day] = h.store.export().days
        assert day.date == "2026-09-22"


async def test_a_windows_zone_in_hello_counts_play_days_in_its_iana_zone(tmp_path: Path) -> None:
    # 2026-09-21 20:00 UTC is already 2026-09-22 in Shanghai; a C# mod sends .NET's zone id.
    clock = ManualClock(datetime(2026, 9, 21, 20, 0, tzinfo=UTC).timestamp())
    async with running(tmp_path, clock=clock) as h, h.client() as ws:
        hello = {
            "type": "adapter.hello",
            "protocol": "v1",
            "adapter": {"name": "xty-stardew", "version": "0.1.0"},
            "identity": {"gameId": "stardew-valley", "saveId": "farm-a"},
            "token": TOKEN,
            "timezone": "China Standard Time",
        }
        await send(ws, hello)
        assert (await recv(ws))["type"] == "server.hello"
        await send(ws, {"type": "stats.get", "id": "q"})
        await recv(ws)
        [day] = h.store.export().days
        assert day.date == "2026-09-22"
        [session] = h.store.export().sessions
        assert session.tz == "Asia/Shanghai"
