"""A larger speech model is fetched once, whole or not at all, from the page (docs/voice.md).

A real HTTP server on a loopback socket speaks ModelScope's two calls (the
repository's file list with each file's size and SHA-256, and the files with
``Range``); it can break a download halfway or serve bytes that do not match
the list. The player's side is the page's API over its real HTTP port.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import running
from tests.local_http import local_http
from tests.manage.test_http import Page
from tests.voice.conftest import assert_no_raw_audio
from xtyserver.voice import fetch
from xtyserver.voice.model_files import ModelFilesError, fetched_folder, model_folder

REPO = fetch.MODELS["small"].repo
FILES = {
    "model.bin": os.urandom(300_000),
    "config.json": b'{"alignment_heads": []}',
    "tokenizer.json": b"{}",
    "vocabulary.txt": b"a\nb\n",
}


class Source:
    """A ModelScope-shaped source: ``cuts`` responses of model.bin break halfway."""

    def __init__(self, files: dict[str, bytes], listed: dict[str, bytes] | None = None) -> None:
        self.files = files
        self.listed = listed or files
        self.cuts = 0
        self.ranges: list[str] = []
        self.requests: list[str] = []

    def listing(self) -> bytes:
        entries = [
            {
                "Name": name,
                "Path": name,
                "Type": "blob",
                "Size": len(data),
                "Sha256": hashlib.sha256(data).hexdigest(),
            }
            for name, data in self.listed.items()
        ]
        entries.append({"Name": "README.md", "Path": "README.md", "Type": "blob", "Size": 1})
        return json.dumps({"Code": 200, "Data": {"Files": entries}}).encode()


@pytest.fixture
def source() -> Iterator[tuple[Source, str]]:
    state = Source(dict(FILES))

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            state.requests.append(self.path)
            if self.path.startswith(f"/api/v1/models/{REPO}/repo/files?"):
                self._send(200, state.listing())
                return
            prefix = f"/models/{REPO}/resolve/master/"
            name = self.path.removeprefix(prefix)
            if not self.path.startswith(prefix) or name not in state.files:
                self._send(404, b"no")
                return
            data = state.files[name]
            start = 0
            wanted = self.headers.get("Range")
            if wanted:
                state.ranges.append(f"{name} {wanted}")
                start = int(wanted.removeprefix("bytes=").rstrip("-"))
            body = data[start:]
            self.send_response(206 if start else 200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if name == "model.bin" and state.cuts > 0:
                state.cuts -= 1
                self.wfile.write(body[: len(body) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self.wfile.write(body)

        def _send(self, status: int, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with local_http(Handler) as url:
        yield state, url


def test_a_model_is_fetched_whole_resuming_a_broken_download(
    tmp_path: Path, source: tuple[Source, str]
) -> None:
    state, url = source
    state.cuts = 1
    seen: list[tuple[int, int]] = []
    folder = fetch.fetch(tmp_path, "small", source=url, progress=lambda d, t: seen.append((d, t)))
    assert folder == fetched_folder(tmp_path, "small")
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == FILES
    # The second try asked for the rest only.
    half = len(FILES["model.bin"]) // 2
    assert state.ranges == [f"model.bin bytes={half}-"]
    total = sum(len(d) for d in FILES.values())
    assert seen[-1] == (total, total) and all(t == total for _, t in seen)
    assert not folder.with_name("small.partial").exists()
    assert model_folder(tmp_path, "", "small") == folder
    # Once here, it is never fetched again.
    before = len(state.requests)
    assert fetch.fetch(tmp_path, "small", source=url) == folder
    assert len(state.requests) == before


def test_a_file_failing_its_checksum_is_deleted_and_does_not_become_the_model(
    tmp_path: Path, source: tuple[Source, str]
) -> None:
    state, url = source
    state.listed = {**FILES, "model.bin": b"something else"}
    with pytest.raises(ModelFilesError) as failed:
        fetch.fetch(tmp_path, "small", source=url)
    assert failed.value.code == "model_checksum" and "model.bin" in failed.value.message
    assert not fetched_folder(tmp_path, "small").exists()
    assert not list(tmp_path.rglob("model.bin*"))
    with pytest.raises(ModelFilesError) as missing:
        model_folder(tmp_path, "", "small")
    assert missing.value.code == "model_missing"


def test_a_download_broken_every_try_is_resumed_by_the_next_fetch(
    tmp_path: Path, source: tuple[Source, str]
) -> None:
    state, url = source
    state.cuts = fetch.TRIES
    with pytest.raises(ModelFilesError) as broke:
        fetch.fetch(tmp_path, "small", source=url)
    assert broke.value.code == "model_download" and "resume" in broke.value.message
    part = fetched_folder(tmp_path, "small").with_name("small.partial") / "model.bin.part"
    kept = part.stat().st_size
    assert 0 < kept < len(FILES["model.bin"])
    state.ranges.clear()
    folder = fetch.fetch(tmp_path, "small", source=url)
    assert state.ranges == [f"model.bin bytes={kept}-"]
    assert (folder / "model.bin").read_bytes() == FILES["model.bin"]


@pytest.mark.parametrize(
    "body",
    [b"not json", b'{"Data": {"Files": [{"Path": "config.json", "Size": 1}]}}'],
)
def test_a_source_without_a_usable_list_is_named(body: bytes) -> None:
    with pytest.raises(ModelFilesError) as failed:
        fetch.parse_listing(body)
    assert failed.value.code == "model_source"


@pytest.mark.anyio
async def test_the_page_downloads_a_model_with_progress_and_turns_voice_on_for_open_mods(
    tmp_path: Path, source: tuple[Source, str], capfd: pytest.CaptureFixture[str]
) -> None:
    state, url = source
    async with running(tmp_path / "data", overrides={"voice.model_source": url}) as h:
        page = Page(h)
        await page.open()
        view = await page.get("voice")
        # Voice off: no device is listed (PortAudio stays unloaded), nothing is open.
        assert (view["enabled"], view["devices"], view["microphoneOpen"]) == (False, None, False)
        assert {m["name"]: m["present"] for m in view["models"]} == {
            "base": True,
            "small": False,
            "medium": False,
            "large-v3-turbo": False,
        }
        refused = await page.post("voice-fetch", status=400, model="huge")
        assert refused["fields"] == ["model"]
        # Fetched before the save below: the source is the config file's setting, which this
        # harness passes as an override the page's save does not keep.
        state.cuts = 1
        started = await page.post("voice-fetch", model="small")
        assert started["download"]["model"] == "small"
        with anyio.fail_after(30):
            while (view := await page.get("voice"))["download"]["state"] == "running":
                await anyio.sleep(0.05)
        assert view["download"]["state"] == "done", view["download"]
        assert view["download"]["done"] == view["download"]["total"] > 0
        assert {m["name"]: m["present"] for m in view["models"]}["small"] is True
        # A broken source: a clear message in the player's language, the model kept.
        state.files = {}
        fetch.remove(h.settings.data_path, "medium")
        await page.post("voice-fetch", model="medium")
        with anyio.fail_after(30):
            while (view := await page.get("voice"))["download"]["state"] == "running":
                await anyio.sleep(0.05)
        failed = view["download"]
        assert (failed["state"], failed["code"]) == ("failed", "model_download")
        assert "接着下载" in failed["message"]
        assert {m["name"]: m["present"] for m in view["models"]}["small"] is True
        # A mod connected before the switch is told voice is off, then not.
        async with h.adapter() as ws:
            await ws.send(json.dumps({"type": "voice.start", "id": "v1", "audio": "stream"}))
            assert json.loads(await ws.recv())["code"] == "voice_off"
            await page.post("settings", changes={"voice.enabled": True, "voice.model": "small"})
            assert h.server.voice is not None and h.server.voice.options.model == "small"
            for frame in ("start", "cancel", "cancel"):
                await ws.send(
                    json.dumps(
                        {"type": f"voice.{frame}", "id": "v2", "audio": "stream"}
                        if frame == "start"
                        else {"type": f"voice.{frame}", "id": "v2"}
                    )
                )
            # Only the second cancel is answered: the start was taken this time.
            assert json.loads(await ws.recv())["code"] == "unknown_voice"
            # A mod's own audio, then dropped: held in memory only, never on disk or in a log.
            pcm = os.urandom(12_000)
            data = base64.b64encode(pcm).decode()
            frames: list[dict[str, Any]] = [
                {"type": "voice.start", "id": "v3", "audio": "stream"},
                {"type": "voice.audio", "id": "v3", "seq": 0, "data": data},
                {"type": "voice.cancel", "id": "v3"},
                {"type": "voice.cancel", "id": "v3"},
            ]
            for frame in frames:
                await ws.send(json.dumps(frame))
            assert json.loads(await ws.recv())["code"] == "unknown_voice"
        assert_no_raw_audio(h.settings.data_path, capfd.readouterr().out, pcm)
        assert (await page.get("settings"))["values"]["voice.model"] == "small"


@pytest.mark.anyio
async def test_a_chosen_model_not_here_is_fetched_on_first_use(
    tmp_path: Path, source: tuple[Source, str]
) -> None:
    """The player chose ``small`` in the config and speaks before downloading it: the mod hears
    that the model could not be loaded, and the model is fetched once, meanwhile."""
    state, url = source
    overrides = {"voice.enabled": True, "voice.model": "small", "voice.model_source": url}
    async with running(tmp_path / "data", overrides=overrides) as h:
        async with h.adapter() as ws:
            speech = base64.b64encode(bytes(range(256)) * 40).decode()  # loud, not silence
            for frame in (
                {"type": "voice.start", "id": "v1", "audio": "stream", "speech": "none"},
                {"type": "voice.audio", "id": "v1", "seq": 0, "data": speech},
                {"type": "voice.stop", "id": "v1"},
            ):
                await ws.send(json.dumps(frame))
            answer = json.loads(await ws.recv())
            assert (answer["type"], answer["code"]) == ("voice.error", "voice_unavailable")
            assert "设置" in answer["message"]
        voice = h.server.voice
        assert voice is not None and voice.download.model == "small"
        with anyio.fail_after(30):
            while voice.download.state == "running":
                await anyio.sleep(0.05)
        assert voice.download.state == "done"
        assert fetch.present(h.settings.data_path, "small")
        listed = [r for r in state.requests if "/repo/files?" in r]
        assert len(listed) == 1  # once
