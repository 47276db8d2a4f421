"""The CLI's tests run with a data folder path of Chinese characters and spaces, stdout in GBK.

``tmp_path`` is overridden (tests/unusual_paths.py); ``tests.cli.test_main.env_for``
sets ``PYTHONIOENCODING=gbk`` for every ``python -m xtyserver`` it starts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unusual_paths import unusual


@pytest.fixture
def tmp_path(tmp_path: Path) -> Path:
    return unusual(tmp_path)
