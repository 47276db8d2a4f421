"""The wheel a player installs, built once per test session into a fresh virtual environment.

``python -m build --wheel`` from this checkout, then ``pip install`` of that
wheel alone into a new venv (no test tools, no repository on the path): what
``pipx install xtyserver-*.whl`` gives a player. Slow (the install resolves
every dependency), so tests/test_wheel.py and tests/test_journey.py share one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class InstalledWheel:
    """A venv with only the wheel (and its dependencies) installed.

    Attributes:
        wheel: The built wheel file.
        env_dir: The venv's folder (its name has a space and Chinese characters).
        python: The venv's interpreter.
        bin_dir: Where its console scripts are.
        added_mb: What the install added to the empty venv, in MB.
    """

    wheel: Path
    env_dir: Path
    python: Path
    bin_dir: Path
    added_mb: float

    @property
    def xtyserver(self) -> Path:
        """The installed ``xtyserver`` command."""
        return self.bin_dir / ("xtyserver.exe" if os.name == "nt" else "xtyserver")


def player_env(home: Path, **extra: str) -> dict[str, str]:
    """This process's environment without ``XTY_*``/``PYTHON*``, ``home`` as HOME and XDG."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("XTY_", "PYTHON"))}
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "xdg" / "data"),
        XDG_CONFIG_HOME=str(home / "xdg" / "config"),
        XDG_CACHE_HOME=str(home / "xdg" / "cache"),
        XDG_STATE_HOME=str(home / "xdg" / "state"),
    )
    env.update(extra)
    return env


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def build_and_install(root: Path, env: Mapping[str, str]) -> InstalledWheel:
    """Build this checkout's wheel into ``root/dist`` and install it into a new venv there."""
    dist = root / "dist"
    built = subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    [wheel] = dist.glob("xtyserver-*.whl")

    env_dir = root / "fresh venv 小汤圆"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    bin_dir = env_dir / ("Scripts" if os.name == "nt" else "bin")
    python = bin_dir / ("python.exe" if os.name == "nt" else "python")
    empty = _size(env_dir)
    pip = [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    installed = subprocess.run(
        [*pip, str(wheel)], capture_output=True, text=True, timeout=600, env=dict(env), cwd=root
    )
    assert installed.returncode == 0, installed.stderr[-3000:]
    added = (_size(env_dir) - empty) / 1e6
    return InstalledWheel(wheel, env_dir, python, bin_dir, added)


@pytest.fixture(scope="session")
def installed_wheel(tmp_path_factory: pytest.TempPathFactory) -> InstalledWheel:
    """The session's one wheel, installed into a fresh venv (built on first use)."""
    root = tmp_path_factory.mktemp("wheel")
    return build_and_install(root, player_env(root / "home"))
