#!/usr/bin/env python3
"""Write the C# and Lua adapters' copies of xtyserver/adapter/projection.json.

Usage: ``python scripts/gen_adapter_rules.py`` from the repository root (a test
fails when a copy is out of date).
"""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RULES = ROOT / "xtyserver" / "adapter" / "projection.json"
CSHARP_COPY = Path("adapters/csharp/src/ProjectionRules.cs")
LUA_COPY = Path("adapters/dst/scripts/xty/projection_rules.lua")


def csharp_copy() -> str:
    """``ProjectionRules.cs``: the rules file as a C# verbatim string."""
    text = RULES.read_text(encoding="utf-8").replace('"', '""')
    return (
        "// Generated from xtyserver/adapter/projection.json by scripts/gen_adapter_rules.py;\n"
        "// do not edit (tests/adapter/test_reference_adapters.py keeps it equal).\n"
        "namespace XiaoTangYuan.Adapter\n{\n    public static class ProjectionRules\n    {\n"
        f'        public const string Text = @"{text}";\n    }}\n}}\n'
    )


def lua_copy() -> str:
    """``projection_rules.lua``: the rules file as a Lua long string (decoded by xty.json)."""
    text = RULES.read_text(encoding="utf-8")
    assert "]==]" not in text
    return (
        "-- Generated from xtyserver/adapter/projection.json by scripts/gen_adapter_rules.py;\n"
        "-- do not edit (tests/adapter/test_reference_adapters.py keeps it equal).\n"
        f"return [==[\n{text}]==]\n"
    )


COPIES = {CSHARP_COPY: csharp_copy, LUA_COPY: lua_copy}

if __name__ == "__main__":
    for path, text in COPIES.items():
        (ROOT / path).parent.mkdir(parents=True, exist_ok=True)
        (ROOT / path).write_text(text(), encoding="utf-8")
        print(f"wrote {path}")
