"""The recordings in recordings/: realistic, and replayed with --check against the real server."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import TOKEN, running
from xtyserver.cli import main as cli
from xtyserver.replay.command import load, run_replay
from xtyserver.replay.recording import Recording

pytestmark = pytest.mark.anyio
FOLDER = Path(__file__).resolve().parents[2] / "recordings"
FILES = sorted(FOLDER.glob("*.jsonl"))
SAVES = {
    "stardew-valley": ("farm-a", "farm-b"),
    "dont-starve-together": ("world-a", "world-b"),
    "oxygen-not-included": ("colony-a", "colony-b"),
}


def frames_in(rec: Recording) -> list[dict[str, Any]]:
    return [f for e in rec.inbound() if (f := e.parsed()) is not None]


def contexts(rec: Recording) -> list[dict[str, Any]]:
    out = []
    for f in frames_in(rec):
        ctx = f.get("modelContext") or (f.get("context") or {}).get("modelContext")
        if ctx:
            out.append(ctx)
    return out


def test_one_recording_per_game_and_save() -> None:
    assert {f.name for f in FILES} == {
        f"{game}-{save}.jsonl" for game, saves in SAVES.items() for save in saves
    }


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.stem)
def test_each_recording_is_whole_and_keeps_no_token(path: Path) -> None:
    rec = load(path)
    frames = len(rec.inbound()) + len(rec.outbound())
    assert frames >= 30
    assert sum(1 for f in frames_in(rec) if f["type"] == "heartbeat") >= 10
    text = path.read_text(encoding="utf-8")
    assert "recording-token" not in text and "Authorization" not in text
    hello = frames_in(rec)[0]
    assert hello["type"] == "adapter.hello" and hello.get("token") in (None, "[redacted]")


def test_model_contexts_look_like_each_game() -> None:
    seen: dict[str, str] = {}
    for path in FILES:
        for ctx in contexts(load(path)):
            seen[path.stem] = seen.get(path.stem, "") + json.dumps(ctx, ensure_ascii=False)
    for stem, text in seen.items():
        if stem.startswith("stardew"):
            for key in ('"season"', '"weather"', '"stamina"', '"heldItem"', '"npc"', "Robin"):
                assert key in text, (stem, key)
        elif stem.startswith("dont-starve"):
            for key in (
                '"day"',
                '"season"',
                '"health"',
                "hunger",
                "sanity",
                "night danger",
                "Hound",
            ):
                assert key in text, (stem, key)
        else:
            for key in ("cycle", "oxygen", "stress", '"duplicant"'):
                assert key in text, (stem, key)


def test_between_them_the_recordings_cover_the_cases() -> None:
    recs = [load(p) for p in FILES]
    sent = [f for r in recs for f in frames_in(r)]
    answers = [f for r in recs for f in r.outbound()]
    chats = [f for f in sent if f["type"] == "chat.send"]
    assert {c["source"] for c in chats} == {"text", "voice"}
    assert sum(1 for r in recs for e in r.inbound() if e.image is not None) >= 6
    codes = {f.get("code") for f in answers if f["type"] == "error"}
    assert {"budget_exceeded", "frame_too_large", "forbidden_content"} <= codes
    assert {"reply_in_progress", "invalid_image"} <= codes
    switches = [
        f for f in sent if f["type"] == "state.update" and f.get("identity") and "id" not in f
    ]
    assert switches, "a save switch that is accepted"


async def test_every_recording_replays_with_check(tmp_path: Path) -> None:
    out = io.StringIO()
    async with running(tmp_path) as h:
        code = await run_replay(
            FILES,
            url=h.url,
            token=TOKEN,
            speed=None,
            do_check=True,
            replies=True,
            as_json=True,
            clock=h.clock,
            out=out,
            timeout=20.0,
        )
    results = [json.loads(line) for line in out.getvalue().splitlines()]
    assert [r for r in results if not r["ok"]] == [] and code == 0
    assert len(results) == 6


async def test_a_different_reply_fails_with_a_readable_diff(tmp_path: Path) -> None:
    original = FOLDER / "stardew-valley-farm-a.jsonl"
    changed = tmp_path / "changed.jsonl"
    changed.write_text(
        original.read_text(encoding="utf-8").replace(
            '"text":"小汤圆收到：今天适合钓鱼吗？"', '"text":"小汤圆收到：今天不适合钓鱼"'
        ),
        encoding="utf-8",
    )
    out = io.StringIO()
    async with running(tmp_path / "data") as h:
        code = await run_replay(
            [changed],
            url=h.url,
            token=TOKEN,
            speed=None,
            do_check=True,
            replies=True,
            as_json=False,
            clock=h.clock,
            out=out,
            timeout=20.0,
        )
    text = out.getvalue()
    assert code == 1 and "MISMATCH" in text
    assert "-chat-1: chat.done '小汤圆收到：今天不适合钓鱼'" in text
    assert "+chat-1: chat.done '小汤圆收到：今天适合钓鱼吗？'" in text


def test_lint_command_exits_non_zero_and_names_fields(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(
        ["replay", "--lint", "--json", str(FOLDER / "dont-starve-together-world-a.jsonl")]
    )
    doc = json.loads(capsys.readouterr().out)
    rules = {f["rule"]: f["fields"] for f in doc["findings"]}
    assert code == 1
    assert rules["over_budget"] == ["modelContext.nearby"]
    assert rules["forbidden_content"] == ["modelContext.world.location"]
    assert rules["switch_while_streaming"] == ["identity"]


async def test_replay_keeps_the_recorded_timing_scaled(tmp_path: Path) -> None:
    path = FOLDER / "oxygen-not-included-colony-b.jsonl"
    length = load(path).entries[-1].t
    out = io.StringIO()
    async with running(tmp_path) as h:
        code = await run_replay(
            [path],
            url=h.url,
            token=TOKEN,
            speed=400.0,
            do_check=True,
            replies=True,
            as_json=True,
            clock=h.clock,
            out=out,
            timeout=20.0,
        )
    result = json.loads(out.getvalue())
    assert code == 0 and result["ok"]
    assert result["seconds"] >= length / 400.0


def test_serve_takes_record_flags() -> None:
    args = cli.build_parser().parse_args(["serve", "--record", "rec", "--record-images"])
    assert (args.record, args.record_images) == (Path("rec"), True)
    args = cli.build_parser().parse_args(["replay", "a.jsonl", "--fast", "--check"])
    assert (args.fast, args.check, args.url) == (True, True, "ws://127.0.0.1:8765/v1")
