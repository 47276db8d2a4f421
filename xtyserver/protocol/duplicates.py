"""Refusing a JSON object that repeats a key (v1.md "Frames": JSON rules).

msgspec keeps the last of two equal keys silently (jcrist/msgspec#648); a mod
that sends two values for one field has a bug worth hearing about, and an
attacker gets no ambiguity. :func:`refuse_duplicate_keys` decides it in three
steps, cheapest first, each exact where it answers:

1. **Count**. Without a backslash, ``raw`` spells every string exactly as
   decoded, so its colons are one per key plus those inside strings. The typed
   frame's compact re-encoding writes the same strings and each key holding a
   non-default value once, so every key of ``raw`` it lacks (a repeat, a default
   spelled out) adds a colon to ``raw`` alone: equal counts mean no repeat. The
   re-encoding may re-spell a timestamp (``+00:00`` as ``Z``: a colon fewer, which
   only sends us to step 2; ``+0530`` as ``+05:30``: a colon *more*, so that frame
   goes to step 2 unless ``raw`` spells the offset with the colon too). A
   ``msgspec.Raw`` part is re-encoded verbatim, repeats and all, so a frame
   carrying one skips this step. Keys spelled with a value the encoding omits
   (``"menu": null``, ``"schemaVersion": 1``) are counted on their own: the
   unaccounted colons are never fewer than such keys, and as many only when
   every repeated key holds a default everywhere but maybe its last time. So
   the frame repeats no key when those keys match the unaccounted colons
   exactly and no null key's name appears again later in ``raw`` (a second
   literal key would leave a colon unmatched). This holds
   for frame types whose nullable fields all default to ``null`` and that hold
   no free-form object (checked once from the types).
2. **Count again against a generic decode** (a few µs), which keeps each
   distinct key of each object once: for a frame the first count cannot
   settle (a name spelled with a default appears twice, a ``false`` spelled
   out, a timestamp re-spelled).
3. **Name the key** with ``json`` and an ``object_pairs_hook``, only for a
   frame that is refused.

Single-byte counts run at memchr speed, which matters for a frame carrying a
screenshot.
"""

from __future__ import annotations

import functools
import json
import re
from datetime import UTC
from typing import Any, Final

import msgspec
import msgspec.inspect as mi

from xtyserver.errors import FrameError
from xtyserver.protocol.frames import (
    CLIENT_FRAME_TYPES,
    ChatSend,
    ClientFrame,
    ModelContext,
    StateUpdate,
    client_frame_info,
)

__all__ = ["RepeatedKey", "no_repeats", "refuse_duplicate_keys"]

_GENERIC = msgspec.json.Decoder()
_ENCODER = msgspec.json.Encoder()


def refuse_duplicate_keys(raw: bytes, frame: ClientFrame, encoded: bytes) -> None:
    """Refuse ``raw`` (``invalid_json``, naming the key) if any of its objects repeats a key.

    ``frame`` is ``raw`` decoded (before normalisation), ``encoded`` its msgspec
    encoding (a screenshot's base64 may be left out, as it holds no colon).
    """
    if 0x5C not in raw and (_counted(raw, frame, encoded) or _counted_generic(raw)):
        return
    _name_duplicate_key(raw)


def _defaults_omitted(
    t: mi.Type, literal_keys: set[bytes], seen: set[type[Any]] | None = None
) -> bool:
    """Whether every nullable field under ``t`` defaults to null and no free-form object occurs.

    Collects into ``literal_keys`` the quoted names of fields whose one allowed
    value is their default (the encoding always omits them).
    """
    seen = set() if seen is None else seen
    match t:
        case mi.Metadata(type=inner):
            return _defaults_omitted(inner, literal_keys, seen)
        case mi.StructType(cls=cls) if cls in seen:
            return True
        case mi.StructType(cls=cls, fields=fields):
            seen.add(cls)
            ok = True
            for field in fields:
                ft = field.type
                nullable = isinstance(ft, mi.UnionType) and any(
                    isinstance(m, mi.NoneType) for m in ft.types
                )
                if nullable and field.default is not None:
                    ok = False
                if isinstance(ft, mi.LiteralType) and ft.values == (field.default,):
                    literal_keys.add(f'"{field.encode_name}"'.encode())
                ok = _defaults_omitted(ft, literal_keys, seen) and ok
            return ok
        case mi.UnionType(types=types):
            return all([_defaults_omitted(m, literal_keys, seen) for m in types])
        case mi.ListType(item_type=item):
            return _defaults_omitted(item, literal_keys, seen)
        case mi.DictType() | mi.AnyType():
            return False
        case _:
            # Scalars; and the opaque observation (msgspec.Raw), which sends
            # its frame past the counting step.
            return True


@functools.cache
def _omitting() -> tuple[frozenset[type[Any]], frozenset[bytes]]:
    """The frame types whose encoding omits what the peer may spell, and those keys (lazily)."""
    keys: set[bytes] = set()
    info = client_frame_info()
    types = frozenset(t for t in CLIENT_FRAME_TYPES if _defaults_omitted(info[t], keys))
    return types, frozenset(keys)


_WHITESPACE: Final = b" \t\n\r"
_KEY_WINDOW: Final = 128
# The screenshot's base64 follows its key (found only as a key: a string holds no quote).
_DATA_KEY: Final[re.Pattern[bytes]] = re.compile(rb'"data"[ \t\n\r]*:[ \t\n\r]*"')


def _counted(raw: bytes, frame: ClientFrame, encoded: bytes) -> bool:
    """Step 1 of the module docstring: True only when ``raw`` repeats no key."""
    context: ModelContext | None = None
    if isinstance(frame, StateUpdate):
        context = frame.model_context
    elif isinstance(frame, ChatSend) and frame.context is not None:
        if frame.context.observation is not msgspec.UNSET:
            return False
        context = frame.context.model_context
    when = None if context is None else context.captured_at
    if when is not None and when.tzinfo is not UTC:
        offset = when.utcoffset()
        if offset:
            # Written as "+05:30" in the encoding: raw must spell it so as often.
            spelled = _ENCODER.encode(when)[-7:]
            if raw.count(spelled) != encoded.count(spelled):
                return False
    colons = _colons(raw, frame) if type(frame) is ChatSend else raw.count(b":")
    unaccounted = colons - encoded.count(b":")
    if unaccounted == 0:
        return True
    return type(frame) in _omitting()[0] and _spelled_defaults(raw, unaccounted)


def _colons(raw: bytes, frame: ClientFrame) -> int:
    """``raw.count(b":")``, skipping a screenshot's base64 once ``find`` (memchr) shows no colon."""
    if isinstance(frame, ChatSend) and frame.image is not None:
        key = _DATA_KEY.search(raw)
        if key is not None:
            start, end = key.end(), key.end() + len(frame.image.data)
            if raw.find(b":", start, end) < 0:
                return raw.count(b":", 0, start) + raw.count(b":", end)
    return raw.count(b":")


def _spelled_defaults(raw: bytes, unaccounted: int) -> bool:
    """Whether keys spelled with a value the encoding omits match ``unaccounted`` exactly.

    False ("count again") also when unsure: a null key's name appears again
    after it, or a ``null`` after a colon is not plainly a key's value.
    """
    for name in _omitting()[1]:
        at = raw.find(name)
        if at >= 0:
            end = at + len(name)
            if not raw.startswith(b":", end) and not (
                raw[end : end + 8].lstrip(_WHITESPACE).startswith(b":")
            ):
                return False
            unaccounted -= 1
    at = len(raw)
    while unaccounted > 0:
        at = raw.rfind(b"null", 0, at)
        if at < 0:
            return False
        key = _null_key(raw, at)
        if key is None:  # an array item, or inside a string
            continue
        if not key or raw.find(key, at) >= 0:
            return False
        unaccounted -= 1
    return unaccounted == 0


def _null_key(raw: bytes, at: int) -> bytes | None:
    """The quoted key whose value is the ``null`` at ``at``: None if none, b"" when unsure.

    Keys are short: a name beyond the window only makes us unsure. The usual
    spellings (``"menu": null``, ``"menu":null``) are read without slicing.
    """
    start = at - _KEY_WINDOW if at > _KEY_WINDOW else 0
    if at >= 3 and raw.startswith(b'": ', at - 3):
        close = at - 3
    elif at >= 2 and raw.startswith(b'":', at - 2):
        close = at - 2
    else:
        head = raw[start:at].rstrip(_WHITESPACE)
        if not head.endswith(b":"):
            return None
        head = head[:-1].rstrip(_WHITESPACE)
        if not head.endswith(b'"'):
            return b""
        close = start + len(head) - 1
    opening = raw.rfind(b'"', start, close)
    if opening < 0 or not raw[opening + 1 : close].isalpha():
        return b""
    return raw[opening : close + 1]


def _counted_generic(raw: bytes) -> bool:
    """Step 2: count against a generic decode, which keeps each key once per object."""
    try:
        generic = _GENERIC.decode(raw)
    except (msgspec.DecodeError, RecursionError):
        return False
    return _ENCODER.encode(generic).count(b":") == raw.count(b":")


class RepeatedKey(ValueError):
    """A JSON object repeats ``key``."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A ``json`` ``object_pairs_hook`` that refuses a repeated key."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise RepeatedKey(key)
        out[key] = value
    return out


def _name_duplicate_key(raw: bytes) -> None:
    try:
        json.loads(raw, object_pairs_hook=no_repeats)
    except RepeatedKey as dup:
        raise FrameError(
            f"duplicate key {dup.key!r}", code="invalid_json", fields=[dup.key]
        ) from None
    except RecursionError:
        # Deep nesting inside the opaque legacy observation (json's own limit).
        raise FrameError("frame is nested too deeply", code="invalid_json") from None
    except ValueError:
        # Python's limit on the digits of an integer, inside the observation.
        raise FrameError("frame has a number with too many digits", code="invalid_json") from None
