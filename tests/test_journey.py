"""A new player's first hour, walked end to end on real parts (docs/players.md "玩家指南").

The wheel installed into a fresh venv (tests/wheel_env.py); its ``xtyserver``
started with no arguments, a headless Chromium as ``BROWSER``
(tests/handed_browser.py), the scripted model on loopback. The player sees the
first-run 设置 page, saves a provider, tests the connection; a mod connects
(the Python adapter client and the C# reference client on Mono) and chats; the
memory the model formed shows on the page, is deleted there and brought back;
Ctrl+C stops the server with the C# client connected; the next start opens the
page again, on the memory tab. Screenshots go to tests/artifacts/journey-*.png;
the time from ``xtyserver`` to the page ready and the shutdown time are printed.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import anyio
import pytest

from tests import browser, handed_browser
from tests.adapter.games import csharp_game, until
from tests.adapter.mono import CSHARP, NO_MONO, NO_MONO_REASON, compile_cs
from tests.manage.test_browser import css, wait
from tests.manage.test_first_run import ZH_NOTE
from tests.manage.test_page import choose
from tests.wheel_env import InstalledWheel, player_env
from xtyserver.adapter import AdapterClient, AdapterInfo, ChatDone, Identity
from xtyserver.serve.instance import InstanceLock, read_server_file
from xtyserver.testing import FakeModelServer, Reply

pytestmark = [
    pytest.mark.slow,
    pytest.mark.anyio,
    pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals"),
    pytest.mark.skipif(browser.find() is None, reason=browser.MISSING),
    pytest.mark.skipif(NO_MONO, reason=NO_MONO_REASON),
]
PORTS = (8765, 8766)  # what `xtyserver` with no arguments listens on: the mods' and the page's
READY = "return document.body.dataset.ready"
STOP_BOUND = 10.0  # seconds from Ctrl+C to the process gone
SAID = "我要完成鱼缸收集包"
FORMED = "完成鱼缸收集包"
FARM_CS = "5qerlvpodf25qawmxprrvkd4qe"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def taken_ports() -> list[int]:
    """The default ports something on this machine already listens on."""
    taken = []
    for port in PORTS:
        with socket.socket() as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                taken.append(port)
    return taken


class Console:
    """A started command's console window: its lines as they come, and its process."""

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path) -> None:
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            args,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=cwd,
            encoding="utf-8",
            errors="replace",
        )
        self.lines: list[str] = []
        self.seen: list[float] = []  # when each line came, in seconds from the start
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.seen.append(time.monotonic() - self.started)
            self.lines.append(line.rstrip("\n"))

    async def expect(self, text: str) -> str:
        """The first line holding ``text``, once printed."""
        await until(lambda: any(text in line for line in self.lines))
        return next(line for line in self.lines if text in line)

    def when(self, text: str) -> float:
        """Seconds from the start to the first line holding ``text``."""
        return next(t for t, line in zip(self.seen, self.lines, strict=False) if text in line)

    async def interrupt(self) -> float | None:
        """Ctrl+C; the seconds until the process ended, None if not within STOP_BOUND."""
        sent = time.monotonic()
        self.proc.send_signal(signal.SIGINT)
        with anyio.move_on_after(STOP_BOUND):
            await until(lambda: self.proc.poll() is not None, timeout=STOP_BOUND + 1)
            return time.monotonic() - sent
        return None

    def end(self) -> None:
        """Kill it if it still runs (the test failed before its Ctrl+C)."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)

    @property
    def output(self) -> str:
        return "\n".join(self.lines)


def ended(seconds: float | None) -> str:
    return f"ended in {seconds:.2f} s" if seconds is not None else f"running after {STOP_BOUND} s"


def settings_page(tab: handed_browser.Tab, model_url: str) -> list[Path]:
    """The first-run 设置 page: a provider saved (the scripted model), the connection tested."""
    d = tab._driver
    shots = [tab.screenshot("journey-1-first-run.png", 800)]
    note = css(d, "#s-first-run")[0]
    assert note.is_displayed() and note.text.startswith(ZH_NOTE), note.text
    choose(d, "#s-preset", "other")
    for field, value in (("#s-base-url", model_url), ("#s-model", "xty-fake-1")):
        css(d, field)[0].clear()
        css(d, field)[0].send_keys(value)
    css(d, "#s-save")[0].click()
    wait(d, lambda d: css(d, "#status")[0].text == "已保存，下一轮对话起生效。")
    assert not css(d, "#s-first-run")[0].is_displayed()

    css(d, "#s-test")[0].click()
    wait(d, lambda d: d.execute_script("return document.body.dataset.doctor") in ("ok", "fail"))
    rows = {
        r.get_attribute("data-check"): [c.text for c in r.find_elements("tag name", "td")]
        for r in css(d, "table.doctor-route tr[data-check]")
    }
    assert rows["reachable"][:2] == ["能连上", "通过"], rows
    assert rows["streaming"][1] == "通过", rows
    assert "xty-fake-1" in css(d, "table.doctor-route caption")[0].text
    shots.append(tab.screenshot("journey-2-connection-tested.png", 800))
    return shots


def delete_and_undo(tab: handed_browser.Tab, event_id: int) -> list[Path]:
    """The memory the model formed, on the memory tab; deleted, then brought back by 撤销."""
    d = tab._driver
    item = f'li.event[data-event-id="{event_id}"]'
    css(d, "#tab-memory")[0].click()
    wait(d, lambda d: css(d, f"{item} .summary"))
    assert css(d, f"{item} .summary")[0].text == FORMED
    shots = [tab.screenshot("journey-3-memory.png", 800)]
    css(d, f"{item} button.delete")[0].click()
    wait(d, lambda d: d.execute_script("return document.getElementById('confirm').open"))
    assert css(d, "#confirm-trash")[0].text == "删除后 24 小时内可以在回收站恢复。"
    css(d, "#confirm-yes")[0].click()
    wait(d, lambda d: css(d, "#undo"))
    assert not css(d, item)
    shots.append(tab.screenshot("journey-4-deleted.png", 800))
    css(d, "#undo")[0].click()
    wait(d, lambda d: css(d, item))
    assert css(d, "#status")[0].text == "已恢复 1 条记忆。"
    return shots


def extraction_answer() -> Reply:
    """What the scripted model answers the extraction job of the player's turn."""
    answer = {
        "profile": None,
        "events": [{"kind": "goal", "subject": "鱼缸", "summary": FORMED, "importance": 4}],
    }
    # Only the extraction request holds the player's words after "玩家说：".
    return Reply(text=json.dumps(answer, ensure_ascii=False), match=f"玩家说：\n{SAID}")


class Journey:
    """The player's machine: the installed command, its data folder, the browser it hands pages."""

    def __init__(self, tmp: Path, wheel: InstalledWheel, handed: handed_browser.Handed) -> None:
        self.tmp = tmp
        self.handed = handed
        self.data = tmp / "小汤圆 data"
        self.env = player_env(
            tmp / "home", XTY_DATA_DIR=str(self.data), XTY_LANG="zh", BROWSER=str(handed.program)
        )
        # No arguments, as a shortcut starts it; where another program holds the default
        # ports, the configuration file a player would write chooses two free ones.
        self.command = [str(wheel.xtyserver)]
        port = PORTS[0]
        if taken_ports():
            port = free_port()
            config = tmp / "xtyserver.toml"
            config.write_text(f"[server]\nport = {port}\nui_port = {free_port()}\n")
            self.command += ["--config", str(config)]
        self.url = f"ws://127.0.0.1:{port}/v1"
        self.figures: list[str] = []
        self.shots: list[Path] = []

    @property
    def token(self) -> str:
        return (self.data / "token").read_text(encoding="utf-8").strip()

    async def start(self, view: str) -> tuple[Console, handed_browser.Tab]:
        """``xtyserver``; the tab it opened, once ready on ``view``; the times in figures."""
        n = len(self.handed.handed())
        console = Console(self.command, self.env, self.tmp)
        try:
            tab = await anyio.to_thread.run_sync(self.handed.tab, n)
            shown = await anyio.to_thread.run_sync(tab.wait, READY, f"page {n} ready")
            took = time.monotonic() - console.started
            await console.expect("记忆页：")
            self.figures.append(
                f"start {n + 1}: `xtyserver` to its page link on the console "
                f"{console.when('记忆页：'):.2f} s, to the page ready in the browser {took:.2f} s"
            )
            assert shown == view, console.output
        except BaseException:
            console.end()
            raise
        return console, tab

    async def stop(self, console: Console, what: str) -> None:
        """Ctrl+C: the process ends within the bound, saying so, its lock and file released."""
        took = await console.interrupt()
        self.figures.append(f"Ctrl+C {what}: {ended(took)}")
        assert took is not None, f"no exit {STOP_BOUND} s after Ctrl+C {what}:\n{console.output}"
        assert console.proc.returncode == 0, console.output
        assert console.lines[-1] == "小汤圆已停止。", console.output
        assert read_server_file(self.data) is None
        lock = InstanceLock(self.data)
        assert lock.acquire(), "server.lock still held"
        lock.release()

    async def python_mod_chats(self) -> int:
        """The Python adapter client chats; the id of the memory the model formed of it."""
        mod = AdapterClient(
            self.url,
            token=self.token,
            identity=Identity(game_id="stardew-valley", save_id="farm-a"),
            adapter=AdapterInfo(name="xty-journey", version="0.1.0"),
            timezone="Asia/Shanghai",
            timeout=10.0,
        )
        async with mod:
            done = await (await mod.chat(SAID)).result()
            assert isinstance(done, ChatDone) and done.text == f"小汤圆收到：{SAID}"

            async def formed() -> int | None:
                events = (await mod.memory()).events
                return next((e.id for e in events if e.summary == FORMED), None)

            with anyio.fail_after(30):  # the extraction runs after the reply
                while (event_id := await formed()) is None:
                    await anyio.sleep(0.1)
        return event_id


async def test_a_new_players_first_hour(
    tmp_path: Path, installed_wheel: InstalledWheel, capsys: pytest.CaptureFixture[str]
) -> None:
    probe = await anyio.to_thread.run_sync(
        compile_cs, tmp_path / "Probe.exe", CSHARP / "test" / "Probe.cs"
    )
    with handed_browser.handed("chromium", tmp_path / "browser") as handed:
        me = Journey(tmp_path, installed_wheel, handed)
        try:
            async with FakeModelServer() as fake:
                await walk(me, fake, probe)
        finally:
            with capsys.disabled():
                for line in [*me.figures, *(f"screenshot: {p}" for p in me.shots)]:
                    print(f"\n{line}", end="")
                print()


async def walk(me: Journey, fake: FakeModelServer, probe: Path) -> None:
    first, tab = await me.start("settings")  # by itself: no model yet
    try:
        await first.expect("「设置」")  # the console points at the 设置 tab
        assert "已在浏览器中打开记忆页。" in first.output
        me.shots += await anyio.to_thread.run_sync(settings_page, tab, fake.base_url)
        fake.enqueue(extraction_answer())
        event_id = await me.python_mod_chats()
        me.shots += await anyio.to_thread.run_sync(delete_and_undo, tab, event_id)

        game = csharp_game(me.tmp, probe, me.url, save=FARM_CS, name="阳光农场", token=me.token)
        async with game as farm:
            opened = await farm.expect("session open")
            farm.do("chat 今天适合钓鱼吗？")
            await farm.expect("chat end done 小汤圆收到：今天适合钓鱼吗？")
            await me.stop(first, "with the C# client connected")
            await farm.expect("[xty] closed", after=opened)

            # the next start: the page opens again, on the memory tab; the mod is back
            second, tab = await me.start("memory")
            try:
                assert [e.text for e in css(tab._driver, "li.event .summary")] == [FORMED]
                assert "「设置」" not in second.output
                shot = await anyio.to_thread.run_sync(
                    tab.screenshot, "journey-5-second-start.png", 800
                )
                me.shots.append(shot)
                await farm.expect("session open", after=opened + 1)
                farm.do("leave")
                await farm.expect("left")
                await me.stop(second, "after the mod left")
            finally:
                second.end()
    finally:
        first.end()
