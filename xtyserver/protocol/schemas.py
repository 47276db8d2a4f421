"""Generate ``schemas/``: one JSON Schema per frame type, from the msgspec Structs.

``xtyserver schemas`` writes them; ``tests/protocol/test_schemas.py`` fails when the
committed files differ from what the code generates (v1.md "Schemas").
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from xtyserver.protocol.frames import (
    CLIENT_FRAME_TYPES,
    SERVER_FRAME_TYPES,
    ModelContext,
    frame_type,
)
from xtyserver.protocol.http_body import HttpAnswer, HttpCall


def generate() -> dict[str, str]:
    """Map file name -> schema text, for every client and server frame type."""
    out: dict[str, str] = {}
    types: list[tuple[str, Any]] = [
        (frame_type(cls), cls) for cls in (*CLIENT_FRAME_TYPES, *SERVER_FRAME_TYPES)
    ]
    # The modelContext alone, and the bodies of POST /v1/http (v1.md "HTTP transport").
    types += [("modelContext", ModelContext), ("http.call", HttpCall), ("http.answer", HttpAnswer)]
    for name, cls in types:
        schema = {
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "$id": f"https://xtyserver.local/schemas/v1/{name}.json",
            **msgspec.json.schema(cls),
        }
        out[f"{name}.json"] = (
            json.dumps(schema, indent=2, ensure_ascii=False, sort_keys=True) + "\n"
        )
    return out


def write_schemas(folder: Path) -> list[Path]:
    """Write every schema into ``folder``; remove stale ``*.json`` files there."""
    folder.mkdir(parents=True, exist_ok=True)
    wanted = generate()
    for old in folder.glob("*.json"):
        if old.name not in wanted:
            old.unlink()
    paths = []
    for name, text in sorted(wanted.items()):
        path = folder / name
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def check_schemas(folder: Path) -> list[str]:
    """Names of schema files in ``folder`` that are missing, stale or extra."""
    wanted = generate()
    present = {p.name: p.read_text(encoding="utf-8") for p in folder.glob("*.json")}
    stale = [name for name, text in wanted.items() if present.get(name) != text]
    extra = [name for name in present if name not in wanted]
    return sorted(stale + extra)
