"""Settings saved on the memory page while the server runs: a route whose
settings did not change keeps its model client, a replaced client is closed once the
turns that started on it ended, and a turn under way finishes on its client.

Real parts: the server over real sockets, the page's settings API (``POST
/ui/api/settings``), the player's settings file, the scripted model (which counts
the connections the server keeps open to it) and the real openai client.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from keyring.backends.fail import Keyring as FailKeyring

from tests.conftest import START, TOKEN, Harness, chat, is_job_request, recv, send
from tests.manage.test_http import Page
from xtyserver.clock import ManualClock
from xtyserver.config import load_settings
from xtyserver.serve.player_settings import KeyStore, PlayerSettings
from xtyserver.server import serving
from xtyserver.testing import FakeModelServer, Reply

pytestmark = pytest.mark.anyio
ROUTES = {"models.vision.model": "fake-vision", "models.quick.model": "fake-quick"}


@asynccontextmanager
async def served(data_dir: Path, **extra: Any) -> AsyncIterator[tuple[Harness, Page]]:
    """A server whose page saves through a PlayerSettings that keeps these flags."""
    async with FakeModelServer() as fake:
        flags: dict[str, Any] = {
            "data_dir": str(data_dir),
            "server.port": 0,
            "server.chat_burst": 1000,
            "server.chats_per_minute": 1_000_000.0,
            "model.base_url": fake.base_url,
            "model.first_token_timeout": 5.0,
            "model.idle_timeout": 5.0,
            "memory.extraction": False,
            "memory.enrich_keys": False,
            **extra,
        }
        settings = load_settings(None, env={}, overrides=flags)
        player = PlayerSettings(
            settings.data_path,
            env={},
            overrides=flags,
            keys=KeyStore(settings.data_path, backend=FailKeyring()),
        )
        player.set("model.model", "fake-vl")  # the page may change it (a flag would pin it)
        clock = ManualClock(START)
        async with serving(
            player.effective(), token=TOKEN, clock=clock, env={}, player=player
        ) as server:
            h = Harness(server.url, fake, server, server.store, clock, settings)
            page = Page(h)
            await page.open()
            yield h, page


async def test_twenty_saves_that_change_no_model_keep_one_client_per_route(
    tmp_path: Path,
) -> None:
    async with served(tmp_path, **ROUTES) as (h, page), h.adapter() as ws:
        first = h.server.model.open_clients()
        assert len(first) == 3  # chat, vision, quick: three distinct models
        for i in range(20):
            # What the page sends for the trash window: the model settings are untouched.
            await page.post("settings", changes={"memory.trash_hours": 24 + i % 2})
            _, done = await chat(ws, f"第{i}句", f"c{i}")
            assert done["type"] == "chat.done", done
        assert h.server.model.open_clients() == first  # the same three, none added
        # Each generation of clients would have kept its own connection open.
        assert h.fake.open_connections <= 3
        assert [r.json["model"] for r in h.fake.chat_requests if not is_job_request(r)] == [
            "fake-vl"
        ] * 20


async def test_a_changed_model_gets_a_new_client_and_the_old_one_is_closed_when_idle(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (h, page), h.adapter() as ws:
        replaced = []
        for i in range(6):
            before = h.server.model.open_clients()
            await page.post("settings", changes={"model.model": f"fake-{i}"})
            [client] = h.server.model.open_clients()  # one model does everything
            assert client not in before
            assert all(old.raw.is_closed() for old in before)  # idle: closed at the save
            replaced += before
            _, done = await chat(ws, f"第{i}句", f"c{i}")
            assert done["type"] == "chat.done", done
            assert h.turn_request().json["model"] == f"fake-{i}"
        # Only the last client's connection is left open at the provider.
        with anyio.fail_after(5):
            await h.fake.wait_open_connections(1)
        assert len(replaced) == 6 and all(c.raw.is_closed() for c in replaced)


async def test_a_turn_under_way_during_a_save_finishes_on_its_client_then_that_closes(
    tmp_path: Path,
) -> None:
    async with served(tmp_path) as (h, page), h.adapter() as ws:
        [old] = h.server.model.open_clients()
        # 3 s between the first delta and the end: time enough for the save on a busy machine.
        h.fake.enqueue(Reply(chunks=["一", "二", "三", "四"], chunk_delay=1.0))
        await send(ws, {"type": "chat.send", "id": "c1", "text": "你好", "source": "text"})
        first = await recv(ws)
        assert first["type"] == "chat.delta", first

        # Saved while the reply streams: the turn keeps its client, which stays open.
        await page.post("settings", changes={"model.model": "fake-next"})
        [new] = h.server.model.open_clients()[:1]
        assert new is not old and old in h.server.model.open_clients()
        assert not old.raw.is_closed()
        assert h.fake.open_streams == 1

        frames = [first]
        while frames[-1]["type"] == "chat.delta":
            frames.append(await recv(ws))
        assert frames[-1]["type"] == "chat.done", frames[-1]
        assert "".join(f["text"] for f in frames[:-1]) == "一二三四"
        assert [r.json["model"] for r in h.fake.chat_requests] == ["fake-vl"]  # asked once

        # The turn over, its client is closed: no connection is left open to the provider.
        with anyio.fail_after(5):
            await h.fake.wait_open_connections(0)
        assert old.raw.is_closed() and h.server.model.open_clients() == [new]
        _, done = await chat(ws, "再说一句", "c2")
        assert done["type"] == "chat.done", done
        assert h.turn_request().json["model"] == "fake-next"
