"""The SQLite shell of memory: the one store (``store.MemoryStore``) over apsw.

Everything here does I/O; the rules it applies live in the pure ``xtyserver.memory``
modules above it.
"""
