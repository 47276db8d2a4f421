"""Long-term memory and play statistics.

Pure parts (importable by the sans-I/O core): ``types``, ``retrieval``,
``tokenize``, ``accounting``, ``extraction``, ``compaction``. Shells:
``MemoryStore`` (``store.py``), the one entry to the SQLite file, composing
``database`` (connections, migrations, transactions), ``validation``, the table
repositories ``shared_profile``, ``events`` and ``play``, and ``transfer``
(export, import, backup); and ``service`` / ``jobs``, the async memory service
of the running server. This package imports none of them by itself, so
importing a pure part never loads ``apsw`` or ``anyio``.
"""
