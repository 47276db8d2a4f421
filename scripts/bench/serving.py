"""A server process for the benchmarks, and its memory and CPU from ``/proc``.

``python -m xtyserver serve`` started as a player starts it, over a given data
folder and config text, with ``--port 0``; ready once it prints its
``listening ws://...`` line. ``tree`` (a baseline's package from
:func:`baseline.export_tree`) goes first on ``PYTHONPATH``. A tree that builds
what turns need after that line (``serve/warm.py``) logs ``server.warmed`` when
done; :attr:`Started.warmed` is set then. Not a benchmark itself; shared by
``idle.py``, ``rss.py`` and ``first_turn.py``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WARMED = '"server.warmed"'


@dataclass
class Started:
    """A running server: its process, URL, and what its start cost."""

    proc: subprocess.Popen[str]
    url: str
    seconds: float
    """Wall clock from the spawn to the ``listening`` line (interpreter start included)."""
    cpu_s: float
    """The server's own CPU (user + system) when it printed ``listening``."""
    warmed: threading.Event = field(default_factory=threading.Event)
    """Set at its ``server.warmed`` log line (never, for a tree that logs none)."""
    warmed_s: float | None = None
    """Wall clock from the spawn to that line."""
    warmed_cpu_s: float | None = None
    """The server's CPU then."""

    def wait_warmed(self, timeout: float) -> bool:
        """Wait up to ``timeout`` s for ``server.warmed``; False for a tree that logs none."""
        return self.warmed.wait(timeout)


def start(
    data_dir: Path, config: str, *, env: Mapping[str, str], tree: Path | None = None
) -> Started:
    """Start a server over ``data_dir`` with ``config`` (TOML text); returns once listening."""
    config_file = data_dir / "bench.toml"
    config_file.write_text(config)
    child_env = {**os.environ, "PYTHONUTF8": "1", **env}
    # A player's install has its bytecode: without it every start compiles the sources.
    child_env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree is not None:
        child_env["PYTHONPATH"] = os.pathsep.join(
            [str(tree), child_env.get("PYTHONPATH", "")]
        ).rstrip(os.pathsep)
    argv = ["serve", "--config", str(config_file), "--data-dir", str(data_dir), "--port", "0"]
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "xtyserver", *argv],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=child_env,
        cwd=str(tree or ROOT),
    )
    assert proc.stdout is not None
    seen = []
    warmed: tuple[float, float] | None = None  # a worker thread may log it first
    for line in proc.stdout:
        seen.append(line)
        if warmed is None and WARMED in line:
            warmed = (time.perf_counter() - t, cpu_s(proc.pid))
        if line.startswith("listening "):
            started = Started(proc, line.split()[1], time.perf_counter() - t, cpu_s(proc.pid))
            if warmed is not None:
                started.warmed_s, started.warmed_cpu_s = warmed
                started.warmed.set()
            threading.Thread(target=_drain, args=(started, t), daemon=True).start()
            return started
    proc.wait(timeout=30)
    raise SystemExit("the server did not start:\n" + "".join(seen[-30:]))


def _drain(server: Started, spawned: float) -> None:
    """Read the server's output to its end (a full pipe would block it), noting ``warmed``."""
    assert server.proc.stdout is not None
    for line in server.proc.stdout:
        if not server.warmed.is_set() and WARMED in line:
            server.warmed_s = time.perf_counter() - spawned
            with contextlib.suppress(OSError):
                server.warmed_cpu_s = cpu_s(server.proc.pid)
            server.warmed.set()


def stop(server: Started) -> None:
    """End the server (SIGTERM, as Ctrl+C would) and wait for it."""
    server.proc.terminate()
    server.proc.wait(timeout=30)


@contextlib.contextmanager
def running(
    data_dir: Path, config: str, *, env: Mapping[str, str], tree: Path | None = None
) -> Iterator[Started]:
    """:func:`start`, then :func:`stop` on the way out."""
    server = start(data_dir, config, env=env, tree=tree)
    try:
        yield server
    finally:
        stop(server)


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` (``/proc/PID/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mappings_kib(pid: int, top: int = 15) -> list[tuple[int, int, str]]:
    """The ``top`` files (or kinds of anonymous memory) holding most of ``pid``'s RSS.

    ``(Rss KiB, Anonymous KiB, name)`` from ``/proc/PID/smaps``, summed per
    file: a shared library's text and its relocated data count together.
    """
    totals: dict[str, list[int]] = {}
    name = ""
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split(None, 5)
        if len(head) >= 5 and "-" in head[0] and ":" not in head[0]:
            name = head[5].strip() if len(head) == 6 else "[anonymous]"
            name = name.rsplit("/site-packages/", 1)[-1]
            totals.setdefault(name, [0, 0])
        elif line.startswith("Rss:"):
            totals[name][0] += int(line.split()[1])
        elif line.startswith("Anonymous:"):
            totals[name][1] += int(line.split()[1])
    rows = sorted(((rss, anon, n) for n, (rss, anon) in totals.items()), reverse=True)
    return rows[:top]


def settled_rss_kib(pid: int, quiet_s: float = 0.5, at_most_s: float = 10.0) -> int:
    """``pid``'s VmRSS once it has stayed within 64 KiB for ``quiet_s`` (at most ``at_most_s``).

    What a server loads on its own after it listens and warms (the local
    embedding model, on a worker thread of its own) is no connection's.
    """
    deadline = time.perf_counter() + at_most_s
    steady = memory_kib(pid)["VmRSS"]
    since = time.perf_counter()
    while time.perf_counter() < deadline:
        time.sleep(0.05)
        now = memory_kib(pid)["VmRSS"]
        if abs(now - steady) > 64:
            steady, since = now, time.perf_counter()
        elif time.perf_counter() - since >= quiet_s:
            break
    return steady


def children(pid: int) -> list[int]:
    """``pid``'s child processes (a server's passage worker), from /proc."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        with contextlib.suppress(OSError):
            found += [int(c) for c in (task / "children").read_text().split()]
    return found


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS, RssAnon, RssFile (``/proc/PID/status``) and Private_Dirty (smaps_rollup), KiB."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "RssAnon", "RssFile"):
            out[key] = int(value.split()[0])
    rollup = Path(f"/proc/{pid}/smaps_rollup")
    if rollup.exists():
        for line in rollup.read_text().splitlines():
            key, _, value = line.partition(":")
            if key == "Private_Dirty":
                out[key] = int(value.split()[0])
    return out
