#!/usr/bin/env python3
"""One-command set-up and run for a fresh machine with only Python 3.11+.

    python3 dev.py test            # create .venv, install with the test tools, run the tests
    python3 dev.py demo            # create .venv, install, run the end-to-end demo
    python3 dev.py serve [ARGS]    # create .venv, install, run `xtyserver serve ARGS`
    python3 dev.py lint            # ruff check, ruff format --check, mypy --strict
    python3 dev.py build           # the wheel, into dist/ (only the `build` tool is installed)
    python3 dev.py run ARGS        # any `xtyserver ARGS`
    python3 dev.py eval [ARGS]     # the memory evaluation (xtyeval/, docs/evaluation.md "Memory evaluation")

On Windows run it as `py dev.py ...` (or `python dev.py ...`): `python3` there
may open the Microsoft Store.

`eval` runs the developers' memory evaluation, which lives beside its set in
this checkout (xtyeval/, eval/) and is not part of the wheel.

The virtual environment is created in .venv next to this file and (re)installed
whenever pyproject.toml changes. `serve`, `demo`, `run` and `eval` install the package
alone; `test` and `lint` add the test tools (each has its own stamp, and the test
install also serves the others); `build` installs only PyPA's `build` (the wheel
is pure Python: nothing else is needed to make it).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / ("python.exe" if os.name == "nt" else "python")
TEST_STAMP = VENV / ".xty-installed"  # the package with its test tools
SERVE_STAMP = VENV / ".xty-installed-serve"  # the package alone
TOOL_COMMANDS = ("test", "lint")
WORKERS = ["-n", "4", "--dist", "loadgroup"]  # `dev.py test -n 0` runs in one process


def ensure_env(test_tools: bool) -> None:
    if sys.version_info < (3, 11):  # noqa: UP036 - this script may run on an older python3
        sys.exit("xtyserver needs Python 3.11 or newer")
    if not PY.exists():
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    want = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    enough = [TEST_STAMP] if test_tools else [TEST_STAMP, SERVE_STAMP]
    if any(stamp.exists() and stamp.read_text() == want for stamp in enough):
        return
    what = "xtyserver and its test tools" if test_tools else "xtyserver"
    print(f"installing {what} into .venv ...", flush=True)
    pip = [str(PY), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    # The test tools bring the voice extra too: its tests run on real speech parts.
    subprocess.run([*pip, "-e", f"{ROOT}[test,voice]" if test_tools else str(ROOT)], check=True)
    (TEST_STAMP if test_tools else SERVE_STAMP).write_text(want)


def ensure_build_tool() -> None:
    """A .venv with PyPA's ``build`` in it, and nothing else the wheel does not need."""
    if sys.version_info < (3, 11):  # noqa: UP036 - this script may run on an older python3
        sys.exit("xtyserver needs Python 3.11 or newer")
    if not PY.exists():
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    if subprocess.call([str(PY), "-c", "import build"], stderr=subprocess.DEVNULL) == 0:
        return
    print("installing the build tool into .venv ...", flush=True)
    pip = [str(PY), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "build>=1"], check=True)


def main(argv: list[str]) -> int:
    command, rest = (argv[0], argv[1:]) if argv else ("test", [])
    if command == "build":
        ensure_build_tool()
    else:
        ensure_env(test_tools=command in TOOL_COMMANDS)
    env = {**os.environ, "PYTHONUTF8": "1"}
    if command == "test":
        # Four workers, each test file on one of them (tests/conftest.py groups them): most
        # of the suite waits on servers, browsers and compilers rather than on the CPU.
        workers = [] if any(a == "-n" or a.startswith("-n") for a in rest) else WORKERS
        return subprocess.call([str(PY), "-m", "pytest", *workers, *rest], cwd=ROOT, env=env)
    if command == "lint":
        where = ["xtyserver", "xtyeval", "tests", "scripts", "dev.py"]
        code = subprocess.call([str(PY), "-m", "ruff", "check", *where[:3]], cwd=ROOT)
        # Layout is ruff format's: a change that drifts from it fails here, not in review.
        code = code or subprocess.call(
            [str(PY), "-m", "ruff", "format", "--check", *where], cwd=ROOT
        )
        typed = ["mypy", "--strict", "xtyserver", "xtyeval"]
        return code or subprocess.call([str(PY), "-m", *typed], cwd=ROOT)
    if command == "build":
        out = ["--outdir", str(ROOT / "dist")]
        return subprocess.call([str(PY), "-m", "build", "--wheel", *out, *rest, str(ROOT)])
    if command in ("demo", "serve"):
        return subprocess.call([str(PY), "-m", "xtyserver", command, *rest], cwd=ROOT, env=env)
    if command == "run":
        return subprocess.call([str(PY), "-m", "xtyserver", *rest], cwd=ROOT, env=env)
    if command == "eval":
        # In the checkout's folder: the package is found there (it is not installed).
        return subprocess.call([str(PY), "-m", "xtyeval", *rest], cwd=ROOT, env=env)
    print(__doc__)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
