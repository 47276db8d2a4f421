"""Fault test: SIGKILL a process writing to the memory store, many times, and verify the file.

Each round starts a child process that writes to ONE shared store file in a loop
and prints an acknowledgement line (flushed) after every write call returned,
i.e. after its transaction committed. The parent kills it with SIGKILL at a
random moment (seeded), reopens the file and checks:

* ``PRAGMA integrity_check`` is ``ok``;
* every acknowledged commit of this round AND of every earlier round is present,
  with every column as written (a row is complete);
* each multi-row transaction is all or nothing:
  - ``open_play_session``: the session row and its first ``play_day`` row;
  - ``record_heartbeat``: the session's ``active_ms``/``last_heartbeat_at`` and
    the ``play_day`` row of the heartbeat's date (every heartbeat is on a new
    date, so the day count must equal the heartbeat count + 1);
  - ``touch``: every event it named has the new ``last_used_at``, or none;
  - ``compact_scope``: the digest row and the deletion of the merged events
    (every subject is either a row or named in the digest, never both or neither);
* the in-place update of one memory (same kind and subject) holds the last
  acknowledged value or the one in flight, never an older one;
* ``recover_open_sessions`` then closes the killed session at its last heartbeat.

Run: ``cd /work/main && .venv/bin/python scripts/sigkill.py [--rounds 100] [--seed 1]``
Exit status 1 on any failure. POSIX only (SIGKILL).
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import apsw  # noqa: E402

from xtyserver.clock import ManualClock  # noqa: E402
from xtyserver.memory import accounting  # noqa: E402
from xtyserver.memory.sqlite.store import DIGEST_PREFIX, MemoryStore  # noqa: E402
from xtyserver.memory.types import NewEvent, Scope  # noqa: E402

GAME = "sigkill"
TZ = "UTC"
T0 = 1_790_000_000.0
DAY = 86_400.0
BATCH = 8  # events per batch scope; compaction (soft cap 3) then merges all of them
SOFT_CAP = 3
GAP_CAP_MS = round(accounting.DEFAULT_GAP_CAP_S * 1000)


def main_scope(rnd: int) -> Scope:
    return Scope(GAME, f"r{rnd}")


def batch_scope(rnd: int, batch: int) -> Scope:
    return Scope(GAME, f"r{rnd}b{batch}")


def event_summary(rnd: int, batch: int, j: int) -> str:
    return f"第{rnd}轮第{batch}批事件{j}"


# --- the child: writes forever, acknowledging each committed call ------------------------


def child(path: str, rnd: int) -> None:
    """Write to the store at ``path`` until killed; one stdout line per committed call.

    Lines: ``open <sid>``, ``event <b> <j> <id> <seq>``, ``goal <seq>``,
    ``touch <b> <j> <seq>``, ``beat <k>``, ``compact <b> <merged>``.
    ``seq`` is a global step counter; times derive from it, so the parent can
    recompute every value written.
    """
    store = MemoryStore(path, clock=ManualClock(T0), soft_cap=SOFT_CAP)
    out = sys.stdout

    def ack(line: str) -> None:
        out.write(line + "\n")
        out.flush()

    sid = store.open_play_session(main_scope(rnd), T0, TZ)
    ack(f"open {sid}")
    seq = 0
    beat = 0
    batch = 0
    while True:
        scope = batch_scope(rnd, batch)
        ids: list[int] = []
        for j in range(BATCH):
            seq += 1
            ev = store.upsert_event(
                scope,
                NewEvent(
                    "event",
                    f"e{j}",
                    event_summary(rnd, batch, j),
                    importance=1,
                    status="done",
                    day=j,
                ),
                seq - 0.5,
            )
            ids.append(ev.id)
            ack(f"event {batch} {j} {ev.id} {seq}")
            # One memory updated in place, again and again (same kind and subject).
            store.upsert_event(main_scope(rnd), NewEvent("goal", "进度", f"进度{seq}"), float(seq))
            ack(f"goal {seq}")
            store.touch(scope, ids, float(seq))
            ack(f"touch {batch} {j} {seq}")
            beat += 1
            store.record_heartbeat(sid, T0 + beat * DAY, TZ)
            ack(f"beat {beat}")
        merged = store.compact_scope(scope, float(seq) + 0.25)
        ack(f"compact {batch} {merged}")
        batch += 1


# --- the parent: kill, reopen, verify ----------------------------------------------------


@dataclass
class Acks:
    """What one round's child acknowledged (committed)."""

    opened: int | None = None
    events: dict[tuple[int, int], tuple[int, int]] = field(
        default_factory=dict
    )  # (b, j) -> (id, seq)
    goal: int = 0
    touches: dict[int, tuple[int, int]] = field(default_factory=dict)  # b -> (last j, seq)
    beats: int = 0
    compacted: set[int] = field(default_factory=set)
    count: int = 0

    def feed(self, line: str) -> None:
        parts = line.split()
        match parts:
            case ["open", sid]:
                self.opened = int(sid)
            case ["event", b, j, ev_id, seq]:
                self.events[(int(b), int(j))] = (int(ev_id), int(seq))
            case ["goal", seq]:
                self.goal = int(seq)
            case ["touch", b, j, seq]:
                self.touches[int(b)] = (int(j), int(seq))
            case ["beat", k]:
                self.beats = int(k)
            case ["compact", b, _]:
                self.compacted.add(int(b))
            case _:
                raise ValueError(f"bad acknowledgement line {line!r}")
        self.count += 1


@dataclass
class Report:
    """Figures of a run."""

    rounds: int = 0
    acknowledged: int = 0
    verified: int = 0
    failures: list[str] = field(default_factory=list)
    seconds: float = 0.0


def verify_round(conn: apsw.Connection, rnd: int, acks: Acks) -> tuple[int, list[str]]:
    """Check one round's rows against its acknowledgements.

    Returns:
        How many acknowledged commits were found intact, and the failures.
    """
    fails: list[str] = []
    ok = 0
    tag = f"round {rnd}"
    main = main_scope(rnd)

    # The play session and its days (open + heartbeats are each one transaction).
    sessions = conn.execute(
        "SELECT id, started_at, last_heartbeat_at, active_ms, tz FROM play_session "
        "WHERE game_id = ? AND save_id = ?",
        (main.game_id, main.save_id),
    ).fetchall()
    dates = {
        d
        for (d,) in conn.execute(
            "SELECT date FROM play_day WHERE game_id = ? AND save_id = ?",
            (main.game_id, main.save_id),
        )
    }
    if acks.opened is not None and not sessions:
        fails.append(f"{tag}: acknowledged play session {acks.opened} is missing")
    if len(sessions) > 1:
        fails.append(f"{tag}: {len(sessions)} play sessions, expected one")
    if sessions:
        sid, started, last, active_ms, tz = cast(tuple[int, float, float, int, str], sessions[0])
        if acks.opened is not None:
            ok += 1
            if sid != acks.opened:
                fails.append(f"{tag}: session id {sid} != acknowledged {acks.opened}")
        beats = round((last - T0) / DAY)
        if started != T0 or tz != TZ or last != T0 + beats * DAY:
            fails.append(f"{tag}: session row incomplete {sessions[0]}")
        if beats not in (acks.beats, acks.beats + 1):
            fails.append(f"{tag}: {beats} heartbeats stored, {acks.beats} acknowledged")
        else:
            ok += acks.beats
        if active_ms != beats * GAP_CAP_MS:
            fails.append(f"{tag}: active_ms {active_ms} != {beats} capped heartbeats")
        want = {accounting.local_date(T0 + k * DAY, TZ) for k in range(beats + 1)}
        if dates != want:
            fails.append(
                f"{tag}: play_day has {len(dates)} dates, the session implies {len(want)} "
                "(heartbeat not atomic)"
            )
    elif dates:
        fails.append(f"{tag}: play_day rows without their play session")

    # The memory updated in place: last acknowledged value or the one in flight.
    goal = conn.execute(
        "SELECT summary, updated_at FROM game_memory "
        "WHERE game_id = ? AND save_id = ? AND kind = 'goal' AND subject = '进度'",
        (main.game_id, main.save_id),
    ).fetchall()
    if acks.goal:
        if not goal:
            fails.append(f"{tag}: acknowledged goal update {acks.goal} missing")
        else:
            summary, updated = cast(tuple[str, float], goal[0])
            seq = int(summary.removeprefix("进度"))
            if seq < acks.goal or seq > acks.goal + 1 or updated != float(seq):
                fails.append(f"{tag}: goal holds {summary!r}@{updated}, acknowledged {acks.goal}")
            else:
                ok += 1

    # Batches: events, touches, compaction.
    batches = {b for b, _ in acks.events} | set(acks.compacted)
    if batches:
        batches.add(max(batches) + 1)  # an in-flight batch may have committed rows
    for b in sorted(batches):
        scope = batch_scope(rnd, b)
        rows = {
            r[1]: r
            for r in conn.execute(
                "SELECT id, subject, summary, kind, importance, status, pinned, day, "
                "created_at, updated_at, last_used_at FROM game_memory "
                "WHERE game_id = ? AND save_id = ?",
                (scope.game_id, scope.save_id),
            )
        }
        digest = rows.pop(f"{DIGEST_PREFIX}·event", None)
        merged = set(digest[2].split("、")) if digest else set()
        acked = {j for (bb, j) in acks.events if bb == b}
        for j in range(BATCH):
            subject = f"e{j}"
            in_rows, in_digest = subject in rows, subject in merged
            if in_rows and in_digest:
                fails.append(f"{tag}: {scope.save_id}/{subject} both a row and merged")
            if j in acked:
                if not (in_rows or in_digest):
                    fails.append(f"{tag}: acknowledged {scope.save_id}/{subject} is missing")
                    continue
                ok += 1
            if in_rows:
                _, _, summary, kind, imp, status, pinned, day, created, updated, _ = rows[subject]
                ev_seq = acks.events.get((b, j), (0, 0))[1]
                complete = (
                    summary == event_summary(rnd, b, j)
                    and (kind, imp, status, pinned, day) == ("event", 1, "done", 0, j)
                    and created == updated
                    and (ev_seq == 0 or created == ev_seq - 0.5)
                )
                if not complete:
                    fails.append(f"{tag}: row {scope.save_id}/{subject} incomplete {rows[subject]}")
        if b in acks.compacted:
            ok += 1
            if rows or not digest:
                fails.append(f"{tag}: acknowledged compaction of {scope.save_id} not applied")
        # A touch at step j names e0..ej: each stored touch time must be on all of them.
        for _, subject, *_, last_used in rows.values():
            if last_used != int(last_used):
                continue  # creation time (seq - 0.5): no touch yet
            j_touch = next(
                (j for (bb, j), (_, s) in acks.events.items() if bb == b and s == last_used),
                None,
            )
            if j_touch is None:  # the in-flight touch: it names every row up to the newest
                j_touch = max((int(s[1:]) for s in rows), default=-1)
            for jj in range(j_touch + 1):
                other = rows.get(f"e{jj}")
                if other is not None and other[10] < last_used:
                    fails.append(
                        f"{tag}: touch at {last_used} reached {subject} but not e{jj} (not atomic)"
                    )
        if b in acks.touches and not digest:
            j_last, t_seq = acks.touches[b]
            ok += 1
            for jj in range(j_last + 1):
                row = rows.get(f"e{jj}")
                if row is not None and row[10] < t_seq:
                    fails.append(f"{tag}: acknowledged touch {t_seq} missing on e{jj}")
    return ok, fails


def _read_lines(stream: object, sink: list[str]) -> None:
    for line in stream:  # type: ignore[attr-defined]
        sink.append(line)


def run_round(
    path: Path, rnd: int, rng: random.Random, *, max_delay: float, python: str
) -> tuple[Acks, str]:
    """Start a child writing round ``rnd``, SIGKILL it after a random delay, return its acks."""
    proc = subprocess.Popen(
        [python, str(Path(__file__).resolve()), "--child", str(path), str(rnd)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert proc.stdout is not None and proc.stderr is not None
    lines: list[str] = []
    reader = threading.Thread(target=_read_lines, args=(proc.stdout, lines), daemon=True)
    reader.start()
    # Wait for the first commit so the kill lands among writes, not in interpreter start-up.
    started = time.monotonic()
    while not lines and proc.poll() is None and time.monotonic() - started < 30:
        time.sleep(0.002)
    time.sleep(rng.uniform(0.0, max_delay))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    reader.join()
    err = proc.stderr.read()
    proc.stderr.close()
    proc.stdout.close()
    acks = Acks()
    for line in lines:
        if line.endswith("\n"):  # a torn last line was never a full acknowledgement
            acks.feed(line)
    return acks, err if proc.returncode != -signal.SIGKILL else ""


def verify_all(path: Path, history: Sequence[Acks]) -> tuple[int, list[str]]:
    """Integrity check, then every round so far; finally recover the killed session."""
    fails: list[str] = []
    conn = apsw.Connection(str(path))
    try:
        check = conn.execute("PRAGMA integrity_check").fetchall()
        if check != [("ok",)]:
            fails.append(f"integrity_check: {check[:5]}")
        verified = 0
        for rnd, acks in enumerate(history):
            ok, bad = verify_round(conn, rnd, acks)
            verified += ok
            fails.extend(bad)
    finally:
        conn.close()
    with MemoryStore(path, clock=ManualClock(T0)) as store:
        open_before = store.recover_open_sessions()
    if open_before > 1:
        fails.append(f"{open_before} sessions were open; only the killed one may be")
    return verified, fails


def run(
    rounds: int = 100,
    *,
    seed: int = 1,
    workdir: Path | None = None,
    max_delay: float = 0.25,
    python: str = sys.executable,
    verbose: bool = False,
) -> Report:
    """Run ``rounds`` kill-and-verify rounds on one store file.

    Args:
        rounds: How many children to kill.
        seed: Seeds the kill delays.
        workdir: Folder for the store file (default: a temporary folder).
        max_delay: Longest wait after the child's first commit before the kill, seconds.
        python: The interpreter that runs the child.
        verbose: Print one line per round.

    Returns:
        The figures; ``failures`` is empty when every check held.
    """
    rng = random.Random(seed)
    report = Report()
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(workdir or tmp) / "sigkill.sqlite"
        history: list[Acks] = []
        for rnd in range(rounds):
            acks, err = run_round(path, rnd, rng, max_delay=max_delay, python=python)
            history.append(acks)
            if err:
                report.failures.append(f"round {rnd}: child did not die by SIGKILL: {err[-500:]}")
            verified, fails = verify_all(path, history)
            report.rounds += 1
            report.acknowledged += acks.count
            report.verified = verified
            report.failures.extend(fails)
            if verbose:
                print(f"round {rnd}: {acks.count} acks, {verified} verified, {len(fails)} failures")
            if fails:
                break
    report.seconds = time.monotonic() - started
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--max-delay", type=float, default=0.25, help="seconds")
    parser.add_argument("--workdir", type=Path, help="keep the store file here")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--child", nargs=2, metavar=("DB", "ROUND"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]))
        return 0
    report = run(
        args.rounds,
        seed=args.seed,
        workdir=args.workdir,
        max_delay=args.max_delay,
        verbose=args.verbose,
    )
    print(f"rounds: {report.rounds}")
    print(f"acknowledged writes: {report.acknowledged}")
    print(f"acknowledged commits verified (all rounds, last check): {report.verified}")
    print(f"failures: {len(report.failures)}")
    for failure in report.failures[:20]:
        print(f"  {failure}")
    print(f"time: {report.seconds:.1f} s")
    return 1 if report.failures else 0


if __name__ == "__main__":
    sys.exit(main())
