"""The PC's own time zone for adapters that send none (v1.md "adapter.hello")."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from tests.conftest import TOKEN, recv, running, send
from xtyserver.clock import ManualClock
from xtyserver.serve.localzone import detect_local_timezone

pytestmark = pytest.mark.anyio

ZONEINFO = Path("/usr/share/zoneinfo/Asia/Tokyo")


def test_tz_variable_wins_when_it_is_an_iana_name(tmp_path: Path) -> None:
    nothing = tmp_path / "missing"
    assert detect_local_timezone({"TZ": ":Asia/Tokyo"}, nothing, nothing) == "Asia/Tokyo"
    assert detect_local_timezone({"TZ": "Mars/Base"}, nothing, nothing) is None


@pytest.mark.skipif(not ZONEINFO.exists(), reason="no system zoneinfo here")
def test_localtime_link_names_the_zone(tmp_path: Path) -> None:
    link = tmp_path / "localtime"
    link.symlink_to(ZONEINFO)
    assert detect_local_timezone({}, link, tmp_path / "missing") == "Asia/Tokyo"


def test_timezone_file_is_the_last_resort(tmp_path: Path) -> None:
    (tmp_path / "timezone").write_text("Europe/Berlin\n")
    assert detect_local_timezone({}, tmp_path / "none", tmp_path / "timezone") == "Europe/Berlin"


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
