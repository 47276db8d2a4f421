"""The modelContext budget and content checks beyond the types (v1.md "modelContext").

The types in :mod:`xtyserver.protocol.frames` already enforce the whitelist,
string lengths, array lengths and (by construction) depth. This module adds
what a type cannot say: the serialized size, forbidden content in any string,
the bounded legacy observation, and freshness by ``capturedAt``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import msgspec

from xtyserver.errors import BudgetError, ForbiddenContentError
from xtyserver.protocol.event_frames import EventFacts
from xtyserver.protocol.forbidden import find_forbidden, install_id_forbidden, save_id_forbidden
from xtyserver.protocol.frames import (
    AdapterPair,
    ChatContext,
    ChatSend,
    ClientFrame,
    GameEvent,
    Hello,
    Identity,
    ModelContext,
    StateUpdate,
)
from xtyserver.protocol.limits import CONTEXT_MAX_BYTES, OBSERVATION_MAX_BYTES
from xtyserver.protocol.prefilter import context_strings, context_texts, texts_clean
from xtyserver.protocol.secret_match import matcher

_ENCODER = msgspec.json.Encoder()

Freshness = Literal["fresh", "stale", "dropped"]


def check_model_context(context: ModelContext, *, prefix: str = "", size: int | None = None) -> int:
    """Refuse a modelContext over 6 KiB or carrying forbidden content; return its size.

    ``prefix`` is the path of its parent, for the ``fields`` of errors; ``size``
    its msgspec encoding's length, when the caller has the encoding.

    Raises:
        BudgetError: over ``CONTEXT_MAX_BYTES``; the field is the modelContext.
        ForbiddenContentError: naming every offending string field.
    """
    if size is None:
        size = len(_ENCODER.encode(context))
    if size > CONTEXT_MAX_BYTES:
        path = f"{prefix}modelContext"
        raise BudgetError(
            f"{path} is {size} bytes serialized; at most {CONTEXT_MAX_BYTES}", fields=[path]
        )
    # One cheap check of every string at once; only when it cannot vouch for
    # them (rare) is each judged on its own, and only a hit (the frame is
    # refused) pays for walking again to name the fields.
    if texts_clean(context_texts(context)):
        return size
    # strict: game names and numbers never hold an 11-digit number or a path shape.
    if any(find_forbidden(text, strict=True) for text in context_strings(context) if text):
        builtins = msgspec.to_builtins(context)
        builtins.pop("capturedAt", None)
        refuse_forbidden(_strings(builtins, f"{prefix}modelContext"), strict=True)
    return size


def check_identity(identity: Identity, *, prefix: str = "") -> None:
    """Refuse ids or a save name that carry forbidden content (a Steam id fits the patterns)."""
    # A derived saveId may be twelve hex digits: an id, never a MAC address.
    refuse_forbidden(
        [(f"{prefix}identity.gameId", identity.game_id)], ignore=frozenset({"network_address"})
    )
    kind = save_id_forbidden(identity.save_id)
    if kind is not None:
        raise ForbiddenContentError(
            f"content that must stay on this machine: {prefix}identity.saveId ({kind})",
            fields=[f"{prefix}identity.saveId"],
        )
    if identity.save_name is not None:
        refuse_forbidden([(f"{prefix}identity.saveName", identity.save_name)])


def check_hello(frame: Hello) -> None:
    """Content checks of ``adapter.hello`` beyond its types (``1.0.0.0`` is a version)."""
    refuse_forbidden([("adapter.name", frame.adapter.name)])
    refuse_forbidden(
        [("adapter.version", frame.adapter.version)], ignore=frozenset({"network_address"})
    )
    check_identity(frame.identity)


def check_pair(frame: AdapterPair) -> None:
    """An ``installId`` is an opaque random id: never a number, a path, a name or an account."""
    if frame.install_id is None:
        return
    kind = install_id_forbidden(frame.install_id)
    if kind is not None:
        raise ForbiddenContentError(
            f"content that must stay on this machine: installId ({kind})", fields=["installId"]
        )


def check_state_update(frame: StateUpdate) -> int:
    """Content checks of ``state.update``; returns the modelContext size."""
    if frame.identity is not None:
        check_identity(frame.identity)
    return check_model_context(frame.model_context)


def check_chat_context(context: ChatContext, *, prefix: str, size: int | None = None) -> int:
    """Content checks of ``chat.send.context``; returns the modelContext size.

    ``size``: the length of the modelContext's msgspec encoding, when known.
    """
    if context.identity is not None:
        check_identity(context.identity, prefix=prefix)
    observation = context.observation
    if isinstance(observation, msgspec.Raw) and len(observation) > OBSERVATION_MAX_BYTES:
        raise BudgetError(
            f"{prefix}observation is {len(observation)} bytes; at most {OBSERVATION_MAX_BYTES}",
            fields=[f"{prefix}observation"],
        )
    if context.model_context is None:
        return 0
    return check_model_context(context.model_context, prefix=prefix, size=size)


def check_secrets(frame: ClientFrame, secrets: tuple[str, ...]) -> None:
    """Refuse a frame whose modelContext or save name holds one of ``secrets``.

    The decoder cannot know the adapter token; the session can (v1.md "Forbidden
    content"). Raises ForbiddenContentError naming every string that holds one.
    """
    secrets = tuple(s for s in secrets if len(s) >= 8)
    if not secrets:
        return
    context: ModelContext | None = None
    identity: Identity | None = None
    event: list[tuple[str, str | None]] = []
    prefix = ""
    match frame:
        case StateUpdate():
            context, identity = frame.model_context, frame.identity
        case ChatSend(context=ChatContext() as chat):
            context, identity, prefix = chat.model_context, chat.identity, "context."
        case Hello():
            identity = frame.identity
        case GameEvent(facts=EventFacts() as facts):
            event = [("facts.subject", facts.subject), ("facts.place", facts.place)]
        case _:
            return
    strings = [(path, text) for path, text in event if text]
    if context is not None:
        # An ASCII encoding holding no block of a secret's skeleton holds no
        # string that spells a piece of it (secret_match.py; judging changes
        # only non-ASCII characters).
        encoded = _ENCODER.encode(context)
        if not encoded.isascii() or any(matcher(s).maybe_in(encoded) for s in secrets):
            builtins = msgspec.to_builtins(context)
            builtins.pop("capturedAt", None)
            strings.extend(_strings(builtins, f"{prefix}modelContext"))
    if identity is not None and identity.save_name is not None:
        strings.append((f"{prefix}identity.saveName", identity.save_name))
    found = [path for path, text in strings if find_forbidden(text, secrets=secrets)]
    if found:
        raise ForbiddenContentError(
            f"content that must stay on this machine: {', '.join(f'{p} (api_key)' for p in found)}",
            fields=found,
        )


def freshness(age: float, *, stale_after: float, drop_after: float) -> Freshness:
    """How a modelContext ``age`` seconds old may be used (v1.md "Freshness").

    A negative age (a skewed game clock) counts as fresh.
    """
    if age > drop_after:
        return "dropped"
    if age > stale_after:
        return "stale"
    return "fresh"


def _strings(value: object, path: str) -> Iterable[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _strings(item, f"{path}.{key}")
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _strings(item, f"{path}[{i}]")


def refuse_forbidden(
    strings: Iterable[tuple[str, str]],
    *,
    ignore: frozenset[str] = frozenset(),
    strict: bool = False,
) -> None:
    """Refuse ``(path, text)`` pairs of which any holds forbidden content, naming each path."""
    found = [
        (path, kind)
        for path, text in strings
        if (kind := find_forbidden(text, ignore=ignore, strict=strict))
    ]
    if found:
        detail = ", ".join(f"{path} ({kind})" for path, kind in found)
        raise ForbiddenContentError(
            f"content that must stay on this machine: {detail}",
            fields=[path for path, _ in found],
        )
