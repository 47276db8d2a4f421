"""Recorded sessions: the file format, linting, replay checks (pure) and the player (shell).

See docs/replay.md "Record and replay". The recorder that writes the files is
:mod:`xtyserver.replay.recorder`; ``xtyserver replay`` is :mod:`xtyserver.replay.player`.
"""
