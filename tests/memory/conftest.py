"""Fixtures of the memory tests: a real SQLite file in tmp_path and a manual clock.

``tmp_path`` is a folder whose path holds Chinese characters and spaces
(tests/unusual_paths.py), as under a Chinese Windows user name.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unusual_paths import unusual
from xtyserver.clock import ManualClock
from xtyserver.memory.retrieval import SaveIndex, select_memories
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import MemoryEvent, Scope


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    return unusual(tmp_path)


@pytest.fixture
def clock() -> ManualClock:
    return ManualClock()


@pytest.fixture
def store(tmp_path: Path, clock: ManualClock) -> Iterator[MemoryStore]:
    s = MemoryStore.open_profile(tmp_path, "default", clock=clock)
    yield s
    s.close()


def relevant(index: SaveIndex, query: str, now: float = 0.0) -> list[int]:
    """The ids a turn with ``query`` injects as relevant (at most 4), best first."""
    chosen = select_memories(None, index, query_text=query, current_day=None, now=now)
    return [e.id for e in chosen.relevant]


def buried(store: MemoryStore) -> list[tuple[str, str, str, str]]:
    """Every tombstone as ``(game_id, save_id, kind, subject)``, read through an export."""
    return [(t.game_id, t.save_id, t.kind, t.subject) for t in store.export().tombstones]


def stored(
    scope: Scope, i: int, summary: str, *, kind: str = "event", importance: int = 3
) -> MemoryEvent:
    """One stored memory of ``scope`` whose subject is its summary, formed at 0."""
    return MemoryEvent(
        id=i, game_id=scope.game_id, save_id=scope.save_id, kind=kind, subject=summary,  # type: ignore[arg-type]
        summary=summary, importance=importance, status="active", pinned=False, day=None,  # type: ignore[arg-type]
        created_at=0.0, updated_at=0.0, last_used_at=0.0,
    )  # fmt: skip
