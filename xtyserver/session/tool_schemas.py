"""The memory tools' arguments and the JSON schemas offered to the model, sans-I/O.

One Struct per tool parses a call's arguments, and the same Struct is the
schema sent in the request's ``tools`` (its docstring is the description). The
texts are kept short (all five tools in at most 150 ``approx_tokens``): the
limits and the refusal of unknown fields are enforced when a call is parsed,
not sent (:data:`_NOT_SENT`). Each offered set is built once (:data:`OFFERS`)
and byte-stable, so consecutive requests share their prefix.

Play statistics are never the model's to delete: the forget tool has no
``includeStats`` (a call that carries it is refused as a bad argument). The
companion's name, persona, personality and notes are not the model's to
write: the correct tool takes only the nickname, language, reply style and
hobbies. A forget goes to the trash for a while; the restore
tool puts it back and needs no confirmation.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any, Final, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from xtyserver.memory.types import MemoryKind
from xtyserver.protocol.memory_frames import ProfileItems, ProfileText

VIEW = "xiaotangyuan_memory_view"
SEARCH = "xiaotangyuan_memory_search"
CORRECT = "xiaotangyuan_memory_correct_shared"
FORGET = "xiaotangyuan_memory_forget"
RESTORE = "xiaotangyuan_memory_restore"

CorrectField = Literal["nickname", "language", "replyStyle", "hobbies"]
CORRECT_FIELDS: Final[dict[str, str]] = {
    "nickname": "nickname",
    "language": "language",
    "replyStyle": "reply_style",
    "hobbies": "hobbies",
}
"""The shared-profile fields the model may correct (wire name -> store name)."""


class _Args(msgspec.Struct, forbid_unknown_fields=True, rename="camel", frozen=True):
    pass


class ViewArgs(_Args, frozen=True):
    """Read memory, play stats"""

    what: Literal["all", "profile", "saves", "stats"] = "all"
    save: str | UnsetType = UNSET


class SearchArgs(_Args, frozen=True):
    """Search memory"""

    query: Annotated[str, Meta(min_length=1, max_length=200)]
    kind: MemoryKind | UnsetType = UNSET


class CorrectArgs(_Args, frozen=True):
    """Set a profile field to the player's words"""

    field: CorrectField
    value: ProfileText | ProfileItems


class ForgetArgs(_Args, frozen=True):
    """Preview first; confirmToken once the player says yes"""

    target: Literal["item", "save", "game", "profile", "all"]
    save: str | UnsetType = UNSET
    item: Annotated[int, Meta(ge=1)] | UnsetType = UNSET
    confirm_token: str | UnsetType = UNSET


class RestoreArgs(_Args, frozen=True):
    """Undo a forget"""

    trash: Annotated[int, Meta(ge=1)] | UnsetType = UNSET


ARGUMENTS: Final[dict[str, type[_Args]]] = {
    VIEW: ViewArgs,
    SEARCH: SearchArgs,
    CORRECT: CorrectArgs,
    FORGET: ForgetArgs,
    RESTORE: RestoreArgs,
}
"""Each tool's name and the Struct that parses (and describes) its arguments."""


# Validation only: the Struct checks these when it parses a call; the model needs none of them.
_NOT_SENT = frozenset(
    (
        "title",
        "description",
        "default",
        "additionalProperties",
        "maxLength",
        "minLength",
        "maxItems",
        "minimum",
    )
)


def _sent(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {k: _sent(v) for k, v in schema.items() if k not in _NOT_SENT and v != []}
    if isinstance(schema, list):
        return [_sent(v) for v in schema]
    return schema


@functools.cache
def _components() -> dict[str, Any]:
    """Every argument Struct's schema, by Struct name: one generation for all the tools."""
    components: dict[str, Any] = msgspec.json.schema_components(list(ARGUMENTS.values()))[1]
    assert len(components) == len(ARGUMENTS)  # one flat Struct per tool, nothing nested
    return components


def _spec(name: str, args: type[_Args]) -> dict[str, Any]:
    component = _components()[args.__name__]
    function = {
        "name": name,
        "description": component["description"],
        "parameters": _sent(component),
    }
    return {"type": "function", "function": function}


def tool_specs(names: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    """The ``tools`` of a chat request, generated from the argument Structs, in a fixed order."""
    return [_spec(name, args) for name, args in ARGUMENTS.items() if names is None or name in names]


READ: Final[tuple[str, ...]] = (VIEW, SEARCH)
"""The read-only tools."""
ALL: Final[tuple[str, ...]] = tuple(ARGUMENTS)
"""Every tool (the read tools first, so the two offered sets share their first bytes)."""

OFFERS: Final[dict[tuple[str, ...], list[dict[str, Any]]]] = {
    READ: tool_specs(READ),
    ALL: tool_specs(ALL),
}
"""The ``tools`` of each set a turn may offer (built once; byte-stable)."""

OFFER_TEXTS: Final[dict[tuple[str, ...], str]] = {
    names: msgspec.json.encode(specs).decode() for names, specs in OFFERS.items()
}
"""Each offered set as JSON (what the injection log's ``tools`` layer counts)."""

TOOL_SPECS: Final[list[dict[str, Any]]] = OFFERS[ALL]
"""Every tool's spec (what a turn that may change memory offers)."""
