"""A decoded frame's free text, kept as sent and measured as judged (v1.md "Normalisation").

The modelContext strings, ``chat.send`` text, ``identity.saveName`` and
``profile.update`` values lose their invisible characters; the frame then
carries those kept strings. Their normal form is what is judged, so it is
measured here against the limits: a string that normalisation takes past its
limit or empties is refused like one sent that way, "after normalisation". Ids,
versions, tokens, time zones and image data are ASCII by their patterns, untouched.
"""

from __future__ import annotations

import functools
from typing import Any, TypeVar

import msgspec
import msgspec.inspect as mi

from xtyserver.protocol.event_frames import EventFacts
from xtyserver.protocol.explain import problems_error, walk
from xtyserver.protocol.frames import (
    ChatContext,
    ChatSend,
    ClientFrame,
    GameEvent,
    Hello,
    Identity,
    ModelContext,
    ProfileUpdate,
    StateUpdate,
)
from xtyserver.protocol.limits import (
    CHAT_TEXT_MAX,
    CONTEXT_STRING_MAX,
    PROFILE_ITEM_MAX,
    PROFILE_TEXT_MAX,
    SAVE_NAME_MAX,
    SMALL_FRAME_MAX_BYTES,
)
from xtyserver.protocol.normalize import is_plain, keeps_length, normalize, visible
from xtyserver.protocol.prefilter import bare_type

_ENCODER = msgspec.json.Encoder()


def plain_json(encoded: bytes) -> bool:
    """Whether JSON bytes can only hold strings that are already normal.

    Plain bytes (:func:`~xtyserver.protocol.normalize.is_plain`) without a ``\\u``
    or ``\\b`` escape hold only normal strings (an escaped backslash before ``u``
    or ``b`` is a false alarm, which only costs the slower walk).
    """
    if encoded.isascii():
        if 0x7F in encoded:
            return False
    elif not is_plain(encoded.decode("utf-8", "replace")):
        return False
    return 0x5C not in encoded or (b"\\u" not in encoded and b"\\b" not in encoded)


def normalized(frame: ClientFrame, raw: bytes) -> ClientFrame:
    """``frame`` with its free text kept (invisibles removed), its normal form measured.

    Raises:
        PeerError: naming every string that normalisation took past a limit.
    """
    # Most frames are plain ASCII; a large one is a chat.send with a screenshot,
    # whose base64 is not worth scanning: its few text fields are checked below.
    if len(raw) <= SMALL_FRAME_MAX_BYTES and plain_json(raw):
        return frame
    problems: list[tuple[str, str]] = []
    match frame:
        case Hello():
            identity = _normal_identity(frame.identity, "", problems)
            if identity is not frame.identity:
                frame = msgspec.structs.replace(frame, identity=identity)
        case StateUpdate():
            # The frame is little but its modelContext: no second plain check.
            context = _normal_context(frame.model_context, "modelContext", problems, look=False)
            maybe = frame.identity and _normal_identity(frame.identity, "", problems)
            if context is not frame.model_context or maybe is not frame.identity:
                frame = msgspec.structs.replace(frame, model_context=context, identity=maybe)
        case ChatSend():
            text = _normal_text(
                frame.text, "text", problems, min_length=1, max_length=CHAT_TEXT_MAX
            )
            chat_context = frame.context and _normal_chat_context(frame.context, problems)
            if text is not frame.text or chat_context is not frame.context:
                frame = msgspec.structs.replace(frame, text=text, context=chat_context)
        case GameEvent(facts=EventFacts() as facts):
            new_facts = _normal_facts(facts, problems)
            if new_facts is not facts:
                frame = msgspec.structs.replace(frame, facts=new_facts)
        case ProfileUpdate(value=str() as value):
            text = _normal_text(value, "value", problems, max_length=PROFILE_TEXT_MAX)
            if text is not value:
                frame = msgspec.structs.replace(frame, value=text)
        case ProfileUpdate(value=list() as items):
            new = [
                _normal_text(item, f"value[{i}]", problems, max_length=PROFILE_ITEM_MAX)
                for i, item in enumerate(items)
            ]
            if any(a is not b for a, b in zip(new, items, strict=True)):
                frame = msgspec.structs.replace(frame, value=new)
    if problems:
        raise problems_error(problems)
    return frame


def _normal_text(
    text: str,
    path: str,
    problems: list[tuple[str, str]],
    *,
    max_length: int,
    min_length: int = 0,
) -> str:
    """``text`` kept (invisibles removed); the same object when that changed nothing.

    The limits are checked on the normal form, which is what is judged.
    """
    if keeps_length(text):
        return text  # the type checked these limits on the same length
    normal = normalize(text)
    if normal == text:
        return text
    if len(normal) > max_length:
        problems.append(
            (path, f"too long after normalisation ({len(normal)} chars; at most {max_length})")
        )
    elif len(normal) < min_length:
        problems.append((path, f"too short after normalisation (at least {min_length} chars)"))
    kept = visible(text)
    return text if kept == text else kept


def _normal_identity(identity: Identity, prefix: str, problems: list[tuple[str, str]]) -> Identity:
    # gameId and saveId passed their ASCII patterns, so they are already normal.
    name = identity.save_name
    if name is None:
        return identity
    new = _normal_text(
        name, f"{prefix}identity.saveName", problems, min_length=1, max_length=SAVE_NAME_MAX
    )
    return identity if new is name else msgspec.structs.replace(identity, save_name=new)


def _normal_chat_context(context: ChatContext, problems: list[tuple[str, str]]) -> ChatContext:
    model_context = context.model_context and _normal_context(
        context.model_context, "context.modelContext", problems
    )
    identity = context.identity and _normal_identity(context.identity, "context.", problems)
    if model_context is context.model_context and identity is context.identity:
        return context
    return msgspec.structs.replace(context, model_context=model_context, identity=identity)


def _normal_context(
    context: ModelContext, path: str, problems: list[tuple[str, str]], *, look: bool = True
) -> ModelContext:
    """The modelContext with every string kept, or ``context`` itself if none changes.

    ``look``: first check its encoding for plain text, which is cheaper than
    the walk when, as usual, nothing needs normalising.
    """
    if look and plain_json(_ENCODER.encode(context)):
        return context
    too_long: list[str] = []
    new = _normal_struct(context, too_long)
    if too_long:
        # Rare: walk again to name each field, as the slow decode path does.
        found = list(walk(_normal_builtins(msgspec.to_builtins(new)), _context_info(), path))
        found = found or [(path, f"a string is too long (at most {CONTEXT_STRING_MAX} chars)")]
        problems.extend((where, f"{reason} after normalisation") for where, reason in found)
    return new


def _normal_facts(facts: EventFacts, problems: list[tuple[str, str]]) -> EventFacts:
    """A game.event's facts with their strings kept; over-long ones named (v1.md "game.event")."""
    too_long: list[str] = []
    new = _normal_struct(facts, too_long)
    if too_long:
        info = mi.type_info(EventFacts)
        found = list(walk(_normal_builtins(msgspec.to_builtins(new)), info, "facts"))
        problems.extend((where, f"{reason} after normalisation") for where, reason in found)
    return new


def _normal_builtins(value: Any) -> Any:
    """``value`` (builtins) with every string in its normal form, to measure it."""
    if isinstance(value, str):
        return normalize(value)
    if isinstance(value, dict):
        return {key: _normal_builtins(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_normal_builtins(item) for item in value]
    return value


_S = TypeVar("_S", bound=msgspec.Struct)

# What a field of a modelContext Struct holds, as far as text goes.
_TEXT, _TEXTS, _PART, _PARTS = range(4)


@functools.cache
def _text_fields(cls: type[Any]) -> tuple[tuple[str, int], ...]:
    """The fields of a modelContext Struct that hold text, and how (read once per type)."""
    info = mi.type_info(cls)
    assert isinstance(info, mi.StructType)
    out = []
    for field in info.fields:
        t = bare_type(field.type)
        item = bare_type(t.item_type) if isinstance(t, mi.ListType) else None
        if isinstance(t, mi.StrType):
            out.append((field.name, _TEXT))
        elif isinstance(t, mi.StructType):
            out.append((field.name, _PART))
        elif isinstance(item, mi.StrType):
            out.append((field.name, _TEXTS))
        elif isinstance(item, mi.StructType):
            out.append((field.name, _PARTS))
    return tuple(out)


@functools.cache
def _context_info() -> mi.Type:
    """The modelContext's msgspec description, built on first use rather than at import."""
    return mi.type_info(ModelContext)


def _normal_struct(obj: _S, too_long: list[str]) -> _S:
    """``obj`` (a modelContext or part of one) with its strings kept (invisibles removed).

    Walks only the fields that hold text; every string of a modelContext has the
    same limit, so ``too_long`` collects the changed ones over it.
    """
    changes: dict[str, Any] = {}
    for name, holds in _text_fields(type(obj)):
        value = getattr(obj, name)
        if value is None:
            continue
        if holds == _TEXT:
            new: Any = _normal_string(value, too_long)
        elif holds == _PART:
            new = _normal_struct(value, too_long)
        else:
            one = _normal_string if holds == _TEXTS else _normal_struct
            items = [one(item, too_long) for item in value]
            new = value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if new is not value:
            changes[name] = new
    return msgspec.structs.replace(obj, **changes) if changes else obj


def _normal_string(value: str, too_long: list[str]) -> str:
    normal = normalize(value)
    if normal == value:
        return value
    if len(normal) > CONTEXT_STRING_MAX:
        too_long.append(normal)
    kept = visible(value)
    return value if kept == value else kept
