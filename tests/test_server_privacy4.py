"""Privacy round four over a real loopback server, the scripted model and SQLite.

Per family of spellings (tests/protocol/test_forbidden_round4.py): a chat.send
holding every spelling and a state.update carrying each in a modelContext
string; none reaches the model request or the SQLite file. The adapter token
reversed, spaced, dashed, upper-cased, in pieces over consecutive messages; the
recorder after ``token rotate``; the folders the server makes owner-only.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    TOKEN,
    Harness,
    chat,
    hello_frame,
    model_context,
    recv,
    running,
    send,
)
from tests.protocol.test_forbidden_round4 import FAMILIES
from tests.test_server_privacy import _database_bytes
from xtyserver import token as tokens
from xtyserver.clock import SystemClock
from xtyserver.config import load_settings
from xtyserver.protocol.normalize import normalize
from xtyserver.protocol.secret_match import PIECE_MIN, skeleton
from xtyserver.server import serving

pytestmark = pytest.mark.anyio

OFF = {"memory.extraction": False}


def _requests(h: Harness) -> str:
    """Every model request the server made, raw and decoded, as one text."""
    raw = [r.body.decode("utf-8") for r in h.fake.requests]
    decoded = [json.dumps(r.json, ensure_ascii=False) for r in h.fake.requests]
    return "\n".join(raw + decoded)


def _absent(secret: str, requests: str, stored: bytes) -> None:
    for piece in {secret, normalize(secret)}:
        assert piece not in requests, piece
        assert piece.encode() not in stored, piece


async def refused(h: Harness, ws: Any, field: str, location: str = "Farm", **frame: Any) -> None:
    """A state.update with ``location`` (and ``frame``'s fields) is refused naming ``field``."""
    context = model_context(h.clock, world={"location": location})
    await send(ws, {"type": "state.update", "modelContext": context, **frame})
    error = await recv(ws)
    assert (error["code"], error["fields"]) == ("forbidden_content", [field]), location


@pytest.mark.parametrize("family", sorted(FAMILIES))
async def test_no_spelling_of_a_family_reaches_the_model_or_the_sqlite_file(
    tmp_path: Path, family: str
) -> None:
    rows = FAMILIES[family]
    async with running(tmp_path, overrides=OFF) as h:
        async with h.adapter() as ws:
            for text, _, _ in rows:  # a mod's string: refused, the frame's context unused
                await refused(h, ws, "modelContext.world.location", location=text)
            # The player's words: each redacted, the rest kept.
            said = " ；".join(text for text, _, _ in rows)
            _, done = await chat(ws, f"记一下：{said} 。好吗")
            assert done["type"] == "chat.done", done
        prompt = h.turn_request().json["messages"][-1]["content"]
        assert prompt.startswith("记一下：") and prompt.endswith("。好吗"), prompt
        assert "[已隐去:" in prompt
        requests = _requests(h)
    stored = _database_bytes(tmp_path)
    for _, _, secret in rows:
        if len(secret) >= 4:  # shorter pieces ("bob") are in any SQLite file's bytes
            _absent(secret, requests, stored)


def _pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


# The token as a player or a mod would paste it, each a chat text of its own.
TOKEN_SPELLINGS = [
    TOKEN[::-1],
    " ".join(TOKEN),
    "-".join(_pieces(TOKEN, 4)),
    TOKEN.upper(),
    "token: " + " ".join(_pieces(TOKEN.upper()[::-1], 3)),
    "".join(chr(ord(c) + 0xFEE0) if c.isalnum() else c for c in TOKEN),  # full-width
]


def _token_runs(requests: str) -> list[str]:
    """Runs of the token's skeleton (or its reverse) of PIECE_MIN in the requests' skeleton."""
    body = skeleton(normalize(requests))
    forms = (skeleton(TOKEN), skeleton(TOKEN)[::-1])
    return [
        form[i : i + PIECE_MIN]
        for form in forms
        for i in range(len(form) - PIECE_MIN + 1)
        if form[i : i + PIECE_MIN] in body
    ]


async def test_the_token_in_any_spelling_reaches_neither_the_model_nor_the_sqlite_file(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=OFF) as h:
        async with h.adapter() as ws:
            for text in TOKEN_SPELLINGS:
                h.clock.advance(4)  # within the chat rate (20 a minute)
                await send(ws, {"type": "heartbeat"})
                _, done = await chat(ws, f"我的令牌是 {text} 别告诉别人")
                assert done["type"] == "chat.done", done
                assert "[已隐去:密钥]" in h.turn_request().json["messages"][-1]["content"], text
            # In a modelContext string: refused as a key.
            for text in TOKEN_SPELLINGS[:4]:
                await send(
                    ws,
                    {
                        "type": "state.update",
                        "modelContext": model_context(h.clock, world={"weather": text}),
                    },
                )
                error = await recv(ws)
                assert (error["code"], error["fields"]) == (
                    "forbidden_content",
                    ["modelContext.world.weather"],
                ), text
        requests = _requests(h)
    assert _token_runs(requests) == []
    stored = _database_bytes(tmp_path).decode("utf-8", "replace")
    assert _token_runs(stored) == []


async def test_the_token_in_pieces_over_consecutive_messages_is_redacted(tmp_path: Path) -> None:
    halves = [TOKEN[: len(TOKEN) // 2], TOKEN[len(TOKEN) // 2 :]]
    short = _pieces(TOKEN, PIECE_MIN - 2)  # each below what one message is judged on
    async with running(tmp_path, overrides=OFF) as h:
        async with h.adapter() as ws:
            for piece in halves:
                h.clock.advance(4)
                await send(ws, {"type": "heartbeat"})
                _, done = await chat(ws, piece)
                assert done["type"] == "chat.done", done
                assert h.turn_request().json["messages"][-1]["content"] == "[已隐去:密钥]"
            async with h.adapter() as fresh:  # a new session: nothing carried over
                for n, piece in enumerate(short):
                    h.clock.advance(4)
                    await send(ws, {"type": "heartbeat"})
                    await send(fresh, {"type": "heartbeat"})
                    _, done = await chat(fresh, piece)
                    assert done["type"] == "chat.done", done
                    said = h.turn_request().json["messages"][-1]["content"]
                    # The first piece alone is nothing; every later one adds up.
                    assert said == (piece if n == 0 else "[已隐去:密钥]"), (n, said)
        requests = _requests(h)
    leaked = set(_token_runs(requests))
    assert leaked == set(), leaked


async def test_the_recorder_blanks_out_the_token_rotated_in(tmp_path: Path) -> None:
    data = tmp_path / "data"
    record = tmp_path / "rec"
    old, path = tokens.load_or_create(data)
    settings = load_settings(None, env={}, overrides={"data_dir": str(data), "server.port": 0})
    async with serving(
        settings, token=old, clock=SystemClock(), token_file=path, record=record
    ) as server:
        from websockets.asyncio.client import connect

        new = tokens.rotate(data)
        headers = {"Authorization": f"Bearer {new}"}
        async with connect(server.url, additional_headers=headers) as ws:
            await ws.send(json.dumps(hello_frame(token=new)))
            assert json.loads(await ws.recv())["type"] == "server.hello"
            for secret in (new, old):  # a malformed frame carrying it whole
                await ws.send(json.dumps({"type": "nope", "note": secret}))
                assert json.loads(await ws.recv())["type"] == "error"
    written = "".join(p.read_text(encoding="utf-8") for p in sorted(record.rglob("*.jsonl")))
    assert '"type":"nope"' in written.replace(" ", "") or "nope" in written
    assert new not in written and old not in written


def _modes(root: Path) -> dict[str, int]:
    return {
        str(p.relative_to(root)): stat.S_IMODE(p.stat().st_mode)
        for p in [root, *root.rglob("*")]
        if p.is_dir()
    }


async def test_every_folder_the_server_makes_is_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "fresh" / "data"  # nothing exists yet, parents neither
    settings = load_settings(None, env={}, overrides={"data_dir": str(data), "server.port": 0})
    old, path = tokens.load_or_create(data)
    async with serving(settings, token=old, clock=SystemClock(), token_file=path, tighten=True):
        pass
    modes = _modes(tmp_path / "fresh")
    assert "data/profiles" in modes and "data/profiles/default" in modes, modes
    assert {name: mode for name, mode in modes.items() if mode != 0o700} == {}
    # The next start finds nothing of its own to tighten.
    from xtyserver.files import tighten_data_dir

    assert tighten_data_dir(data) == []
