"""The memory evaluation set and ``xtyserver eval`` (README "Memory evaluation").

Pure parts: the set's types and checks (:mod:`.evalset`), scoring and the
baseline comparison (:mod:`.scoring`), the printed table (:mod:`.table`). Shells:
the runner over the real server (:mod:`.runner`) and the command (:mod:`.command`).
This package module imports nothing, so importing the pure parts stays I/O-free.
"""
