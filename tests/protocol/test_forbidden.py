"""Tests for xtyserver.protocol.forbidden: the redaction table and its properties."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xtyserver.errors import UsageError
from xtyserver.protocol.forbidden import DEFAULT_PLACEHOLDERS, KINDS, find_forbidden, redact

# (text, kind): each must be caught, with that kind.
CAUGHT: list[tuple[str, str]] = [
    # paths
    (r"C:\Users\CanaryUser\AppData\Roaming\StardewValley\Saves", "path"),
    (r"存档在 D:\Games\Steam\steamapps\common 里", "path"),
    ("D:/SteamLibrary/steamapps/common/Stardew Valley", "path"),
    ("c:\\\\Users\\\\CanaryUser\\\\Documents", "path"),
    (r"\\fileserver\share\saves", "path"),
    ("/home/canary/.local/share/Klei/DoNotStarveTogether", "path"),
    ("/Users/canary/Library/Application Support/Steam", "path"),
    ("~/Library/Application Support/StardewValley", "path"),
    ("~canary/.config/StardewValley", "path"),
    (r"%USERPROFILE%\Documents\Klei\OxygenNotIncluded", "path"),
    (r"%appdata%\StardewValley\Saves", "path"),
    ("$HOME/.steam/steam", "path"),
    ("$env:LOCALAPPDATA\\Temp", "path"),
    ("file:///C:/Users/CanaryUser/save.xml", "path"),
    ("C%3A%5CUsers%5CCanaryUser", "path"),
    (r"log at \Users\CanaryUser\log.txt", "path"),
    ("/tmp/xtyserver/debug.log", "path"),
    ("/mnt/c/Users/canary", "path"),
    # account ids
    ("76561198012345678", "account_id"),
    ("我的Steam是76561197960287930", "account_id"),
    ("STEAM_0:1:12345678", "account_id"),
    ("[U:1:24691357]", "account_id"),
    ("steam:110000112345678", "account_id"),
    ("steamid=76561100", "account_id"),
    ("https://steamcommunity.com/id/canaryuser", "account_id"),
    # API keys
    ("sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKL", "api_key"),
    ("key is sk-proj-CANARY_1234567890abcdefghij-XYZ", "api_key"),
    ("sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv-0123456789", "api_key"),
    ("sk-0123456789abcdef0123456789abcdef", "api_key"),
    ("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9abcdef.xyz", "api_key"),
    ("AKIAIOSFODNN7EXAMPLE", "api_key"),
    ("AIzaSyA-1234567890abcdefghijklmnopqrstu", "api_key"),
    ("ghp_0123456789abcdefghijklmnopqrstuvwxyzAB", "api_key"),
    ("github_pat_11ABCDEFG0123456789_abcdefghijklmnop", "api_key"),
    ("xoxb-1234567890-abcdefghij", "api_key"),
    ("hf_abcdefghijklmnopqrstuvwxyz012345", "api_key"),
    ("sk_live_0123456789abcdefABCD", "api_key"),
    ("api_key=9f8e7d6c5b4a39281706f5e4d3c2b1a0", "api_key"),
    ('"token": "a1b2c3d4e5f6g7h8i9j0k1l2"', "api_key"),
    ("-----BEGIN RSA PRIVATE KEY-----", "api_key"),
    ("eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.dozjgNryP4J3jVmNHl0w5N", "api_key"),
    # e-mail
    ("canary.user+xty@example.com", "email"),
    ("联系我：canary@qq.com 谢谢", "email"),
    ("first.last@mail.example.co.uk", "email"),
    ("...canary@example.org", "email"),
]

# Ordinary game and chat text that must pass untouched.
CLEAN: list[str] = [
    "12345678901234567",  # 17-digit game seed not starting 7656119
    "seed 98765432109876543",
    "765611980123456789012",  # longer number that merely contains the prefix
    "1.6.14",
    "v2.0.0-beta",
    "SMAPI 4.1.10 with Stardew Valley 1.6.14",
    "(64, 15)",
    "x=12 y=-3",
    "Wood x999, Stone x42",
    "08:10",
    "12:30:45",
    "2024-05-01T12:00:00Z",
    "Spring 13, Year 2",
    "3/4",
    "1:2",
    "HP 100/150",
    "and/or",
    "Farm/Beach",
    "https://stardewvalleywiki.com/Fish",
    "https://dontstarve.fandom.com/wiki/Wilson",
    "https://oxygennotincluded.wiki.gg/wiki/Steam_Vent",
    "https://example.com/home/users/page",
    "sk",
    "sk-1",
    "the sk-8 ramp",
    "小汤圆，今天去钓鱼吧！鱼竿在箱子里。",
    "Steam: 500 kg at 120 °C",
    "Steam Vent",
    "Grade A: good",
    "50% off, 20% more",
    "@Abigail 生日快乐",
    "me@home",
    "key: Rusty Key",
    "token=abc",
    "Bearer of bad news",
    "Q: what now? A: fish",
    "C: drive is full",
    "Level 10/10, day 28",
    "~好的~",
    "/help",
]


@pytest.mark.parametrize(("text", "kind"), CAUGHT)
def test_find_forbidden_catches_each_table_entry_with_its_kind(text: str, kind: str) -> None:
    assert find_forbidden(text) == kind


@pytest.mark.parametrize(("text", "kind"), CAUGHT)
def test_redact_replaces_each_table_entry_with_its_placeholder(text: str, kind: str) -> None:
    redacted, kinds = redact(text)
    assert kinds == [kind]
    assert DEFAULT_PLACEHOLDERS[kind] in redacted
    assert find_forbidden(redacted) is None


@pytest.mark.parametrize("text", CLEAN)
def test_find_forbidden_passes_ordinary_game_text(text: str) -> None:
    assert find_forbidden(text) is None


@pytest.mark.parametrize("text", CLEAN)
def test_redact_leaves_ordinary_game_text_unchanged(text: str) -> None:
    assert redact(text) == (text, [])


def test_tables_are_at_least_as_large_as_the_issue_asks() -> None:
    assert len(CAUGHT) >= 30
    assert len(CLEAN) >= 20
    assert {kind for _, kind in CAUGHT} == set(KINDS)


def test_redact_removes_the_whole_path_including_the_user_name() -> None:
    text = r"存档：C:\Users\CanaryUser\AppData\Roaming\StardewValley\Saves\Farm_123 好的"
    redacted, kinds = redact(text)
    assert redacted == "存档：[已隐去:路径] 好的"
    assert kinds == ["path"]


def test_redact_follows_a_path_across_spaces_when_more_segments_follow() -> None:
    redacted, _ = redact(r"C:\Program Files (x86)\Steam\steamapps\common is where")
    assert redacted == "[已隐去:路径] is where"


def test_redact_keeps_the_surrounding_sentence_and_reports_kinds_in_order() -> None:
    text = "我的邮箱 a@b.io 和密钥 sk-proj-abcdefghijklmnop1234 还有 76561198000000001"
    redacted, kinds = redact(text)
    assert redacted == "我的邮箱 [已隐去:邮箱] 和密钥 [已隐去:密钥] 还有 [已隐去:账号]"
    assert kinds == ["email", "api_key", "account_id"]


def test_redact_catches_an_item_hidden_behind_an_adjacent_match() -> None:
    # The e-mail starts right after the key, so its look-behind fails until the
    # key has been replaced: the second pass must catch it.
    redacted, kinds = redact("sk-abcdefghijklmnopqrstuv%canary@example.com")
    assert find_forbidden(redacted) is None
    assert "canary" not in redacted
    assert kinds == ["api_key", "email"]


def test_redact_uses_custom_placeholders_when_given() -> None:
    custom = {"path": "<PATH>", "account_id": "<ID>", "api_key": "<KEY>", "email": "<MAIL>"}
    assert redact("see /home/bob/x and bob@x.org", placeholders=custom) == (
        "see <PATH> and <MAIL>",
        ["path", "email"],
    )


def test_redact_refuses_a_placeholder_that_is_itself_forbidden() -> None:
    bad = {**DEFAULT_PLACEHOLDERS, "path": "C:\\x"}
    with pytest.raises(UsageError):
        redact("hello", placeholders=bad)


def test_redact_refuses_placeholders_missing_a_kind() -> None:
    with pytest.raises(UsageError):
        redact("hello", placeholders={"path": "<P>"})


# Text built from table fragments, clean text and separators, so that matches
# abut each other and ordinary words in every order.
_FRAGMENTS = st.sampled_from([t for t, _ in CAUGHT] + CLEAN)
_GLUE = st.sampled_from(
    ["", " ", "\n", "，", ".", "%", "/", "\\", ":", "=", "-", "_", "@", "~", "a"]
)
_MIXED = st.lists(st.tuples(_GLUE, _FRAGMENTS), max_size=8).map(
    lambda parts: "".join(glue + frag for glue, frag in parts)
)
_TEXT = st.one_of(st.text(max_size=200), _MIXED)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
def test_redacted_text_never_contains_a_forbidden_match(text: str) -> None:
    redacted, kinds = redact(text)
    assert find_forbidden(redacted) is None
    assert bool(kinds) == (find_forbidden(text) is not None)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
def test_redaction_is_idempotent(text: str) -> None:
    once, _ = redact(text)
    assert redact(once) == (once, [])


# Adversarial inputs of 100 KB aimed at each pattern's quantifiers. A regex
# that backtracks catastrophically takes minutes on these; a linear one takes
# milliseconds. The bound is generous so a slow CI machine does not flake.
_SIZE = 100_000
_ADVERSARIAL = [
    "a" * _SIZE,
    "a." * (_SIZE // 2),
    "a@" * (_SIZE // 2),
    "a@a." * (_SIZE // 4),
    "\\" * _SIZE,
    "\\\\a" * (_SIZE // 3),
    "/" * _SIZE,
    "/home" * (_SIZE // 5),
    "~/" * (_SIZE // 2),
    "C:" * (_SIZE // 2),
    "C:\\ a" * (_SIZE // 5),
    "%APPDATA%" * (_SIZE // 9),
    "7" * _SIZE,
    "7656119" * (_SIZE // 7),
    "STEAM_0:1:" * (_SIZE // 10),
    "sk-" * (_SIZE // 3),
    "-" * _SIZE,
    "key=" * (_SIZE // 4),
    "key=a" * (_SIZE // 5),
    "token: " + "a" * _SIZE,
    "bearer " * (_SIZE // 7),
    "eyJ" * (_SIZE // 3),
    "eyJaaaaaaaaa." * (_SIZE // 13),
    "AKIA" * (_SIZE // 4),
    "x@a-" * (_SIZE // 4),
    "x@" + "a." * (_SIZE // 2),
    "[U:1:" * (_SIZE // 5),
    " " * _SIZE,
    "汤" * _SIZE,
]


@pytest.mark.parametrize("text", _ADVERSARIAL, ids=lambda t: repr(t[:12]))
def test_scan_and_redact_stay_fast_on_100kb_adversarial_input(text: str) -> None:
    started = time.perf_counter()
    find_forbidden(text)
    redact(text)
    assert time.perf_counter() - started < 2.0


@settings(max_examples=30, deadline=None)
@given(st.text(alphabet="aZ0.@:/\\~%-_= k", min_size=1, max_size=8), st.integers(1, 2000))
def test_scan_stays_fast_on_generated_repetitive_input(unit: str, repeat: int) -> None:
    text = (unit * (_SIZE // len(unit) // repeat + 1))[:_SIZE]
    started = time.perf_counter()
    redact(text)
    assert time.perf_counter() - started < 2.0


@settings(max_examples=2000, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from([text for text, _ in CAUGHT]),
            st.sampled_from(CLEAN),
            st.text(max_size=40),
        ),
        max_size=4,
    ).map(" ".join)
)
def test_trigger_prefilter_never_hides_a_match(text: str) -> None:
    """The cheap prefilter is a superset of the full scan: skipping it is never wrong."""
    from xtyserver.protocol.forbidden import _COMBINED, _TRIGGER

    if _COMBINED.search(text) is not None:
        assert _TRIGGER.search(text) is not None
