"""Logging with structlog: readable on a terminal, JSON lines otherwise.

Never log screenshot bytes, player text, tokens or keys: callers pass only
codes, sizes, ids and timings. Logs go to stderr; stdout carries only the
``listening`` line (docs/developing.md "Running").
"""

from __future__ import annotations

import logging
import sys
from typing import Any, TextIO

import structlog


def configure(
    *, stream: TextIO | None = None, json: bool | None = None, level: str = "info"
) -> None:
    """Set up structlog once for the process: to ``stream`` (stderr), JSON unless a tty."""
    out = stream or sys.stderr
    use_json = not out.isatty() if json is None else json
    renderer: Any = (
        structlog.processors.JSONRenderer()
        if use_json
        else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping().get(level.upper(), logging.INFO)
        ),
        logger_factory=structlog.PrintLoggerFactory(out),
        cache_logger_on_first_use=False,
    )


def get(name: str = "xtyserver") -> Any:
    """A bound structlog logger."""
    return structlog.get_logger(name)
