"""The data folder is the player's alone.

On Linux and macOS a new data folder is created 0700. On Windows the user's
profile is private already; a data folder outside it inherits the drive's ACL,
often readable by every user, so its ACL is replaced by one granting only this
user and SYSTEM (``icacls /inheritance:r /grant:r``), or the start is refused.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import PureWindowsPath

from xtyserver.serve.instance import NotStarted

SYSTEM_SID = "S-1-5-18"


def inside(path: str, folder: str) -> bool:
    """Whether Windows path ``path`` lies in ``folder`` (case-insensitive, like Windows)."""
    try:
        PureWindowsPath(path.casefold()).relative_to(PureWindowsPath(folder.casefold()))
    except ValueError:
        return False
    return True


def acl_command(path: str, user_sid: str) -> list[str]:
    """``icacls`` arguments that leave ``path`` to ``user_sid`` and SYSTEM, inherited below."""
    return [
        "icacls",
        path,
        "/inheritance:r",
        "/grant:r",
        f"*{user_sid}:(OI)(CI)F",
        "/grant:r",
        f"*{SYSTEM_SID}:(OI)(CI)F",
        "/Q",
    ]


def _user_sid() -> str:
    done = subprocess.run(
        ["whoami", "/user", "/fo", "csv", "/nh"], capture_output=True, text=True, check=True
    )
    return done.stdout.strip().rsplit(",", 1)[-1].strip('"')


def make_owner_only(path: str, *, env: Mapping[str, str] = os.environ) -> None:
    """Create the data folder owner-only; on Windows restrict one outside the profile.

    Raises:
        NotStarted: Windows could not restrict a folder outside the user's profile.
    """
    folder = os.path.abspath(path)
    existed = os.path.isdir(folder)
    os.makedirs(folder, mode=0o700, exist_ok=True)
    if sys.platform != "win32":
        return
    profile = env.get("USERPROFILE", "")
    if profile and inside(folder, profile):
        return
    try:
        sid = _user_sid()
        subprocess.run(acl_command(folder, sid), capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as exc:
        said = getattr(exc, "stderr", "") or getattr(exc, "stdout", "") or str(exc)
        state = "it already existed" if existed else "it was just created"
        raise NotStarted(
            f"the data folder {folder} is outside your user profile and its permissions"
            f" could not be limited to you ({state}; icacls: {said.strip()[:200]})."
            " Choose a folder in your profile (data_dir), or limit it yourself:"
            f' icacls "{folder}" /inheritance:r /grant:r "%USERNAME%:(OI)(CI)F"'
        ) from None
