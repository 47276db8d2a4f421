"""The player's per-game switch of game actions (v1.md "Actions"), kept in the data folder.

``action_modes.json`` maps a ``gameId`` to ``all`` (every declared action),
``look`` (look only: point at, highlight, a waypoint) or ``off``; a game not
listed is ``all``. Read once when the server starts and kept in memory (a turn
asks :meth:`ActionModes.mode`, which reads no file); the page's change is
written whole, atomically and owner-only, and counts from the next turn of
every open connection.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import get_args

from xtyserver.files import private_dir, replace_private
from xtyserver.session.actions import ActionMode

FILE = "action_modes.json"
MAX_GAMES = 64
"""Games the file keeps a switch for (a page cannot grow it without bound)."""
MODES: tuple[ActionMode, ...] = get_args(ActionMode)


class ActionModes:
    """The switches of one data folder. An unreadable file counts as none (every game ``all``)."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.file = data_dir / FILE
        self._modes = self._read()

    def _read(self) -> dict[str, ActionMode]:
        try:
            doc = json.loads(self.file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(doc, dict):
            return {}
        return {k: v for k, v in list(doc.items())[:MAX_GAMES] if isinstance(k, str) and v in MODES}

    def mode(self, game_id: str) -> ActionMode:
        """The switch of ``game_id`` (``all`` when the player never set one)."""
        return self._modes.get(game_id, "all")

    def modes(self) -> dict[str, ActionMode]:
        """Every switch the player set, by game."""
        return dict(self._modes)

    def set(self, game_id: str, mode: ActionMode) -> None:
        """Store one game's switch (``all`` removes it: the default).

        Raises:
            OSError: the file could not be written; the switches stay as they were.
            ValueError: a new game past :data:`MAX_GAMES`.
        """
        modes = dict(self._modes)
        modes.pop(game_id, None)
        if mode != "all":
            if len(modes) >= MAX_GAMES:
                raise ValueError(f"at most {MAX_GAMES} games keep a switch")
            modes[game_id] = mode
        private_dir(self.data_dir)
        data = json.dumps(modes, ensure_ascii=False, indent=2).encode("utf-8")
        replace_private(self.file, data)
        self._modes = modes
