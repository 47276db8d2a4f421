"""Where a text turn's CPU goes before its first delta (``turn.py --steps``).

Installed in turn.py's server child only: wrappers mark the thread CPU time
(``time.thread_time``, the event loop's thread) and the process CPU time at
each step of the path from a ``chat.send`` read off the socket to its first
``chat.delta`` written to it: decode, the session's ``handle`` of each event,
the turn's memory, ``plan_turn``, the model call up to the request
(``post_chat``), each streamed chunk taken, the delta's encode and send. The
table gives, per pair of consecutive marks, the mean CPU milliseconds per turn
and how often per turn the pair occurred; the marks are wrapped by name, and
a name the measured tree lacks (``--baseline`` of an older commit) is skipped.
CPU between marks that belongs to other tasks of the process (a background
write, the injection log) counts where it ran, so the process column can
exceed the thread column. The wrappers cost a few microseconds per mark.
"""

from __future__ import annotations

import functools
import importlib
import itertools
import time
from collections.abc import Callable
from typing import Any

_turns: list[list[tuple[str, float, float]]] = []
_current: list[tuple[str, float, float]] | None = None


def _mark(label: str) -> None:
    if _current is not None:
        _current.append((label, time.thread_time(), time.process_time()))


def _module(*names: str) -> Any:
    """The first of ``names`` the tree has (a module moved between trees), or None."""
    for name in names:
        try:
            return importlib.import_module(name)
        except ModuleNotFoundError:
            continue
    return None


def _wrap(modules: tuple[str, ...], owner: str | None, name: str, label: str) -> None:
    target: Any = _module(*modules)
    if target is not None and owner is not None:
        target = getattr(target, owner, None)
    fn = getattr(target, name, None) if target is not None else None
    if fn is None:
        return  # not in this tree
    wrapper: Callable[..., Any]
    if _is_async(fn):

        @functools.wraps(fn)
        async def wrapper(*args: Any, **kwargs: Any) -> Any:
            _mark(label + " >")
            try:
                return await fn(*args, **kwargs)
            finally:
                _mark(label + " <")

    else:

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            _mark(label + " >")
            try:
                return fn(*args, **kwargs)
            finally:
                _mark(label + " <")

    setattr(target, name, wrapper)


def _is_async(fn: object) -> bool:
    import inspect

    return inspect.iscoroutinefunction(fn)


def install() -> None:
    """Wrap the server's steps (call before the server starts)."""
    # Before serve/ the connection runtime and its helpers were at the package's top.
    connection = _module("xtyserver.serve.connection", "xtyserver.connection")

    sender: Any
    try:  # the wire's WebSocket; older trees sent through websockets' asyncio connection
        from xtyserver.serve.wire.websocket import WsPeer

        sender = WsPeer
    except ImportError:
        from websockets.asyncio.connection import Connection

        sender = Connection

    decode = connection.decode_client_frame

    def decode_marked(message: str | bytes) -> Any:
        global _current
        # The reader hands over bytes (serve/text_frames.py); older trees a str.
        raw = message.encode() if isinstance(message, str) else bytes(message)
        if b'"chat.send"' in raw[:300] and b'"image"' not in raw:
            _current = [("received", time.thread_time(), time.process_time())]
        decoded = decode(message)
        _mark("decoded")
        return decoded

    connection.decode_client_frame = decode_marked  # type: ignore[assignment]
    send = sender.send

    async def send_marked(self: Any, message: Any, *args: Any, **kwargs: Any) -> None:
        global _current
        first = _current is not None and isinstance(message, bytes) and b'"chat.delta"' in message
        if first:
            _mark("ws.send >")
        await send(self, message, *args, **kwargs)  # older trees' send took ``text=``
        if first and _current is not None:
            _mark("ws.send <")
            _turns.append(_current)
            _current = None

    sender.send = send_marked
    tasks = ("xtyserver.serve.turn_tasks", "xtyserver.turn_tasks")
    for modules, owner, name, label in (
        (("xtyserver.session.machine",), "GameAgentSession", "handle", "handle"),
        (("xtyserver.session.turns",), None, "plan_turn", "plan_turn"),
        (tasks, "TurnTasks", "load_memory", "load_memory"),
        (tasks, "TurnTasks", "cached_memory", "cached_memory"),
        (tasks, "TurnTasks", "model_call", "model_call"),
        (
            ("xtyserver.serve.memory_service", "xtyserver.memory.service"),
            "MemoryService",
            "turn_memory",
            "turn_memory",
        ),
        (
            ("xtyserver.serve.meter", "xtyserver.memory.meter"),
            "TokenMeter",
            "spent_today",
            "spent_today",
        ),
        (("xtyserver.model.client",), None, "post_chat", "post_chat"),
        (("xtyserver.model.client",), "_Progress", "take", "chunk"),
        (("xtyserver.serve.connection", "xtyserver.connection"), None, "encode_frame", "encode"),
    ):
        _wrap(modules, owner, name, label)


def table(skip: int) -> str:
    """The mean CPU per turn between consecutive marks, after ``skip`` warm-up turns."""
    turns = _turns[skip:]
    if not turns:
        return "no text turn measured\n"
    steps: dict[str, list[float]] = {}
    for marks in turns:
        for (a, t0, p0), (b, t1, p1) in itertools.pairwise(marks):
            step = steps.setdefault(f"{a} -> {b}", [0.0, 0.0, 0.0])
            step[0] += t1 - t0
            step[1] += p1 - p0
            step[2] += 1
    n = len(turns)
    lines = [f"{'thread ms':>9s} {'process ms':>10s} {'per turn':>8s}  step ({n} text turns)"]
    total = [0.0, 0.0]

    def row(thread: float, process: float, count: str, name: str) -> str:
        return f"{thread / n * 1e3:9.3f} {process / n * 1e3:10.3f} {count:>8s}  {name}"

    for name, (thread, process, count) in steps.items():
        total[0] += thread
        total[1] += process
        if count / n >= 0.05:  # a step of one turn in twenty or more
            lines.append(row(thread, process, f"{count / n:.2f}", name))
    lines.append(row(total[0], total[1], "", "chat.send -> first delta"))
    return "\n".join(lines) + "\n"
