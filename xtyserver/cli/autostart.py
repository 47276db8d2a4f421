"""``xtyserver autostart on|off|status``: start the server at login, for this user only.

Where each OS keeps the entry is in :func:`entry_path` (docs/install.md "Stop it, start it
with Windows"). On Windows it starts ``xtyserver serve`` in a minimized console
window: the window is how the player sees it runs, and closing it stops the
server cleanly. The entry runs this Python (``sys.executable -m xtyserver
serve``), so it works the same for a pipx/uv tool install and a repository's
``.venv``; ``off`` removes exactly the file ``on`` wrote.
"""

from __future__ import annotations

import os
import plistlib
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from xtyserver.cli.say import Say
from xtyserver.config import ConsoleSettings

NAME = "XiaoTangYuan"
LABEL = "com.xiaotangyuan.server"


def entry_path(platform: str = sys.platform, env: Mapping[str, str] = os.environ) -> Path:
    """Where this OS keeps the per-user login entry."""
    home = Path(env.get("HOME") or env.get("USERPROFILE") or Path.home())
    if platform.startswith("win"):
        appdata = Path(env.get("APPDATA") or home / "AppData" / "Roaming")
        startup = appdata / "Microsoft" / "Windows" / "Start Menu" / "Programs" / "Startup"
        return startup / f"{NAME}.cmd"
    if platform == "darwin":
        return home / "Library" / "LaunchAgents" / f"{LABEL}.plist"
    config = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    return config / "autostart" / "xiaotangyuan.desktop"


def command(flags: Sequence[str] = (), python: str = sys.executable) -> list[str]:
    """The command line the login entry runs: the player's console, no browser."""
    return [python, "-m", "xtyserver", "--no-browser", *flags]


def _desktop_quote(arg: str) -> str:
    # Desktop Entry Specification, "The Exec key": quote, escape \ " ` $, double %.
    escaped = "".join("\\" + c if c in '\\"`$' else c for c in arg).replace("%", "%%")
    plain = escaped == arg and arg and not any(c in arg for c in " \t\n'<>~|&;*?#()")
    return arg if plain else f'"{escaped}"'


def _cmd_quote(arg: str) -> str:
    return f'"{arg}"' if any(c in arg for c in ' &()^|<>"') or not arg else arg


def entry_text(platform: str, argv: Sequence[str]) -> bytes:
    """The file's content for ``platform`` running ``argv``."""
    if platform.startswith("win"):
        line = " ".join(_cmd_quote(a) for a in argv)
        # UTF-8 (code page 65001), so a user folder with Chinese characters works.
        lines = ["@echo off", "chcp 65001 >nul", f'start "{NAME}" /min {line}', ""]
        return "\r\n".join(lines).encode("utf-8")
    if platform == "darwin":
        plist = {
            "Label": LABEL,
            "ProgramArguments": list(argv),
            "RunAtLoad": True,
            "KeepAlive": False,
            "ProcessType": "Interactive",
        }
        return plistlib.dumps(plist)
    lines = [
        "[Desktop Entry]",
        "Type=Application",
        f"Name={NAME} (xtyserver)",
        "Comment=The local server of the XiaoTangYuan game companion",
        "Exec=" + " ".join(_desktop_quote(a) for a in argv),
        "Terminal=false",
        "X-GNOME-Autostart-enabled=true",
        "",
    ]
    return "\n".join(lines).encode("utf-8")


def autostart(
    state: str,
    flags: Sequence[str] = (),
    *,
    platform: str = sys.platform,
    env: Mapping[str, str] = os.environ,
    say: Say | None = None,
) -> int:
    """Turn the login start on or off (or say whether it is on); prints what it did."""
    say = say or Say(ConsoleSettings())
    path = entry_path(platform, env)
    if state == "status":
        print(say("autostart_is_on" if path.exists() else "autostart_is_off", path=path))
        return 0
    if state == "off":
        if path.exists():
            path.unlink()
            print(say("autostart_removed", path=path))
        else:
            print(say("autostart_was_off", path=path))
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(entry_text(platform, command(flags)))
    os.replace(tmp, path)
    print(say("autostart_written", path=path))
    return 0
