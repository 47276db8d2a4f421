"""The egress canary: nothing that must stay on the machine gets out or gets stored.

Canaries, each also in look-alike Unicode forms (full-width, zero-width spaces
inside, bidi controls around), are sent the ways a mod or player can send them
(modelContext strings, identity names, chat text), AND the scripted model
echoes every one of them back as candidate profile fields and events in its
extraction and summary answers. Then nothing may show in:

* the model traffic (every request body, parsed, every string in it),
* any file under the data directory (every table row, the WAL included),
* the logs.

The provider's API key, set in the server's configuration, is a canary too.
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import structlog

from tests.conftest import NO_GRACE, TOKEN, chat, model_context, recv, running, send
from xtyserver import log
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio

PROVIDER_KEY = "sk-canaryprovider0123456789abcdefghij"
CANARIES = {
    "path": "C:\\Users\\CanaryUser\\AppData\\Roaming\\StardewValley\\Saves",
    "steam": "76561198012345678",
    "key": "sk-proj-CANARYabcdefghijklmnopqrstuvwxyz0123",
    "email": "canary.user@example.com",
    "pid": "pid=48213",
    "log": "[ERROR] CanaryLog NullReferenceException at CanaryMod.Update()",
    "provider": PROVIDER_KEY,
}
# Parts of canaries that are meaningless alone but must never show up either.
FRAGMENTS = ["CanaryUser", "CANARYabcdefghijklmnopqrstuvwxyz", "48213", "canaryprovider0123456789"]


def full_width(text: str) -> str:
    return "".join(
        "\u3000" if c == " " else chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text
    )


def look_alikes(text: str) -> list[str]:
    """The plain form and three look-alikes a normaliser must fold back to it."""
    zero_width = "\u200b".join(text)
    return [text, full_width(text), zero_width, "\u2066" + text[:3] + "\u202e" + text[3:]]


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def searchable(raw: str) -> str:
    """``raw`` plus every string inside any JSON document or line in it."""
    parts = [raw]
    for line in raw.splitlines() or [raw]:
        try:
            parts.extend(strings(json.loads(line)))
        except ValueError:
            continue
    return "\n".join(parts)


def leaks(haystack: str) -> list[str]:
    found = []
    for name, value in CANARIES.items():
        for form in look_alikes(value):
            for shape in (form, json.dumps(form)[1:-1], quote(form, safe="")):
                if shape in haystack:
                    found.append(f"{name}: {shape!r}")
    found += [f"fragment: {f!r}" for f in FRAGMENTS if f in haystack]
    return found


def data_files(root: Path) -> dict[str, str]:
    return {
        str(p.relative_to(root)): p.read_bytes().decode("utf-8", "replace")
        for p in root.rglob("*")
        if p.is_file()
    }


async def answers_until_barrier(ws: Any) -> dict[str, str]:
    """Error codes by frame id of everything answered before a stats.get barrier."""
    await send(ws, {"type": "stats.get", "id": "barrier"})
    codes: dict[str, str] = {}
    while True:
        frame = await recv(ws)
        if frame.get("id") == "barrier":
            return codes
        if frame["type"] == "error":
            codes[frame["id"]] = frame["code"]


def echo(turn: int, form: str) -> Reply:
    """The extraction answer of one turn, echoing ``form`` back as memory candidates."""
    answer = {
        "profile": {"field": "notes", "value": form},
        "events": [
            {"kind": "goal", "subject": form[:40], "summary": form, "importance": 5},
            {"kind": "event", "subject": "记下", "summary": f"玩家说 {form}", "importance": 5},
        ],
    }
    text = json.dumps(answer, ensure_ascii=False)
    return Reply(text=text, match=f"玩家说：\n金丝雀第{turn:03d}轮")


async def test_no_canary_reaches_model_traffic_data_files_or_logs(tmp_path: Path) -> None:
    sink = io.StringIO()
    log.configure(stream=sink, json=True)
    forms = [form for value in CANARIES.values() for form in look_alikes(value)]
    try:
        settings = {
            "model.api_key": PROVIDER_KEY,
            "server.chat_burst": 100,
            "server.frame_burst": 1000,
            **NO_GRACE,  # each turn's extraction is awaited before the next chat
        }
        async with running(tmp_path, overrides=settings) as h:
            summary = {
                "events": [
                    {"kind": "milestone", "subject": f[:40], "summary": f, "importance": 5}
                    for f in forms
                ]
            }
            h.fake.enqueue(
                Reply(text=json.dumps(summary, ensure_ascii=False), match="第1轮 玩家：")
            )
            async with h.adapter(save="farm-a") as ws:
                for form in forms:
                    # modelContext strings and save names: refused whole.
                    ctx = model_context(h.clock, focus={"name": form[:200]})
                    named = {"gameId": "stardew-valley", "saveId": "farm-a", "saveName": form[:64]}
                    await send(ws, {"type": "state.update", "id": "s", "modelContext": ctx})
                    await send(
                        ws,
                        {
                            "type": "state.update",
                            "id": "i",
                            "identity": named,
                            "modelContext": model_context(h.clock),
                        },
                    )
                    codes = await answers_until_barrier(ws)
                    assert codes.get("s") == "forbidden_content", (form, codes)
                    assert codes.get("i") in ("forbidden_content", "budget_exceeded"), (form, codes)
                for n, form in enumerate(forms, start=1):
                    # Chat text: redacted before the model; the model then echoes the
                    # canary back as memory candidates, which must all be refused.
                    h.fake.enqueue(echo(n, form))
                    _, done = await chat(ws, f"金丝雀第{n:03d}轮 {form}", chat_id=f"c{n}")
                    assert done["type"] == "chat.done", done
                    await h.server.memory.wait_idle()
            await h.server.wait_connections(at_most=0)
            await h.server.memory.wait_idle()
            # One more turn after all of it: its request carries the memory the store kept.
            async with h.adapter(save="farm-a") as ws:
                _, done = await chat(ws, "你还记得什么？", chat_id="after")
                assert done["type"] == "chat.done"
            stats = h.server.memory.statistics
            # While the server runs, so the WAL is still there to be searched.
            live = data_files(tmp_path)
            bodies = "\n".join(
                searchable(r.body.decode("utf-8", "replace")) for r in h.fake.requests
            )
            assert any("金丝雀第001轮" in r.text for r in h.fake.chat_requests)
        files = {**{f"{k} (live)": v for k, v in live.items()}, **data_files(tmp_path)}
        logs = searchable(sink.getvalue())
    finally:
        structlog.reset_defaults()
    print(
        f"canary: {len(CANARIES)} canaries x {len(look_alikes('x'))} forms = {len(forms)} sent;"
        f" {len(h.fake.requests)} model requests, {len(files)} data files,"
        f" {len(logs.splitlines())} log lines searched; jobs done {stats.jobs_done},"
        f" failed {stats.jobs_failed}"
    )
    assert stats.jobs_done >= len(forms)  # every echo really went through extraction
    assert any(name.endswith("-wal (live)") for name in files), sorted(files)
    assert leaks(bodies) == [], "model traffic"
    for name, content in files.items():
        assert leaks(content) == [], f"data file {name}"
    assert leaks(logs) == [], "logs"
    assert TOKEN not in bodies and TOKEN not in logs
