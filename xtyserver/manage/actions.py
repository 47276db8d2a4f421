"""The memory page's actions view (v1.md "Actions"): what 小汤圆 did in the games, and the switch.

``GET actions``: every game's switch (``all``, ``look`` only, ``off``), the
actions the open connections' mods declared (name, description, risk), and the
action log, newest first: each request sent to a mod, its result, a risky call
waiting for the player's yes, a call the server refused and why (the injection
log's action records: arguments and outcome texts redacted, never the player's
words). ``POST actions`` ``{"gameId", "mode"}`` sets one game's switch; it
counts from the next turn of every open connection.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anyio
import msgspec

from xtyserver.manage.ops import Refused
from xtyserver.protocol.action_frames import ActionSpec
from xtyserver.protocol.frame_base import GameId
from xtyserver.serve.action_modes import ActionModes
from xtyserver.serve.working import InjectionLog
from xtyserver.session.actions import ActionMode

LOG_SHOWN = 200
"""Action records the page shows (the newest)."""


class ModeBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """``POST actions``: one game's switch."""

    game_id: GameId
    mode: ActionMode


class PageActions:
    """The actions view's steps for one running server.

    Args:
        modes: The per-game switches (the data folder's file).
        log: The injection log, whose action records the page lists.
        declared: The actions the open connections' mods declared, by game.
    """

    def __init__(
        self,
        modes: ActionModes,
        log: InjectionLog,
        declared: Callable[[], dict[str, list[ActionSpec]]],
    ) -> None:
        self.modes = modes
        self.log = log
        self.declared = declared

    async def view(self) -> dict[str, Any]:
        records = await anyio.to_thread.run_sync(self.log.actions, LOG_SHOWN)
        declared = self.declared()
        modes = self.modes.modes()
        games = list(dict.fromkeys([*declared, *modes, *(r.game_id for r in reversed(records))]))
        return {
            "games": [{"gameId": g, "mode": self.modes.mode(g)} for g in games],
            "declared": {
                g: [
                    {
                        "name": s.name,
                        "description": s.description,
                        "descriptionEn": s.description_en or "",
                        "risk": s.risk,
                    }
                    for s in specs
                ]
                for g, specs in declared.items()
            },
            "log": [_shown(r) for r in reversed(records)],
        }

    async def set(self, body: ModeBody) -> dict[str, Any]:
        try:
            await anyio.to_thread.run_sync(self.modes.set, body.game_id, body.mode)
        except ValueError as exc:
            raise Refused(str(exc), 400, ["gameId"]) from None
        except OSError as exc:
            reason = exc.strerror or type(exc).__name__
            raise Refused(
                f"the switch could not be written ({reason}); nothing was changed",
                500,
                os_error=reason,
            ) from None
        return await self.view()


def _shown(record: Any) -> dict[str, Any]:
    shown: dict[str, Any] = msgspec.to_builtins(record)
    shown.pop("kind", None)
    return {
        "at": shown.pop("at"),
        "gameId": shown.pop("game_id"),
        "saveId": shown.pop("save_id"),
        **shown,
    }
