"""Time from ``xtyserver`` (no arguments, as a player starts it) to the memory page.

Each run starts ``xtyserver --config X`` (port 0) on a fresh data folder whose
path holds Chinese characters and a space, with ``BROWSER`` set to a small
program that records when it is asked to open the link; then the page itself
is fetched. Two figures per run: seconds until the browser is called, and
until the page answered (HTTP 200 for ``/ui/``). Medians and the runs.

    .venv/bin/python scripts/bench/start_to_page.py [--runs 7] [--exe PATH/xtyserver]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path


def one_run(exe: list[str]) -> tuple[float, float]:
    tmp = Path(tempfile.mkdtemp(prefix="xty 起动 "))
    try:
        opened = tmp / "opened"
        browser = tmp / "browser"
        record = f"open({str(opened)!r}, 'w').write(f'{{time.time()}} {{sys.argv[1]}}')"
        browser.write_text(f"#!{sys.executable}\nimport sys, time\n{record}\n", encoding="utf-8")
        browser.chmod(0o755)
        config = tmp / "xty.toml"
        config.write_text("[server]\nport = 0\n", encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("XTY_")}
        env.update(
            BROWSER=str(browser),
            XTY_DATA_DIR=str(tmp / "data"),
            HOME=str(tmp),
            XDG_DATA_HOME=str(tmp / "xdg"),
        )
        start = time.time()
        proc = subprocess.Popen(
            [*exe, "--config", str(config)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=tmp,
        )
        try:
            deadline = start + 60
            while not (opened.exists() and opened.read_text(encoding="utf-8")):
                if time.time() > deadline or proc.poll() is not None:
                    raise SystemExit("the browser was never called")
                time.sleep(0.005)
            at, link = opened.read_text(encoding="utf-8").split(" ", 1)
            if link.startswith("file:"):  # the 0600 open-page.html that forwards to the page
                handoff = (tmp / "data" / "open-page.html").read_text(encoding="utf-8")
                link = handoff.split('url=', 1)[1].split('"', 1)[0]
            with urllib.request.urlopen(link.split("#", 1)[0], timeout=10) as answer:
                assert answer.status == 200
            return float(at) - start, time.time() - start
        finally:
            proc.terminate()
            proc.wait(15)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--exe", help="an installed xtyserver (default: python -m xtyserver)")
    args = parser.parse_args()
    exe = [args.exe] if args.exe else [sys.executable, "-m", "xtyserver"]
    runs = [one_run(exe) for _ in range(args.runs)]
    called = [a for a, _ in runs]
    page = [b for _, b in runs]
    print(f"runs: {len(runs)}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    for name, values in (("browser called", called), ("page answered ", page)):
        shown = [round(x, 2) for x in values]
        print(f"{name}  median {statistics.median(values):.2f} s  runs {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
