"""A real browser as ``BROWSER``: what a command hands the browser is what it opens.

:func:`handed` writes a small program that Python's ``webbrowser`` runs (it
honours ``BROWSER``) with the one argument a command hands it. The program
starts Debian's headless ``chromium`` or ``firefox-esr`` on that argument, each
call with its own fresh profile folder, and returns at once, as a desktop
browser does. The test then looks into the opened tab through the browser's
own debugging port (Chromium: DevTools, with chromedriver attached to it;
Firefox: Marionette, spoken here directly, as there is no geckodriver), takes
screenshots, quits it gracefully (so it writes its history) and searches its
profile folder.
"""

from __future__ import annotations

import base64
import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests import browser

KINDS = ("chromium", "firefox")
WAIT = 30.0
FIREFOX_PREFS = {
    "marionette.port": 0,  # a free port, written to MarionetteActivePort
    "browser.shell.checkDefaultBrowser": False,
    "browser.startup.homepage_override.mstone": "ignore",
    "datareporting.policy.dataSubmissionEnabled": False,
    "toolkit.telemetry.reportingpolicy.firstRun": False,
    "app.normandy.enabled": False,
    "browser.aboutwelcome.enabled": False,
    "intl.accept_languages": "zh-CN, zh, en",
}


def missing(kind: str) -> str | None:
    """Why ``kind`` cannot run here, or None."""
    if kind == "chromium":
        return None if browser.find() else browser.MISSING
    return None if shutil.which("firefox-esr") else "no firefox-esr on PATH"


def _command(kind: str) -> list[str]:
    """The browser's command line, its profile folder as ``PROFILE`` (the URL goes last)."""
    if kind == "chromium":
        found = browser.find()
        assert found is not None, browser.MISSING
        flags = [f for f in browser.FLAGS if not f.startswith("--window-size")]
        return [
            found[0],
            *flags,
            "--window-size=1280,900",
            "--remote-debugging-port=0",  # a free port, written to DevToolsActivePort
            "--user-data-dir=PROFILE",
        ]
    return ["firefox-esr", "--headless", "--marionette", "--no-remote", "--profile", "PROFILE"]


PROGRAM = """#!{python}
import json, os, subprocess, sys, time
at = time.time()
calls = {calls!r}
n = len(open(calls).readlines()) if os.path.exists(calls) else 0
profile = os.path.join({profiles!r}, str(n))
os.makedirs(profile)
command = json.loads({command!r}.replace("PROFILE", profile))
if {kind!r} == "firefox":
    open(os.path.join(profile, "user.js"), "w").write({prefs!r})
child = subprocess.Popen(command + sys.argv[1:], stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         start_new_session=True)
with open(calls, "a") as f:
    f.write(json.dumps({{"argv": sys.argv[1:], "pid": child.pid, "profile": profile,
                        "at": at}}) + "\\n")
"""


class Marionette:
    """Just enough of Firefox's remote protocol: length-prefixed JSON commands."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
        self.buffer = b""
        self.serial = 0
        self._read()  # the greeting: {"applicationType": "gecko", "marionetteProtocol": 3}
        self.command("WebDriver:NewSession", {"capabilities": {"alwaysMatch": {}}})

    def _read(self) -> Any:
        while b":" not in self.buffer:
            self.buffer += self._recv()
        size, _, rest = self.buffer.partition(b":")
        while len(rest) < int(size):
            rest += self._recv()
        self.buffer = rest[int(size) :]
        return json.loads(rest[: int(size)])

    def _recv(self) -> bytes:
        data = self.sock.recv(65536)
        if not data:
            raise ConnectionError("marionette closed")
        return data

    def command(self, name: str, params: dict[str, Any] | None = None) -> Any:
        self.serial += 1
        data = json.dumps([0, self.serial, name, params or {}]).encode()
        self.sock.sendall(str(len(data)).encode() + b":" + data)
        while True:
            _, serial, failed, result = self._read()
            if serial == self.serial:
                if failed:
                    raise RuntimeError(f"{name}: {failed}")
                return result


class Tab:
    """The tab a handed browser opened: run script in it, screenshot it, quit it."""

    def __init__(self, kind: str, profile: Path, pid: int) -> None:
        self.kind = kind
        self.profile = profile
        self.pid = pid
        self._driver: Any = None
        self._marionette: Marionette | None = None
        name = "DevToolsActivePort" if kind == "chromium" else "MarionetteActivePort"
        port_file = profile / name
        _until(lambda: port_file.exists() and port_file.read_text().strip(), f"{name} written")
        port = int(port_file.read_text().split()[0])
        if kind == "chromium":
            from selenium import webdriver
            from selenium.webdriver.chrome.options import Options
            from selenium.webdriver.chrome.service import Service

            found = browser.find()
            assert found is not None
            options = Options()
            options.debugger_address = f"127.0.0.1:{port}"
            self._driver = webdriver.Chrome(
                options=options, service=Service(executable_path=found[1])
            )
        else:
            self._marionette = _until(lambda: _marionette(port), "marionette answers")

    def run(self, script: str) -> Any:
        """``script`` (a function body that returns) in the tab."""
        if self._driver is not None:
            return self._driver.execute_script(script)
        assert self._marionette is not None
        got = self._marionette.command("WebDriver:ExecuteScript", {"script": script, "args": []})
        return got["value"]

    def wait(self, script: str, what: str) -> Any:
        """Until ``script`` returns something true; that."""

        def ask() -> Any:
            try:
                return self.run(script)
            except Exception:
                return None

        return _until(ask, what)

    def screenshot(self, name: str, width: int) -> Path:
        """The whole page ``width`` CSS pixels wide as ``tests/artifacts/name``."""
        browser.ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = browser.ARTIFACTS / name
        if self._driver is not None:
            self._driver.set_window_size(width, 900)
            return browser.screenshot(self._driver, name, width)
        assert self._marionette is not None
        self._marionette.command("WebDriver:SetWindowRect", {"width": width, "height": 900})
        shot = self._marionette.command("WebDriver:TakeScreenshot", {"full": True})
        path.write_bytes(base64.b64decode(shot["value"]))
        return path

    def quit(self) -> None:
        """Close the browser as a player would, so it writes its profile (history) out."""
        self.close()
        self.reap()

    def close(self) -> None:
        """Ask the browser to quit as a player would (:meth:`reap` waits for it)."""
        with contextlib.suppress(Exception):  # the browser went away while answering
            if self._driver is not None:
                self._driver.execute_cdp_cmd("Browser.close", {})
            elif self._marionette is not None:
                self._marionette.command("Marionette:Quit", {"flags": ["eAttemptQuit"]})

    def reap(self) -> None:
        """Wait (bounded) for the closed browser to end."""
        _reap(self.pid)

    def profile_files_holding(self, text: str) -> list[str]:
        """The profile's files whose bytes hold ``text`` (the history, caches, sessions)."""
        needle = text.encode()
        return [
            str(p.relative_to(self.profile))
            for p in self.profile.rglob("*")
            if p.is_file() and needle in p.read_bytes()
        ]


class Handed:
    """The ``BROWSER`` program and what it was handed."""

    def __init__(self, kind: str, root: Path) -> None:
        self.kind = kind
        self.calls = root / "calls.jsonl"
        self.program = root / f"{kind}-browser"
        profiles = root / "profiles"
        profiles.mkdir(parents=True)
        prefs = "".join(
            f"user_pref({json.dumps(k)}, {json.dumps(v)});\n" for k, v in FIREFOX_PREFS.items()
        )
        command = _command(kind)
        self.program.write_text(
            PROGRAM.format(
                python=sys.executable,
                calls=str(self.calls),
                profiles=str(profiles),
                command=json.dumps(command),
                kind=kind,
                prefs=prefs,
            ),
            encoding="utf-8",
        )
        self.program.chmod(0o755)
        self.tabs: list[Tab] = []

    def handed(self) -> list[dict[str, Any]]:
        if not self.calls.exists():
            return []
        return [json.loads(line) for line in self.calls.read_text().splitlines()]

    def tab(self, n: int) -> Tab:
        """The browser of the ``n``-th call (from 0), once it was called."""
        call = _until(lambda: len(self.handed()) > n and self.handed()[n], f"browser call {n}")
        tab = Tab(self.kind, Path(call["profile"]), int(call["pid"]))
        self.tabs.append(tab)
        return tab

    def stop(self) -> None:
        for call in self.handed():
            _reap(int(call["pid"]), force=True)


@contextmanager
def handed(kind: str, root: Path) -> Iterator[Handed]:
    """A ``BROWSER`` program for ``kind``; every browser it started is ended on leaving."""
    found = Handed(kind, root)
    try:
        yield found
    finally:
        found.stop()


def _marionette(port: int) -> Marionette | None:
    try:
        return Marionette(port)
    except OSError:
        return None


def _reap(pid: int, *, force: bool = False) -> None:
    """Wait (bounded) for a browser this test started to end; then end its process group."""
    deadline = time.monotonic() + (0 if force else 15)
    while time.monotonic() < deadline:
        try:
            done, _ = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:  # not our child (the BROWSER program started it)
            done = 0 if _alive(pid) else pid
        if done:
            return
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)  # its own session: the browser and its helpers


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie of an exited browser (its parent, the BROWSER program, is gone)
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


def _until(condition: Any, what: str) -> Any:
    deadline = time.monotonic() + WAIT
    while True:
        got = condition()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {WAIT:.0f} s for {what}")
        time.sleep(0.05)
