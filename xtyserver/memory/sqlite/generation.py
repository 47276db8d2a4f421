"""The management generation: one counter every management change bumps (v1.md "Memory management").

A running server keeps the profile and the memory of the saves being played in
memory. When another process (``xtyserver mcp``, the CLI) forgets, corrects or
pins something, the server must not keep injecting what was changed: each
management write bumps this counter in its own transaction, and the server
reads it (one small read) before each turn's memory.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar, cast

import apsw

T = TypeVar("T")


def changed(fn: Callable[[apsw.Connection], T]) -> Callable[[apsw.Connection], T]:
    """``fn`` plus a bump of the generation, in the same transaction."""

    def write(conn: apsw.Connection) -> T:
        result = fn(conn)
        conn.execute("UPDATE memory_generation SET value = value + 1 WHERE id = 1")
        return result

    return write


def read(conn: apsw.Connection) -> int:
    """The current generation (0 before any management change)."""
    rows = conn.execute("SELECT value FROM memory_generation WHERE id = 1").fetchall()
    return cast(int, rows[0][0]) if rows else 0
