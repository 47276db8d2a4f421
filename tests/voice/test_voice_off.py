"""Voice off costs nothing: no speech library is imported, and a mod is told voice is off.

A fresh interpreter runs the real server (``serving``) with the scripted model,
a mod connects and chats and presses push-to-talk; then the interpreter's
modules are listed. With voice on but unused, the speech libraries still wait
for the first ``voice.start`` (the model is loaded on first use).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

SPEECH_LIBRARIES = {
    "sounddevice",
    "_sounddevice",
    "faster_whisper",
    "ctranslate2",
    "av",
    "onnxruntime",
    "tokenizers",
    "comtypes",
}

PROGRAM = textwrap.dedent(
    """
    import json, sys, anyio
    from websockets.asyncio.client import connect
    from xtyserver.clock import ManualClock
    from xtyserver.config import load_settings
    from xtyserver.server import serving
    from xtyserver.testing import FakeModelServer, Reply

    TOKEN = "t" * 8 + "0123456789abcdefghijklmnopqrstuv"

    async def main():
        async with FakeModelServer() as fake:
            settings = load_settings(None, env={}, overrides={
                "data_dir": sys.argv[1], "server.port": 0, "model.base_url": fake.base_url,
                "model.model": "fake", "memory.local_embedding": False,
                "memory.provider_embedding": False, "memory.extraction": False,
                "memory.enrich_keys": False, "voice.enabled": sys.argv[2] == "on",
            })
            fake.enqueue(Reply(text="好的。"))
            async with serving(settings, token=TOKEN, clock=ManualClock()) as server:
                async with connect(server.url) as ws:
                    await ws.send(json.dumps({"type": "adapter.hello", "protocol": "v1",
                        "adapter": {"name": "probe", "version": "1"}, "token": TOKEN,
                        "identity": {"gameId": "stardew-valley", "saveId": "farm"}}))
                    await ws.recv()
                    await ws.send(json.dumps({"type": "chat.send", "id": "c1",
                        "text": "你好", "source": "text"}))
                    while json.loads(await ws.recv())["type"] != "chat.done":
                        pass
                    answer = None
                    if sys.argv[2] == "off":
                        await ws.send(json.dumps({"type": "voice.start", "id": "v1"}))
                        answer = json.loads(await ws.recv())
        print(json.dumps({"modules": sorted(sys.modules), "answer": answer}))

    anyio.run(main)
    """
)


@pytest.mark.parametrize("voice", ["off", "on"])
def test_no_speech_library_is_imported_until_voice_is_used(tmp_path: object, voice: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, str(tmp_path), voice],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    loaded = {name.split(".")[0] for name in result["modules"]}
    assert not loaded & SPEECH_LIBRARIES, loaded & SPEECH_LIBRARIES
    if voice == "off":
        answer = result["answer"]
        assert answer["type"] == "voice.error" and answer["code"] == "voice_off"
        assert answer["id"] == "v1" and "设置" in answer["message"]
