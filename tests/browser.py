"""Debian's chromium, headless, under Selenium with the system chromedriver (no download)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("XTY_TEST_ARTIFACTS", ROOT / "tests" / "artifacts"))
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--window-size=1280,1600",
    "--lang=zh-CN",
)


def find() -> tuple[str, str] | None:
    """The browser and its driver, or None when either is missing."""
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (browser, driver) if browser and driver else None


MISSING = (
    "browser tests skipped: no chromium and chromedriver on PATH "
    "(Debian: apt-get install chromium chromium-driver; .ci/run installs them)"
)


@contextmanager
def chromium() -> Iterator[Any]:
    """A fresh headless chromium (own profile folder) under Selenium; quit on exit."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    found = find()
    assert found is not None, MISSING
    browser, driver_path = found
    with tempfile.TemporaryDirectory(prefix="xty-chromium-") as profile:
        options = Options()
        options.binary_location = browser
        for flag in (*FLAGS, f"--user-data-dir={profile}"):
            options.add_argument(flag)
        driver = webdriver.Chrome(options=options, service=Service(executable_path=driver_path))
        try:
            driver.set_page_load_timeout(30)
            yield driver
        finally:
            driver.quit()


def screenshot(driver: Any, name: str, width: int = 1280) -> Path:
    """Save the whole page, ``width`` CSS pixels wide, as ``ARTIFACTS/name`` (PNG); its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / name
    driver.set_window_size(width, 900)
    height = driver.execute_script("return document.documentElement.scrollHeight")
    driver.set_window_size(width, max(900, min(int(height) + 40, 4000)))
    assert driver.save_screenshot(str(path))
    return path
