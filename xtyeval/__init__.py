"""The memory evaluation set and ``dev.py eval`` (docs/evaluation.md "Memory evaluation").

A developer's tool beside the set it runs (``eval/``): it drives the real server
(``xtyserver``), lives only in a checkout and is not in the wheel; ``xtyserver``
never imports it (tests/test_layers.py).

Pure parts: the set's types and checks (:mod:`.evalset`), scoring and the
baseline comparison (:mod:`.scoring`), the printed table (:mod:`.table`). Shells:
the runner over the real server (:mod:`.runner`), the command (:mod:`.command`)
and its entry point (:mod:`.__main__`).
This package module imports nothing, so importing the pure parts stays I/O-free.
"""
