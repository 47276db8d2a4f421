"""The mixed Chinese/English tokenizer."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from xtyserver.memory.tokenize import approx_tokens, tokenize


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


def test_approx_tokens_counts_cjk_chars_and_latin_words() -> None:
    assert approx_tokens("称呼：小明 likes fishing") == 4 + 2


@given(st.text(max_size=200))
def test_tokenizer_never_yields_empty_or_whitespace_tokens(text: str) -> None:
    for token in tokenize(text):
        assert token and token.strip() == token and len(token) <= len(text)
