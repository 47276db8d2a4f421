"""``xtyserver mcp``: the memory tools for a general assistant, over MCP on stdio.

The same three tools as in-game chat: ``xiaotangyuan_memory_view``,
``xiaotangyuan_memory_correct_shared`` and ``xiaotangyuan_memory_forget`` (two
steps: a preview with a confirmation token, then the confirmation). Built on
the ``mcp`` package's ``MCPServer``; every operation goes through
:class:`~xtyserver.manage.api.ManageApi`, like the page's.

A forget is confirmed by the person, not by the assistant (issue 17 §1): the
confirming call asks the client's user through MCP elicitation where the
client declares it; where it does not (or the ask fails), the confirm must come
at least :data:`CONFIRM_DELAY` seconds after its preview and quote the preview's
target back (:class:`ConfirmGate`, on the injected clock).

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
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from xtyserver import __version__, log
from xtyserver.clock import SystemClock
from xtyserver.config import Settings
from xtyserver.errors import XtyError
from xtyserver.manage.api import ForgetPreview, ForgetTarget, ManageApi, ManageError
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.protocol.normalize import normalize
from xtyserver.serve.localzone import detect_local_timezone
from xtyserver.serve.memory_service import MemoryService

INSTRUCTIONS = (
    "Tools to look at and manage the long-term memory of XiaoTangYuan (小汤圆), the player's "
    "game companion: a shared profile of the player and short memories per game and save. "
    "Call them only when the player asks about or wants to change that memory. Forgetting "
    "takes two steps: call xiaotangyuan_memory_forget without confirm_token to get a preview "
    "and a token, show the preview to the player, and call it again with the token only "
    "after the player agrees: the server then asks the player itself where this client "
    "can ask its user; otherwise wait at least 5 seconds and pass quote, the preview's "
    "quote text, back. Play statistics are never deleted."
)
CONFIRM_DELAY = 5.0
"""Seconds between a preview and its confirm when the client cannot ask its user."""
_MAX_SHOWN = 32


class ConfirmGate:
    """MCP asks the person, not the assistant (pure; the caller passes the time).

    Remembers when each preview's token was shown and the target text it must
    be quoted with. A confirm the client could not put to its user passes only
    ``delay`` seconds or more after its preview and with the quote given back
    (compared normalised, case-folded).
    """

    def __init__(self, delay: float = CONFIRM_DELAY) -> None:
        self.delay = delay
        self._shown: dict[str, tuple[float, str]] = {}

    def shown(self, token: str, quote: str, now: float) -> None:
        self._shown[token] = (now, quote)
        while len(self._shown) > _MAX_SHOWN:
            del self._shown[next(iter(self._shown))]

    def quote(self, token: str) -> str | None:
        """The target text of ``token``'s preview, or None for a token never shown."""
        seen = self._shown.get(token)
        return seen[1] if seen is not None else None

    def refusal(self, token: str, quote: str | None, now: float) -> str | None:
        """Why a confirm without the person's answer is refused, or None when it may go on."""
        seen = self._shown.get(token)
        if seen is None:
            return "confirmation unknown, used or expired; preview again"
        at, wanted = seen
        if now - at < self.delay:
            return (
                f"too soon: confirm at least {self.delay:g} seconds after the preview, "
                "once the player has read it"
            )
        if normalize(quote or "").strip().casefold() != wanted.casefold():
            return f"quote the preview's target back: quote={wanted!r}"
        return None

    def used(self, token: str) -> None:
        self._shown.pop(token, None)


class _Agree(BaseModel):
    delete: bool = Field(description="true to delete it, false to keep it")


def target_quote(target: ForgetTarget) -> str:
    """The words a confirm quotes back: the target as its preview names it."""
    parts = [target.kind, target.game_id, target.save_id, target.field]
    if target.event_id is not None:
        parts.append(f"#{target.event_id}")
    return " ".join(p for p in parts if p)


async def ask_person(ctx: Context[Any, Any], preview_text: str) -> bool | None:
    """Ask the client's user through elicitation: True/False, or None when it cannot ask."""
    caps = ctx.client_capabilities
    if caps is None or caps.elicitation is None:
        return None
    message = f"小汤圆的记忆：确定要删除「{preview_text}」吗？(XiaoTangYuan memory: delete it?)"
    try:
        answer = await ctx.elicit(message, schema=_Agree)
    except (MCPError, ValueError):  # declared but unusable here: the 5 s rule applies
        return None
    return answer.action == "accept" and bool(getattr(answer, "data", None)) and answer.data.delete


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode("utf-8")


def build(api: ManageApi, gate: ConfirmGate | None = None) -> MCPServer[Any]:
    """An ``MCPServer`` with the three memory tools over ``api`` (confirms through ``gate``)."""
    server: MCPServer[Any] = MCPServer(
        name="xiaotangyuan-memory", version=__version__, instructions=INSTRUCTIONS
    )
    gate = gate or ConfirmGate()

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
        quote: str | None = None,
        ctx: Context[Any, Any] | None = None,
    ) -> str:
        """Forget memories, in two steps.

        Step 1 (no confirm_token): kind is "event" (game_id, save_id, event_id),
        "save" (game_id, save_id), "game" (game_id) or "shared_field" (field); the
        answer lists exactly what would be deleted and gives a confirm_token and a
        quote. Step 2: call again with confirm_token after the player agreed; the
        server asks the player itself if this client can, else pass quote back, at
        least 5 seconds after step 1. The token works once, for five minutes. Play
        statistics are always kept.
        """
        try:
            if confirm_token:
                shown = gate.quote(confirm_token)
                agreed = await ask_person(ctx, shown) if ctx is not None and shown else None
                if agreed is False:
                    raise ToolError("the player did not agree; nothing deleted")
                if agreed is None:
                    why = gate.refusal(confirm_token, quote, api.clock.now())
                    if why is not None:
                        raise ToolError(f"{why}; nothing deleted")
                gate.used(confirm_token)
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
            preview = await api.forget_preview(target)
            return _json(_shown(gate, preview, api.clock.now()))
        except msgspec.ValidationError as exc:
            raise ToolError(f"not a forget target: {exc}") from exc
        except (ManageError, XtyError) as exc:
            raise ToolError(exc.message) from exc

    del view, correct_shared, forget
    return server


def _shown(gate: ConfirmGate, preview: ForgetPreview, now: float) -> dict[str, Any]:
    quote = target_quote(preview.target)
    gate.shown(preview.token, quote, now)
    shown: dict[str, Any] = msgspec.to_builtins(preview)
    return {**shown, "quote": quote, "confirmAfterSeconds": gate.delay}


async def run_mcp(settings: Settings) -> int:
    """Serve the memory tools of ``settings.profile`` over stdio until stdin closes."""
    log.configure(stream=sys.stderr, json=True, level="warning")
    store = MemoryStore.open_profile(
        settings.data_path,
        settings.profile,
        clock=SystemClock(),
        busy_timeout_ms=settings.memory.busy_timeout_ms,
        trash_window=settings.memory.trash_hours * 3600,
    )
    try:
        memory = MemoryService(store, enabled=True, soft_cap=settings.memory.soft_cap)
        zone = settings.server.default_timezone or detect_local_timezone() or "UTC"
        await build(ManageApi(memory, SystemClock(), timezone=zone)).run_stdio_async()
    finally:
        store.close()
    return 0
