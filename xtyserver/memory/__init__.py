"""Long-term memory and play statistics.

The pure parts are importable by the sans-I/O core; the SQLite store lives in
``memory/sqlite`` and the async service in ``xtyserver.serve``. This package
imports none of them by itself, so importing a pure part never loads ``apsw``.
"""
