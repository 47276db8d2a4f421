"""The memory page's own secret: what ``xtyserver ui`` proves to get a launch key.

Only the player's account can read it: a fresh random value written owner-only
(0600, in the owner-only data folder) by the server that holds the data
folder's lock, at each start. It is not the adapter token, which mods hold and
players paste into mod configs outside that folder: a mod's token opens no page
and mints no launch key (docs/memory-page.md "Memory page").
"""

from __future__ import annotations

import secrets
from pathlib import Path

from xtyserver.files import private_dir, replace_private

PAGE_SECRET_FILE = "page-secret"


def page_secret_path(data_dir: Path) -> Path:
    return data_dir / PAGE_SECRET_FILE


def new_page_secret(data_dir: Path) -> str:
    """Write a fresh page secret for this start (replacing the last one) and return it."""
    secret = secrets.token_urlsafe(32)
    private_dir(data_dir)
    replace_private(page_secret_path(data_dir), secret.encode("ascii"))
    return secret


def read_page_secret(data_dir: Path) -> str | None:
    """The running server's page secret, or None when there is none to read."""
    try:
        return page_secret_path(data_dir).read_text(encoding="ascii").strip() or None
    except (OSError, UnicodeDecodeError):
        return None
