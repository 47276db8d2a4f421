"""The mixed Chinese/English tokenizer."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtyserver.memory.tokenize import approx_tokens, token_spans, tokenize
from xtyserver.protocol.normalize import normalize


def test_tokenizer_splits_chinese_into_overlapping_bigrams() -> None:
    assert tokenize("社区中心") == ["社区", "区中", "中心"]
    assert tokenize("鱼") == ["鱼"]


def test_tokenizer_lowercases_stems_and_drops_english_stop_words() -> None:
    assert tokenize("The Fish Tank bundles, berries!") == ["fish", "tank", "bundle", "berry"]


def test_tokenizer_separates_mixed_runs() -> None:
    assert tokenize("参加fishing比赛2次") == ["参加", "fishing", "比赛", "2", "次"]


def test_query_words_are_found_as_tokens_of_the_sentence() -> None:
    doc = set(tokenize("计划先完成社区中心的鱼缸收集包"))
    assert set(tokenize("社区中心")) <= doc
    assert set(tokenize("鱼缸")) <= doc


def test_full_width_words_are_the_plain_words() -> None:
    assert tokenize("Ｆｉｓｈ Ｔａｎｋ") == tokenize("fish tank") == ["fish", "tank"]
    assert tokenize("ＦＩＳＨ　ＴＡＮＫＳ！") == ["fish", "tank"]


@pytest.mark.parametrize("gap", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_an_invisible_character_does_not_split_a_chinese_bigram_or_a_word(gap: str) -> None:
    assert tokenize(f"鱼{gap}缸") == ["鱼缸"]
    assert tokenize(f"社区{gap}中心") == tokenize("社区中心")
    assert tokenize(f"fi{gap}sh") == ["fish"]


def test_token_spans_index_the_normalised_text() -> None:
    text = "Ｆｉｓｈ鱼\u200b缸"
    spans = list(token_spans(text))
    assert spans == [(0, 4, "fish"), (4, 6, "鱼缸")]
    assert [normalize(text)[a:b].lower() for a, b, _ in spans] == ["fish", "鱼缸"]


def test_approx_tokens_counts_cjk_chars_and_latin_words() -> None:
    assert approx_tokens("称呼：小明 likes fishing") == 4 + 2


@given(st.text(max_size=200))
def test_tokenizer_never_yields_empty_or_whitespace_tokens(text: str) -> None:
    # NFKC may lengthen the text (one ligature can become several letters).
    for token in tokenize(text):
        assert token and token.strip() == token and len(token) <= len(normalize(text))


@given(st.text(max_size=200))
def test_a_text_and_its_normal_form_tokenize_alike(text: str) -> None:
    assert tokenize(text) == tokenize(normalize(text))
