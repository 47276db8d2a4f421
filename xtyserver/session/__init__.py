"""The session core: one connection's state machine, its events, effects and turn planning.

Sans-I/O (v1.md "Session"): nothing here imports a socket, thread, clock,
``openai``, ``anyio``, Pillow, ``apsw`` or ``structlog``; ``tests/test_layers.py``
checks it in a fresh interpreter.
"""
