"""The connection runtime (anyio, websockets): connections, turn tasks, the store lane,
the memory service and its background jobs, the token meter, image preparation.

These shells run the effects the sans-I/O session hands out and decide nothing.
"""
