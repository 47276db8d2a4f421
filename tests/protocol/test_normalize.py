"""Tests for xtyserver.protocol.normalize: the one text normaliser (v1.md "Normalisation")."""

from __future__ import annotations

import ast
import re
import sys
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property_budget import examples
from xtyserver.protocol import normalize as module
from xtyserver.protocol.normalize import is_plain, normalize

_ALL = range(sys.maxunicode + 1)
_SURROGATES = range(0xD800, 0xE000)


def _reference(text: str) -> str:
    """The definition, without the fast paths: remove invisibles, then NFKC."""
    return unicodedata.normalize("NFKC", module._REMOVE.sub("", text))


def _removed(char: str) -> bool:
    return module._REMOVE.fullmatch(char) is not None


# -- what is removed ------------------------------------------------------------------


def test_every_format_character_of_this_pythons_unicode_database_is_removed() -> None:
    missing = [
        f"U+{c:04X}" for c in _ALL if unicodedata.category(chr(c)) == "Cf" and not _removed(chr(c))
    ]
    assert missing == []


def test_control_characters_are_removed_except_whitespace() -> None:
    controls = [chr(c) for c in _ALL if unicodedata.category(chr(c)) == "Cc"]
    wrong = [f"U+{ord(c):04X}" for c in controls if _removed(c) == c.isspace()]
    assert wrong == []


@pytest.mark.parametrize(
    ("char", "name"),
    [
        ("\u200b", "zero-width space"),
        ("\u200c", "zero-width non-joiner"),
        ("\u200d", "zero-width joiner"),
        ("\u2060", "word joiner"),
        ("\ufeff", "BOM"),
        ("\u00ad", "soft hyphen"),
        ("\u202a", "LRE"),
        ("\u202b", "RLE"),
        ("\u202c", "PDF"),
        ("\u202d", "LRO"),
        ("\u202e", "RLO"),
        ("\u2066", "LRI"),
        ("\u2067", "RLI"),
        ("\u2068", "FSI"),
        ("\u2069", "PDI"),
        ("\u200e", "LRM"),
        ("\u200f", "RLM"),
        ("\u061c", "ALM"),
        ("\u115f", "Hangul choseong filler"),
        ("\u1160", "Hangul jungseong filler"),
        ("\u3164", "Hangul filler"),
        ("\uffa0", "half-width Hangul filler"),
        ("\u180e", "Mongolian vowel separator"),
        ("\u034f", "combining grapheme joiner"),
        ("\ufe0f", "variation selector 16"),
        ("\U000e0041", "tag latin capital A"),
        ("\U000e0100", "variation selector 17"),
        ("\x00", "NUL"),
        ("\x1b", "ESC"),
        ("\x7f", "DEL"),
        ("\x9b", "CSI"),
    ],
)
def test_each_invisible_character_is_removed_wherever_it_stands(char: str, name: str) -> None:
    word = "7656119"
    for at in range(len(word) + 1):
        assert normalize(word[:at] + char + word[at:]) == word, name
    assert normalize(f"鱼{char}缸") == "鱼缸", name


@pytest.mark.parametrize("char", ["\t", "\n", "\r", "\x0b", "\x0c", "\x85", " ", "\u2028"])
def test_whitespace_is_kept_as_whitespace(char: str) -> None:
    kept = normalize(f"a{char}b")
    assert len(kept) == 3
    assert kept[1].isspace()


def test_the_written_out_set_removes_only_what_it_says() -> None:
    # Every removed code point is a format or control character or a
    # default-ignorable one (unassigned ones are reserved ignorables).
    ignorable_assigned = {0x034F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0}
    ignorable_assigned |= set(range(0x180B, 0x180E)) | {0x180F}
    ignorable_assigned |= set(range(0xFE00, 0xFE10)) | set(range(0xE0100, 0xE01F0))
    odd = [
        f"U+{c:04X}"
        for c in _ALL
        if c not in _SURROGATES
        and _removed(chr(c))
        and unicodedata.category(chr(c)) not in ("Cf", "Cc", "Cn")
        and c not in ignorable_assigned
    ]
    assert odd == []


# -- what NFKC folds ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("７６５６１１９８０００００００００１", "765611980000000001"),
        ("bob＠example.com", "bob@example.com"),
        ("Ｃ：＼Ｕｓｅｒｓ＼ａｌｉｃｅ", "C:\\Users\\alice"),
        ("ｓｋ－ｐｒｏｊ－ABC", "sk-proj-ABC"),
        ("Ｆｉｓｈ Ｔａｎｋ", "Fish Tank"),
        ("全角\u3000空格", "全角 空格"),
        ("ｶﾀｶﾅ", "カタカナ"),
        ("①②", "12"),
        ("ﬁsh", "fish"),
        ("e\u200b\u0301", "\u00e9"),  # removal first, so the accent composes
        ("小汤圆，今天去钓鱼吧！鱼竿在箱子里。", "小汤圆,今天去钓鱼吧!鱼竿在箱子里。"),
        ("价格：３００ｇ（大概）？", "价格:300g(大概)?"),
        ("「好的」、《星露谷》【提示】", "「好的」、《星露谷》【提示】"),
        ("😀 好", "😀 好"),
        ("", ""),
    ],
)
def test_compatibility_forms_fold_onto_plain_ones(text: str, expected: str) -> None:
    assert normalize(text) == expected


def test_full_width_table_matches_nfkc() -> None:
    for char, ascii_char in module._TO_ASCII.items():
        assert unicodedata.normalize("NFKC", char) == ascii_char


def test_every_inert_character_is_normal_and_combines_with_nothing_before_it() -> None:
    """A text made only of inert characters is returned as it is: check the claim."""
    seconds = {0x1161 + i for i in range(21)} | {0x11A8 + i for i in range(27)}  # Hangul V, T
    for c in _ALL:
        decomposition = unicodedata.decomposition(chr(c)).split()
        if len(decomposition) == 2 and not decomposition[0].startswith("<"):
            seconds.add(int(decomposition[1], 16))
    inert = re.compile(f"[{module._INERT}]")
    bad = []
    for c in _ALL:
        char = chr(c)
        if c in _SURROGATES or not inert.fullmatch(char):
            continue
        if (
            unicodedata.combining(char)
            or unicodedata.normalize("NFKC", char) != char
            or c in seconds
            or _removed(char)
        ):
            bad.append(f"U+{c:04X}")
    assert bad == []


# -- properties -----------------------------------------------------------------------------

_INTERESTING = st.sampled_from(
    [
        *"aeAZ09 :\\/@.-_，。！？：（）\u3000鱼缸가각ｶﾞ",
        "\u0301",
        "\u0323",
        "\u0308",
        "\u1161",
        "\u11a8",
        "\u3099",
        "\u200b",
        "\u200d",
        "\u202e",
        "\u2066",
        "\ufeff",
        "\u00ad",
        "\u3164",
        "\ufe0f",
        "\x00",
        "\ufdfa",
        "\u212b",
        "\uff21",
        "\uff10",
        "\u2460",
        "\U0001d7d5",
        "\U0001f600",
        "\U000e0041",
    ]
)
_TEXTS = st.one_of(
    st.text(max_size=60),
    st.lists(_INTERESTING, max_size=40).map("".join),
)


@settings(max_examples=examples(1500))
@given(_TEXTS)
def test_normalize_equals_its_definition(text: str) -> None:
    assert normalize(text) == _reference(text)


@settings(max_examples=examples(1500))
@given(_TEXTS)
def test_normalize_is_idempotent_and_leaves_nothing_to_remove(text: str) -> None:
    once = normalize(text)
    assert normalize(once) == once
    assert module._REMOVE.search(once) is None
    assert unicodedata.is_normalized("NFKC", once)


@given(st.text(alphabet=st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=200))
def test_printable_ascii_is_returned_without_a_copy(text: str) -> None:
    assert normalize(text) is text


@given(st.text(alphabet="鱼缸社区中心的钓了。、「」가ひカabc 123", max_size=200))
def test_inert_text_is_returned_without_a_copy(text: str) -> None:
    assert is_plain(text)
    assert normalize(text) is text


@settings(max_examples=examples(1000))
@given(_TEXTS)
def test_plain_text_is_already_normal(text: str) -> None:
    if is_plain(text):
        assert normalize(text) is text


# -- the module stays pure ---------------------------------------------------------------------


def test_normalize_module_imports_nothing_but_the_standard_library_it_needs() -> None:
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = {
        alias.name.split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import)
        for alias in node.names
    } | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
    assert imported <= {"functools", "re", "unicodedata", "typing", "__future__"}
