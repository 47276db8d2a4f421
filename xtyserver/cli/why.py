"""``xtyserver why``: the injection log of the last turns (what each prompt layer cost).

Reads ``<data_dir>/profiles/<profile>/injections.jsonl`` (written by a running
server, see :mod:`xtyserver.serve.working`); it holds sizes, memory ids,
scores, freshness and the model, never the player's text or the reply.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from xtyserver.cli.console import console_json
from xtyserver.config import Settings
from xtyserver.serve.working import InjectionLog, injection_log_path
from xtyserver.session.layers import InjectionRecord


def why(settings: Settings, *, last: int, as_json: bool) -> int:
    """Print the last ``last`` turns of the injection log, oldest first."""
    log = InjectionLog(injection_log_path(settings.data_path, settings.profile))
    records = log.last(last)
    if as_json:
        print(console_json(msgspec.to_builtins(records)))
        return 0
    if not records:
        print("no turns logged yet")
        return 0
    for record in records:
        print(render(record))
    return 0


def render(record: InjectionRecord) -> str:
    """One turn as a few readable lines."""
    when = datetime.fromtimestamp(record.at, UTC).strftime("%Y-%m-%d %H:%M:%SZ")
    head = (
        f"{when}  {record.game_id} / {record.save_id}  model {record.model or '-'}  "
        f"context {record.context}  window {record.window_rounds} rounds"
        f"{'  +summary' if record.summary else ''}{'  +image' if record.image else ''}"
    )
    layers = "  ".join(f"{c.name} {c.chars}c/{c.tokens}t" for c in record.layers)
    total = sum(c.tokens for c in record.layers)
    memories = (
        ", ".join(
            f"#{m.id} {m.why} {m.score:.2f}" + (f" via {m.via}" if m.via else "")
            for m in record.memories
        )
        or "none"
    )
    return f"{head}\n  layers: {layers}  (total ~{total} tokens)\n  memories: {memories}"
