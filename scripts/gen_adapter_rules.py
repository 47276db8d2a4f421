#!/usr/bin/env python3
"""Write the C# and Lua adapters' copies of xtyserver/adapter/projection.json.

Usage: ``python scripts/gen_adapter_rules.py`` from the repository root (a test
fails when a copy is out of date).
"""

from __future__ import annotations

from pathlib import Path

from xtyserver.adapter.projection import CSHARP_COPY, LUA_COPY, csharp_copy, lua_copy

ROOT = Path(__file__).resolve().parents[1]

for path, text in ((CSHARP_COPY, csharp_copy()), (LUA_COPY, lua_copy())):
    (ROOT / path).parent.mkdir(parents=True, exist_ok=True)
    (ROOT / path).write_text(text, encoding="utf-8")
    print(f"wrote {path}")
