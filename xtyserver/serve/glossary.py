"""Reading the game glossary: the packaged files, then the player's own (a shell).

Packaged ``xtyserver/memory/glossary/*.toml`` first, then the player's
``<data_dir>/glossary/*.toml`` (:mod:`xtyserver.memory.glossary`), each in name
order, so a player's entry replaces a packaged one. A bad file stops the start.
Only shells (``serving()``, its warm-up, the scripted model) import this module;
the core receives the finished, immutable :class:`~xtyserver.memory.glossary.Glossary`.
"""

from __future__ import annotations

import threading
import tomllib
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from xtyserver.errors import UsageError
from xtyserver.memory.glossary import Glossary, GlossaryError, parse_documents

FOLDER = "glossary"


def _packaged() -> list[tuple[str, dict[str, Any]]]:
    root = resources.files("xtyserver.memory.glossary")
    docs = []
    for item in sorted(root.iterdir(), key=lambda p: p.name):
        if item.name.endswith(".toml"):
            docs.append((f"(packaged) {item.name}", tomllib.loads(item.read_text("utf-8"))))
    return docs


def _player_files(data_dir: Path) -> list[Path]:
    folder = data_dir / FOLDER
    return sorted(folder.glob("*.toml")) if folder.is_dir() else []


def has_player_files(data_dir: Path | None) -> bool:
    """Whether ``<data_dir>/glossary/`` holds a file of the player's own to check."""
    return data_dir is not None and bool(_player_files(data_dir))


def _player(data_dir: Path) -> list[tuple[str, dict[str, Any]]]:
    docs = []
    for path in _player_files(data_dir):
        try:
            doc = tomllib.loads(path.read_text("utf-8"))
        except (OSError, UnicodeDecodeError) as exc:
            raise UsageError(f"glossary {path}: cannot be read: {exc}") from None
        except tomllib.TOMLDecodeError as exc:
            raise UsageError(f"glossary {path}: not valid TOML: {exc}") from None
        docs.append((str(path), doc))
    return docs


def load_glossary(data_dir: Path | None) -> Glossary:
    """The packaged glossary plus the files in ``<data_dir>/glossary/``.

    Args:
        data_dir: The data folder, or None for the packaged files alone.

    Raises:
        UsageError: A file cannot be read or is not a valid glossary (the
            message names the file, the entry and the field).
    """
    docs = _packaged()
    if data_dir is not None:
        docs += _player(data_dir)
    try:
        return parse_documents(docs)
    except GlossaryError as exc:
        raise UsageError(f"glossary {exc}") from None


class GlossaryOnce:
    """A glossary built once, by the first thread that asks (the others wait for it).

    For the packaged files alone (checked by the suite): read once the server
    listens, or by the first save index that comes sooner.
    """

    def __init__(self, build: Callable[[], Glossary]) -> None:
        self._build = build
        self._lock = threading.Lock()
        self._glossary: Glossary | None = None

    def __call__(self) -> Glossary:
        """The glossary, built now if no thread has built it yet."""
        with self._lock:
            if self._glossary is None:
                self._glossary = self._build()
            return self._glossary
