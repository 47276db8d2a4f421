"""What the memory store checks before anything is written.

Every text loses its invisible characters and is stored as typed otherwise
(v1.md "Normalisation"); a limit counts the stored form (``StoreError`` code
``invalid_memory``), and ``find_forbidden`` judges its normal form, so a
full-width or zero-width-split account id is caught
(:class:`~xtyserver.errors.StoreContentError`). Game and save ids are not
normalised: they are identities, and folding them would merge two saves.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, TypeVar

import msgspec

from xtyserver.errors import StoreContentError, StoreError, UsageError
from xtyserver.memory.aliases import ALIAS_MAX, MEANS_MAX
from xtyserver.memory.types import (
    PROFILE_FIELDS,
    MemoryEvent,
    NewEvent,
    Scope,
    SharedProfile,
    error_field,
    validated,
)
from xtyserver.protocol.forbidden import find_forbidden, save_id_forbidden
from xtyserver.protocol.normalize import normalize, visible

E = TypeVar("E", NewEvent, MemoryEvent)


def refuse_forbidden(field: str, text: str) -> None:
    """Refuse ``text`` if it carries what must stay on the machine.

    Raises:
        StoreContentError: Naming ``field``.
    """
    kind = find_forbidden(text)
    if kind is not None:
        raise StoreContentError(
            f"the memory store refuses {field}: it looks like a {kind}", fields=(field,)
        )


def checked_scope(scope: Scope) -> Scope:
    """``scope`` after its pattern and content checks.

    Raises:
        StoreError: code ``invalid_memory`` naming the bad id.
    """
    try:
        scope = validated(scope)
    except msgspec.ValidationError as exc:
        raise StoreError(
            f"invalid scope: {exc}", code="invalid_memory", fields=(error_field(exc) or "scope",)
        ) from exc
    refuse_forbidden("gameId", scope.game_id)
    kind = save_id_forbidden(scope.save_id)
    if kind is not None:
        raise StoreContentError(
            f"the memory store refuses saveId: it looks like a {kind}", fields=("saveId",)
        )
    return scope


def normalized_event(event: E) -> E:
    """``event`` with its subject and summary kept: invisibles removed (nothing is checked)."""
    changes: dict[str, Any] = {
        name: visible(text)
        for name in ("subject", "summary")
        if isinstance(text := getattr(event, name), str)
    }
    keys = getattr(event, "search_keys", None)
    if keys is not None:
        changes["search_keys"] = normalized_keys(keys)
    return msgspec.structs.replace(event, **changes)


def normalized_keys(keys: Iterable[str]) -> tuple[str, ...]:
    """Search keys normalised, stripped, without empty ones or repeats (first kept)."""
    seen: dict[str, None] = {}
    for key in keys:
        text = normalize(key).strip()
        if text and text.casefold() not in {k.casefold() for k in seen}:
            seen[text] = None
    return tuple(seen)


def check_event_texts(event: NewEvent | MemoryEvent) -> None:
    """Refuse an event whose subject or summary carries forbidden content."""
    refuse_forbidden("subject", event.subject)
    refuse_forbidden("summary", event.summary)
    for key in event.search_keys or ():
        refuse_forbidden("searchKeys", key)


def checked_new_event(event: NewEvent) -> NewEvent:
    """``event`` normalised and checked against every limit and forbidden pattern.

    Raises:
        StoreError: code ``invalid_memory`` naming the field.
        StoreContentError: Forbidden content, naming the field.
    """
    try:
        event = validated(normalized_event(event))
    except msgspec.ValidationError as exc:
        field = error_field(exc) or "event"
        raise StoreError(f"invalid memory: {exc}", code="invalid_memory", fields=(field,)) from exc
    check_event_texts(event)
    return event


def _normalized_value(value: Any) -> Any:
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        return [visible(v) if isinstance(v, str) else v for v in value]
    return value


def _profile_texts(value: Any) -> Iterator[str]:
    """The strings inside one profile value (a str, or the items of a list)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        yield from (v for v in value if isinstance(v, str))


def checked_profile_value(name: str, value: Any) -> Any:
    """The normalised, checked value of one shared-profile field.

    Raises:
        UsageError: Unknown field name.
        StoreError: code ``invalid_memory`` when the value breaks a limit.
        StoreContentError: The value carries forbidden content.
    """
    if name not in PROFILE_FIELDS:
        raise UsageError(f"unknown profile field {name!r}")
    try:
        checked = validated(
            msgspec.structs.replace(SharedProfile(), **{name: _normalized_value(value)})
        )
    except (msgspec.ValidationError, TypeError) as exc:
        raise StoreError(
            f"invalid profile field {name}: {exc}", code="invalid_memory", fields=(name,)
        ) from exc
    clean = getattr(checked, name)
    for text in _profile_texts(clean):
        refuse_forbidden(name, text)
    return clean


def normalized_profile(profile: SharedProfile) -> SharedProfile:
    """``profile`` with every string kept: invisibles removed (nothing else is checked)."""
    return msgspec.structs.replace(
        profile, **{name: _normalized_value(getattr(profile, name)) for name in PROFILE_FIELDS}
    )


def check_profile_texts(profile: SharedProfile) -> None:
    """Refuse a profile any of whose strings carries forbidden content."""
    for name in PROFILE_FIELDS:
        for text in _profile_texts(getattr(profile, name)):
            refuse_forbidden(name, text)


def checked_alias(alias: str, means: str) -> tuple[str, str]:
    """A player's name for a thing and what it means, kept as typed and checked.

    Raises:
        StoreError: code ``invalid_memory`` naming the part that is empty or too long.
        StoreContentError: A part carries forbidden content.
    """
    parts = {
        "alias": (visible(alias).strip(), ALIAS_MAX),
        "means": (visible(means).strip(), MEANS_MAX),
    }
    for field, (text, most) in parts.items():
        if not 1 <= len(text) <= most:
            raise StoreError(
                f"a name's {field} has 1 to {most} chars", code="invalid_memory", fields=(field,)
            )
        refuse_forbidden(field, text)
    return parts["alias"][0], parts["means"][0]


SAVE_NAME_MAX = 64


def checked_save_name(name: str) -> str:
    """A save's readable name, kept as typed and checked (v1.md "Identity": 1 to 64 chars).

    Raises:
        StoreError: code ``invalid_memory`` when it is empty or too long.
        StoreContentError: It carries forbidden content.
    """
    clean = visible(name).strip()
    if not 1 <= len(clean) <= SAVE_NAME_MAX:
        raise StoreError("a save name has 1 to 64 chars", code="invalid_memory")
    refuse_forbidden("saveName", clean)
    return clean
