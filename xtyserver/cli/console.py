"""Output every console can take (a GBK console and an emoji save name; docs/commands.md).

Python writes to a redirected stdout in the locale's encoding (GBK on a Chinese
Windows) and by default fails on a character it cannot encode. Every command
keeps the console's encoding, so Chinese stays readable, and replaces what it
cannot show (``?`` on stdout, a backslash escape on stderr, ``\\u`` escapes in JSON).
"""

from __future__ import annotations

import codecs
import io
import json
import sys
from typing import Any


def make_console_safe() -> None:
    """Replace, never raise, on characters stdout/stderr cannot encode."""
    for stream, errors in ((sys.stdout, "replace"), (sys.stderr, "backslashreplace")):
        if isinstance(stream, io.TextIOWrapper) and stream.errors == "strict":
            stream.reconfigure(errors=errors)


def stdout_is_utf8() -> bool:
    encoding = getattr(sys.stdout, "encoding", None) or "ascii"
    try:
        return codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False


def console_json(doc: Any, *, indent: int | None = 2) -> str:
    """``doc`` as JSON text this stdout can show without loss."""
    return json.dumps(doc, ensure_ascii=not stdout_is_utf8(), indent=indent)
