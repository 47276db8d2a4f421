"""The token bill (pure): budget states at their edges, context budgets (the reset at
local midnight: tests/serve/test_turn_memory_cache.py, tests/test_server_tokens.py)."""

from __future__ import annotations

import pytest

from xtyserver.errors import UsageError
from xtyserver.memory.tokens import (
    MIN_CONTEXT_WINDOW,
    REPLY_TOKENS,
    SUMMARY_TOKENS,
    WINDOW_ROUNDS,
    budget_for,
    budget_state,
)


@pytest.mark.parametrize(
    ("spent", "state"),
    [(0, "ok"), (799, "ok"), (800, "low"), (999, "low"), (1000, "spent"), (5000, "spent")],
)
def test_budget_state_edges(spent: int, state: str) -> None:
    assert budget_state(spent, 1000) == state


def test_no_budget_is_always_ok_and_a_zero_budget_is_spent() -> None:
    assert budget_state(10**9, None) == "ok"
    assert budget_state(0, 0) == "spent"
    assert budget_state(0, 10, low_share=1.0) == "low"


def test_a_large_window_keeps_the_defaults_and_holds_more_memory_than_1200_chars() -> None:
    for window in (16_000, 128_000):
        b = budget_for(window)
        assert (b.window_rounds, b.summary_tokens, b.reply_tokens) == (
            WINDOW_ROUNDS,
            SUMMARY_TOKENS,
            REPLY_TOKENS,
        )
        assert b.memory_chars == (window - REPLY_TOKENS - 700) // 4


def test_a_4k_model_gets_a_smaller_window_summary_and_memory() -> None:
    small = budget_for(4096)
    assert small.window_rounds < WINDOW_ROUNDS
    assert small.summary_tokens < SUMMARY_TOKENS
    assert small.memory_chars < budget_for(16_000).memory_chars
    used = (
        small.reply_tokens
        + 700
        + small.window_rounds * 160
        + small.summary_tokens
        + small.memory_chars  # one token per character at worst
    )
    assert used <= 4096


@pytest.mark.parametrize("window", range(MIN_CONTEXT_WINDOW, 20_000, 256))
def test_every_budget_fits_its_window_and_never_grows_past_the_defaults(window: int) -> None:
    b = budget_for(window)
    used = b.reply_tokens + 700 + b.window_rounds * 160 + b.summary_tokens + b.memory_chars
    assert used <= window
    assert b.window_rounds >= 2 and b.window_rounds <= WINDOW_ROUNDS
    assert b.summary_tokens <= SUMMARY_TOKENS
    assert b.memory_chars >= 400


def test_the_smallest_window_is_accepted_and_a_smaller_one_refused() -> None:
    tiny = budget_for(MIN_CONTEXT_WINDOW)
    assert (tiny.window_rounds, tiny.summary_tokens, tiny.memory_chars) == (3, 182, 400)
    with pytest.raises(UsageError):
        budget_for(MIN_CONTEXT_WINDOW - 1)


def test_the_daily_budget_is_one_rule_for_chat_and_background_jobs() -> None:
    from xtyserver.memory.tokens import DailyBudget

    budget = DailyBudget(1000, low_share=0.2)
    assert budget.limited and not DailyBudget().limited
    # chat runs until the budget is used up, background jobs only while it is ok
    assert [budget.allows_chat(s) for s in (0, 799, 800, 999, 1000)] == [True] * 4 + [False]
    assert [budget.allows_background(s) for s in (0, 799, 800, 1000)] == [True, True, False, False]
    assert budget.allows_chat(None) and budget.allows_background(None)  # an unread bill
    assert DailyBudget().allows_background(10**12)
