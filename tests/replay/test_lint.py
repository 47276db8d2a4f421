"""Lint rules at their edges, on small hand-made recordings."""

from __future__ import annotations

import json
from typing import Any

import pytest

from xtyserver.replay.check import check
from xtyserver.replay.lint import lint
from xtyserver.replay.player import answers_before, progress_bar
from xtyserver.replay.recording import parse

HEADER = {"recording": 1, "startedAt": 0.0, "server": "x", "auth": "header", "images": "described"}
HELLO = {
    "type": "adapter.hello",
    "protocol": "v1",
    "adapter": {"name": "a", "version": "1"},
    "identity": {"gameId": "g", "saveId": "a"},
}
SERVER_HELLO = {"type": "server.hello", "heartbeatMs": 5000}
CTX = {"schemaVersion": 1, "capturedAt": "2026-09-21T00:00:00Z"}


def rec(*events: tuple[float, str, Any]) -> Any:
    rows = [HEADER, {"t": 0, "in": json.dumps(HELLO)}, {"t": 0, "out": SERVER_HELLO}]
    for t, kind, value in events:
        rows.append({"t": t, kind: json.dumps(value) if kind == "in" else value})
    return parse("test", [json.dumps(r) for r in rows])


def rules(recording: Any) -> list[str]:
    return [f.rule for f in lint(recording)]


@pytest.mark.parametrize(("gap", "found"), [(7.5, []), (7.51, ["sparse_heartbeats"])])
def test_heartbeat_gap_edge(gap: float, found: list[str]) -> None:
    beats = [(5.0 * i, "in", {"type": "heartbeat"}) for i in range(1, 4)]
    last = beats[-1][0] + gap
    assert rules(rec(*beats, (last, "in", {"type": "heartbeat"}))) == found


@pytest.mark.parametrize(("gap", "found"), [(1.0, []), (0.999, ["state_too_often"])])
def test_state_gap_edge(gap: float, found: list[str]) -> None:
    state = {"type": "state.update", "modelContext": CTX}
    beats = [(t, "in", {"type": "heartbeat"}) for t in (1.0, 2.0)]
    assert rules(rec(*beats, (1.0, "in", state), (1.0 + gap, "in", state))) == found


def test_a_state_right_before_a_chat_is_fine() -> None:
    state = {"type": "state.update", "modelContext": CTX}
    chat = {"type": "chat.send", "id": "c", "text": "hi", "source": "text"}
    beat = (1.0, "in", {"type": "heartbeat"})
    assert rules(rec(beat, (1.0, "in", state), (1.2, "in", state), (1.2, "in", chat))) == []


def test_budget_edges_name_fields() -> None:
    long = {"type": "state.update", "modelContext": {**CTX, "world": {"location": "x" * 201}}}
    fine = {"type": "state.update", "modelContext": {**CTX, "world": {"location": "x" * 200}}}
    found = lint(rec((1.0, "in", fine), (3.0, "in", long), (4.0, "in", {"type": "heartbeat"})))
    assert [(f.rule, f.fields) for f in found] == [("over_budget", ["modelContext.world.location"])]


def test_switch_only_while_streaming() -> None:
    switch = {
        "type": "state.update",
        "identity": {"gameId": "g", "saveId": "b"},
        "modelContext": CTX,
    }
    chat = {"type": "chat.send", "id": "c", "text": "hi", "source": "text"}
    done = {"type": "chat.done", "id": "c", "text": "ok", "context": "none"}
    streaming = rec((1.0, "in", chat), (1.0, "in", switch), (1.1, "out", done))
    after = rec((1.0, "in", chat), (1.1, "out", done), (2.0, "in", switch))
    assert "switch_while_streaming" in rules(streaming)
    assert "switch_while_streaming" not in rules(after)


def test_check_counts_ends_and_joins_deltas() -> None:
    chat = {"type": "chat.send", "id": "c", "text": "hi", "source": "text"}
    done = {"type": "chat.done", "id": "c", "text": "ok", "context": "none"}
    recording = rec((1.0, "in", chat), (1.1, "out", done))
    delta = {"type": "chat.delta", "id": "c", "text": "o"}
    assert check(recording, [SERVER_HELLO, delta, {**delta, "text": "k"}, done], replies=True).ok
    bad = check(recording, [SERVER_HELLO, {**delta, "text": "ok"}, done, done], replies=True)
    assert "c: 1 chat.send but 2 chat.done/chat.error/error" in bad.problems
    assert "deltas join to 'o'" in check(recording, [delta, done], replies=True).problems[0]
    assert answers_before(recording) == [0, 1]


def test_progress_bar_edges() -> None:
    assert progress_bar(0, 40, width=10) == "[..........]  0/40 frames"
    assert progress_bar(40, 40, width=10) == "[##########] 40/40 frames"
