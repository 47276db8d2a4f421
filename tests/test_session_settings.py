"""What every session is told, built once from the configuration (server.session_settings)."""

from __future__ import annotations

from xtyserver.config import load_settings
from xtyserver.server import session_settings


def test_a_4k_model_shrinks_the_window_and_the_session_summary() -> None:
    """Issue 9: where a model's context window is small, working memory shrinks to fit."""
    default = session_settings(load_settings(None, env={}), model_configured=True)
    small = session_settings(
        load_settings(None, env={}, overrides={"model.context_window": 4096}),
        model_configured=True,
    )
    assert (default.working.window, default.working.summary_chars) == (10, 800)
    assert small.working.window < default.working.window
    assert small.working.summary_chars < default.working.summary_chars
    assert small.budget.total_chars < default.budget.total_chars
