"""A settings save from the page is all-or-nothing.

Validated whole, written once atomically, applied to the running server whole
or not at all: a save with one bad value changes nothing on disk or in the
server; a process killed (SIGKILL) in the middle of saves leaves the old
choices or the new ones, never a mix; a write the filesystem refuses leaves the
file and the running server as they were, and the server keeps serving.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import chat, running
from tests.manage.test_http import Page

pytestmark = pytest.mark.anyio
ROOT = Path(__file__).resolve().parents[1]
SIX_A = {
    "model.base_url": "http://127.0.0.1:1/a",
    "model.model": "model-a",
    "model.vision": True,
    "model.extraction_model": "small-a",
    "model.daily_token_budget": 100_000,
    "memory.trash_hours": 24,
}
SIX_B = {
    "model.base_url": "http://127.0.0.1:2/b",
    "model.model": "model-b",
    "model.vision": False,
    "model.extraction_model": "small-b",
    "model.daily_token_budget": 200_000,
    "memory.trash_hours": 48,
}


async def test_one_bad_value_saves_nothing_and_applies_nothing(tmp_path: Path) -> None:
    async with running(tmp_path, model=False) as h:
        page = Page(h)
        await page.open()
        good = {"model.base_url": h.fake.base_url, "model.model": "fake-vl"}
        await page.post("settings", changes=good)
        stored = h.settings.data_path / "settings.json"
        before_bytes = stored.read_bytes()
        before_view = await page.get("settings")
        routing = h.server.model.routing
        # a valid model and trash window beside a bad daily budget
        answer = await page.post(
            "settings",
            status=400,
            changes={
                "model.model": "other-model",
                "memory.trash_hours": 1,
                "model.daily_token_budget": "lots",
            },
        )
        assert answer["fields"] == ["model.daily_token_budget"]
        assert "nothing was saved" in answer["error"]
        assert stored.read_bytes() == before_bytes
        assert await page.get("settings") == before_view
        assert h.server.model.routing is routing and routing.chat.model == "fake-vl"
        assert h.server.memory.trash_window != 3600
        # a key that cannot be set here beside a valid one: the same
        answer = await page.post(
            "settings", status=400, changes={"model.model": "x", "server.host": "0.0.0.0"}
        )
        assert answer["fields"] == ["server.host"]
        assert stored.read_bytes() == before_bytes
        assert h.server.model.routing.chat.model == "fake-vl"


SAVER = """
import sys
from pathlib import Path

import anyio
from keyring.backends.fail import Keyring

from xtyserver.manage.settings import PageSettings, SettingsBody
from xtyserver.serve.player_settings import KeyStore, PlayerSettings

data = Path(sys.argv[1])
sets = [eval(sys.argv[2]), eval(sys.argv[3])]
player = PlayerSettings(data, env={}, keys=KeyStore(data, backend=Keyring()))


async def applied(settings):
    pass


async def main():
    page = PageSettings(player, applied)
    n = 0
    while True:
        await page.change(SettingsBody(changes=sets[n % 2]))
        n += 1
        print(n, flush=True)


anyio.run(main)
"""


def test_a_save_killed_midway_leaves_the_old_or_the_new_choices(tmp_path: Path) -> None:
    """Eight SIGKILLs, each while the page's save path is writing six values in a loop."""
    data = tmp_path / "data"
    seen: list[str] = []
    for attempt in range(8):
        proc = subprocess.Popen(
            [sys.executable, "-c", SAVER, str(data), repr(SIX_A), repr(SIX_B)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert proc.stdout is not None
        for _ in range(1 + attempt % 3):  # a different point in the loop each time
            assert proc.stdout.readline()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        proc.stdout.close()
        stored = json.loads((data / "settings.json").read_text(encoding="utf-8"))
        assert stored in (SIX_A, SIX_B), (attempt, stored)
        seen.append("A" if stored == SIX_A else "B")
    assert len(seen) == 8


async def test_a_write_the_disk_refuses_changes_nothing_and_the_server_serves_on(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, model=False) as h:
        page = Page(h)
        await page.open()
        await page.post("settings", changes={"model.base_url": h.fake.base_url, "model.model": "m"})
        stored = h.settings.data_path / "settings.json"
        before = stored.read_bytes()
        # The temporary file's name is taken by a folder: the filesystem refuses the write.
        (h.settings.data_path / ".settings.json.tmp").mkdir()
        answer = await page.post(
            "settings", status=500, changes={"model.model": "never", "memory.trash_hours": 2}
        )
        assert "could not be written" in answer["error"]
        assert "nothing was changed" in answer["error"]
        assert stored.read_bytes() == before
        assert h.server.model.routing.chat.model == "m"
        assert h.server.memory.trash_window != 2 * 3600
        # the page and the mods carry on
        assert (await page.get("settings"))["values"]["model.model"] == "m"
        async with h.adapter() as ws:
            _, done = await chat(ws, "你好", "c1")
        assert done["type"] == "chat.done", done
