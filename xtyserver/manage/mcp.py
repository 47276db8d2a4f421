"""``xtyserver mcp``: the memory tools for a general assistant, over MCP on stdio.

Three of the four tools of in-game chat, with the same vocabulary (the search
tool needs a current save, so it stays in-game):
``xiaotangyuan_memory_view`` (the profile, each save's memories by readable
name, and the statistics: what the in-game view shows), ``..._correct_shared``
and ``..._forget`` (targets ``item``, ``save``, ``game``, ``profile``, ``all``;
two steps: a preview with a ``confirmToken``, then the same target with it;
single-use, for this client only, two minutes). Built on the ``mcp`` package's
``MCPServer``; every operation goes through :mod:`xtyserver.manage.ops`, like
the page's, and answers with the same JSON shapes (RFC 3339 times).

It manages memory; it never pushes the companion's memory into the
assistant's conversation: no resources, no prompts, nothing but the results of
the tool calls the assistant makes. It opens the profile's store like any
other process, so it works while ``xtyserver serve`` runs on the same store
(SQLite WAL; a write waits up to ``memory.busy_timeout_ms`` for the other
process's lock).
"""

from __future__ import annotations

import secrets
import sys
from typing import Any

import msgspec
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from xtyserver import __version__, log
from xtyserver.clock import Clock, SystemClock
from xtyserver.config import Settings
from xtyserver.manage import ops
from xtyserver.memory.manage import Confirmations, ForgetRequest
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import EDITABLE_FIELDS, Scope
from xtyserver.serve.localzone import detect_local_timezone
from xtyserver.serve.memory_service import MemoryService

ASKER = "mcp"  # one client per stdio server

INSTRUCTIONS = (
    "Tools to look at and manage the long-term memory of XiaoTangYuan (小汤圆), the player's "
    "game companion: a shared profile of the player and short memories per game and save. "
    "Call them only when the player asks about or wants to change that memory. Forgetting "
    "takes two steps: call xiaotangyuan_memory_forget without confirmToken to get a preview "
    "and a token, show the preview to the player, and call it again with the same target "
    "and the token only after the player agrees. Play statistics are kept unless "
    "includeStats is true."
)


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode("utf-8")


FIELD_NAMES = ", ".join(f.wire for f in EDITABLE_FIELDS)
LIST_NAMES = ", ".join(f.wire for f in EDITABLE_FIELDS if f.is_list)


def build(memory: MemoryService, clock: Clock, *, timezone: str = "UTC") -> MCPServer[Any]:
    """An ``MCPServer`` with the three memory tools over ``memory``."""
    server: MCPServer[Any] = MCPServer(
        name="xiaotangyuan-memory", version=__version__, instructions=INSTRUCTIONS
    )
    confirmations = Confirmations(secrets.token_hex(16))

    @server.tool(name="xiaotangyuan_memory_view", structured_output=False)
    async def view(gameId: str | None = None, saveId: str | None = None) -> str:
        """Show XiaoTangYuan's memory: the shared profile, each save's memories, statistics.

        Without arguments: every game and save. gameId: one game's saves;
        gameId and saveId: that save. Each save has its readable name
        (saveName) and its items (id, kind, subject, summary, importance,
        status, pinned, updatedAt); stats holds days, sessions and active time
        per game and save, and the token bill.
        """
        try:
            scope = None
            if saveId is not None:
                if gameId is None:
                    raise ops.Refused("saveId needs gameId", 400, ["gameId"])
                scope = msgspec.convert({"gameId": gameId, "saveId": saveId}, Scope)
            found = await ops.view(memory, clock, timezone, game_id=gameId, scope=scope)
        except msgspec.ValidationError as exc:
            raise ToolError(f"not a save: {exc}") from exc
        except ops.Refused as exc:
            raise ToolError(exc.message) from exc
        return _json(found)

    @server.tool(name="xiaotangyuan_memory_correct_shared", structured_output=False)
    async def correct_shared(field: str, value: str | list[str]) -> str:
        """Correct one field of the shared player profile; returns the updated profile."""
        try:
            return _json(await ops.correct(memory, field, value))
        except ops.Refused as exc:
            raise ToolError(exc.message) from exc

    assert correct_shared.__doc__ is not None
    correct_shared.__doc__ += (
        f"\n\n        field is one of: {FIELD_NAMES}. {LIST_NAMES} take a list of short "
        'strings; the others a string. "" or [] clears a field.\n'
    )

    @server.tool(name="xiaotangyuan_memory_forget", structured_output=False)
    async def forget(
        target: str,
        gameId: str | None = None,
        saveId: str | None = None,
        eventId: int | None = None,
        includeStats: bool = False,
        confirmToken: str | None = None,
    ) -> str:
        """Forget memories, in two steps.

        target is "item" (gameId, saveId, eventId), "save" (gameId, saveId),
        "game" (gameId), "profile" (the shared profile) or "all". Step 1
        (no confirmToken): the answer lists exactly what would be deleted and
        gives a confirmToken. Step 2, only after the player agreed: the same
        arguments plus confirmToken; the token works once, for two minutes.
        Play statistics are kept unless includeStats is true.
        """
        try:
            request = msgspec.convert(
                {
                    "target": target,
                    "gameId": gameId,
                    "saveId": saveId,
                    "eventId": eventId,
                    "includeStats": includeStats,
                    "confirmToken": confirmToken,
                },
                ForgetRequest,
            )
            done = await ops.forget(memory, confirmations, request, asker=ASKER, now=clock.now())
        except msgspec.ValidationError as exc:
            raise ToolError(f"not a forget target: {exc}") from exc
        except ops.Refused as exc:
            raise ToolError(exc.message) from exc
        return _json(done)

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
        await build(memory, SystemClock(), timezone=zone).run_stdio_async()
    finally:
        store.close()
    return 0
