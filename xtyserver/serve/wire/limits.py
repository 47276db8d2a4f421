"""The transport limits of the adapter port (built once from the settings:
:func:`xtyserver.serve.runtime_settings.wire_limits`)."""

from __future__ import annotations

import msgspec

from xtyserver.protocol.limits import FRAME_MAX_BYTES


class WireLimits(msgspec.Struct, frozen=True, kw_only=True):
    """What one connection of the adapter port may send and how long it may take.

    Attributes:
        open_timeout: Seconds from the accept to the upgrade answered (or the
            HTTP request read); then the socket is dropped.
        close_timeout: Seconds a close waits for the peer's answer; then the socket is dropped.
        stop_timeout: Seconds the whole stop may take, whatever the peers do.
        head_bytes: Largest request head (request line and headers).
        body_bytes: Largest ``POST /v1/http`` body: one screenshot frame's worth
            (v1.md "HTTP transport").
        frame_bytes: Largest WebSocket message; over it the connection closes with 1009.
    """

    open_timeout: float
    close_timeout: float
    stop_timeout: float
    head_bytes: int = 16 * 1024
    body_bytes: int = FRAME_MAX_BYTES + 64 * 1024
    frame_bytes: int = FRAME_MAX_BYTES
