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
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import numpy as np
import pytest

from tests.conftest import TOKEN, Harness, player_text, running
from tests.voice.conftest import CLIPS, Pulse, assert_no_raw_audio, wav_pcm
from xtyserver.adapter import AdapterClient, AdapterInfo, ChatDone, Identity
from xtyserver.testing import Reply
from xtyserver.voice.asr import Recognizer

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SpeechModel = Callable[[str], Callable[[], Recognizer]]

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


def drive_the_voice_section(link: str) -> tuple[list[str], str, str]:
    """The player opens 设置, sees the voice section and presses the test button (a worker
    thread beside the server); the microphones listed, the light while testing, the result."""
    from tests import browser
    from tests.manage.test_browser import css, ready, wait

    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        wait(d, lambda d: d.execute_script("return document.body.dataset.voice") == "drawn")
        d.execute_script("document.getElementById('voice-title').scrollIntoView()")
        print("screenshot:", browser.screenshot(d, "ui-voice.png", 1280))
        listed = css(d, '[data-voice-key="voice.input_device"] option')
        mics = [str(o.get_attribute("value")) for o in listed]
        css(d, "#v-test")[0].click()
        wait(d, lambda d: d.execute_script("return document.body.dataset.microphone") == "open")
        light = css(d, "#v-mic")[0].text
        wait(d, lambda d: d.execute_script("return document.body.dataset.voiceTest") == "done")
        return mics, light, css(d, "#v-test-result")[0].text


async def test_push_to_talk_over_websocket_transcribes_answers_and_speaks(
    tmp_path: Path, pulse: Pulse, speech_model: SpeechModel, capfd: pytest.CaptureFixture[str]
) -> None:
    async with running(tmp_path / "data", overrides=VOICE, recognizer=speech_model("zh")) as h:
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
        # The page's test button, with the model this server has loaded already.
        from tests import browser

        if browser.find() is not None:
            voice = h.server.voice
            assert voice is not None
            spoken = len(voice.first_samples)
            with anyio.fail_after(120):
                async with anyio.create_task_group() as tg:
                    result: list[Any] = []

                    async def drive() -> None:
                        page = h.server.ui_link
                        result.append(await anyio.to_thread.run_sync(drive_the_voice_section, page))

                    tg.start_soon(drive)
                    await speak_into_the_microphone(h, pulse, CLIPS / "zh-zazijidejiao.wav")
                    await anyio.sleep(1.2)  # one poll of the page's light while it is open
                    h.clock.advance(3.0)  # the test records three seconds of the injected clock
            mics, light, shown = result[0]
            assert "pulse" in mics, mics
            assert "麦克风正在录音" in light
            assert "自己的" in shown, shown
            await until(lambda: len(voice.first_samples) > spoken)  # the sample line was spoken
    clip, _ = wav_pcm(CLIPS / "zh-zazijidejiao.wav")
    assert_no_raw_audio(tmp_path / "data", capfd.readouterr().out, clip)


async def test_push_to_talk_from_the_dst_mod_over_http(
    tmp_path: Path, pulse: Pulse, speech_model: SpeechModel
) -> None:
    from tests.adapter.games import NO_LUA, dst_game, free_port, has_luasocket

    if NO_LUA or not has_luasocket():
        pytest.skip("needs lua5.1 and lua-socket")
    port = free_port()
    overrides = {**VOICE, "server.port": port, "server.ui_port": 0, "voice.language": "en"}
    async with running(tmp_path / "data", overrides=overrides, recognizer=speech_model("en")) as h:
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


async def test_push_to_talk_from_the_smapi_mod_in_its_60_hz_loop(
    tmp_path: Path, pulse: Pulse, speech_model: SpeechModel
) -> None:
    """The C# library in the example SMAPI mod: V held and released on the game's main thread
    (SmapiHost ticks 60 times a second), the transcript and the reply shown in the game."""
    from tests.adapter.games import stdin_game
    from tests.adapter.mono import NO_MONO, NO_MONO_REASON
    from tests.adapter.test_csharp_examples import smapi_build

    if NO_MONO:
        pytest.skip(NO_MONO_REASON)
    host, mod = smapi_build(tmp_path)
    folder = tmp_path / "Mods" / "XiaoTangYuan"
    folder.mkdir(parents=True)
    (folder / "xiaotangyuan-key.txt").write_text(TOKEN)
    async with running(tmp_path / "data", overrides=VOICE, recognizer=speech_model("zh")) as h:
        h.fake.enqueue(REPLY)
        (folder / "xiaotangyuan-url.txt").write_text(h.url)
        args = ["mono", str(host), str(mod), str(folder), "", str(tmp_path / "StardewValley")]
        with anyio.fail_after(180):
            async with stdin_game([*args, "voice"]) as (game, out):
                assert game.stdin is not None
                await until(lambda: b"connected, session" in out)
                with pulse.recording(tmp_path / "spoken.wav"):
                    await game.stdin.send(b"press\n")
                    await speak_into_the_microphone(h, pulse, CLIPS / "zh-zazijidejiao.wav")
                    await game.stdin.send(b"release\n")
                    await until(lambda: "鱼饵！".encode() in out)
                    done_at = time.monotonic()
                    await until(lambda: not h.server.voice.speaking)  # type: ignore[union-attr]
                    await game.stdin.send(b"leave\n")  # to the title once it was heard out
                    await game.wait()
        text = out.decode()
        assert game.returncode == 0, text
        assert "OFF THE MAIN THREAD" not in text  # every callback ran in UpdateTicked
        heard = text.split("[Info] heard: ", 1)[1].split("\n", 1)[0]
        assert "自己的" in heard, text
        assert "[Info] XiaoTangYuan: 好的，我们一起去。记得带上鱼竿和鱼饵！" in text
        assert "back at the title" in text
        assert_text_only(h, heard)
        assert_spoken_before_done(h, tmp_path / "spoken.wav", done_at)
