"""atheris harness over the frame decoder and validator (v1.md "Frames", "Errors").

Contract checked for every input (``xtyserver.protocol.codec.decode_client_frame``):

- it either returns a :class:`Decoded` holding one of the client frame types, or
  raises a :class:`~xtyserver.errors.PeerError` whose ``code`` is one of the
  decoder's documented codes, with a string message, string field paths and an
  ``id`` of at most 64 chars; anything else escaping is a crash;
- a frame it accepts round-trips: encoded again and decoded, it is the same frame;
- the same payload given as ``str`` and as UTF-8 ``bytes`` has the same outcome;
- an accepted frame's modelContext and identity carry no forbidden content.

The input is the raw payload of one WebSocket text frame. Run it (see fuzz/README.md)::

    python fuzz/fuzz_decode.py fuzz/findings/corpus/decode fuzz/corpus/decode -dict=fuzz/decode.dict
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import msgspec

from xtyserver.errors import PeerError
from xtyserver.protocol.codec import DECODE_ERROR_CODES, Decoded, decode_client_frame
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.frames import (
    CLIENT_FRAME_TYPES,
    ChatSend,
    Hello,
    StateUpdate,
)
from xtyserver.protocol.limits import FRAME_MAX_BYTES, SMALL_FRAME_MAX_BYTES

DECODE_CODES = DECODE_ERROR_CODES


def _outcome(data: bytes | str) -> Decoded | PeerError:
    """Decode ``data``; a PeerError is a legitimate outcome, anything else propagates."""
    try:
        return decode_client_frame(data)
    except PeerError as exc:
        return exc


def _check_error(exc: PeerError) -> None:
    assert exc.code in DECODE_CODES, f"undocumented code {exc.code!r}"
    assert isinstance(exc.message, str) and exc.message, "empty message"
    assert all(isinstance(f, str) for f in exc.fields), exc.fields
    assert exc.frame_id is None or (isinstance(exc.frame_id, str) and len(exc.frame_id) <= 64)


def _strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for item in value.values() for s in _strings(item)]
    if isinstance(value, list):
        return [s for item in value for s in _strings(item)]
    return []


def _check_frame(decoded: Decoded) -> None:
    frame = decoded.frame
    assert isinstance(frame, CLIENT_FRAME_TYPES), type(frame)
    assert decoded.context_bytes >= 0
    checked: list[object] = []
    if isinstance(frame, StateUpdate):
        checked += [frame.model_context, frame.identity]
    elif isinstance(frame, Hello):
        checked.append(frame.identity)
    elif isinstance(frame, ChatSend) and frame.context is not None:
        checked += [frame.context.model_context, frame.context.identity]
    for part in checked:
        if part is None:
            continue
        for text in _strings(msgspec.to_builtins(part)):
            assert find_forbidden(text) is None, f"forbidden content accepted: {text!r}"

    again = msgspec.json.encode(frame)
    limit = FRAME_MAX_BYTES if isinstance(frame, ChatSend) else SMALL_FRAME_MAX_BYTES
    if len(again) <= limit:  # re-encoding may lengthen numbers ("1e2" -> "100.0")
        redecoded = _outcome(again)
        assert isinstance(redecoded, Decoded), f"accepted frame does not round-trip: {redecoded!r}"
        assert redecoded.frame == frame, (redecoded.frame, frame)


def test_one_input(data: bytes) -> None:
    """Check the decoder's contract on one text-frame payload (the libFuzzer entry point)."""
    outcome = _outcome(data)
    if isinstance(outcome, PeerError):
        _check_error(outcome)
    else:
        _check_frame(outcome)

    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return
    as_text = _outcome(text)
    if isinstance(outcome, PeerError):
        assert isinstance(as_text, PeerError), "str and bytes disagree"
        assert as_text.code == outcome.code, (as_text.code, outcome.code)
    else:
        assert isinstance(as_text, Decoded), "str and bytes disagree"
        assert as_text.frame == outcome.frame


def main() -> None:
    """Run under libFuzzer; arguments are libFuzzer's (corpus dirs, -max_total_time=...)."""
    import atheris

    atheris.instrument_all()
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
