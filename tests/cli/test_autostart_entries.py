"""The login entries of the other OSes, and the Windows ACL command, as files and arguments.

What runs only on Windows or macOS (the Startup folder's .cmd at login, launchd,
icacls) is not run here; docs/windows.md "Windows notes" says so. The Linux entry is run
for real in tests/cli/test_windows.py.
"""

from __future__ import annotations

import plistlib
from pathlib import Path

from xtyserver.cli.autostart import command, entry_path, entry_text
from xtyserver.serve.folder import acl_command, inside

PY = r"C:\Users\小明 王\pipx\venvs\xtyserver\Scripts\python.exe"


def test_windows_entry_is_a_utf8_cmd_in_the_startup_folder_starting_a_minimized_server() -> None:
    path = entry_path("win32", {"APPDATA": r"C:\Users\小明 王\AppData\Roaming"})
    assert (
        str(path)
        .replace("/", "\\")
        .endswith(r"AppData\Roaming\Microsoft\Windows\Start Menu\Programs\Startup\XiaoTangYuan.cmd")
    )
    text = entry_text("win32", command(["--data-dir", r"D:\小汤圆 数据"], python=PY))
    lines = text.decode("utf-8").split("\r\n")
    assert lines[:2] == ["@echo off", "chcp 65001 >nul"]
    assert lines[2] == (
        f'start "XiaoTangYuan" /min "{PY}" -m xtyserver --no-browser --data-dir "D:\\小汤圆 数据"'
    )


def test_macos_entry_is_a_launch_agent_run_at_load() -> None:
    path = entry_path("darwin", {"HOME": "/Users/p"})
    assert path == Path("/Users/p/Library/LaunchAgents/com.xiaotangyuan.server.plist")
    plist = plistlib.loads(entry_text("darwin", command(python="/usr/bin/python3")))
    assert plist["ProgramArguments"] == ["/usr/bin/python3", "-m", "xtyserver", "--no-browser"]
    assert plist["RunAtLoad"] is True and plist["Label"] == "com.xiaotangyuan.server"


def test_linux_entry_quotes_what_the_desktop_spec_needs() -> None:
    text = entry_text("linux", ["/opt/x y/python", "-m", "xtyserver", "serve", "50%$"]).decode()
    assert 'Exec="/opt/x y/python" -m xtyserver serve "50%%\\$"' in text


def test_windows_acl_leaves_a_folder_outside_the_profile_to_the_user_and_system() -> None:
    assert inside(r"C:\Users\小明\AppData\Local\XiaoTangYuan", r"c:\users\小明")
    assert not inside(r"D:\XiaoTangYuan", r"C:\Users\小明")
    assert not inside(r"C:\Users\小明2\x", r"C:\Users\小明")
    assert acl_command(r"D:\XiaoTangYuan", "S-1-5-21-1-2-3-1001") == [
        "icacls",
        r"D:\XiaoTangYuan",
        "/inheritance:r",
        "/grant:r",
        "*S-1-5-21-1-2-3-1001:(OI)(CI)F",
        "/grant:r",
        "*S-1-5-18:(OI)(CI)F",
        "/Q",
    ]
