"""The SQLite shell of memory: the one store (``store.MemoryStore``) over apsw.

Everything here does I/O; the rules it applies live in the pure ``xtyserver.memory``
modules above it. The table modules' functions take an open connection and run
inside the caller's transaction; the store checks values before they get there
(``memory/validation.py``).
"""
