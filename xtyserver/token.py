"""The adapter token: 256 bits, owner-only file, constant-time checks.

See v1.md "Authentication".
"""

from __future__ import annotations

import hmac
import os
import secrets
from pathlib import Path

TOKEN_BYTES = 32  # 256 bits
TOKEN_FILE = "token"


def token_path(data_dir: Path) -> Path:
    return data_dir / TOKEN_FILE


def load_or_create(data_dir: Path, *, env_token: str | None = None) -> tuple[str, Path | None]:
    """Return the token and the file it lives in (None when it came from ``XTY_TOKEN``).

    The file is created on first start with owner-only permissions (0600 where
    the OS has them) and never rewritten except by :func:`rotate`.
    """
    if env_token:
        return env_token, None
    path = token_path(data_dir)
    try:
        token = path.read_text(encoding="ascii").strip()
        if token:
            return token, path
    except FileNotFoundError:
        pass
    return rotate(data_dir), path


def rotate(data_dir: Path) -> str:
    """Write a new random token (replacing the old one) and return it."""
    data_dir.mkdir(parents=True, exist_ok=True)
    path = token_path(data_dir)
    token = secrets.token_urlsafe(TOKEN_BYTES)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, token.encode("ascii"))
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return token


def matches(given: str | None, expected: str) -> bool:
    """Constant-time comparison; None never matches."""
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8"))
