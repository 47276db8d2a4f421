"""``xtyserver doctor [--json]``: check each model once, as the running server would use it
(docs/commands.md).

The settings are the player's: what the page's 设置 stored and the key in the
credential store, under the TOML file, the environment and flags (the same
:class:`~xtyserver.serve.player_settings.PlayerSettings` the server starts with).
The table is in the console's language (Chinese first, ``XTY_LANG=en``).
"""

from __future__ import annotations

import json
import os

import msgspec

from xtyserver.cli.say import Say
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
        print(render_table(report, Say(settings.console).language))
    return 0 if report.ok else 1
