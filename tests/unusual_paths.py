"""A data folder whose path holds Chinese characters and spaces.

Chinese Windows user names put such characters into ``%LOCALAPPDATA%``; the
CLI's and the store's tests all run under one (their ``tmp_path`` is overridden
with this folder by their conftest).
"""

from __future__ import annotations

from pathlib import Path

FOLDER = "小汤圆 数据 (测试)"


def unusual(tmp_path: Path) -> Path:
    path = tmp_path / FOLDER
    path.mkdir(exist_ok=True)
    return path
