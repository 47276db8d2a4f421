"""The recording format: one JSON-lines file per connection (pure).

The first line is a header; every other line is one event with ``t``, the
seconds since the connection opened (on the server's clock):

* ``{"t": 1.25, "in": "<the client frame's text>"}`` — exact, except that the
  hello's ``token`` is ``"[redacted]"`` and a screenshot's ``image.data`` is
  ``"[image]"`` with ``"image": {"mime", "bytes", "sha256", "width", "height", "format"}``
  beside it (unless recorded with ``--record-images``);
* ``{"t": 1.30, "out": {...}}`` — a server frame as sent;
* ``{"t": 2.0, "binary": {"bytes": n, "sha256": "..."}}`` — a binary message;
* ``{"t": 2.0, "unparsed": {"bytes": n, "sha256": "..."}}`` — a large message that
  is not a JSON object (kept out: it could hold anything);
* ``{"t": 9.0, "close": {"code": 1000}}`` — the end.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import msgspec

FORMAT = 1
REDACTED = "[redacted]"
IMAGE_PLACEHOLDER = "[image]"


class Header(msgspec.Struct, frozen=True, rename="camel"):
    """The first line of a recording.

    Attributes:
        started_at: Wall-clock start, seconds since the epoch (server clock).
        server: Server name and version.
        auth: How the adapter gave its token: ``header``, ``hello`` or ``none``.
        images: ``described`` (hash, size, dimensions) or ``kept`` (``--record-images``).
    """

    recording: int
    started_at: float
    server: str
    auth: str
    images: str


class ImageNote(msgspec.Struct, frozen=True):
    """What is kept of a screenshot: never its pixels unless ``--record-images``."""

    mime: str
    bytes: int
    sha256: str
    width: int | None = None
    height: int | None = None
    format: str | None = None


class Entry(msgspec.Struct, frozen=True, kw_only=True):
    """One line after the header."""

    t: float
    raw: str | None = None
    frame: dict[str, Any] | None = None
    image: ImageNote | None = None
    binary: dict[str, Any] | None = None
    unparsed: dict[str, Any] | None = None
    close: dict[str, Any] | None = None

    @property
    def inbound(self) -> bool:
        """A client frame (text, binary or unparsed)."""
        return self.raw is not None or self.binary is not None or self.unparsed is not None

    def parsed(self) -> dict[str, Any] | None:
        """The client frame as a JSON object, or None when it is not one."""
        if self.raw is None:
            return None
        try:
            value = json.loads(self.raw)
        except ValueError:
            return None
        return value if isinstance(value, dict) else None


class Recording(msgspec.Struct, frozen=True):
    """A whole recording: its header and events in the order they happened."""

    name: str
    header: Header
    entries: list[Entry]

    def inbound(self) -> list[Entry]:
        return [e for e in self.entries if e.inbound]

    def outbound(self) -> list[dict[str, Any]]:
        return [e.frame for e in self.entries if e.frame is not None]


def parse(name: str, lines: Iterable[str]) -> Recording:
    """Read a recording from its lines (ValueError: a line is not a recording line)."""
    rows = [line for line in lines if line.strip()]
    if not rows:
        raise ValueError(f"{name}: empty recording")
    try:
        header = msgspec.json.decode(rows[0], type=Header)
        entries = [_entry(row) for row in rows[1:]]
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ValueError(f"{name}: not a recording ({exc})") from None
    # A big frame's line can land after a server frame that left meanwhile: order by time.
    entries.sort(key=lambda e: e.t)
    return Recording(name, header, entries)


def _entry(row: str) -> Entry:
    value = msgspec.json.decode(row)
    if not isinstance(value, dict) or "t" not in value:
        raise msgspec.ValidationError("a line needs `t`")
    return Entry(
        t=float(value["t"]),
        raw=value.get("in"),
        frame=value.get("out"),
        image=msgspec.convert(value["image"], ImageNote) if "image" in value else None,
        binary=value.get("binary"),
        unparsed=value.get("unparsed"),
        close=value.get("close"),
    )
