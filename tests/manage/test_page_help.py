"""The page's help for a player who asks for it (Debian's chromium, the real server).

Which mod is connected now (a real adapter connection with a save name), the
「复制诊断信息」 button (version, OS, the 测试连接 table and the last log lines,
with no key, token, path or user name in it, though the log has all four), and
importing an export file on the page (merged, what was there kept).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests import browser
from tests.conftest import NO_GRACE, TOKEN, Harness, chat, running
from tests.manage.test_browser import css, ready, wait
from tests.manage.test_http import Page
from xtyserver import __version__
from xtyserver.clock import ManualClock
from xtyserver.memory.export import encode_document
from xtyserver.memory.sqlite.store import MemoryStore
from xtyserver.memory.types import NewEvent, Scope

pytestmark = [
    pytest.mark.anyio,
    pytest.mark.skipif(browser.find() is None, reason=browser.MISSING),
]
KEY = "sk-diagnostics-never-0123456789abcdef"
USER = "xiaoming-player"
WINDOWS_PATH = rf"C:\Users\{USER}\AppData\Local\XiaoTangYuan\profiles\default"


def seed_log(data: Path) -> None:
    """A player's log as the console writes it (JSON lines), with what must not be copied."""
    logs = data / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    lines = [
        {"timestamp": "2026-12-07T07:00:00Z", "level": "info", "event": "server.listening"},
        {"event": "keys.stored_in_file", "level": "warning", "path": str(data / "model-key")},
        {"event": "model.failed", "level": "warning", "detail": f"Incorrect API key: {KEY}"},
        {"event": "adapter.refused", "level": "info", "reason": f"bad token {TOKEN}"},
        {"event": "store.opened", "level": "info", "where": WINDOWS_PATH, "user": USER},
        {"event": "turn.done", "level": "info", "ms": 812},
    ]
    text = "\n".join(json.dumps(line, ensure_ascii=False) for line in lines) + "\n"
    (logs / "xtyserver.log").write_text(text, encoding="utf-8")


def export_file(folder: Path) -> Path:
    """An export document of another PC's store: one memory of a save this one lacks."""
    with MemoryStore.open_profile(folder / "old-pc", "default", clock=ManualClock(1e9)) as store:
        scope = Scope("dont-starve-together", "world-9")
        store.upsert_event(scope, NewEvent("decision", "基地", "基地建在猪王旁边，靠近池塘"), 1e9)
        doc = store.export()
    path = folder / "小汤圆记忆-全部.json"
    path.write_bytes(encode_document(doc))
    return path


def backup_file(folder: Path) -> Path:
    """What ``xtyserver memory backup`` wrote on another PC: a store with one ONI memory."""
    with MemoryStore.open_profile(folder / "old-pc-2", "default", clock=ManualClock(1e9)) as store:
        scope = Scope("oxygen-not-included", "colony-7")
        store.upsert_event(scope, NewEvent("goal", "水", "先造水筛再扩建基地"), 1e9)
        path = folder / "小汤圆备份.sqlite"
        store.backup(path)
    return path


def drive(h: Harness, exported: Path) -> str:
    with browser.chromium() as d:
        d.get(h.server.ui_link)
        ready(d, "memory")
        wait(d, lambda d: "现在连着：星露谷物语（阳光农场）" in css(d, "#connected")[0].text)

        # Import another PC's export: merged, shown, nothing here lost.
        before = len(css(d, "li.event"))
        d.execute_script("document.getElementById('import-file').hidden = false")
        css(d, "#import-file")[0].send_keys(str(exported))
        wait(d, lambda d: css(d, "#status")[0].text.startswith("已导入 1 条记忆"))
        wait(d, lambda d: len(css(d, "li.event")) == before + 1)
        assert (
            "基地建在猪王旁边" in css(d, 'article.game[data-game="dont-starve-together"]')[0].text
        )
        not_export = exported.with_name("notes.json")
        not_export.write_text('{"hello": 1}', encoding="utf-8")
        css(d, "#import-file")[0].send_keys(str(not_export))
        wait(d, lambda d: "不是小汤圆的记忆文件" in css(d, "#status")[0].text)
        assert len(css(d, "li.event")) == before + 1

        # The .sqlite copy `xtyserver memory backup` wrote: merged the same way.
        css(d, "#import-file")[0].send_keys(str(exported.with_name("小汤圆备份.sqlite")))
        wait(d, lambda d: len(css(d, "li.event")) == before + 2)
        assert css(d, "#status")[0].text.startswith("已导入 1 条记忆")
        oni = css(d, 'article.game[data-game="oxygen-not-included"]')[0].text
        assert "先造水筛再扩建基地" in oni and "基地建在猪王旁边" in css(d, "main")[0].text

        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        css(d, "#s-test")[0].click()
        wait(d, lambda d: d.execute_script("return document.body.dataset.doctor") in ("ok", "fail"))
        css(d, "#s-diagnostics")[0].click()
        box = css(d, "#s-diagnostics-text")[0]
        wait(d, lambda d: box.is_displayed() and box.get_attribute("value"))
        return str(box.get_attribute("value"))


async def test_connected_line_diagnostics_without_secrets_and_import(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("USERNAME", USER)  # Windows' variable: this PC's user name
    data = tmp_path / "data"
    seed_log(data)
    exported = export_file(tmp_path)
    backup_file(tmp_path)
    async with running(data, model=False) as h:
        page = Page(h)
        await page.open()
        await page.post("settings", changes={"model.base_url": h.fake.base_url, "model.model": "m"})
        await page.post("key", apiKey=KEY)
        identity = {"gameId": "stardew-valley", "saveId": "farm-a", "saveName": "阳光农场"}
        async with h.adapter(identity=identity):
            text = await anyio.to_thread.run_sync(drive, h, exported)
    assert text.startswith(f"xtyserver {__version__} · "), text
    assert "能连上" in text and "最近的日志" in text
    assert "server.listening" in text and "turn.done" in text and "ms=812" in text
    for secret in (KEY, TOKEN, USER, str(data), str(tmp_path), WINDOWS_PATH, str(Path.home())):
        assert secret not in text, secret
    print(text)


def test_the_log_tail_reads_json_lines_only(tmp_path: Path) -> None:
    from xtyserver.manage.diagnostics import diagnostics

    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "xtyserver.log").write_text(
        'Traceback (most recent call last):\n  File "/home/x/a.py"\n{"event": "ok"}\n',
        encoding="utf-8",
    )
    got: dict[str, Any] = diagnostics(tmp_path)
    assert got["log"] == ["ok"] and got["version"] == __version__
    assert diagnostics(tmp_path / "none")["log"] == []


def drive_stats(link: str) -> dict[str, Any]:
    """游玩统计 on a 390 px phone: before any price, then with prices typed on 设置."""
    seen: dict[str, Any] = {}
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        d.set_window_size(390, 1200)
        css(d, "#tab-stats")[0].click()
        ready(d, "stats")
        seen["before"] = [c.text for c in css(d, "#stats-tokens tr:nth-child(2) td")]
        seen["note"] = css(d, "#cost-note")[0].text
        # Nothing runs off the phone: no table wider than its box, no cell past the screen.
        seen["overflow"] = d.execute_script(
            "const w = window.innerWidth; return [...document.querySelectorAll("
            "'#stats-view table.stats')].filter((t) => t.scrollWidth > t.parentElement.clientWidth"
            " || [...t.querySelectorAll('td')].some((c) => c.getBoundingClientRect().right > w))"
            ".map((t) => t.id)"
        )
        seen["labels"] = d.execute_script(
            "return getComputedStyle(document.querySelector('#stats-saves td'), '::before').content"
        )
        browser.screenshot(d, "ui-stats-cost-390.png", 390)

        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        css(d, "#s-price-input")[0].send_keys("1000")
        css(d, "#s-price-output")[0].send_keys("3000")
        css(d, "#s-save")[0].click()
        wait(d, lambda d: css(d, "#status")[0].text.startswith("已保存"))
        wait(d, lambda d: len(css(d, "#paired-keys tr")) >= 2)  # drawn by its first poll
        seen["paired_overflow"] = d.execute_script(
            "const t = document.getElementById('paired-keys');"
            "const right = Math.max(...[...t.querySelectorAll('th, td')]"
            ".map((c) => c.getBoundingClientRect().right));"
            "return t.scrollWidth > t.parentElement.clientWidth || right > window.innerWidth"
        )
        css(d, "#tab-stats")[0].click()
        ready(d, "stats")
        seen["after"] = [c.text for c in css(d, "#stats-tokens tr:nth-child(2) td")]
        seen["priced_note"] = css(d, "#cost-note")[0].text
    return seen


async def test_stats_fit_a_phone_and_show_the_days_cost_in_yuan(tmp_path: Path) -> None:
    # No grace: the turn's jobs are queued at once, so waiting for them sees every token they
    # spend (with the grace a job could start after the wait and change the day's figures
    # between the page's API and its table).
    async with running(tmp_path / "data", overrides=NO_GRACE) as h:
        identity = {"gameId": "stardew-valley", "saveId": "farm-a", "saveName": "阳光农场"}
        async with h.adapter(identity=identity) as ws:
            _, done = await chat(ws, "今天去钓鱼")
            assert done["type"] == "chat.done", done
        # The turn's extraction and the closed session's summary spend tokens too: wait
        # until the server has seen the close, then for its memory jobs.
        with anyio.fail_after(30):
            await h.server.wait_connections(at_most=0)
            await h.server.memory.wait_idle()
        page = Page(h)
        await page.open()
        view = await page.get("view")
        rows = view["stats"]["tokens"]
        prompt = sum(r["promptTokens"] for r in rows)
        completion = sum(r["completionTokens"] for r in rows)
        assert len({r["date"] for r in rows}) == 1 and prompt > 0 and completion > 0, rows
        seen = await anyio.to_thread.run_sync(drive_stats, h.server.ui_link)
    assert seen["overflow"] == [] and seen["paired_overflow"] is False, seen
    assert seen["labels"] == '"游戏"', seen  # each stacked cell says its column
    assert seen["before"][2:4] == [str(prompt), str(completion)] and seen["before"][4] == "—"
    assert "在「设置」里填上服务商的价格" in seen["note"], seen
    yuan = (prompt * 1000 + completion * 3000) / 1e6
    assert seen["after"][4] == f"¥{yuan:.2f}", (seen, yuan)
    assert "¥1000" in seen["priced_note"] and "¥3000" in seen["priced_note"], seen


def drive_own_words(link: str) -> dict[str, str]:
    with browser.chromium() as d:
        d.get(link)
        ready(d, "settings")  # no model yet: the page opens on 设置
        seen = {
            "tab": css(d, "#tab-stats")[0].text,
            "memory": css(d, "#tab-memory")[0].text,
            "page": d.find_element("tag name", "body").text,
            "test": css(d, "#s-test")[0].text,
            "preset": d.execute_script(
                "const s = document.getElementById('s-preset');"
                "return s.options[s.selectedIndex].text"
            ),
            "other": d.execute_script(
                "return document.querySelector('#s-preset option[value=other]').text"
            ),
        }
        css(d, "#lang")[0].click()
        ready(d, "settings")
        seen["tab_en"] = css(d, "#tab-stats")[0].text
    return seen


async def test_the_player_words_the_page_through_the_config_file(tmp_path: Path) -> None:
    """``[console.page_texts.zh]`` in the TOML file: the page says the player's words."""
    from tests.cli.test_windows import Serve

    config = tmp_path / "xty.toml"
    config.write_text(
        "[server]\nport = 0\n"
        '[console.page_texts.zh]\ntabStats = "我玩了多久"\n"tabMemory.x" = "不该出现"\n'
        'noSuchText = "不该出现"\n'
        '"presetName.other" = "别的服务"\ntestConnection = "试一试</script>"\n'
        'chartOf = "函数文本不被替换"\n'
        '[console.page_texts.en]\ntabStats = "My play time"\n',
        encoding="utf-8",
    )
    server = Serve(tmp_path / "data", "--no-browser", "--config", str(config))
    try:
        seen = await anyio.to_thread.run_sync(drive_own_words, server.link)
    finally:
        server.stop()
    assert seen["tab"] == "我玩了多久" and seen["tab_en"] == "My play time", seen
    assert seen["test"] == "试一试</script>", seen  # shown as typed, never run
    assert seen["preset"] == "— 请选择服务商 —" and seen["other"] == "别的服务", seen
    assert seen["memory"] == "记忆" and "不该出现" not in seen["page"], seen  # no such text
