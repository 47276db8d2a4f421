"""The console's language and lines (``xtyserver/cli/say.py``)."""

from __future__ import annotations

import pytest

from xtyserver.cli.say import CATALOG, Say, cells, console_language, os_language, table
from xtyserver.config import ConsoleSettings
from xtyserver.errors import UsageError


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({"LANG": "zh_CN.UTF-8"}, "zh"),
        ({"LANG": "zh_TW.UTF-8"}, "zh"),
        ({"LANG": "en_US.UTF-8"}, "en"),
        ({"LANG": "de_DE.UTF-8"}, "en"),
        ({"LC_ALL": "en_GB.UTF-8", "LANG": "zh_CN.UTF-8"}, "en"),  # LC_ALL first
        ({"LC_ALL": "", "LANG": "zh_CN.UTF-8"}, "zh"),  # an empty one does not count
        ({"LANG": "C.UTF-8"}, "zh"),  # no language chosen: the product's own
        ({"LANG": "POSIX"}, "zh"),
        ({}, "zh"),
    ],
)
def test_the_os_language_is_read_from_the_locale_variables(
    environ: dict[str, str], expected: str
) -> None:
    assert os_language(environ, platform="linux") == expected


def test_xty_lang_wins_over_the_setting_and_the_setting_over_the_os() -> None:
    zh_os = {"LANG": "zh_CN.UTF-8"}
    assert console_language(ConsoleSettings(), zh_os, "linux") == "zh"
    assert console_language(ConsoleSettings(language="en"), zh_os, "linux") == "en"
    assert console_language(ConsoleSettings(language="en"), {**zh_os, "XTY_LANG": "zh-CN"}) == "zh"
    assert console_language(ConsoleSettings(), {"XTY_LANG": "EN"}, "linux") == "en"


def test_every_line_exists_in_both_languages_and_can_be_replaced() -> None:
    assert set(CATALOG["zh"]) == set(CATALOG["en"])
    say = Say(ConsoleSettings(texts={"zh": {"opened": "页面开好啦"}}), "zh")
    assert say("opened") == "页面开好啦"
    assert "设置" in say("not_configured")  # the first run points at the Settings tab
    assert "Settings" in Say(ConsoleSettings(), "en")("not_configured")
    with pytest.raises(UsageError, match=r"console\.texts\.zh\.opend"):
        Say(ConsoleSettings(texts={"zh": {"opend": "typo"}}), "zh")


def test_cells_count_wide_characters_twice_and_combining_marks_not_at_all() -> None:
    assert cells("farm") == 4
    assert cells("阳光农场") == 8
    assert cells("ＡＢ") == 4  # full-width
    assert cells("e\u0301") == 1
    rows = table(["名字", "天数"], [["阳光农场", "12"], ["a", "3"]], (False, True)).splitlines()
    assert rows == ["名字      天数", "阳光农场    12", "a" + " " * 12 + "3"]
    assert {cells(r) for r in rows} == {14}
