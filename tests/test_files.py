"""Owner-only files: the data folder, exports and recordings are private."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.test_main import ROOT, env_for, seed, xty
from tests.conftest import TOKEN
from xtyserver.clock import ManualClock
from xtyserver.files import open_private, private_dir, tighten_data_dir
from xtyserver.replay.recorder import Recorder

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX modes (Windows: README notes)")


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_wide_data_folder_is_tightened_when_the_server_starts(tmp_path: Path) -> None:
    data = tmp_path / "数据 文件夹"
    seed(data)
    db = data / "profiles" / "default" / "memory-v1.sqlite"
    for path in (data, data / "profiles", data / "profiles" / "default"):
        path.chmod(0o755)
    db.chmod(0o644)
    unrelated = data / "notes.txt"  # not the server's: left alone
    unrelated.write_text("mine")
    unrelated.chmod(0o644)
    proc = subprocess.Popen(
        [sys.executable, "-m", "xtyserver", "serve", "--port", "0", "--data-dir", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=env_for(data, XTY_TOKEN=TOKEN),
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().startswith("listening ws://")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=15)
    assert (mode(data), mode(data / "profiles"), mode(db)) == (0o700, 0o700, 0o600)
    assert mode(unrelated) == 0o644
    assert "data_dir.tightened" in err


def test_memory_export_out_is_owner_only(tmp_path: Path) -> None:
    data = tmp_path / "data"
    seed(data)
    out = tmp_path / "export.json"
    out.write_text("old")
    out.chmod(0o644)
    done = xty(data, "memory", "export", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert mode(out) == 0o600
    assert out.read_text().startswith("{")


def test_record_folders_and_files_are_owner_only(tmp_path: Path) -> None:
    folder = tmp_path / "rec"
    recorder = Recorder(folder, clock=ManualClock(), token=TOKEN, keep_images=False)
    one = recorder.open("s1", auth="header")
    one.close(1000)
    [file] = folder.iterdir()
    assert (mode(folder), mode(file)) == (0o700, 0o600)


def test_helpers_refuse_to_widen_and_leave_a_home_folder_alone(tmp_path: Path) -> None:
    wide = tmp_path / "wide"
    wide.mkdir(mode=0o755)
    wide.chmod(0o755)
    assert mode(private_dir(wide)) == 0o700
    with open_private(wide / "f.txt") as handle:
        handle.write("x")
    assert mode(wide / "f.txt") == 0o600
    assert tighten_data_dir(wide) == []  # already owner-only
