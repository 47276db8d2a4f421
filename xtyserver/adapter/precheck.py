"""Check a client frame with the server's own decoder before it is sent.

Pure: the adapter client encodes a frame and runs it through
:func:`xtyserver.protocol.codec.decode_client_frame`, the very function the
server runs on receipt, so an adapter author sees the same refusal (code,
message, every offending field) without a round trip (v1.md "Errors").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from xtyserver.errors import PeerError
from xtyserver.protocol.codec import Decoded, decode_client_frame

_ENCODER = msgspec.json.Encoder()


class Refused(Exception):
    """A frame refused by the server, or by the same checks run locally before sending.

    Attributes:
        code: The protocol error code (v1.md "Error codes").
        message: What is wrong, with up to 20 ``path: reason`` pairs.
        fields: The paths of every offending field.
        frame_id: The ``id`` of the refused frame, when it had one.
        local: True when refused here before sending; nothing went on the wire.
    """

    def __init__(
        self,
        code: str,
        message: str,
        *,
        fields: Sequence[str] = (),
        frame_id: str | None = None,
        local: bool = False,
    ) -> None:
        where = "refused locally" if local else "refused by the server"
        super().__init__(f"{where}: {code}: {message}")
        self.code = code
        self.message = message
        self.fields = tuple(fields)
        self.frame_id = frame_id
        self.local = local


def encode(frame: Mapping[str, Any] | msgspec.Struct) -> bytes:
    """The compact JSON of a frame given as a wire-form mapping or a frame Struct."""
    return _ENCODER.encode(frame)


def precheck(data: bytes) -> Decoded:
    """Run the server's decoder and budget checks on one encoded frame.

    Returns it decoded (with its modelContext size, for an "over target" hint), or
    raises Refused with ``local=True`` and the server's code and fields.
    """
    try:
        return decode_client_frame(data)
    except PeerError as exc:
        raise Refused(
            exc.code, exc.message, fields=exc.fields, frame_id=exc.frame_id, local=True
        ) from None
