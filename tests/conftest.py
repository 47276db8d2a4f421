"""Shared test harness: a real server, a real store file, the scripted model over loopback."""

from __future__ import annotations

import atexit
import base64
import datetime as dt
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from PIL import Image
from websockets.asyncio.client import ClientConnection, connect

from tests.wheel_env import installed_wheel  # noqa: F401 - the session's one wheel
from xtyserver.clock import ManualClock
from xtyserver.config import Settings, load_settings
from xtyserver.memory.accounting import timezone
from xtyserver.memory.enrichment import ENRICHMENT_SYSTEM_PROMPT
from xtyserver.memory.extraction import EXTRACTION_SYSTEM_PROMPT, SUMMARY_SYSTEM_PROMPT
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.server import Server, serving
from xtyserver.session.fold import FOLD_MARKER
from xtyserver.testing import FakeModelServer, RecordedRequest
from xtyserver.voice.asr import Recognizer

# A token as the server makes them (43 URL-safe characters): a configured one must pass the
# strength rule (S5-6), which refuses sequences such as "0123456789abcdef".
TOKEN = "tT7kQ2vN9xL4mP8rZ3wB6yC1dF5gH0jKsUeA2iO7qW"
START = 1_790_000_000.0  # 2026-09-21T...Z, a fixed wall-clock start
# The scheduler's grace after a chat (1.5 s, tests/test_server_yield.py) is dead time in a
# test that waits for the background jobs after each turn and sends no chat meanwhile.
NO_GRACE = {"memory.background_grace": 0.0}


# No test reads or writes the real per-user data folder, where a server run by hand keeps its
# token, page secret and memories (and a test would pair with it): each test process and
# every process it starts gets an empty one of its own. A test that needs another sets its own.
_DATA_HOME = tempfile.mkdtemp(prefix="xty-data-home-")
os.environ["XDG_DATA_HOME"] = _DATA_HOME
atexit.register(shutil.rmtree, _DATA_HOME, True)


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Harness:
    url: str
    fake: FakeModelServer
    server: Server
    store: MemoryStore
    clock: ManualClock
    settings: Settings

    def turn_request(self) -> RecordedRequest:
        """The last chat request of a turn.

        Background jobs (extraction, summaries, folds) call the model after a
        reply, so their requests may already follow the turn's.
        """
        return [r for r in self.fake.chat_requests if not is_job_request(r)][-1]

    @asynccontextmanager
    async def client(self, **kwargs: Any) -> AsyncIterator[ClientConnection]:
        async with connect(self.url, max_size=None, **kwargs) as ws:
            yield ws

    @asynccontextmanager
    async def adapter(
        self, game: str = "stardew-valley", save: str = "farm-a", **hello: Any
    ) -> AsyncIterator[ClientConnection]:
        async with self.client() as ws:
            await send(ws, hello_frame(game, save, **hello))
            answer = await recv(ws)
            assert answer["type"] == "server.hello", answer
            yield ws


def is_job_request(request: RecordedRequest) -> bool:
    """Whether a recorded chat request is a background job's (not a turn's)."""
    messages = request.json.get("messages") if isinstance(request.json, dict) else None
    first = messages[0].get("content") if messages else None
    if not isinstance(first, str):
        return False
    jobs = (EXTRACTION_SYSTEM_PROMPT, SUMMARY_SYSTEM_PROMPT, ENRICHMENT_SYSTEM_PROMPT)
    return first in jobs or first.startswith(FOLD_MARKER)


def player_text(request: RecordedRequest) -> str:
    """The player's text of a turn's request: the last user message after its data fence."""
    from xtyserver.session.prompt import unfence

    content = request.json["messages"][-1]["content"]
    if isinstance(content, list):
        content = "".join(p.get("text", "") for p in content)
    return unfence(content)[1]


def hello_frame(game: str = "stardew-valley", save: str = "farm-a", **extra: Any) -> dict[str, Any]:
    frame: dict[str, Any] = {
        "type": "adapter.hello",
        "id": "h1",
        "protocol": "v1",
        "adapter": {"name": "xty-stardew", "version": "0.1.0"},
        "identity": {"gameId": game, "saveId": save},
        "token": TOKEN,
        "timezone": "Asia/Shanghai",
    }
    frame.update(extra)
    return frame


def model_context(clock: ManualClock, age: float = 0.0, **parts: Any) -> dict[str, Any]:
    from datetime import UTC, datetime

    captured = datetime.fromtimestamp(clock.now() - age, UTC).isoformat().replace("+00:00", "Z")
    ctx: dict[str, Any] = {"schemaVersion": 1, "capturedAt": captured}
    ctx.update(parts)
    return ctx


def png_b64(width: int = 64, height: int = 48) -> str:
    buf = io.BytesIO()
    Image.new("RGB", (width, height), (120, 200, 80)).save(buf, format="PNG")
    return base64.b64encode(buf.getvalue()).decode()


async def send(ws: ClientConnection, frame: dict[str, Any] | str | bytes) -> None:
    if isinstance(frame, dict):
        await ws.send(json.dumps(frame, ensure_ascii=False))
    else:
        await ws.send(frame)


async def recv(ws: ClientConnection, timeout: float = 10.0) -> dict[str, Any]:
    with anyio.fail_after(timeout):
        data = await ws.recv()
    value = json.loads(data)
    assert isinstance(value, dict)
    return value


async def chat(
    ws: ClientConnection, text: str, chat_id: str = "c1", **extra: Any
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Send a chat.send and collect its deltas and the final chat.done/chat.error."""
    await send(ws, {"type": "chat.send", "id": chat_id, "text": text, "source": "text", **extra})
    deltas = []
    while True:
        frame = await recv(ws)
        if frame["type"] in ("memory.confirm.request", "memory.notice"):
            continue  # a mod may ignore them and lose nothing (v1.md "memory.confirm.request")
        if frame["type"] == "chat.delta":
            assert frame["id"] == chat_id
            deltas.append(frame)
            continue
        return deltas, frame


@asynccontextmanager
async def running(
    data_dir: Path,
    *,
    clock: ManualClock | None = None,
    model: bool = True,
    overrides: dict[str, Any] | None = None,
    record: Path | None = None,
    record_images: bool = False,
    fake_options: dict[str, Any] | None = None,
    recognizer: Callable[[], Recognizer] | None = None,
) -> AsyncIterator[Harness]:
    clock = clock or ManualClock(START)
    async with FakeModelServer(**(fake_options or {})) as fake:
        values: dict[str, Any] = {
            "data_dir": str(data_dir),
            "server.port": 0,
            "model.first_token_timeout": 5.0,
            "model.idle_timeout": 5.0,
            "model.backoff_base": 0.01,
            "model.backoff_cap": 0.05,
            # The background search-key job asks the model when a save opens: off
            # unless a test is about it, so scripted replies meet the calls they expect.
            "memory.enrich_keys": False,
            # The in-process embedding model likewise: tests about it turn it on, so
            # scripted vectors and words alone stay what the others measure.
            "memory.local_embedding": False,
            "memory.provider_embedding": False,
        }
        if model:
            values["model.base_url"] = fake.base_url
            values["model.model"] = "fake-vl"
        values.update(overrides or {})
        settings = load_settings(None, env={}, overrides=values)
        async with serving(
            settings,
            token=TOKEN,
            clock=clock,
            record=record,
            record_images=record_images,
            recognizer=recognizer,
        ) as server:
            yield Harness(server.url, fake, server, server.store, clock, settings)


class ServerProcess:
    """A real `xtyserver serve` process (memory figures of the server alone, SIGKILL)."""

    def __init__(self, data_dir: Path, **env: str) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "xtyserver", "serve", "--port", "0", "--log-json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**os.environ, "XTY_TOKEN": TOKEN, "XTY_DATA_DIR": str(data_dir), **env},
        )
        self._events: list[str] = []
        self._logged = threading.Condition()
        threading.Thread(target=self._read_log, daemon=True).start()
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline().strip()
        assert line.startswith("listening ws://"), line
        self.url = line.split(" ", 1)[1]

    def _read_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            try:
                event = str(json.loads(line).get("event", ""))
            except (ValueError, AttributeError):
                continue
            with self._logged:
                self._events.append(event)
                self._logged.notify_all()

    def wait_logged(self, *events: str, timeout: float = 60.0) -> None:
        """Wait until the server has logged one of ``events`` (its JSON log on stderr)."""
        with self._logged:
            logged = lambda: any(e in self._events for e in events)  # noqa: E731
            assert self._logged.wait_for(logged, timeout), events

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# Test files that share something costly or fragile run on one worker, one after the other:
# the wheel's venv (built once per worker), and the real browsers (each starts its own, and
# Chromium's profile writes are slower than the assertions on them when many run at once).
SHARED_WORKER = {
    "tests/test_wheel.py": "wheel",
    "tests/test_journey.py": "wheel",
    # It builds a wheel from this checkout too: two builds at once share setuptools'
    # build/ folder in the source tree, and one removes what the other is writing.
    "tests/test_windows_bundle.py": "wheel",
    "tests/cli/test_open_page.py": "browser",
    "tests/manage/test_browser.py": "browser",
    "tests/manage/test_page.py": "browser",
    "tests/manage/test_embedding_page.py": "browser",
    "tests/manage/test_first_run.py": "browser",
    "tests/adapter/test_speakup_journeys.py": "browser",
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Give every test its file as its xdist group (``--dist loadgroup``), or a shared one.

    Module fixtures then run once, on the one worker that runs the file.
    """
    root = Path(__file__).resolve().parents[1]
    for item in items:
        path = item.path.resolve().relative_to(root).as_posix()
        item.add_marker(pytest.mark.xdist_group(SHARED_WORKER.get(path, path)))


def next_midnight(now: float, tz: str) -> float:
    """Epoch seconds of the next local midnight after ``now`` in ``tz`` (a new bill's day)."""
    zone = timezone(tz)
    today = dt.datetime.fromtimestamp(now, tz=zone).date()
    midnight = dt.datetime.combine(today + dt.timedelta(days=1), dt.time(0), tzinfo=zone)
    return midnight.timestamp()
