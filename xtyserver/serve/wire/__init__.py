"""The wire: one listener per port, h11 for every request head, websockets' sans-I/O protocol.

A shell. :mod:`~xtyserver.serve.wire.http` is the one h11 loop (the adapter
port's requests, the memory page, the scripted model server);
:mod:`~xtyserver.serve.wire.websocket` runs websockets' ``ServerProtocol`` over
an anyio stream; :mod:`~xtyserver.serve.wire.adapter_port` is the adapter
port's listener and bounded stop, :mod:`~xtyserver.serve.wire.sessions` its
seat pool, paired keys and live settings; :mod:`~xtyserver.serve.wire.limits`
holds the transport limits.
"""
