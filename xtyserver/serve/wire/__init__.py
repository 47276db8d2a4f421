"""The wire: one listener per port, h11 for every request head, websockets' sans-I/O protocol.

A shell: :mod:`~xtyserver.serve.wire.adapter_port` is the adapter port's
listener and bounded stop, :mod:`~xtyserver.serve.wire.sessions` its sessions.
"""
