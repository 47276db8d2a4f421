"""``xtyserver mcp``: the memory tools for a general assistant, over MCP on stdio.

The same three tools as in-game chat: ``xiaotangyuan_memory_view``,
``xiaotangyuan_memory_correct_shared`` and ``xiaotangyuan_memory_forget`` (two
steps: a preview with a confirmation token, then the confirmation). Built on
the ``mcp`` package's ``MCPServer``; every operation goes through
:class:`~xtyserver.manage.api.ManageApi`, like the page's.

It manages memory; it never pushes the companion's memory into the
assistant's conversation: no resources, no prompts, nothing but the results of
the tool calls the assistant makes. It opens the profile's store like any
other process, so it works while ``xtyserver serve`` runs on the same store
(SQLite WAL; a write waits up to ``memory.busy_timeout_ms`` for the other
process's lock).
"""

from __future__ import annotations

import sys
from typing import Any

import msgspec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from xtyserver import __version__, log
from xtyserver.clock import SystemClock
from xtyserver.config import Settings
from xtyserver.errors import XtyError
from xtyserver.manage.api import ForgetTarget, ManageApi, ManageError
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.serve.localzone import detect_local_timezone
from xtyserver.serve.memory_service import MemoryService

INSTRUCTIONS = (
    "Tools to look at and manage the long-term memory of XiaoTangYuan (小汤圆), the player's "
    "game companion: a shared profile of the player and short memories per game and save. "
    "Call them only when the player asks about or wants to change that memory. Forgetting "
    "takes two steps: call xiaotangyuan_memory_forget without confirm_token to get a preview "
    "and a token, show the preview to the player, and call it again with the token only "
    "after the player agrees. Play statistics are never deleted."
)


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode("utf-8")


def build(api: ManageApi) -> MCPServer[Any]:
    """An ``MCPServer`` with the three memory tools over ``api``."""
    server: MCPServer[Any] = MCPServer(
        name="xiaotangyuan-memory", version=__version__, instructions=INSTRUCTIONS
    )

    @server.tool(name="xiaotangyuan_memory_view", structured_output=False)
    async def view(game_id: str | None = None, save_id: str | None = None) -> str:
        """Show XiaoTangYuan's memory: the shared profile and every game and save.

        Without arguments: the profile, and per game and save how many memories it
        has and its play statistics. With game_id and save_id: that save's memories
        (id, kind, subject, summary, importance, status, pinned, times) and statistics.
        """
        try:
            if game_id and save_id:
                return _json(await api.view_save(game_id, save_id))
            overview = await api.view()
        except (ManageError, XtyError) as exc:
            raise ToolError(exc.message) from exc
        return _json(
            {
                "profile": overview.profile,
                "games": [
                    {
                        "gameId": g.game_id,
                        "stats": g.stats,
                        "saves": [
                            {
                                "saveId": s.save_id,
                                "name": s.name,
                                "memories": len(s.events),
                                "stats": s.stats,
                            }
                            for s in g.saves
                        ],
                    }
                    for g in overview.games
                ],
            }
        )

    @server.tool(name="xiaotangyuan_memory_correct_shared", structured_output=False)
    async def correct_shared(field: str, value: str | list[str]) -> str:
        """Correct one field of the shared player profile; returns the updated profile.

        field is one of: nickname, language, replyStyle, personality, hobbies, games,
        companionName, companionPersona, notes. personality, hobbies, games and notes
        take a list of short strings; the others a string. "" or [] clears a field.
        """
        try:
            return _json(await api.correct_shared(field, value))
        except (ManageError, XtyError) as exc:
            raise ToolError(exc.message) from exc

    @server.tool(name="xiaotangyuan_memory_forget", structured_output=False)
    async def forget(
        kind: str | None = None,
        game_id: str | None = None,
        save_id: str | None = None,
        event_id: int | None = None,
        field: str | None = None,
        confirm_token: str | None = None,
    ) -> str:
        """Forget memories, in two steps.

        Step 1 (no confirm_token): kind is "event" (game_id, save_id, event_id),
        "save" (game_id, save_id), "game" (game_id) or "shared_field" (field); the
        answer lists exactly what would be deleted and gives a confirm_token.
        Step 2: call again with only confirm_token, after the player agreed; the
        token works once, for five minutes. Play statistics are always kept.
        """
        try:
            if confirm_token:
                return _json(await api.forget_confirm(confirm_token))
            target = msgspec.convert(
                {
                    "kind": kind,
                    "gameId": game_id,
                    "saveId": save_id,
                    "eventId": event_id,
                    "field": field,
                },
                ForgetTarget,
            )
            return _json(await api.forget_preview(target))
        except msgspec.ValidationError as exc:
            raise ToolError(f"not a forget target: {exc}") from exc
        except (ManageError, XtyError) as exc:
            raise ToolError(exc.message) from exc

    del view, correct_shared, forget
    return server


async def run_mcp(settings: Settings) -> int:
    """Serve the memory tools of ``settings.profile`` over stdio until stdin closes."""
    log.configure(stream=sys.stderr, json=True, level="warning")
    store = MemoryStore.open_profile(
        settings.data_path,
        settings.profile,
        clock=SystemClock(),
        busy_timeout_ms=settings.memory.busy_timeout_ms,
    )
    try:
        memory = MemoryService(store, enabled=True, soft_cap=settings.memory.soft_cap)
        zone = settings.server.default_timezone or detect_local_timezone() or "UTC"
        await build(ManageApi(memory, SystemClock(), timezone=zone)).run_stdio_async()
    finally:
        store.close()
    return 0
