"""The memory command vocabulary: what any surface may ask of memory, and how its person answered.

Pure. Every surface (the companion's tools, a mod's menu frames, the memory
page, MCP, the command line) only *translates* its input into one
:data:`MemoryCommand` and, for a command that needs the person's consent,
one :data:`Answer` saying how its person answered. One place admits a
command (:func:`xtyserver.session.consent.admit`), the memory service and the
store each have one ``execute`` over this union. Risky game actions (the
``actions`` work) take their consent in the same :data:`Answer` shapes.

Which commands need consent is decided here, once (:func:`needs_consent`):
a forget of anything, a restore, a forgotten name; a broad forget
(:data:`BROAD_KINDS`) further needs an answer that answers nothing else
(:func:`answers_only_this`): the server's exact words, the mod's dialog, the
page, an MCP elicitation or the terminal — never a yes read from chat words
that could answer another question.
"""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from xtyserver.memory.manage import ForgetKind, ForgetSpec
from xtyserver.memory.types import Scope

BROAD_KINDS: Final[tuple[ForgetKind, ...]] = ("save", "game", "profile", "all")
"""Forget targets of more than one item: a bare yes in chat never confirms them."""

ViewWhat = Literal["all", "profile", "events", "aliases", "stats"]


class _Command(msgspec.Struct, frozen=True, kw_only=True, tag_field="command", rename="camel"):
    """Base of every memory command (tagged by ``command``)."""


class View(_Command, frozen=True, tag="view"):
    """Read memory: the overview of ``game_id`` (None: every game), or of ``scope`` alone."""

    game_id: str | None = None
    scope: Scope | None = None
    what: ViewWhat = "all"


class Search(_Command, frozen=True, tag="search"):
    """Search ``scope``'s memories and the profile for ``query`` (later in-game days stay out)."""

    scope: Scope
    query: str
    kind: str | None = None
    day: int | None = None


class Correct(_Command, frozen=True, tag="correct"):
    """Set the shared profile's ``field`` (snake_case) to ``value``."""

    field: str
    value: str | list[str]


class Pin(_Command, frozen=True, tag="pin"):
    """Pin (or unpin) one item of ``scope``."""

    scope: Scope
    event_id: int
    pinned: bool = True


class Forget(_Command, frozen=True, tag="forget"):
    """Forget what ``target`` names (an item, a save, a game, the profile, everything)."""

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


MemoryCommand = View | Search | Correct | Pin | Forget | Restore | ForgetName | Export
"""One memory command; ``command`` names its kind on the wire."""


# -- how a surface's person answered ----------------------------------------------------------


class _Answer(msgspec.Struct, frozen=True, kw_only=True, tag_field="by", rename="camel"):
    """Base of every answer (tagged by ``by``): the token of the preview it answers."""

    token: str


class Words(_Answer, frozen=True, tag="words"):
    """The player's own chat words (typed or spoken) in the turn after the server's question.

    ``asked``: the server's question those words may answer (None: none was
    pending, or it lapsed because the model's reply asked something else);
    ``expected``: the exact words that question asked for, for a broad target.
    """

    text: str
    asked: str | None = None
    expected: str | None = None


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
    """An MCP client without elicitation echoes the token: nobody was asked."""


class Terminal(_Answer, frozen=True, tag="terminal"):
    """``xtyserver memory forget``: ``yes`` typed at a terminal, or ``--yes`` given."""


Answer = Words | Dialog | Menu | Page | Elicited | Unasked | Terminal
"""How a surface's person answered a preview; ``by`` names the way."""


def needs_consent(command: MemoryCommand) -> bool:
    """Whether ``command`` changes memory in a way only its person may allow."""
    return isinstance(command, (Forget, Restore))


def is_broad(command: MemoryCommand) -> bool:
    """Whether ``command`` forgets more than one item."""
    return isinstance(command, Forget) and command.target.kind in BROAD_KINDS


def answers_only_this(answer: Answer) -> bool:
    """Whether ``answer`` can answer nothing but this question (enough for a broad target).

    Chat words qualify only when they are the exact words the server asked for
    (judged by the admission); a dialog, a menu, the page, an elicitation and a
    terminal each ask about this preview alone. An unasked echo never does.
    """
    return not isinstance(answer, (Words, Unasked))
