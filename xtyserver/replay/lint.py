"""``xtyserver replay --lint``: what an adapter does wrong, read from its recording (pure).

Every client frame is run through the server's own decoder (budgets, types,
forbidden content); the timing rules come from v1.md "Heartbeats and play
accounting", "state.update" and "Save switch".
"""

from __future__ import annotations

from typing import Any

import msgspec

from xtyserver.errors import PeerError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.replay.recording import Entry, Recording

STATE_MIN_GAP = 1.0
"""Seconds: v1.md asks for state updates "at most about once a second"."""

HEARTBEAT_SLACK = 1.5
"""A gap over this many ``heartbeatMs`` is too sparse (the server closes at ``heartbeatMisses``)."""

BUDGET_CODES = frozenset({"budget_exceeded", "frame_too_large"})
TERMINAL = frozenset({"chat.done", "chat.error"})


class Finding(msgspec.Struct, frozen=True):
    """One thing the adapter did wrong, ``t`` seconds into the recording.

    ``rule`` is ``over_budget``, ``forbidden_content``, ``invalid_frame``,
    ``sparse_heartbeats``, ``state_too_often``, ``switch_while_streaming`` or
    ``redacted_text``; ``message`` says what happened, for a person.
    """

    rule: str
    t: float
    message: str
    fields: list[str] = msgspec.field(default_factory=list)


def lint(recording: Recording) -> list[Finding]:
    """Every finding of a recording, in time order."""
    found = [*_frames(recording), *_heartbeats(recording), *_states(recording)]
    found += _switches(recording)
    return sorted(found, key=lambda f: f.t)


def _frames(recording: Recording) -> list[Finding]:
    out = []
    for entry in recording.inbound():
        if entry.raw is None:
            continue
        try:
            decoded = decode_client_frame(entry.raw)
        except PeerError as exc:
            rule = "over_budget" if exc.code in BUDGET_CODES else "invalid_frame"
            if exc.code == "forbidden_content":
                rule = exc.code
            out.append(Finding(rule, entry.t, f"{exc.code}: {exc.message}", list(exc.fields)))
            continue
        text = getattr(decoded.frame, "text", None)
        if isinstance(text, str) and (kind := find_forbidden(text)):
            message = f"chat text carried a {kind} (the server redacts it before the model)"
            out.append(Finding("redacted_text", entry.t, message, ["text"]))
    return out


def _heartbeat_ms(recording: Recording) -> tuple[float, float] | None:
    for entry in recording.entries:
        if entry.frame is not None and entry.frame.get("type") == "server.hello":
            return entry.t, float(entry.frame.get("heartbeatMs", 5000)) / 1000
    return None


def _heartbeats(recording: Recording) -> list[Finding]:
    hello = _heartbeat_ms(recording)
    if hello is None:
        return []
    start, interval = hello
    end = recording.entries[-1].t if recording.entries else start
    beats = [e.t for e in recording.inbound() if _type(e) == "heartbeat" and e.t >= start]
    out = []
    previous = start
    for t in [*beats, end]:
        gap = t - previous
        if gap > interval * HEARTBEAT_SLACK:
            message = (
                f"{gap:.1f} s without a heartbeat (send one every {interval:g} s;"
                " silence of heartbeatMisses intervals closes the session)"
            )
            out.append(Finding("sparse_heartbeats", previous, message))
        previous = t
    return out


def _states(recording: Recording) -> list[Finding]:
    inbound = recording.inbound()
    out = []
    previous: float | None = None
    for i, entry in enumerate(inbound):
        if _type(entry) != "state.update":
            continue
        before_chat = i + 1 < len(inbound) and _type(inbound[i + 1]) == "chat.send"
        if previous is not None and entry.t - previous < STATE_MIN_GAP and not before_chat:
            message = (
                f"state.update {1000 * (entry.t - previous):.0f} ms after the previous one"
                f" (at most one a second, and one right before a chat.send)"
            )
            out.append(Finding("state_too_often", entry.t, message))
        previous = entry.t
    return out


def _switches(recording: Recording) -> list[Finding]:
    current: tuple[str, str] | None = None
    streaming: set[str] = set()
    out = []
    for entry in recording.entries:
        if entry.frame is not None:
            if entry.frame.get("type") in TERMINAL or entry.frame.get("type") == "error":
                streaming.discard(str(entry.frame.get("id")))
            continue
        frame = entry.parsed()
        if frame is None:
            continue
        kind = frame.get("type")
        identity = _identity(frame.get("identity"))
        if kind == "adapter.hello":
            current = identity
        elif kind == "chat.send" and isinstance(frame.get("id"), str):
            streaming.add(frame["id"])
            context = frame.get("context")
            switched = _identity(context.get("identity")) if isinstance(context, dict) else None
            current = switched or current
        elif kind == "state.update" and identity is not None and identity != current:
            if streaming:
                message = (
                    f"save switch to {identity[0]}/{identity[1]} while reply"
                    f" {', '.join(sorted(streaming))} streams (refused: reply_in_progress)"
                )
                out.append(Finding("switch_while_streaming", entry.t, message, ["identity"]))
            else:
                current = identity
    return out


def _type(entry: Entry) -> str | None:
    frame = entry.parsed()
    kind = frame.get("type") if frame is not None else None
    return kind if isinstance(kind, str) else None


def _identity(value: Any) -> tuple[str, str] | None:
    if isinstance(value, dict):
        return str(value.get("gameId")), str(value.get("saveId"))
    return None
