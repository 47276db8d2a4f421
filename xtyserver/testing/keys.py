"""The scripted model's search keys: what it answers the enrichment job.

A real model asked for a memory's search keys (``memory/enrichment.py``)
writes the names it mentions in both languages, aliases, synonyms and the
topic. The scripted model answers from a table, summary -> keys
(``FakeModelServer.search_keys``; the evaluation fills it with the keys its set
gives each memory); a memory missing from the table gets no keys. Only a
request carrying the enrichment system prompt is answered here, and only when
no scripted reply was queued for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from xtyserver.memory.enrichment import ENRICHMENT_SYSTEM_PROMPT, LINE_PREFIX
from xtyserver.testing.script import Reply

_LINE = re.compile(rf"^{re.escape(LINE_PREFIX)}(\d+) \[[a-z]+\] .*?：(.*)$")


def _messages(payload: Any) -> list[Mapping[str, Any]]:
    messages = payload.get("messages") if isinstance(payload, Mapping) else None
    return [m for m in messages or () if isinstance(m, Mapping)]


def keys_reply(payload: Any, table: Mapping[str, list[str]]) -> Reply | None:
    """The answer to an enrichment request from ``table``, or None for any other request."""
    messages = _messages(payload)
    if not messages or messages[0].get("content") != ENRICHMENT_SYSTEM_PROMPT:
        return None
    user = next((m.get("content") for m in messages if m.get("role") == "user"), "")
    found: dict[str, list[str]] = {}
    for line in str(user).splitlines():
        m = _LINE.match(line)
        if m is not None:
            found[m.group(1)] = list(table.get(m.group(2), []))
    return Reply(text=json.dumps({"keys": found}, ensure_ascii=False))
