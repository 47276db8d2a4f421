"""The ``token_usage`` table: tokens per local date, save and purpose."""

from __future__ import annotations

from typing import cast

import apsw

from xtyserver.memory.tokens import Purpose, TokenUsage
from xtyserver.memory.types import Scope

MAX_ROWS = 200  # stats show the newest rows only, so a stats.result stays small


def record(
    conn: apsw.Connection, date: str, save: Scope, purpose: Purpose, prompt: int, completion: int
) -> None:
    """Add one call's tokens to its (date, save, purpose) row."""
    conn.execute(
        "INSERT INTO token_usage(date, game_id, save_id, purpose, calls, prompt_tokens, "
        "completion_tokens) VALUES (?, ?, ?, ?, 1, ?, ?) "
        "ON CONFLICT(date, game_id, save_id, purpose) DO UPDATE SET calls = calls + 1, "
        "prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
        "completion_tokens = completion_tokens + excluded.completion_tokens",
        (date, save.game_id, save.save_id, purpose, max(0, prompt), max(0, completion)),
    )


def spent_on(conn: apsw.Connection, date: str) -> int:
    """Every token counted on local date ``date``, all saves and purposes."""
    row = conn.execute(
        "SELECT coalesce(sum(prompt_tokens + completion_tokens), 0) FROM token_usage "
        "WHERE date = ?",
        (date,),
    ).fetchone()
    return int(cast(int, row[0])) if row else 0


def rows(conn: apsw.Connection) -> list[TokenUsage]:
    """The newest rows, newest date first, then by save and purpose."""
    found = conn.execute(
        "SELECT date, game_id, save_id, purpose, calls, prompt_tokens, completion_tokens "
        "FROM token_usage ORDER BY date DESC, game_id, save_id, purpose LIMIT ?",
        (MAX_ROWS,),
    )
    return [TokenUsage(*r) for r in found]
