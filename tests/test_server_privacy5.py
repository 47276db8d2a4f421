"""Privacy round five over a real loopback server, the scripted model and its SQLite file.

Per family of tests/protocol/privacy5_cases.py: a chat.send holding every spelling, a
state.update carrying each in a modelContext string, and each as ``identity.saveName``;
none reaches the model request or the SQLite file. The adapter token base64- and
hex-encoded in chat; a path begun in one message and completed in the next; ordinary game
phrases reach the model as typed, and a seed in a modelContext is kept as game state.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.conftest import TOKEN, chat, model_context, running, send
from tests.protocol.privacy5_cases import CONTEXT_STATE, FALSE_POSITIVES, FAMILIES, SPLIT_PATHS
from tests.test_server_privacy import _database_bytes
from tests.test_server_privacy4 import OFF, _absent, _requests, refused

pytestmark = pytest.mark.anyio

# The harness's own token, as round five's token family spells the cases' one.
TOKEN_FORMS = [
    base64.b64encode(TOKEN.encode()).decode(),
    base64.urlsafe_b64encode(TOKEN.encode()).decode().rstrip("="),
    TOKEN.encode().hex(),
    TOKEN.encode().hex().upper(),
]
# The harness's token holds "0123456789": nine of its characters are a piece of the token
# (secret_match.py), so the seeds and phrases here use other digits.
SEEDS = [text.replace("1234567890", "3918270465") for text in CONTEXT_STATE]
PHRASES = [text.replace("1234567890", "3918270465") for text in FALSE_POSITIVES]
SHAPES = {family: rows for family, rows in FAMILIES.items() if family != "token"}


@pytest.mark.parametrize("family", sorted(SHAPES))
async def test_no_spelling_of_round_five_reaches_the_model_or_the_sqlite_file(
    tmp_path: Path, family: str
) -> None:
    rows = SHAPES[family]
    async with running(tmp_path, overrides=OFF) as h:
        async with h.adapter() as ws:
            for text, _ in rows:
                await refused(h, ws, "modelContext.world.location", location=text)
                identity = {"gameId": "stardew-valley", "saveId": "s1", "saveName": text[:64]}
                await refused(h, ws, "identity.saveName", identity=identity)
            said = "\n".join(text for text, _ in rows)  # a log line ends with its line
            _, done = await chat(ws, f"记一下：\n{said}\n好吗")
            assert done["type"] == "chat.done", done
        prompt = h.turn_request().json["messages"][-1]["content"]
        assert prompt.startswith("记一下：") and prompt.endswith("\n好吗"), prompt
        assert "[已隐去:" in prompt
        requests = _requests(h)
    stored = _database_bytes(tmp_path)
    for _, secret in rows:
        if len(secret) >= 4:
            _absent(secret, requests, stored)


async def test_the_token_encoded_and_a_path_split_over_two_messages_stay_on_the_machine(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=OFF) as h:
        async with h.adapter() as ws:
            for n, form in enumerate(TOKEN_FORMS):
                h.clock.advance(4)  # within the chat rate
                await send(ws, {"type": "heartbeat"})
                _, done = await chat(ws, f"令牌 {form} 收好", f"t{n}")
                assert done["type"] == "chat.done", done
                said = h.turn_request().json["messages"][-1]["content"]
                assert said == "令牌 [已隐去:密钥] 收好", said
            for n, (first, second, secret) in enumerate(SPLIT_PATHS):
                for part, text in enumerate((first, second)):
                    h.clock.advance(4)
                    await send(ws, {"type": "heartbeat"})
                    _, done = await chat(ws, text, f"p{n}{part}")
                    assert done["type"] == "chat.done", done
                said = h.turn_request().json["messages"][-1]["content"]
                assert "[已隐去:路径]" in said and secret not in said, said
        requests = _requests(h)
    stored = _database_bytes(tmp_path)
    for form in TOKEN_FORMS:
        _absent(form[8:24], requests, stored)
    for _, second, _secret in SPLIT_PATHS:
        assert second not in requests
        assert second.encode() not in stored


async def test_game_phrases_reach_the_model_as_typed_and_a_seed_is_game_state(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=OFF) as h, h.adapter() as ws:
        for text in SEEDS:  # kept: no error, and the model sees it
            await send(
                ws,
                {
                    "type": "state.update",
                    "modelContext": model_context(h.clock, world={"location": text}),
                },
            )
            _, done = await chat(ws, "这是什么地方？")
            assert done["type"] == "chat.done", done
            assert text in str(h.turn_request().json["messages"]), text
            h.clock.advance(4)
            await send(ws, {"type": "heartbeat"})
        for start in range(0, len(PHRASES), 20):
            h.clock.advance(4)
            await send(ws, {"type": "heartbeat"})
            said = " ；".join(PHRASES[start : start + 20])
            _, done = await chat(ws, said)
            assert done["type"] == "chat.done", done
            content = h.turn_request().json["messages"][-1]["content"]
            assert content.endswith("\n" + said), content
