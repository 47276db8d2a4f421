"""Time from ``xtyserver`` (no arguments, as a player starts it) to the memory page.

Each run starts ``xtyserver --config X`` (port 0) on a fresh data folder whose
path holds Chinese characters and a space, with ``BROWSER`` set to a real
headless browser (``--browser chromium`` or ``firefox``, tests/handed_browser.py)
that opens exactly what ``xtyserver`` hands it: the owner-only hand-off file,
whose form opens the page. Three figures per run, from the start: the browser
called, the page's HTML answered (the browser's navigation timing) and the
page's data loaded (its last API answer, the page then drawn). With
``--browser none`` a small program only records the call and the page is
fetched over HTTP (the old figure). Medians and the runs.

    .venv/bin/python scripts/bench/start_to_page.py [--runs 7] [--browser chromium] [--exe PATH]
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

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests import handed_browser  # noqa: E402 - the repository's own browser wrapper

READY = "return document.body.dataset.ready"
TIMES = (
    "const api = performance.getEntriesByType('resource').filter((e) => e.name.includes('/ui/api/'));"
    "const nav = performance.getEntriesByType('navigation')[0];"
    "return [performance.timeOrigin + nav.responseEnd,"
    " Math.max(...api.map((e) => performance.timeOrigin + e.responseEnd))];"
)


def one_run(exe: list[str], kind: str) -> tuple[float, float, float | None]:
    tmp = Path(tempfile.mkdtemp(prefix="xty 起动 "))
    try:
        config = tmp / "xty.toml"
        config.write_text("[server]\nport = 0\nui_port = 0\n", encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith("XTY_")}
        env.update(XTY_DATA_DIR=str(tmp / "data"), HOME=str(tmp), XDG_DATA_HOME=str(tmp / "xdg"))
        if kind == "none":
            return _recorded(exe, tmp, config, env)
        with handed_browser.handed(kind, tmp / "browser") as handed:
            env["BROWSER"] = str(handed.program)
            start = time.time()
            proc = _start(exe, config, env, tmp)
            try:
                tab = handed.tab(0)
                tab.wait(READY, "the page ready")
                answered, loaded = tab.run(TIMES)
                called = float(handed.handed()[0]["at"])
                tab.quit()
                return called - start, answered / 1000 - start, loaded / 1000 - start
            finally:
                proc.terminate()
                proc.wait(15)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _start(exe: list[str], config: Path, env: dict[str, str], cwd: Path) -> subprocess.Popen[bytes]:
    out = subprocess.DEVNULL
    return subprocess.Popen(
        [*exe, "--config", str(config)], stdout=out, stderr=out, env=env, cwd=cwd
    )


def _recorded(
    exe: list[str], tmp: Path, config: Path, env: dict[str, str]
) -> tuple[float, float, None]:
    opened = tmp / "opened"
    browser = tmp / "browser"
    record = f"open({str(opened)!r}, 'w').write(f'{{time.time()}} {{sys.argv[1]}}')"
    browser.write_text(f"#!{sys.executable}\nimport sys, time\n{record}\n", encoding="utf-8")
    browser.chmod(0o755)
    env = {**env, "BROWSER": str(browser)}
    start = time.time()
    proc = _start(exe, config, env, tmp)
    try:
        deadline = start + 60
        while not (opened.exists() and opened.read_text(encoding="utf-8")):
            if time.time() > deadline or proc.poll() is not None:
                raise SystemExit("the browser was never called")
            time.sleep(0.005)
        at, _ = opened.read_text(encoding="utf-8").split(" ", 1)
        handoff = (tmp / "data" / "open-page.html").read_text(encoding="utf-8")
        page = handoff.split('action="', 1)[1].split('"', 1)[0].removesuffix("open")
        with urllib.request.urlopen(page, timeout=10) as answer:
            assert answer.status == 200
        return float(at) - start, time.time() - start, None
    finally:
        proc.terminate()
        proc.wait(15)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--exe", help="an installed xtyserver (default: python -m xtyserver)")
    parser.add_argument(
        "--browser",
        choices=("chromium", "firefox", "none"),
        help="the browser handed the page (default: chromium when installed, else none)",
    )
    args = parser.parse_args()
    kind = args.browser or ("chromium" if handed_browser.missing("chromium") is None else "none")
    if kind != "none" and (why := handed_browser.missing(kind)) is not None:
        raise SystemExit(why)
    exe = [args.exe] if args.exe else [sys.executable, "-m", "xtyserver"]
    runs = [one_run(exe, kind) for _ in range(args.runs)]
    print(
        f"runs: {len(runs)}; browser {kind}; load average {os.getloadavg()[0]:.1f}"
        f" on {os.cpu_count()} cores"
    )
    names = ("browser called", "page answered ", "page loaded   ")
    for n, name in enumerate(names):
        values = [r[n] for r in runs if r[n] is not None]
        if values:
            shown = [round(float(x), 2) for x in values]
            print(f"{name}  median {statistics.median(values):.2f} s  runs {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
