"""The transport limits of the adapter port, built once from the settings."""

from __future__ import annotations

import msgspec

from xtyserver.config import Settings
from xtyserver.protocol.limits import FRAME_MAX_BYTES


class WireLimits(msgspec.Struct, frozen=True, kw_only=True):
    """What one connection of the adapter port may send and how long it may take.

    Attributes:
        head_bytes: Largest request head (request line and headers).
        body_bytes: Largest ``POST /v1/http`` body: one screenshot frame's worth
            (v1.md "HTTP transport").
        frame_bytes: Largest WebSocket message; over it the connection closes with 1009.
        open_timeout: Seconds from the accept to the upgrade answered (or the
            HTTP request read); then the socket is dropped.
        close_timeout: Seconds a close waits for the peer's answer; then the socket is dropped.
        stop_timeout: Seconds the whole stop may take, whatever the peers do.
        send_timeout: Seconds one frame may take to leave (the connection runtime's).
        write_queue: Frames waiting for a connection's writer.
    """

    head_bytes: int = 16 * 1024
    body_bytes: int = FRAME_MAX_BYTES + 64 * 1024
    frame_bytes: int = FRAME_MAX_BYTES
    open_timeout: float = 10.0
    close_timeout: float = 2.0
    stop_timeout: float = 5.0
    send_timeout: float = 30.0
    write_queue: int = 64


def wire_limits(settings: Settings) -> WireLimits:
    """The adapter port's limits from ``settings`` (``[server]``)."""
    srv = settings.server
    return WireLimits(
        open_timeout=srv.open_timeout,
        close_timeout=srv.close_timeout,
        stop_timeout=srv.stop_timeout,
        send_timeout=srv.send_timeout,
        write_queue=srv.write_queue_frames,
    )
