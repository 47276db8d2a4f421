"""Long-term memory and play statistics (issue 3).

``MemoryStore`` (``store.py``) is the one entry to the SQLite file: it composes
``database`` (connections, migrations, transactions), ``validation``, the table
repositories ``shared_profile``, ``events`` and ``play``, and ``transfer``
(export, import, backup). ``compaction``, ``retrieval``, ``tokenize``,
``accounting`` and ``extraction`` are pure.
"""

from xtyserver.memory.retrieval import MemoryBudget, MemorySelection, SaveIndex, select_memories
from xtyserver.memory.store import MemoryStore
from xtyserver.memory.types import (
    MemoryEvent,
    NewEvent,
    PlayStats,
    Scope,
    SharedProfile,
)

__all__ = [
    "MemoryBudget",
    "MemoryEvent",
    "MemorySelection",
    "MemoryStore",
    "NewEvent",
    "PlayStats",
    "SaveIndex",
    "Scope",
    "SharedProfile",
    "select_memories",
]
