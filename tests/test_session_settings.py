"""What every session is told, built once from the configuration (``session_settings``)."""

from __future__ import annotations

from xtyserver.config import load_settings
from xtyserver.serve.runtime_settings import session_settings


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


def test_the_limits_a_mod_is_told_are_the_limits_enforced_never_cut() -> None:
    """One limits Struct: a fractional rate is announced as it is and drives the bucket."""
    import msgspec

    from xtyserver.session.admission import Admission

    slow = session_settings(
        load_settings(
            None,
            env={},
            overrides={"server.chats_per_minute": 0.5, "server.stale_after": 2.5},
        ),
        model_configured=True,
    )
    assert slow.limits.chat_per_minute == 0.5  # was announced as 0 (int() cut it)
    assert slow.limits.context_stale_after_ms == 2500
    hello = msgspec.json.decode(msgspec.json.encode(slow.limits))
    assert (hello["chatPerMinute"], hello["framesPerSecond"]) == (0.5, 50)
    default = session_settings(load_settings(None, env={}), model_configured=True)
    assert b'"chatPerMinute":20,' in msgspec.json.encode(default.limits)  # whole stays whole
    # The bucket refills at the announced rate: one chat every 120 s after the burst.
    admission = Admission(slow, 0.0)
    burst = slow.limits.chat_burst
    assert [admission.chat(0.0) for _ in range(burst + 1)] == [True] * burst + [False]
    assert not admission.chat(119.0)
    assert admission.chat(120.0)
