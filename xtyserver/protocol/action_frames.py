"""The frames of game actions a mod declares and runs (v1.md "Actions").

A mod lists what the companion may do in its game (``adapter.hello``'s
``actions``, replaced whole later by ``actions.declare``): a name, a
description in Chinese and English, an argument schema in a small bounded
subset of JSON Schema (strings with an enum or lengths, integers with a range,
booleans), a risk class (``look``, ``act``, ``risky``) and an optional
cooldown. The server sends ``action.request`` when the model calls one; the mod
re-checks it against its full local observation and answers ``action.result``
(``done``, ``refused`` or ``failed`` with a short outcome text).

:func:`check_actions` judges a declaration beyond its types: every name once,
``required`` naming declared arguments, sane bounds, and no forbidden content
in any name or text; a declaration is refused whole with every offending
field named, as a modelContext is.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec
from msgspec import Meta

from xtyserver.errors import ForbiddenContentError, FrameError
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.frame_base import ClientBase, FrameId, Obj, ServerBase
from xtyserver.protocol.normalize import normalize

ACTIONS_MAX = 16
"""Actions one mod may declare."""
ACTION_ARGS_MAX = 6
"""Arguments of one action."""
ACTION_ENUM_MAX = 32
"""Values of one string argument's enum."""
ACTION_TEXT_MAX = 120
"""Characters of an action's description (each language)."""
ARG_TEXT_MAX = 60
"""Characters of an argument's description and of one enum value."""
ARG_STRING_MAX = 100
"""The longest string an argument may declare (``maxLength``)."""
ACTION_RESULT_TEXT_MAX = 200
"""Characters of an ``action.result`` outcome text."""
ACTION_COOLDOWN_MAX_MS = 3_600_000
"""The longest cooldown an action may declare (one hour)."""
ACTION_DEADLINE_MS = 8_000
"""How long the server waits for a mod's ``action.result`` (then: ``timed_out``)."""
INT_BOUND = 1_000_000_000

ActionName = Annotated[
    str,
    Meta(
        pattern=r"^[a-z][a-z0-9_]{0,31}$",
        description="The action's name: lower-case ASCII letters, digits and _ (walk_to).",
    ),
]
ArgName = Annotated[str, Meta(pattern=r"^[A-Za-z][A-Za-z0-9_]{0,31}$")]
ActionText = Annotated[str, Meta(min_length=1, max_length=ACTION_TEXT_MAX)]
ArgText = Annotated[str, Meta(min_length=1, max_length=ARG_TEXT_MAX)]
Risk = Literal["look", "act", "risky"]
Bound = Annotated[int, Meta(ge=-INT_BOUND, le=INT_BOUND)]
RequestId = Annotated[str, Meta(min_length=1, max_length=64)]


class StringArg(Obj, tag="string", tag_field="type"):
    """A string argument: one of ``enum``, or any text within ``minLength``..``maxLength``."""

    description: ArgText | None = None
    enum: Annotated[list[ArgText], Meta(min_length=1, max_length=ACTION_ENUM_MAX)] | None = None
    min_length: Annotated[int, Meta(ge=0, le=ARG_STRING_MAX)] | None = None
    max_length: Annotated[int, Meta(ge=1, le=ARG_STRING_MAX)] | None = None


class IntegerArg(Obj, tag="integer", tag_field="type"):
    """A whole-number argument within ``minimum``..``maximum`` (both required)."""

    minimum: Bound
    maximum: Bound
    description: ArgText | None = None


class BooleanArg(Obj, tag="boolean", tag_field="type"):
    """A yes/no argument."""

    description: ArgText | None = None


ArgSpec = StringArg | IntegerArg | BooleanArg


class ActionParams(Obj):
    """The arguments, as a JSON Schema object: ``properties`` and the ``required`` names."""

    # Optional, as in JSON Schema (a field whose one value is its default would make
    # every frame's "type" key look like a spelled default to the duplicate-key count).
    type: Literal["object"] | None = None
    properties: Annotated[dict[ArgName, ArgSpec], Meta(max_length=ACTION_ARGS_MAX)] = msgspec.field(
        default_factory=dict
    )
    required: Annotated[list[ArgName], Meta(max_length=ACTION_ARGS_MAX)] = msgspec.field(
        default_factory=list
    )


class ActionSpec(Obj):
    """One action a mod offers (v1.md "Actions")."""

    name: ActionName
    description: ActionText
    risk: Risk
    description_en: ActionText | None = None
    parameters: ActionParams = msgspec.field(default_factory=ActionParams)
    cooldown_ms: Annotated[int, Meta(ge=0, le=ACTION_COOLDOWN_MAX_MS)] = 0


ActionList = Annotated[list[ActionSpec], Meta(max_length=ACTIONS_MAX)]


# -- client frames ------------------------------------------------------------


class ActionsDeclare(ClientBase, tag="actions.declare"):
    """Replace the connection's actions whole (v1.md "actions.declare"); ``[]``: none."""

    actions: ActionList
    id: FrameId | None = None


class ActionResult(ClientBase, tag="action.result"):
    """The mod's answer to one ``action.request`` (v1.md "action.result")."""

    id: RequestId
    status: Literal["done", "refused", "failed"]
    text: Annotated[str, Meta(max_length=ACTION_RESULT_TEXT_MAX)] = ""


# -- server frames ------------------------------------------------------------


class ActionsDeclared(ServerBase, tag="actions.declared"):
    """The declaration was taken: these action names are what the model may call."""

    names: list[str]
    id: str | None = None


class ActionRequest(ServerBase, tag="action.request"):
    """Run this action now, after checking it against the full local observation.

    ``confirmed``: the player said yes to the server's question about this very
    call (a ``risky`` action is never requested without it).
    """

    id: str
    name: str
    args: dict[str, Any]
    risk: str
    deadline_ms: int
    confirmed: bool = False
    chat_id: str | None = None


# -- checks beyond the types ----------------------------------------------------


def check_actions(actions: list[ActionSpec], prefix: str) -> None:
    """Refuse a declaration whole, naming every offending field (v1.md "Actions").

    Raises:
        ForbiddenContentError: a name or text holds forbidden content.
        FrameError: a name declared twice, ``required`` naming no property, bad bounds.
    """
    problems, forbidden = action_problems(actions, prefix)
    if forbidden:
        detail = ", ".join(f"{path} ({kind})" for path, kind in forbidden)
        raise ForbiddenContentError(
            f"content that must stay on this machine: {detail}",
            fields=[path for path, _ in forbidden],
        )
    if problems:
        message = "; ".join(f"{path}: {reason}" for path, reason in problems[:20])
        raise FrameError(message, fields=list(dict.fromkeys(path for path, _ in problems)))


def action_problems(
    actions: list[ActionSpec], prefix: str
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    """A declaration's problems and its forbidden strings, each as (field path, reason)."""
    problems: list[tuple[str, str]] = []
    forbidden: list[tuple[str, str]] = []
    seen: set[str] = set()
    for i, spec in enumerate(actions):
        at = f"{prefix}[{i}]"
        if spec.name in seen:
            problems.append((f"{at}.name", f"the action {spec.name!r} is declared twice"))
        seen.add(spec.name)
        texts = [(f"{at}.name", spec.name), (f"{at}.description", spec.description)]
        if spec.description_en is not None:
            texts.append((f"{at}.descriptionEn", spec.description_en))
        params = spec.parameters
        for name in params.required:
            if name not in params.properties:
                problems.append((f"{at}.parameters.required", f"{name!r} is not a property"))
        if len(set(params.required)) != len(params.required):
            problems.append((f"{at}.parameters.required", "a name is listed twice"))
        for name, arg in params.properties.items():
            path = f"{at}.parameters.properties.{name}"
            texts.append((path, name))
            if arg.description is not None:
                texts.append((f"{path}.description", arg.description))
            problems += _arg_problems(arg, path, texts)
        for path, text in texts:
            if not normalize(text).strip():
                problems.append((path, "empty after normalisation"))
            kind = find_forbidden(text)
            if kind is not None:
                forbidden.append((path, kind))
    return problems, forbidden


def _arg_problems(arg: ArgSpec, path: str, texts: list[tuple[str, str]]) -> list[tuple[str, str]]:
    problems: list[tuple[str, str]] = []
    match arg:
        case IntegerArg(minimum=low, maximum=high) if low > high:
            problems.append((f"{path}.minimum", "minimum is above maximum"))
        case StringArg(enum=list() as values):
            if len(set(values)) != len(values):
                problems.append((f"{path}.enum", "a value is listed twice"))
            texts += [(f"{path}.enum[{j}]", v) for j, v in enumerate(values)]
        case StringArg(min_length=int() as low, max_length=int() as high) if low > high:
            problems.append((f"{path}.minLength", "minLength is above maxLength"))
    return problems


def arg_type_name(arg: ArgSpec) -> str:
    """The JSON Schema type of an argument (its tag)."""
    return str(type(arg).__struct_config__.tag)
