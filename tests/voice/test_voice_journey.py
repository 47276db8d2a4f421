"""Push-to-talk walked end to end on real parts (docs/voice.md), one test per transport.

A mod presses push-to-talk (the Python adapter client over WebSocket; the DST
mod's Lua client over ``POST /v1/http`` in lua5.1), a real recording plays into
the virtual microphone (PulseAudio, tests/voice/conftest.py), the server records
it through PortAudio, faster-whisper's ``base`` model (assembled from its wheels)
transcribes it, the transcript comes back and the turn runs as a voice
``chat.send``; the scripted model's reply streams and is spoken by espeak-ng
through PortAudio onto the virtual speaker, recorded from its monitor. The model
received the transcript as text and nothing else.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from tests.conftest import TOKEN, Harness, player_text, running
from tests.voice.conftest import CLIPS, Pulse, wav_pcm
from xtyserver.adapter import AdapterClient, AdapterInfo, ChatDone, Identity
from xtyserver.testing import Reply

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

# The first sentence streams at once; the rest only after a pause, so the first is spoken
# while the reply is still streaming.
REPLY = Reply(chunks=["好的，我们一起去。", "记得带上鱼竿和鱼饵！"], chunk_delay=4.0)
VOICE = {
    "voice.enabled": True,
    "voice.input_device": "pulse",
    "voice.output_device": "pulse",
    "voice.tts_engine": "espeak-ng",
    "voice.partial_every": 0.5,
    "memory.extraction": False,
    "server.heartbeat_ms": 600_000,
}


def level(pcm: bytes) -> tuple[float, int]:
    """Seconds above a whisper's level and the peak of 16-bit PCM at 16 kHz."""
    samples = np.frombuffer(pcm, dtype="<i2").astype(np.int32)
    loud = np.abs(samples) > 500
    return float(loud.sum()) / 16000, int(np.abs(samples).max(initial=0))


async def until(predicate: Any, timeout: float = 60.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.02)


async def speak_into_the_microphone(h: Harness, pulse: Pulse, clip: Path) -> None:
    """Play ``clip`` into the virtual microphone once the server's recording is open."""
    voice = h.server.voice
    assert voice is not None
    await until(lambda: voice.listening == 1)
    player = pulse.play(clip)
    await anyio.to_thread.run_sync(player.wait)
    await anyio.sleep(0.3)  # the device's last buffer


def assert_text_only(h: Harness, transcript: str) -> None:
    """The model got the transcript as the player's words and no audio in any form."""
    request = h.turn_request()
    assert player_text(request) == transcript
    body = request.body.decode()
    assert "input_audio" not in body and "RIFF" not in body and "audio/" not in body
    for message in request.json["messages"]:
        content = message["content"]
        parts = content if isinstance(content, list) else [{"type": "text"}]
        assert {p["type"] for p in parts} <= {"text"}


def assert_spoken_before_done(h: Harness, recorded: Path, done_at: float) -> None:
    voice = h.server.voice
    assert voice is not None and voice.first_samples, "nothing was played"
    assert voice.first_samples[0] < done_at, "the first sentence waited for chat.done"
    pcm, rate = wav_pcm(recorded)
    assert rate == 16000
    loud, peak = level(pcm)
    assert loud > 0.3 and peak > 2000, (loud, peak)


async def test_push_to_talk_over_websocket_transcribes_answers_and_speaks(
    tmp_path: Path, pulse: Pulse
) -> None:
    async with running(tmp_path / "data", overrides=VOICE) as h:
        h.fake.enqueue(REPLY)
        client = AdapterClient(
            h.url,
            token=TOKEN,
            identity=Identity(game_id="stardew-valley", save_id="farm-a"),
            adapter=AdapterInfo(name="xty-stardew", version="0.1.0"),
            timezone="Asia/Shanghai",
        )
        async with client:
            with pulse.recording(tmp_path / "spoken.wav"):
                turn = await client.voice_start()
                await speak_into_the_microphone(h, pulse, CLIPS / "zh-zazijidejiao.wav")
                await turn.stop()
                heard = await turn.transcript()
                done = await turn.reply.result()
                done_at = time.monotonic()
                await until(lambda: not h.server.voice.speaking)  # type: ignore[union-attr]
        assert "自己的" in heard, heard  # 砸自己的脚: base hears 扎/砸 alike
        assert isinstance(done, ChatDone), done
        assert done.id == turn.id and "鱼竿" in done.text
        assert turn.reply.text == done.text
        assert not turn.errors
        assert_text_only(h, heard)
        assert_spoken_before_done(h, tmp_path / "spoken.wav", done_at)


async def test_push_to_talk_from_the_dst_mod_over_http(tmp_path: Path, pulse: Pulse) -> None:
    from tests.adapter.games import NO_LUA, dst_game, free_port, has_luasocket

    if NO_LUA or not has_luasocket():
        pytest.skip("needs lua5.1 and lua-socket")
    port = free_port()
    overrides = {**VOICE, "server.port": port, "server.ui_port": 0, "voice.language": "en"}
    async with running(tmp_path / "data", overrides=overrides) as h:
        h.fake.enqueue(REPLY)
        async with dst_game(tmp_path, port) as game:
            await game.expect("session open")
            with pulse.recording(tmp_path / "spoken.wav"):
                game.do("talk")
                await speak_into_the_microphone(h, pulse, CLIPS / "en-librivox-0920.wav")
                game.do("release")
                heard_at = await game.expect("heard: ", timeout=120)
                await game.expect("reply: ", after=heard_at, timeout=60)
                done_at = time.monotonic()
                await until(lambda: not h.server.voice.speaking)  # type: ignore[union-attr]
            heard = game.lines[heard_at].split("heard: ", 1)[1]
            assert "amiable woman" in heard.lower(), heard
            assert "鱼竿" in game.output
        assert_text_only(h, heard)
        assert_spoken_before_done(h, tmp_path / "spoken.wav", done_at)
        # The HTTP transport carried the transcript frames like any other.
        assert json.dumps("voice") not in heard
