#!/usr/bin/env python3
"""Benchmark: server overhead from the model's tool call to ``action.request`` on the mod.

Issue 38's figure: p50 <= 2 ms, p99 <= 10 ms. Three parts: ``xtyserver`` in a
child process (``turn.py``'s server child: the default install on an empty
store, memory extraction off, logging at info to nowhere; ``--no-vectors``
unless ``--vectors``: no retrieval is on this path, and the embedder's CPU
would only load the shared machine), and in this process the scripted model
and the adapter (the Python client declaring ``walk_to``).

Per round, the player says 「带我去鱼塘」; the scripted model streams one
``game_walk_to`` call; the time is from the scripted model writing the last
byte of that stream (``perf_counter``, the same clock in this process) to the
client decoding the ``action.request`` and calling its ``on_action`` hook:
the server reading the end of the stream, the tool loop's checks (schema,
switch, limit, freshness, cooldown), the frame's encoding and the socket
both ways. The hook answers ``done`` and the turn ends with a short reply.

Usage: ``python scripts/bench/action.py [--rounds 300] [--warmup 30] [--vectors]``
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from stats import machine, nearest_rank  # noqa: E402
from turn import FOLD_ANSWER, TOKEN, _spawn, model_context  # noqa: E402

from xtyserver.adapter import AdapterClient, AdapterInfo, ChatDone, Identity  # noqa: E402
from xtyserver.protocol.action_frames import ActionSpec  # noqa: E402
from xtyserver.protocol.frames import ActionRequest  # noqa: E402
from xtyserver.session.fold import FOLD_MARKER  # noqa: E402
from xtyserver.testing import FakeModelServer, Reply, ToolCallScript  # noqa: E402

PLAIN = "今天天气真好"
WALK = msgspec.convert(
    {
        "name": "walk_to",
        "description": "带玩家走到一个地点",
        "risk": "act",
        "parameters": {
            "properties": {"place": {"type": "string", "enum": ["鱼塘", "矿洞"]}},
            "required": ["place"],
        },
    },
    ActionSpec,
)


class TimedModel(FakeModelServer):
    """The scripted model, noting when each streamed tool call's last byte was written."""

    ended: list[float]

    async def _stream(self, conn: Any, reply: Reply, *args: Any, **kwargs: Any) -> None:
        await super()._stream(conn, reply, *args, **kwargs)
        if reply.tool_calls or reply.match is not None and reply.match.startswith(PLAIN):
            self.ended.append(time.perf_counter())


async def bench(rounds: int, warmup: int, vectors: bool) -> tuple[list[float], list[float]]:
    fold = Reply(text=msgspec.json.encode(FOLD_ANSWER).decode(), match=FOLD_MARKER)
    overheads: list[float] = []
    plain: list[float] = []
    got: list[float] = []

    def act(request: ActionRequest) -> tuple[str, str]:
        got.append(time.perf_counter())
        return "done", "开始走向鱼塘"

    with tempfile.TemporaryDirectory(prefix="xty-bench-action-") as tmp:
        async with TimedModel() as fake:
            fake.ended = []
            server, url = _spawn(
                "--child",
                "server",
                "--data-dir",
                tmp,
                "--model-url",
                fake.base_url,
                *([] if vectors else ["--no-vectors"]),
            )
            try:
                client = AdapterClient(
                    url,
                    token=TOKEN,
                    identity=Identity(game_id="stardew-valley", save_id="bench-actions"),
                    adapter=AdapterInfo(name="xty-bench", version="1"),
                    actions=[WALK],
                    on_action=act,
                    timeout=30.0,
                )
                async with client:
                    for i in range(rounds + warmup):
                        text = f"带我去鱼塘（第{i:05d}次）"
                        call = ToolCallScript(name="game_walk_to", arguments={"place": "鱼塘"})
                        if fake.queued < 2:  # a working-memory fold may ask meanwhile
                            fake.enqueue(*[fold] * 4)
                        fake.enqueue(
                            Reply(tool_calls=[call], match=text), Reply(text="走啦", match=text)
                        )
                        fake.ended.clear()
                        got.clear()
                        reply = await client.chat(text, model_context=model_context())
                        done = await reply.result()
                        assert isinstance(done, ChatDone), done
                        assert len(got) == 1, "the action was not requested"
                        if i >= warmup:
                            overheads.append(got[0] - fake.ended[0])
                        # The same path without an action: a one-chunk answer's end to the
                        # chat.done read (small talk offers no tools).
                        text = f"{PLAIN}（第{i:05d}次）"
                        fake.enqueue(Reply(chunks=["是呀"], match=text))
                        fake.ended.clear()
                        reply = await client.chat(text, model_context=model_context())
                        assert isinstance(await reply.result(), ChatDone)
                        if i >= warmup:
                            plain.append(time.perf_counter() - fake.ended[0])
            finally:
                assert server.stdin is not None
                server.stdin.close()
                server.wait(timeout=30)
    return overheads, plain


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--vectors", action="store_true", help="keep the default in-process embedder")
    args = ap.parse_args()
    print(f"machine: {machine()}")
    acted, plain = anyio.run(bench, args.rounds, args.warmup, args.vectors)
    for label, samples in (
        ("tool call -> action.request", acted),
        ("beside it, a one-chunk answer -> chat.done", plain),
    ):
        ms = sorted(1000 * s for s in samples)
        p50, p99 = statistics.median(ms), nearest_rank(ms, 99)
        print(f"{label}, {len(ms)} rounds:")
        print(f"  p50 {p50:.2f} ms   p99 {p99:.2f} ms   max {ms[-1]:.2f} ms")
    print("target (the first): p50 <= 2 ms, p99 <= 10 ms")


if __name__ == "__main__":
    main()
