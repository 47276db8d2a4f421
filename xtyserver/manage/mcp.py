"""``xtyserver mcp``: the memory tools for a general assistant, over MCP on stdio (docs/mcp.md).

Built on the ``mcp`` package's ``MCPServer``; every operation goes through
:mod:`xtyserver.manage.ops`, like the page's, and answers with the same JSON
shapes. A forget is confirmed by the person through MCP elicitation where the
client declares it; elsewhere only a single item may go, into the trash, past
:class:`ConfirmGate` (:func:`needs_person`). The profile's store is opened like
any other process's, so it works while ``xtyserver serve`` runs on it (SQLite
WAL; a write waits up to ``memory.busy_timeout_ms`` for the other's lock).
"""

from __future__ import annotations

import contextlib
import secrets
import sys
from collections.abc import Iterator
from typing import Any

import msgspec
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, Field

from xtyserver import __version__, log
from xtyserver.clock import Clock, SystemClock
from xtyserver.config import Settings
from xtyserver.manage import ops
from xtyserver.memory.commands import Answer, Elicited, Unasked
from xtyserver.memory.commands import quote as target_quote
from xtyserver.memory.manage import Confirmations, ForgetRequest, ForgetSpec
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import EDITABLE_FIELDS, Scope
from xtyserver.protocol.memory_frames import MemoryPreview
from xtyserver.serve.localzone import server_zone
from xtyserver.serve.memory_service import MemoryService
from xtyserver.session.consent import UNASKED_DELAY, UNASKED_PER_HOUR, unasked_refusal

ASKER = "mcp"  # one client per stdio server

INSTRUCTIONS = (
    "Tools to look at and manage the long-term memory of XiaoTangYuan (小汤圆), the player's "
    "game companion: a shared profile of the player and short memories per game and save. "
    "Call them only when the player asks about or wants to change that memory. Forgetting "
    "takes two steps: call xiaotangyuan_memory_forget without confirmToken to get a preview "
    "and a token, show the preview to the player, and call it again with the same target "
    "and the token only after the player agrees: the server then asks the player itself "
    "where this client can ask its user (elicitation). A client that cannot ask may delete "
    "single items only, at most 3 an hour (wait at least 5 seconds and pass quote, the "
    "preview's quote text, back); saves, games, the profile, everything and play "
    "statistics need the player's answer. Play statistics are kept unless includeStats is true."
)


NEEDS_PERSON = (
    "deleting this needs the player's own answer, and this client cannot ask them "
    "(no MCP elicitation): nothing deleted. Without elicitation only single items "
    "(target item) can be deleted here, into the trash, at most {per_hour} an hour; the "
    "player can delete more on the memory page (xtyserver ui) or with "
    "`xtyserver memory forget`."
)
REFUSED: dict[str, str] = {
    "too_soon": (
        f"too soon: confirm at least {UNASKED_DELAY:g} seconds after the preview, "
        "once the player has read it; nothing deleted"
    ),
    "unquoted": "quote the preview's target back (its quote); nothing deleted",
    "declined": "the player did not agree; nothing deleted",
    "needs_person": NEEDS_PERSON.format(per_hour=UNASKED_PER_HOUR),
    "too_many": (
        f"without the player's answer at most {UNASKED_PER_HOUR} items an hour may be "
        "deleted, and that many already went into the trash this hour: nothing deleted; "
        "the player can delete more on the memory page (xtyserver ui)"
    ),
}
"""MCP's words for what :func:`~xtyserver.session.consent.admit` refused (else the page's)."""


class _Agree(BaseModel):
    delete: bool = Field(description="true to delete it, false to keep it")


async def ask_person(ctx: Context[Any, Any], preview_text: str) -> bool | None:
    """Ask the client's user through elicitation: True/False, or None when it cannot ask."""
    if not _can_ask(ctx):
        return None
    message = f"小汤圆的记忆：确定要删除「{preview_text}」吗？(XiaoTangYuan memory: delete it?)"
    try:
        answer = await ctx.elicit(message, schema=_Agree)
    except (MCPError, ValueError):  # declared but unusable here: the 5 s rule applies
        return None
    return answer.action == "accept" and bool(getattr(answer, "data", None)) and answer.data.delete


def _json(value: Any) -> str:
    return msgspec.json.encode(value).decode("utf-8")


@contextlib.contextmanager
def _tool_errors(invalid: str) -> Iterator[None]:
    """A refusal as the ToolError the assistant reads; a bad argument as ``invalid: why``."""
    try:
        yield
    except msgspec.ValidationError as exc:
        raise ToolError(f"{invalid}: {exc}") from exc
    except ops.Refused as exc:
        raise ToolError(REFUSED.get(exc.reason, exc.message)) from exc


FIELD_NAMES = ", ".join(f.wire for f in EDITABLE_FIELDS)
LIST_NAMES = ", ".join(f.wire for f in EDITABLE_FIELDS if f.is_list)


def build(
    memory: MemoryService,
    clock: Clock,
    *,
    timezone: str = "UTC",
) -> MCPServer[Any]:
    """An ``MCPServer`` with the memory tools over ``memory``."""
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
        status, pinned, updatedAt); names holds the player's own names for
        things per save (id, name, means); stats holds days, sessions and
        active time per game and save, and the token bill.
        """
        with _tool_errors("not a save"):
            scope = None
            if saveId is not None:
                if gameId is None:
                    raise ops.Refused("saveId needs gameId", 400, ["gameId"])
                scope = msgspec.convert({"gameId": gameId, "saveId": saveId}, Scope)
            found = await ops.view(memory, clock, timezone, game_id=gameId, scope=scope)
        return _json(found)

    @server.tool(name="xiaotangyuan_memory_correct_shared", structured_output=False)
    async def correct_shared(field: str, value: str | list[str]) -> str:
        """Correct one field of the shared player profile; returns the updated profile."""
        with _tool_errors("not a field"):
            return _json(await ops.correct(memory, field, value))

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
        quote: str | None = None,
        ctx: Context[Any, Any] | None = None,
    ) -> str:
        """Forget memories, in two steps.

        target is "item" (gameId, saveId, eventId), "save" (gameId, saveId),
        "game" (gameId), "profile" (the shared profile) or "all". Step 1
        (no confirmToken): the answer lists exactly what would be deleted and
        gives a confirmToken and a quote. Step 2, only after the player agreed:
        the same arguments plus confirmToken; the server asks the player itself
        if this client can (elicitation). A client that cannot ask may delete
        single items only (pass quote back, at least 5 seconds after step 1);
        anything broader, and play statistics, need the player's answer. The
        token works once, for two minutes. Play statistics are kept unless
        includeStats is true.
        """
        with _tool_errors("not a forget target"):
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
            spec = request.spec()
            shown = target_quote(spec) if isinstance(spec, ForgetSpec) else ""
            answer: Answer | None = None
            if confirmToken is not None:
                agreed = await ask_person(ctx, shown) if ctx is not None else None
                answer = (
                    Unasked(token=confirmToken, quote=quote or "")
                    if agreed is None
                    else Elicited(token=confirmToken, accepted=agreed)
                )
            elif isinstance(spec, ForgetSpec) and not _can_ask(ctx):
                # Refused before the preview too: no token an assistant could use.
                why = unasked_refusal(spec, memory.trash_window > 0, (), clock.now())
                if why == "needs_person":
                    raise ops.Refused(REFUSED[why], 403, ["target"])
            done = await ops.forget(
                memory, confirmations, request, answer, asker=ASKER, now=clock.now()
            )
        if isinstance(done, MemoryPreview):
            preview: dict[str, Any] = msgspec.to_builtins(done)
            return _json({**preview, "quote": shown, "confirmAfterSeconds": UNASKED_DELAY})
        return _json(done)

    @server.tool(name="xiaotangyuan_memory_forget_name", structured_output=False)
    async def forget_name(gameId: str, saveId: str, nameId: int) -> str:
        """Delete one of the player's own names for a thing (the view's names: id, name,
        means). One step, like the page's: the player brings it back by saying it again."""
        with _tool_errors("not a save"):
            scope = msgspec.convert({"gameId": gameId, "saveId": saveId}, Scope)
            await ops.forget_name(memory, scope, nameId)
        return _json({"deleted": nameId})

    del view, correct_shared, forget, forget_name
    return server


def _can_ask(ctx: Context[Any, Any] | None) -> bool:
    """Whether the client declared elicitation (it can put a question to its user)."""
    caps = ctx.client_capabilities if ctx is not None else None
    return caps is not None and caps.elicitation is not None


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
        zone = server_zone(settings.server.default_timezone)
        await build(memory, SystemClock(), timezone=zone).run_stdio_async()
    finally:
        store.close()
    return 0
