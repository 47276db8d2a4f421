"""Long-term memory and play statistics.

Pure parts (importable by the sans-I/O core): ``types``, ``retrieval``,
``tokenize``, ``accounting``, ``extraction``, ``compaction``. Shells: ``store``
(the only thing that touches the SQLite file) and ``service`` / ``jobs`` (the
async memory service of the running server). This package imports none of
them by itself, so importing a pure part never loads ``apsw`` or ``anyio``.
"""
