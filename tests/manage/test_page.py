"""The page a player wants to open, in a real browser against the real server.

Debian's chromium, headless, under Selenium (skipped with the reason where it is
missing). Readable game and save names everywhere, a layout from 390 px to 1280
px (screenshots in ``tests/artifacts/`` or ``$XTY_TEST_ARTIFACTS``, paths
printed), search and filters, the per-save timeline by in-game day, export as a
download, the keyboard and screen-reader labels, Chinese first and English one
click away, and nothing loaded from anywhere else.
"""

from __future__ import annotations

import re
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests import browser
from tests.conftest import Harness, running
from tests.manage.test_browser import css, ready, wait
from tests.manage.ui_fixtures import MINUTE_BEATS, NAMED, fill_named
from xtyserver.clock import ManualClock
from xtyserver.memory.export import decode_document
from xtyserver.memory.game_names import GAME_NAMES
from xtyserver.memory.types import Scope

UI = Path(__file__).resolve().parents[2] / "xtyserver" / "manage" / "ui"
FARM_ID = "5e7196e16e72300361c63bc7"
RAW_IDS = (
    FARM_ID,
    "a1b2c3d4e5f6a7b8",
    "stardew-valley",
    "dont-starve-together",
    "oxygen-not-included",
)
WIDTHS = (390, 800, 1280)

browser_only = pytest.mark.skipif(browser.find() is None, reason=browser.MISSING)


def shown(d: Any) -> int:
    return int(d.execute_script("return Number(document.body.dataset.shown)"))


def search(d: Any, text: str) -> int:
    box = css(d, "#search")[0]
    box.clear()
    if text:
        box.send_keys(text)
    else:
        d.execute_script("document.getElementById('search').dispatchEvent(new Event('input'))")
    return shown(d)


def choose(d: Any, select: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(css(d, select)[0]).select_by_value(value)


def downloaded(folder: Path, prefix: str) -> Path:
    """The finished download whose name starts with ``prefix``."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        done = [p for p in folder.iterdir() if p.name.startswith(prefix) and p.suffix == ".json"]
        if done:
            return done[0]
        time.sleep(0.1)
    raise AssertionError(f"no download {prefix}* in {sorted(p.name for p in folder.iterdir())}")


def drive(h: Harness, link: str, downloads: Path) -> list[Path]:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    shots: list[Path] = []
    with browser.chromium() as d:
        d.execute_cdp_cmd(
            "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)}
        )
        d.get(link)
        ready(d, "memory")
        total = sum(len(h.store.load_scope(s)) for s in h.store.list_scopes())
        assert total == 8 and shown(d) == 8

        # -- readable names: games, saves, the unnamed save by a short id; no raw id shown
        assert [e.text for e in css(d, "article.game h3")] == ["饥荒联机版", "缺氧", "星露谷物语"]
        heads = {e.text for e in css(d, "section.save h4")}
        assert heads == {"阳光农场", "未命名存档 · a1b2c3", "绿洲殖民地"}
        page = d.find_element(By.TAG_NAME, "main").text
        assert not [raw for raw in RAW_IDS if raw in page], page

        # ... in the statistics tables and the charts too
        css(d, "#tab-stats")[0].click()
        ready(d, "stats")
        saves = [
            [c.text for c in r.find_elements(By.TAG_NAME, "td")[:2]]
            for r in css(d, "#stats-saves tr")[1:]
        ]
        assert sorted(saves) == sorted(
            [
                ["星露谷物语", "阳光农场"],
                ["饥荒联机版", "未命名存档 · a1b2c3"],
                ["缺氧", "绿洲殖民地"],
            ]
        )
        games = {r.find_elements(By.TAG_NAME, "td")[0].text for r in css(d, "#stats-games tr")[1:]}
        assert games == {"星露谷物语", "饥荒联机版", "缺氧"}
        assert {e.text for e in css(d, ".chart-box figcaption")} == games
        page = d.find_element(By.TAG_NAME, "main").text
        assert not [raw for raw in RAW_IDS if raw in page], page
        # each chart: a time axis (0, half, the most), dates under it, each day's value as text
        for box in css(d, ".chart-box"):
            bars = box.find_elements(By.CSS_SELECTOR, "rect.bar")
            axis = [t.text for t in box.find_elements(By.CSS_SELECTOR, "text.axis")]
            assert len(axis) == 3 and axis[0] == "0" and all(a.endswith(" 分") for a in axis[1:])
            assert len(box.find_elements(By.CSS_SELECTOR, "text.date")) == 3
            values = box.find_elements(By.CSS_SELECTOR, ".chart-values li")
            assert len(values) == len(bars) >= 1
            assert all(re.fullmatch(r"\d{1,2}-\d\d：\d+ 小时 \d+ 分", v.text) for v in values)
        zone = d.execute_script("return Intl.DateTimeFormat().resolvedOptions().timeZone")
        assert f"（{zone}）" in css(d, "#zone-note")[0].text
        main = d.find_element(By.TAG_NAME, "main").text
        assert not re.search(r"[\u4e00-\u9fff]:", main), main  # full-width colons in Chinese
        for width in WIDTHS:
            shots.append(browser.screenshot(d, f"ui-stats-{width}.png", width))
            assert d.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth"
            ), width
            if width == 390:  # the dates under a chart are read at 11 px or more
                sizes = d.execute_script(
                    "return [...document.querySelectorAll('svg.chart text')]"
                    ".map((t) => t.getBoundingClientRect().height)"
                )
                assert min(sizes) >= 10.9, sizes
        css(d, "#lang")[0].click()
        ready(d, "stats")
        for width in WIDTHS:
            shots.append(browser.screenshot(d, f"ui-stats-en-{width}.png", width))
        lasts = [r.find_elements(By.TAG_NAME, "td")[-1].text for r in css(d, "#stats-saves tr")[1:]]
        assert all(re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", t) for t in lasts), lasts
        css(d, "#lang")[0].click()
        ready(d, "stats")
        css(d, "#tab-memory")[0].click()
        ready(d, "memory")

        # ... and in the delete dialog; Escape (the keyboard) cancels it and nothing goes
        oni = h.store.load_scope(next(s for s in h.store.list_scopes() if s.save_id == "colony-a"))
        item = oni[0]
        css(d, f'li.event[data-event-id="{item.id}"] button.delete')[0].click()
        wait(d, lambda d: d.execute_script("return document.getElementById('confirm').open"))
        assert [p.text for p in css(d, "#confirm .preview-events li")] == [
            f"缺氧 / 绿洲殖民地：{item.summary}"
        ]
        focused = d.switch_to.active_element
        assert focused.get_attribute("id") == "confirm-no"  # the safe button has the focus
        focused.send_keys(Keys.ESCAPE)
        wait(d, lambda d: not d.execute_script("return document.getElementById('confirm').open"))
        assert len(h.store.load_scope(item.scope)) == 2

        # -- the timeline by in-game day, beside the list when there is room
        farm = f'section.save[data-save="{FARM_ID}"]'
        days = [e.get_attribute("data-day") for e in css(d, f"{farm} aside.timeline li.day")]
        assert days == ["3", "12"]
        for day in days:
            assert len(css(d, f'{farm} aside.timeline li.day[data-day="{day}"] li')) == 2
        assert [e.get_attribute("data-day") for e in css(d, "aside.timeline li.day")] == [
            "5",
            "40",
            "3",
            "12",
        ]
        assert css(d, f"{farm} li.event .day")[0].text in ("第 3 天", "第 12 天")

        # -- layout at 390, 800 and 1280 px (screenshots), 360 and 1920 px too: nothing
        # sideways, summaries readable, the timeline beside the list or below it
        for width in (360, *WIDTHS, 1920):
            if width in WIDTHS:
                shots.append(browser.screenshot(d, f"ui-memory-{width}.png", width))
            else:
                d.set_window_size(width, 1200)
            inner = d.execute_script("return window.innerWidth")
            assert inner == width, (inner, width)  # the page really is this wide
            assert d.execute_script(
                "return document.documentElement.scrollWidth <= window.innerWidth"
            ), width
            widths = d.execute_script(
                "return [...document.querySelectorAll('li.event .summary')]"
                ".map((e) => e.getBoundingClientRect().width)"
            )
            assert len(widths) == 8 and min(widths) >= min(250, inner * 0.6), (width, widths)
            lists = d.execute_script(
                f"const s = document.querySelector('{farm}');"
                "const a = s.querySelector('ul.events').getBoundingClientRect();"
                "const b = s.querySelector('aside.timeline').getBoundingClientRect();"
                "return [a.right, b.left, a.bottom, b.top];"
            )
            beside = lists[1] >= lists[0] - 1
            below = lists[3] >= lists[2] - 1
            assert beside if width >= 900 else below, (width, lists)

        # -- search by words, either language, labels of either language, case and width folded
        assert search(d, "温室") == 1
        assert [e.text for e in css(d, "li.event .summary")] == ["温室已经修好"]
        assert search(d, "water sieve") == 1
        assert search(d, "ＷＡＴＥＲ") == 1  # full-width capitals find it too
        assert search(d, "目标 缺氧") == 1  # a kind and a game, in Chinese
        assert search(d, "goal stardew") == 2  # the same labels in English
        assert search(d, "第 12 天") == 2
        assert search(d, "阳光农场 矿洞") == 1
        assert search(d, "abigail") == 1  # a search key (the glossary's English name)
        assert css(d, "li.event .tags")[0].text.split() == ["阿比盖尔", "Abigail"]
        assert search(d, "没有这个词") == 0
        assert css(d, "#games p.empty")[0].text == "没有符合条件的记忆。"
        assert search(d, "") == 8

        # -- filters: game (the save list follows), save, kind, status
        choose(d, "#f-game", "oxygen-not-included")
        assert shown(d) == 2
        options = [o.text for o in css(d, "#f-save option")]
        assert options == ["全部存档", "缺氧 / 绿洲殖民地"]
        choose(d, "#f-kind", "goal")
        assert shown(d) == 1
        choose(d, "#f-status", "done")
        assert shown(d) == 0
        css(d, "#f-clear")[0].click()
        assert shown(d) == 8
        choose(d, "#f-save", f"stardew-valley/{FARM_ID}")
        assert shown(d) == 4 and {e.text for e in css(d, "section.save h4")} == {"阳光农场"}
        choose(d, "#f-kind", "event")
        assert shown(d) == 2
        css(d, "#f-clear")[0].click()

        # -- export one save and everything, as downloads an import reads back
        css(d, f"{farm} button.export-save")[0].click()
        one = decode_document(downloaded(downloads, "小汤圆记忆-星露谷物语-阳光农场").read_bytes())
        assert {(e.game_id, e.save_id) for e in one.events} == {("stardew-valley", FARM_ID)}
        assert len(one.events) == 4 and [n.name for n in one.save_names] == ["阳光农场"]
        assert one.sessions and all(s.save_id == FARM_ID for s in one.sessions)
        css(d, "#export-all")[0].click()
        everything = decode_document(downloaded(downloads, "小汤圆记忆-全部-").read_bytes())
        assert len(everything.events) == 8 and len(everything.save_names) == 2
        wait(d, lambda d: css(d, "#status")[0].text.startswith("已导出："))

        # -- the keyboard: Tab reaches the search box, typing filters, Tab reaches the item's
        # buttons, Enter opens the dialog
        d.find_element(By.TAG_NAME, "body").click()
        d.execute_script("document.activeElement.blur(); window.scrollTo(0, 0)")
        for _ in range(60):
            d.switch_to.active_element.send_keys(Keys.TAB)
            if d.switch_to.active_element.get_attribute("id") == "search":
                break
        else:
            raise AssertionError("Tab never reached the search box")
        d.switch_to.active_element.send_keys("温室")
        assert shown(d) == 1
        farm_items = h.store.load_scope(Scope("stardew-valley", FARM_ID))
        greenhouse = next(e for e in farm_items if e.summary == "温室已经修好")
        for _ in range(40):
            d.switch_to.active_element.send_keys(Keys.TAB)
            if "温室" in (d.switch_to.active_element.accessible_name or "") and (
                d.switch_to.active_element.get_attribute("class") == "delete"
            ):
                break
        else:
            raise AssertionError("Tab never reached the item's delete button")
        assert d.switch_to.active_element.accessible_name == f"删除：{greenhouse.subject}"
        d.switch_to.active_element.send_keys(Keys.ENTER)
        wait(d, lambda d: d.execute_script("return document.getElementById('confirm').open"))
        d.switch_to.active_element.send_keys(Keys.ESCAPE)
        wait(d, lambda d: not d.execute_script("return document.getElementById('confirm').open"))
        search(d, "")

        # -- every control has a name a screen reader reads; an item's buttons say which item
        names = {}
        for control in css(d, "button, input, select, a[href]"):
            if not control.is_displayed():
                continue
            name = control.accessible_name
            assert name and name.strip(), control.get_attribute("outerHTML")[:120]
            names.setdefault(name, 0)
            names[name] += 1
        item_buttons = [b.accessible_name for b in css(d, "li.event button.delete")]
        assert len(set(item_buttons)) == len(item_buttons) == 8
        assert css(d, "aside.timeline")[0].get_attribute("aria-label").endswith("的时间线")

        # -- English one click away: the same names in English, search still both languages
        css(d, "#lang")[0].click()
        ready(d, "memory")
        assert d.execute_script("return document.documentElement.lang") == "en"
        assert [e.text for e in css(d, "article.game h3")] == [
            "Don't Starve Together",
            "Oxygen Not Included",
            "Stardew Valley",
        ]
        assert "Unnamed save · a1b2c3" in {e.text for e in css(d, "section.save h4")}
        assert search(d, "鱼缸") == 1 and search(d, "目标") == 4 and search(d, "Day 40") == 2
        search(d, "")
        for width in WIDTHS:
            shots.append(browser.screenshot(d, f"ui-memory-en-{width}.png", width))
        css(d, "#lang")[0].click()
        ready(d, "memory")
        assert css(d, "h1")[0].text == "小汤圆的记忆"

        # -- nothing loaded from anywhere but this server, no web fonts
        origin = d.execute_script("return location.origin")
        loaded = d.execute_script(
            "return performance.getEntriesByType('resource').map((e) => e.name)"
        )
        assert loaded and all(u.startswith(origin + "/") for u in loaded), loaded
        assert d.execute_script("return document.fonts.size") == 0
    return shots


@pytest.mark.anyio
@browser_only
async def test_the_page_a_player_wants_to_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        await fill_named(h)
        with tempfile.TemporaryDirectory(prefix="xty-downloads-") as folder:
            shots = await anyio.to_thread.run_sync(drive, h, h.server.ui_link, Path(folder))
    with capsys.disabled():
        for path in shots:
            print(f"\nscreenshot: {path}")


def test_the_page_loads_nothing_from_elsewhere() -> None:
    """No address, font, import or CDN in the page's files: only its own four files."""
    for path in UI.iterdir():
        text = path.read_text(encoding="utf-8")
        addresses = set(re.findall(r"(?:https?:)?//[\w.-]+\.\w+", text))
        # The texts name addresses for the player to type (examples), which nothing fetches.
        examples = {"https://api.example.com", "https://api.deepseek.com"}
        shown = examples if path.name == "i18n.js" else set()
        assert addresses <= {"http://www.w3.org"} | shown, (path.name, addresses)
        assert "@import" not in text and "@font-face" not in text and "url(" not in text


def test_the_page_names_games_as_the_server_does() -> None:
    """The Chinese game names of i18n.js are the server's (xtyserver/memory/game_names.py)."""
    text = (UI / "i18n.js").read_text(encoding="utf-8")
    zh = text[text.index("\n  zh: {") : text.index("\n  en: {")]
    names = dict(re.findall(r'"([a-z-]+)": "([^"]+)"', zh[zh.index("gameName") :].split("}")[0]))
    assert names == GAME_NAMES
    for game in NAMED:
        assert game[1] in names


def drive_trash(h: Harness, link: str) -> list[Path]:
    from selenium.webdriver.common.by import By

    farm = Scope("stardew-valley", FARM_ID)
    colony = Scope("oxygen-not-included", "colony-a")
    shots: list[Path] = []
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        css(d, "#tab-trash")[0].click()
        ready(d, "trash")
        assert css(d, "#trash li.empty")[0].text == "回收站是空的。"
        assert "24 小时" in css(d, "#trash-note")[0].text
        css(d, "#tab-memory")[0].click()
        ready(d, "memory")

        # delete one item: the dialog says it can come back, the status offers an undo
        item = h.store.load_scope(colony)[0]
        css(d, f'li.event[data-event-id="{item.id}"] button.delete')[0].click()
        wait(d, lambda d: d.execute_script("return document.getElementById('confirm').open"))
        assert css(d, "#confirm-trash")[0].text == "删除后 24 小时内可以在回收站恢复。"
        css(d, "#confirm-yes")[0].click()
        wait(d, lambda d: css(d, "#undo"))
        assert css(d, "#status")[0].text.startswith("已删除。24 小时内可以在回收站恢复。")
        assert [e.id for e in h.store.load_scope(colony)] != [] and item.id not in [
            e.id for e in h.store.load_scope(colony)
        ]
        css(d, "#undo")[0].click()
        wait(d, lambda d: css(d, f'li.event[data-event-id="{item.id}"]'))
        assert css(d, "#status")[0].text == "已恢复 1 条记忆。"
        assert item.summary in {e.summary for e in h.store.load_scope(colony)}

        # clear a whole save: the trash lists it by readable names, Restore brings it back
        before = {e.summary for e in h.store.load_scope(farm)}
        css(d, f'section.save[data-save="{FARM_ID}"] button.clear-save')[0].click()
        wait(d, lambda d: d.execute_script("return document.getElementById('confirm').open"))
        css(d, "#confirm-yes")[0].click()
        wait(d, lambda d: css(d, "#undo"))
        assert h.store.load_scope(farm) == []
        h.clock.advance(3600)  # an hour later
        css(d, "#tab-trash")[0].click()
        ready(d, "trash")
        entries = css(d, "li.trash-entry")
        assert len(entries) == 1
        head = entries[0].find_element(By.CSS_SELECTOR, "h3").text
        assert head == "整个存档 · 星露谷物语 / 阳光农场"
        assert "还可恢复 23 小时 0 分" in entries[0].text
        listed = {li.text for li in entries[0].find_elements(By.CSS_SELECTOR, "ul.trash-items li")}
        assert listed == {f"星露谷物语 / 阳光农场：{s}" for s in before}
        button = entries[0].find_element(By.CSS_SELECTOR, "button.restore")
        assert button.accessible_name == f"恢复：{head}"
        shots.append(browser.screenshot(d, "ui-trash-390.png", 390))
        shots.append(browser.screenshot(d, "ui-trash-1280.png", 1280))
        button.click()
        wait(d, lambda d: css(d, "#trash li.empty"))
        assert {e.summary for e in h.store.load_scope(farm)} == before

        # English
        css(d, "#lang")[0].click()
        ready(d, "trash")
        assert css(d, "#tab-trash")[0].text == "Trash"
        css(d, "#tab-memory")[0].click()
        ready(d, "memory")
        css(d, f'li.event[data-event-id="{item.id}"] button.delete')[0].click()
        wait(d, lambda d: d.execute_script("return document.getElementById('confirm').open"))
        css(d, "#confirm-yes")[0].click()
        wait(d, lambda d: css(d, "#undo"))
        css(d, "#tab-trash")[0].click()
        ready(d, "trash")
        assert "restorable for 24 h 0 min" in css(d, "li.trash-entry")[0].text

        # The next morning the page session (12 h) has ended, the trash (24 h) has not: the
        # page says how to open it again, and a new link restores from the trash.
        h.clock.advance(13 * 3600)
        css(d, "#tab-memory")[0].click()
        ready(d, "locked")
        assert css(d, "#status")[0].text.startswith("This memory page's session has ended")
        # a new link (`xtyserver ui --print`) pasted into the same tab: only its fragment changes
        d.get(anyio.from_thread.run_sync(lambda: h.server.ui_link))
        ready(d, "memory")
        css(d, "#tab-trash")[0].click()
        ready(d, "trash")
        (entry,) = css(d, "li.trash-entry")
        assert "restorable for 11 h 0 min" in entry.text
        entry.find_element(By.CSS_SELECTOR, "button.restore").click()
        wait(d, lambda d: css(d, "#trash li.empty"))
        assert item.summary in {e.summary for e in h.store.load_scope(colony)}
    return shots


@pytest.mark.anyio
@browser_only
async def test_the_trash_with_restore(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        await fill_named(h)
        shots = await anyio.to_thread.run_sync(drive_trash, h, h.server.ui_link)
    with capsys.disabled():
        for path in shots:
            print(f"\nscreenshot: {path}")


def drive_no_trash(h: Harness, link: str) -> None:
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        item = h.store.load_scope(Scope("oxygen-not-included", "colony-a"))[0]
        css(d, f'li.event[data-event-id="{item.id}"] button.delete')[0].click()
        wait(d, lambda d: d.execute_script("return document.getElementById('confirm').open"))
        assert css(d, "#confirm-trash")[0].text == "回收站已关闭：删除后无法恢复。"
        css(d, "#confirm-yes")[0].click()
        wait(d, lambda d: css(d, "#status")[0].text == "已删除。")
        assert not css(d, "#undo")
        css(d, "#tab-trash")[0].click()
        ready(d, "trash")
        assert css(d, "#trash-note")[0].text.startswith("回收站已关闭")


@pytest.mark.anyio
@browser_only
async def test_with_the_trash_off_the_page_says_a_delete_is_final(tmp_path: Path) -> None:
    overrides = {**MINUTE_BEATS, "memory.trash_hours": 0}
    async with running(tmp_path, clock=ManualClock(), overrides=overrides) as h:
        await fill_named(h)
        await anyio.to_thread.run_sync(drive_no_trash, h, h.server.ui_link)


KEY = "sk-test-abcdef1234567890"


def drive_settings(h: Harness, link: str) -> list[Path]:
    from selenium.webdriver.common.by import By

    shots: list[Path] = []
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        presets = [o.text for o in css(d, "#s-preset option")]
        # Nothing chosen at first: a key pasted before a provider is refused by name.
        assert presets[0] == "— 请选择服务商 —" and presets[1] == "DeepSeek"
        assert presets[-1] == "其他 OpenAI 兼容服务"
        assert "本机 Ollama" in presets and "豆包（火山方舟）" in presets
        # a preset fills the form; a text-only chat model shows the vision model's fields
        choose(d, "#s-preset", "deepseek")
        assert css(d, "#s-base-url")[0].get_attribute("value") == "https://api.deepseek.com/v1"
        assert css(d, "#s-model")[0].get_attribute("value") == "deepseek-chat"
        assert not css(d, "#s-vision")[0].is_selected()
        assert css(d, "#s-vision-model")[0].is_displayed()
        # another OpenAI-compatible server (the scripted one), a model that sees, a key
        choose(d, "#s-preset", "other")
        for field, value in (("#s-base-url", h.fake.base_url), ("#s-model", "fake-vl2")):
            css(d, field)[0].clear()
            css(d, field)[0].send_keys(value)
        css(d, "#s-vision")[0].click()
        assert not css(d, "#s-vision-model")[0].is_displayed()
        css(d, "#s-key")[0].send_keys(KEY)
        css(d, "#s-budget")[0].send_keys("200000")
        css(d, "#s-trash")[0].clear()
        css(d, "#s-trash")[0].send_keys("48")
        d.execute_script("document.getElementById('status').textContent = ''")
        css(d, "#s-save")[0].click()
        wait(d, lambda d: css(d, "#status")[0].text == "已保存，下一轮对话起生效。")
        # taken for the next turn, no restart; the key never comes back to the page
        assert h.server.model.routing.chat.model == "fake-vl2"
        assert h.server.model.routing.chat.base_url == h.fake.base_url
        told = h.server.sessions.session_settings  # what the next session is told
        assert told.daily_budget.tokens == 200_000
        assert h.server.memory.trash_window == 48 * 3600
        assert "sk-…7890" in css(d, "#s-key-status")[0].text
        assert css(d, "#s-key")[0].get_attribute("value") == ""
        assert KEY not in d.page_source
        answer = d.execute_script(
            "return fetch('api/settings', {headers: {'X-XTY-CSRF': sessionStorage.getItem("
            "'xty-csrf')}}).then((r) => r.text())"
        )
        assert "sk-…7890" in answer and KEY not in answer
        stored = (h.settings.data_path / "settings.json").read_text(encoding="utf-8")
        assert "fake-vl2" in stored and KEY not in stored
        assert h.server.ui.settings is not None
        assert h.server.ui.settings.player.keys.get() == KEY
        shots.append(browser.screenshot(d, "ui-settings-390.png", 390))

        # 测试连接: the model check's table, in Chinese
        css(d, "#s-test")[0].click()
        wait(d, lambda d: d.execute_script("return document.body.dataset.doctor") in ("ok", "fail"))
        rows = css(d, "table.doctor-route tr[data-check]")
        assert [r.get_attribute("data-check") for r in rows][:3] == [
            "reachable",
            "model",
            "streaming",
        ]
        first = rows[0].find_elements(By.TAG_NAME, "td")
        assert first[0].text == "能连上" and first[1].text in ("通过", "失败", "注意", "跳过")
        assert css(d, "table.doctor-route caption")[0].text.startswith("聊天")
        assert "fake-vl2" in css(d, "table.doctor-route caption")[0].text
        # ... its "seen" and "what to change" columns too (the doctor's codes, the page's texts)
        cells = doctor_cells(d)
        # one row, no contradiction: the one model answers, whatever name is set
        assert cells["model"] == [
            "服务只有一个模型 xty-fake-1：填的名字不在列表里，也会由它回答",
            "",
        ]
        assert cells["tools"] == [
            "模型没有调用工具就回答了",
            "记忆工具（“你记得我什么”）需要会调用工具的模型",
        ]
        assert cells["json_mode"] == ["接受了，但回答不是 JSON 对象", ""]
        assert re.fullmatch(r"回答了 \d+ 个字符", cells["streaming"][0])
        assert re.fullmatch(r"\d+ 毫秒后收到第一个字", cells["latency"][0])
        shots.append(browser.screenshot(d, "ui-settings-1280.png", 1280))

        # the companion: name, persona, reply language, automatic shared memory
        css(d, "#s-name")[0].clear()
        css(d, "#s-name")[0].send_keys("汤圆")
        css(d, "#s-persona")[0].send_keys("温柔、爱种地的小伙伴")
        choose(d, "#s-language", "en")
        css(d, "#s-auto-shared")[0].click()
        d.execute_script("document.getElementById('status').textContent = ''")
        css(d, "#s-save-companion")[0].click()
        wait(d, lambda d: css(d, "#status")[0].text == "已保存，下一轮对话起生效。")
        profile = h.store.get_profile()
        assert profile.companion_name == "汤圆"
        assert profile.companion_persona == "温柔、爱种地的小伙伴"
        assert profile.language == "en" and profile.auto_shared is False

        # every control of the view has a name a screen reader reads
        for control in css(d, "#settings-view button, #settings-view input, #settings-view select"):
            if control.is_displayed():
                assert (control.accessible_name or "").strip(), control.get_attribute("id")
        css(d, "#lang")[0].click()
        ready(d, "settings")
        assert css(d, "#tab-settings")[0].text == "Settings"
        assert "sk-…7890" in css(d, "#s-key-status")[0].text
        texts = [o.text for o in css(d, "#s-language option")]
        assert texts[:3] == ["Same as the player", "中文", "English"], texts
        # the model check's table follows the language, the page's own English
        cells = doctor_cells(d)
        assert cells["model"] == [
            "the server has one model, xty-fake-1: it answers whatever name is set",
            "",
        ]
        assert cells["tools"] == [
            "the model answered without calling the tool",
            'memory tools ("what do you remember about me") need a model that calls tools',
        ]
        assert re.fullmatch(r"first token after \d+ ms", cells["latency"][0])
        assert css(d, "table.doctor-route th")[2].text == "Seen"
    return shots


def doctor_cells(d: Any) -> dict[str, list[str]]:
    """The doctor table's "seen" and "what to change" cells by check name."""
    from selenium.webdriver.common.by import By

    return {
        r.get_attribute("data-check"): [c.text for c in r.find_elements(By.TAG_NAME, "td")[2:]]
        for r in css(d, "table.doctor-route tr[data-check]")
    }


@pytest.mark.anyio
@browser_only
async def test_settings_in_the_browser(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        shots = await anyio.to_thread.run_sync(drive_settings, h, h.server.ui_link)
    with capsys.disabled():
        for path in shots:
            print(f"\nscreenshot: {path}")


def drive_pinned(h: Harness, link: str) -> None:
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        css(d, "#tab-settings")[0].click()
        ready(d, "settings")
        assert not css(d, "#s-model")[0].is_enabled()
        assert css(d, "#s-model")[0].get_attribute("value") == "env-model"
        note = css(d, '[data-pin="model.model"]')[0].text
        assert note.startswith("由环境变量设置，优先于本页")
        assert not css(d, "#s-key")[0].is_enabled()
        assert css(d, "#s-key-status")[0].text == "来自环境变量 XTY_MODEL_API_KEY：sk-…5678"
        assert "sk-env-abcdefgh5678" not in d.page_source
        assert css(d, "#s-base-url")[0].is_enabled()  # what no variable sets stays editable


@pytest.mark.anyio
@browser_only
async def test_settings_pinned_by_the_environment_say_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XTY_MODEL", "env-model")
    monkeypatch.setenv("XTY_MODEL_API_KEY", "sk-env-abcdefgh5678")
    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        await anyio.to_thread.run_sync(drive_pinned, h, h.server.ui_link)


def drive_names(link: str) -> None:
    with browser.chromium() as d:
        d.get(link)
        ready(d, "memory")
        [name] = css(d, 'section.save[data-save="world-a"] li.name')
        assert name.text.startswith("小暖 → 暖石")
        css(d, "li.name button.forget-name")[0].click()
        wait(d, lambda d: css(d, "#status")[0].text.startswith("已删除叫法：小暖"))
        assert not css(d, "li.name")


@pytest.mark.anyio
@browser_only
async def test_the_players_own_names_show_under_their_save_and_delete(tmp_path: Path) -> None:
    world = Scope("dont-starve-together", "world-a")
    async with running(tmp_path, clock=ManualClock()) as h:
        h.store.learn_alias(world, "小暖", "暖石", h.clock.now())
        await anyio.to_thread.run_sync(drive_names, h.server.ui_link)
        assert h.store.aliases(world) == []
