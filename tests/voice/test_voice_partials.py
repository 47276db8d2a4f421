"""Transcribed while the player speaks: a pause makes a partial transcript, and a stop after
only silence takes it as the final one without decoding the audio again (docs/voice.md).

The real server and a mod streaming its own audio (``voice.audio``) over WebSocket; the
recogniser is one that says what it was given and counts its calls (injected through
``serving(recognizer=...)``), so the test asserts what the server decided to decode.
"""

from __future__ import annotations

import math
import struct
from pathlib import Path

import anyio
import pytest

from tests.conftest import TOKEN, Harness, running
from tests.test_server_embeddings import EMBED, FARM, idle
from tests.test_server_query_vectors import embedded, embedded_texts
from xtyserver.adapter import AdapterClient, AdapterInfo, ChatDone, Identity
from xtyserver.adapter.voice import VoiceTurn
from xtyserver.memory.types import NewEvent
from xtyserver.testing import Reply

pytestmark = pytest.mark.anyio
RATE = 16000


def tone(seconds: float) -> bytes:
    """Loud enough to be speech to the silence check (a 220 Hz tone)."""
    n = int(seconds * RATE)
    return struct.pack(
        f"<{n}h", *(int(8000 * math.sin(2 * math.pi * 220 * i / RATE)) for i in range(n))
    )


def quiet(seconds: float) -> bytes:
    return b"\x00\x00" * int(seconds * RATE)


class Counting:
    def __init__(self) -> None:
        self.calls: list[tuple[int, bool]] = []

    def transcribe(self, pcm: bytes, *, final: bool) -> str:
        self.calls.append((len(pcm), final))
        return f"听到{len(pcm) // (RATE * 2 // 10)}"  # tenths of a second heard

    def close(self) -> None:
        pass


async def speak_and_pause(h: Harness, client: AdapterClient) -> VoiceTurn:
    """Push-to-talk held: 0.8 s of speech, then 0.5 s of silence, until the partial came."""
    h.fake.enqueue(Reply(text="好。"))
    turn = await client.voice_start(audio="stream", speech="none")
    await turn.audio(tone(0.8) + quiet(0.5))
    with anyio.fail_after(30):
        while not turn.partials:
            await anyio.sleep(0.02)
    return turn


async def test_a_stop_after_a_pause_answers_with_the_partial_and_new_speech_is_decoded(
    tmp_path: Path,
) -> None:
    counting = Counting()
    overrides = {"voice.enabled": True, "memory.extraction": False, "voice.partial_every": 1.0}
    async with running(tmp_path / "data", overrides=overrides, recognizer=lambda: counting) as h:
        client = AdapterClient(
            h.url,
            token=TOKEN,
            identity=Identity(game_id="stardew-valley", save_id="farm-a"),
            adapter=AdapterInfo(name="probe", version="1"),
        )
        async with client:
            # Speech, then a pause: the partial comes while the key is still held.
            turn = await speak_and_pause(h, client)
            assert turn.partials == ["听到13"]
            await turn.stop()
            assert await turn.transcript() == "听到13"
            assert isinstance(await turn.reply.result(), ChatDone)
            assert counting.calls == [(len(tone(0.8) + quiet(0.5)), False)]  # decoded once
            # New speech after the partial, released at once: the whole is decoded again.
            counting.calls.clear()
            turn = await speak_and_pause(h, client)
            await turn.audio(tone(0.4))
            await turn.stop()
            assert await turn.transcript() == "听到17"
            assert counting.calls[-1] == (len(tone(0.8) + quiet(0.5) + tone(0.4)), True)
            assert isinstance(await turn.reply.result(), ChatDone)


async def test_a_partial_transcripts_query_is_embedded_while_the_key_is_held(
    tmp_path: Path,
) -> None:
    """The partial is what the player said so far: its query is embedded before the stop
    (as a chat.typing's), and the turn on the same final transcript embeds nothing more."""
    counting = Counting()
    overrides = {**EMBED, "voice.enabled": True, "voice.partial_every": 1.0}
    async with running(tmp_path / "data", overrides=overrides, recognizer=lambda: counting) as h:
        h.store.upsert_event(FARM, NewEvent("event", "奶牛", "第3天买了一头奶牛"), 0)
        client = AdapterClient(
            h.url,
            token=TOKEN,
            identity=Identity(game_id=FARM.game_id, save_id=FARM.save_id),
            adapter=AdapterInfo(name="probe", version="1"),
        )
        async with client:
            await idle(h)
            background = len(embedded_texts(h))
            turn = await speak_and_pause(h, client)
            assert turn.partials == ["听到13"]
            await embedded(h, background + 1)  # while the key is still held
            await turn.stop()
            assert await turn.transcript() == "听到13"
            assert isinstance(await turn.reply.result(), ChatDone)
            await idle(h)
        assert embedded_texts(h)[background:] == ["听到13"]  # once, by the partial
