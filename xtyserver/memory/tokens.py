"""The player's token bill and context budgets (pure).

Every model call's tokens are counted per local date, save and purpose in the
``token_usage`` table. :class:`DailyBudget` is the one rule of the optional
daily budget (``low``: background jobs stop; ``spent``: ``chat.send`` answers
``budget_exhausted``), reset at local midnight; the shells only count what was
spent. :func:`budget_for` fits a turn's parts to a model's context window.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from xtyserver.errors import UsageError

Purpose = Literal["chat", "extraction", "summary"]
BudgetState = Literal["ok", "low", "spent"]
DEFAULT_LOW_SHARE = 0.2


class TokenUsage(msgspec.Struct, frozen=True, rename="camel"):
    """The tokens of one save on one local date for one purpose."""

    date: str
    game_id: str
    save_id: str
    purpose: Purpose
    calls: int
    prompt_tokens: int
    completion_tokens: int

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def budget_state(
    spent: int, budget: int | None, *, low_share: float = DEFAULT_LOW_SHARE
) -> BudgetState:
    """Where today's spending stands against the daily ``budget`` (None: no budget).

    ``spent`` once ``spent >= budget``; ``low`` once what is left is at most
    ``low_share`` of the budget; otherwise ``ok``.
    """
    if budget is None:
        return "ok"
    if budget <= 0 or spent >= budget:
        return "spent"
    if budget - spent <= budget * low_share:
        return "low"
    return "ok"


class DailyBudget(msgspec.Struct, frozen=True):
    """The daily token budget and its one rule (``model.daily_token_budget``).

    Attributes:
        tokens: Tokens every call together may use per local day; None: no limit.
        low_share: Share of it left at which background jobs stop.
    """

    tokens: int | None = None
    low_share: float = DEFAULT_LOW_SHARE

    @property
    def limited(self) -> bool:
        """Whether there is a budget at all (then every turn asks what was spent)."""
        return self.tokens is not None

    def state(self, spent: int | None) -> BudgetState:
        """Where ``spent`` tokens today stand (None: not known, taken as ``ok``)."""
        if spent is None:
            return "ok"
        return budget_state(spent, self.tokens, low_share=self.low_share)

    def allows_chat(self, spent: int | None) -> bool:
        """Whether a chat turn may call the model."""
        return self.state(spent) != "spent"

    def allows_background(self, spent: int | None) -> bool:
        """Whether a background job (extraction, summaries) may call the model."""
        return self.state(spent) == "ok"


class ContextBudget(msgspec.Struct, frozen=True):
    """How much of a request each growing part may take, for one context window.

    Attributes:
        window_rounds: Recent rounds sent as chat messages.
        summary_tokens: Size cap of the rolling session summary.
        memory_chars: Most characters of memory the window holds; it lowers the
            configured ``memory.budget.total_chars`` where the window is small
            and never caps it otherwise.
        reply_tokens: Tokens kept free for the reply.
    """

    window_rounds: int
    summary_tokens: int
    memory_chars: int
    reply_tokens: int


WINDOW_ROUNDS, SUMMARY_TOKENS, REPLY_TOKENS = 10, 600, 1024  # what a large window gets
MIN_CONTEXT_WINDOW = 2048
_FIXED_TOKENS = 700  # persona, profile, game facts and the player's turn
_ROUND_TOKENS = 160  # one round of chat, both sides, as sized by approx_tokens


def budget_for(context_window: int) -> ContextBudget:
    """The budget that fits a model with ``context_window`` tokens.

    Large windows (about 12k tokens and more) get :data:`WINDOW_ROUNDS` rounds,
    :data:`SUMMARY_TOKENS` of summary and :data:`REPLY_TOKENS` of reply; smaller
    ones shrink them, down to 2 rounds and a 150-token summary at
    :data:`MIN_CONTEXT_WINDOW`. Memory gets a quarter of what is left
    (at least 400 characters), with no ceiling of its own: the configured
    ``memory.budget.total_chars`` is the cap, and a window only lowers it.

    Raises:
        UsageError: ``context_window`` is below :data:`MIN_CONTEXT_WINDOW`.
    """
    if context_window < MIN_CONTEXT_WINDOW:
        raise UsageError(f"a context window of {context_window} tokens is too small")
    reply = min(REPLY_TOKENS, context_window // 8)
    free = context_window - reply - _FIXED_TOKENS
    rounds = max(2, min(WINDOW_ROUNDS, free // 2 // _ROUND_TOKENS))
    summary = max(150, min(SUMMARY_TOKENS, free // 6))
    memory = max(400, free // 4)
    return ContextBudget(rounds, summary, memory, reply)
