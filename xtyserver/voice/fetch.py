"""The larger speech models, fetched once when the player chooses one (docs/voice.md).

``base`` comes with the ``voice`` extra (two wheels, :mod:`xtyserver.voice.model_files`).
The others are faster-whisper (CTranslate2) conversions kept on ModelScope, which
players in mainland China reach without a proxy (``voice.model_source`` names
another mirror of the same API):

* the repository's file list (``/api/v1/models/<repo>/repo/files``) gives each
  file's size and SHA-256;
* each file is downloaded into ``<data_dir>/voice/models/<model>.partial/``,
  resumed with an HTTP ``Range`` after a broken download (``<file>.part``), and
  must have the listed size and SHA-256 before it gets its name, or it is deleted
  and the fetch fails saying so;
* only when every file is whole does the folder become
  ``<data_dir>/voice/models/<model>/``: a model is there whole or not at all, and
  the model in use until then stays in use.

Blocking file and network work: the voice service runs it on a worker thread and
stops it between two blocks (:class:`Stopped`).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import ssl
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from xtyserver.config import VOICE_MODEL_SOURCE
from xtyserver.model.e5_weights import _open, _why, download, sha256_of
from xtyserver.voice.model_files import ModelFilesError, fetched_folder


@dataclass(frozen=True)
class Choice:
    """One speech model the page offers.

    Attributes:
        name: ``voice.model``'s value.
        repo: Its ModelScope repository; "": installed with the extra.
        megabytes: About how much it downloads (what the page says before asking).
    """

    name: str
    repo: str
    megabytes: int


MODELS: dict[str, Choice] = {
    c.name: c
    for c in (
        Choice("base", "", 145),
        Choice("small", "pengzhendong/faster-whisper-small", 484),
        Choice("medium", "pengzhendong/faster-whisper-medium", 1530),
        Choice("large-v3-turbo", "pengzhendong/faster-whisper-large-v3-turbo", 1620),
    )
}
DEFAULT_SOURCE = VOICE_MODEL_SOURCE
WANTED = (
    "model.bin",
    "config.json",
    "tokenizer.json",
    "vocabulary.txt",
    "vocabulary.json",
    "preprocessor_config.json",
)
REQUIRED = ("model.bin", "config.json", "tokenizer.json")
LISTING_MAX = 2_000_000
"""The most bytes of a file list read (a repository lists a few dozen files)."""
TRIES = 3
TIMEOUT = 30.0
_SHA256 = re.compile(r"[0-9a-f]{64}")

Progress = Callable[[int, int], None]
"""Called with (bytes so far, bytes in all) over every file of the model."""


class Stopped(Exception):
    """The fetch was asked to stop; what came so far stays for the next try."""


@dataclass(frozen=True)
class Listed:
    path: str
    size: int
    sha256: str


def present(data_dir: Path, model: str) -> bool:
    """Whether ``model`` is here whole (``base``: its wheels decide, when it is loaded)."""
    return model == "base" or (fetched_folder(data_dir, model) / "model.bin").is_file()


def listing_url(source: str, repo: str) -> str:
    quoted = urllib.parse.quote(repo, safe="/")
    return f"{source.rstrip('/')}/api/v1/models/{quoted}/repo/files?Revision=master&Recursive=true"


def file_url(source: str, repo: str, path: str) -> str:
    quoted = urllib.parse.quote(repo, safe="/")
    return f"{source.rstrip('/')}/models/{quoted}/resolve/master/{urllib.parse.quote(path)}"


def parse_listing(body: bytes) -> list[Listed]:
    """The files a model needs from a ModelScope file list, each with its size and SHA-256.

    Raises:
        ModelFilesError: ``model_source`` when the list is not one, or lacks a file
            the model needs or its checksum.
    """
    try:
        files = json.loads(body)["Data"]["Files"]
        by_path = {str(f["Path"]): f for f in files if f.get("Type", "blob") == "blob"}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise ModelFilesError("the model source sent no file list", code="model_source") from None
    missing = [name for name in REQUIRED if name not in by_path]
    if missing:
        raise ModelFilesError(
            f"the model source lists no {', '.join(missing)}", code="model_source"
        )
    out = []
    for name in WANTED:
        entry = by_path.get(name)
        if entry is None:
            continue
        sha, size = str(entry.get("Sha256", "")).lower(), entry.get("Size")
        if not _SHA256.fullmatch(sha) or not isinstance(size, int) or size < 0:
            raise ModelFilesError(
                f"the model source gives no checksum for {name}", code="model_source"
            )
        out.append(Listed(name, size, sha))
    return out


def fetch(
    data_dir: Path,
    model: str,
    *,
    source: str = DEFAULT_SOURCE,
    context: ssl.SSLContext | None = None,
    progress: Progress | None = None,
    stop: Callable[[], bool] = lambda: False,
) -> Path:
    """``model``'s folder, downloaded and verified unless it is here already.

    Raises:
        ModelFilesError: ``model_missing`` (no such model), ``model_source`` (no
            usable file list), ``model_download`` (the download broke :data:`TRIES`
            times; what came stays and the next fetch resumes it) or
            ``model_checksum`` (a file is not what the list says; it is deleted).
        Stopped: ``stop()`` became true.
    """
    choice = MODELS.get(model)
    if choice is None or not choice.repo:
        raise ModelFilesError(f"no speech model {model!r} to download", code="model_missing")
    target = fetched_folder(data_dir, model)
    if (target / "model.bin").is_file():
        return target
    try:
        with _open(listing_url(source, choice.repo), context) as response:
            body = response.read(LISTING_MAX + 1)
    except (OSError, ValueError) as exc:
        raise ModelFilesError(f"the model source: {_why(exc)}", code="model_download") from None
    files = parse_listing(body[:LISTING_MAX])
    staging = target.with_name(f"{model}.partial")
    staging.mkdir(parents=True, exist_ok=True)
    total = sum(f.size for f in files)
    before = 0
    for listed in files:
        done = staging / listed.path
        if not (done.is_file() and done.stat().st_size == listed.size):
            url = file_url(source, choice.repo, listed.path)
            _fetch_file(url, listed, staging, context, before, total, progress, stop)
        before += listed.size
        if progress is not None:
            progress(before, total)
    os.replace(staging, target)
    return target


def _fetch_file(
    url: str,
    listed: Listed,
    staging: Path,
    context: ssl.SSLContext | None,
    before: int,
    total: int,
    progress: Progress | None,
    stop: Callable[[], bool],
) -> None:
    part = staging / f"{listed.path}.part"

    def step(have: int, _length: int) -> None:
        if stop():
            raise Stopped
        if progress is not None:
            progress(before + have, total)

    problem = ""
    for _ in range(TRIES):
        try:
            download(url, part, context=context, progress=step)
            break
        except OSError as exc:  # broken: the next try resumes
            problem = _why(exc)
    else:
        raise ModelFilesError(
            f"the download of {listed.path} broke ({problem}); try again to resume it",
            code="model_download",
        )
    if part.stat().st_size != listed.size or sha256_of(part) != listed.sha256:
        part.unlink(missing_ok=True)
        raise ModelFilesError(
            f"{listed.path} does not match its checksum; it was deleted", code="model_checksum"
        )
    os.replace(part, staging / listed.path)


def remove(data_dir: Path, model: str) -> None:
    """Delete a downloaded model and what a broken fetch left of it."""
    target = fetched_folder(data_dir, model)
    for folder in (target, target.with_name(f"{model}.partial")):
        shutil.rmtree(folder, ignore_errors=True)
