"""``xtyserver replay``: play recordings against a server and check the answers, or lint them."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, TextIO

import anyio
import msgspec

from xtyserver.clock import Clock
from xtyserver.replay.check import check
from xtyserver.replay.lint import lint
from xtyserver.replay.player import Progress, play, progress_bar
from xtyserver.replay.recording import Recording, parse

LONG_REPLAY_SECONDS = 2.0
"""A replay expected to take longer than this shows a progress bar (on a terminal)."""


def load(path: Path) -> Recording:
    """Read one recording file."""
    with path.open(encoding="utf-8") as lines:
        return parse(str(path), lines)


def run_lint(paths: list[Path], *, as_json: bool, out: TextIO) -> int:
    """Lint recordings; 1 when anything was found."""
    total = 0
    for path in paths:
        findings = lint(load(path))
        total += len(findings)
        if as_json:
            doc = {"file": str(path), "findings": msgspec.to_builtins(findings)}
            print(json.dumps(doc, ensure_ascii=False), file=out)
            continue
        print(f"{path}: {len(findings)} finding(s)", file=out)
        for f in findings:
            fields = f"  [{', '.join(f.fields)}]" if f.fields else ""
            print(f"  {f.t:8.2f}s  {f.rule:<22} {f.message}{fields}", file=out)
    return 1 if total else 0


async def run_replay(
    paths: list[Path],
    *,
    url: str,
    token: str,
    speed: float | None,
    do_check: bool,
    replies: bool,
    as_json: bool,
    timeout: float = 30.0,
    clock: Clock | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
) -> int:
    """Replay recordings in turn; with ``do_check`` 1 when any answer differs."""
    out = out or sys.stdout
    err = err or sys.stderr
    failed = 0
    for path in paths:
        recording = load(path)
        length = recording.entries[-1].t if recording.entries else 0.0
        long = speed is not None and length / speed > LONG_REPLAY_SECONDS
        played = await play(
            recording,
            url=url,
            token=token,
            speed=speed,
            timeout=timeout,
            clock=clock,
            progress=_bar(err) if long and err.isatty() else None,
        )
        result = check(recording, played.received, replies=replies) if do_check else None
        failed += result is not None and not result.ok
        doc: dict[str, Any] = {
            "file": str(path),
            "sent": played.sent,
            "received": len(played.received),
            "seconds": round(played.seconds, 3),
        }
        if result is not None:
            doc |= {"ok": result.ok, "problems": result.problems, "diff": result.diff}
        if as_json:
            print(json.dumps(doc, ensure_ascii=False), file=out)
            continue
        verdict = "" if result is None else ("  ok" if result.ok else "  MISMATCH")
        print(
            f"{path}: sent {played.sent} frames, got {len(played.received)}"
            f" in {played.seconds:.2f} s{verdict}",
            file=out,
        )
        if result is not None:
            for problem in result.problems:
                print(f"  {problem}", file=out)
            if result.diff:
                print(result.diff, file=out)
    return 1 if failed else 0


def _bar(err: TextIO) -> Progress:
    def show(done: int, total: int) -> None:
        end = "\n" if done == total else ""
        print(f"\r{progress_bar(done, total)}", end=end, file=err, flush=True)

    return show


def find_token(given: str | None, data_dir: str | None) -> str | None:
    """``--token``, else ``XTY_TOKEN``, else the token file of the data folder (never created)."""
    if given:
        return given
    if os.environ.get("XTY_TOKEN"):
        return os.environ["XTY_TOKEN"]
    from xtyserver.config import load_settings
    from xtyserver.token import token_path

    path = token_path(load_settings(None, overrides={"data_dir": data_dir}).data_path)
    return path.read_text(encoding="utf-8").strip() if path.exists() else None


def main(args: Any) -> int:
    """The ``replay`` subcommand of :mod:`xtyserver.cli.main`."""
    paths = [Path(p) for p in args.files]
    if args.lint:
        return run_lint(paths, as_json=args.json, out=sys.stdout)
    token = find_token(args.token, args.data_dir)
    if token is None:
        print("xtyserver: no token: give --token or XTY_TOKEN", file=sys.stderr)
        return 2
    return anyio.run(
        lambda: run_replay(
            paths,
            url=args.url,
            token=token,
            speed=None if args.fast else args.speed,
            do_check=args.check,
            replies=not args.any_model,
            as_json=args.json,
            timeout=args.timeout,
        )
    )
