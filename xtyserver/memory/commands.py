"""The memory command vocabulary: what any surface may ask of memory, and how its person answered.

Pure. Every surface (the companion's tools, a mod's menu frames, the memory
page, MCP, the command line) only *translates* its input into one
:data:`MemoryCommand` and, for a command that needs the person's consent,
one :data:`Answer` saying how its person answered. One place admits a
command (:func:`xtyserver.session.consent.admit`), the memory service and the
store each have one ``execute`` over this union. Risky game actions (the
``actions`` work) take their consent in the same :data:`Answer` shapes.

Whether a command is admitted with its answer is judged in
:mod:`xtyserver.session.consent` alone.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from xtyserver.memory.export import ExportDocument
from xtyserver.memory.manage import (
    ForgetKind,
    ForgetPreview,
    ForgetResult,
    ForgetSpec,
    Overview,
    RestoreResult,
)
from xtyserver.memory.retrieval import SearchResult
from xtyserver.memory.types import Scope, SharedProfile

BROAD_KINDS: Final[tuple[ForgetKind, ...]] = ("save", "game", "profile", "all")
"""Forget targets of more than one item: a bare yes in chat never confirms them."""

ViewWhat = Literal["all", "profile", "events", "aliases", "stats"]


class _Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="command", rename="camel"):
    """Base of every memory command (tagged by ``command``)."""


class View(_Command, frozen=True, tag="view"):
    """Read memory: the overview of ``game_id`` (None: every game), or of ``scope`` alone;
    ``since``: also active time per game and local date from then on."""

    game_id: str | None = None
    scope: Scope | None = None
    what: ViewWhat = "all"
    since: float | None = None


class Search(_Command, frozen=True, tag="search"):
    """Search ``scope``'s memories and the profile for ``query`` (later in-game days stay out)."""

    scope: Scope
    query: str
    kind: str | None = None
    day: int | None = None
    limit: int = 5


class Correct(_Command, frozen=True, tag="correct"):
    """Set the shared profile's ``field`` (snake_case) to ``value`` (``auto_shared``: a bool;
    ``""``, ``[]`` or None clear a field)."""

    field: str
    value: str | list[str] | bool | None


class Pin(_Command, frozen=True, tag="pin"):
    """Pin (or unpin) one item of ``scope``."""

    scope: Scope
    event_id: int
    pinned: bool = True


class Forget(_Command, frozen=True, tag="forget"):
    """Forget what ``target`` names (an item, a save, a game, the profile, everything)."""

    target: ForgetSpec


class Preview(_Command, frozen=True, tag="preview"):
    """What forgetting ``target`` would delete (nothing changes): an unanswered forget."""

    target: ForgetSpec


class Restore(_Command, frozen=True, tag="restore"):
    """Put back trash entry ``trash_id`` (None: the newest one ``game_id`` may restore)."""

    trash_id: int | None = None
    game_id: str | None = None


class ForgetName(_Command, frozen=True, tag="forget_name"):
    """Drop the player's own name ``alias`` of ``scope`` (or the names ``ids``)."""

    scope: Scope
    alias: str | None = None
    ids: tuple[int, ...] = ()


class Export(_Command, frozen=True, tag="export"):
    """Everything the player's memory holds, as the export document."""


MemoryCommand = View | Search | Correct | Pin | Forget | Preview | Restore | ForgetName | Export
"""One memory command; ``command`` names its kind on the wire."""

Outcome = (
    Overview
    | SearchResult
    | SharedProfile
    | bool
    | ForgetPreview
    | ForgetResult
    | RestoreResult
    | int
    | ExportDocument
    | None
)
"""What executing a command gave: the overview (view), the search's result (search,
None when memory is off), the profile (correct), whether the item exists (pin), the
preview (preview), what went (forget), what came back (restore), how many names went
(forget_name), the export document (export)."""


# -- how a surface's person answered ----------------------------------------------------------


class _Answer(msgspec.Struct, frozen=True, kw_only=True, tag_field="by", rename="camel"):
    """Base of every answer (tagged by ``by``): the token of the preview it answers (none for
    an answer to no preview: the player's words asking for a restore or giving a value)."""

    token: str = ""


class Words(_Answer, frozen=True, tag="words"):
    """The player's own chat words (typed or spoken) in the turn after the server's question.

    ``asked``: the server's question those words may answer (None: none was
    pending, or it lapsed because the model's reply asked something else);
    ``expected``: the exact words that question asked for (either language), for a
    broad target.
    """

    text: str
    asked: str | None = None
    expected: tuple[str, ...] = ()


class Dialog(_Answer, frozen=True, tag="dialog"):
    """The player clicked yes or no in the mod's own confirmation dialog."""

    yes: bool


class Menu(_Answer, frozen=True, tag="menu"):
    """The mod's own menu sent the second ``memory.forget`` with the preview's token."""


class Page(_Answer, frozen=True, tag="page"):
    """The memory page's second click, from page session ``session``."""

    session: str


class Elicited(_Answer, frozen=True, tag="elicited"):
    """An MCP client asked its person through elicitation; ``accepted``: they said yes."""

    accepted: bool


class Unasked(_Answer, frozen=True, tag="unasked"):
    """An MCP client without elicitation echoes the token and the preview's ``quote``:
    nobody was asked."""

    quote: str = ""


class Terminal(_Answer, frozen=True, tag="terminal"):
    """``xtyserver memory forget``: ``yes`` typed at a terminal, or ``--yes`` given."""


Answer = Words | Dialog | Menu | Page | Elicited | Unasked | Terminal
"""How a surface's person answered a preview; ``by`` names the way."""


def quote(spec: ForgetSpec) -> str:
    """The words an unasked confirm quotes back: the target as its preview names it."""
    parts = [spec.kind, spec.game_id, spec.save_id]
    if spec.item_id is not None:
        parts.append(f"#{spec.item_id}")
    if spec.include_stats:
        parts.append("+stats")
    return " ".join(p for p in parts if p)
