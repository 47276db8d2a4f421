"""``xtyserver doctor [--json]``: check each configured model once (docs/commands.md "Commands")."""

from __future__ import annotations

import json
import os

import msgspec

from xtyserver.config import Settings
from xtyserver.model.doctor import check_routing, render_table
from xtyserver.model.routing import resolve


async def doctor(settings: Settings, as_json: bool) -> int:
    """Print the report; 0 when the chat route can answer, else 1."""
    routing = resolve(settings.model, settings.models, os.environ)
    report = await check_routing(routing)
    if as_json:
        print(json.dumps(msgspec.to_builtins(report), ensure_ascii=False, indent=2))
    else:
        print(render_table(report))
    return 0 if report.ok else 1
