"""Each runtime Struct carries what the one Settings tree says, and has no default of its own."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from xtyserver.config import Settings, load_settings
from xtyserver.memory.tokens import DailyBudget
from xtyserver.protocol.limits import Limits
from xtyserver.serve.connection import RuntimeLimits
from xtyserver.serve.gate import GateLimits
from xtyserver.serve.runtime_settings import (
    daily_budget,
    gate_limits,
    memory_budget,
    protocol_limits,
    runtime_limits,
    session_settings,
    wire_limits,
    working_settings,
)
from xtyserver.serve.wire.limits import WireLimits
from xtyserver.session.admission import Admission
from xtyserver.session.settings import SessionSettings
from xtyserver.session.working import WorkingSettings

# Every value differs from its default and from every other value of its kind,
# so a field copied from the wrong setting shows.
CHANGED: dict[str, Any] = {
    "server.hello_timeout": 3.5,
    "server.preauth_hello_timeout": 1.25,
    "server.heartbeat_ms": 1234,
    "server.heartbeat_misses": 4,
    "server.flood_refusals": 77,
    "server.default_timezone": "Asia/Tokyo",
    "server.stale_after": 2.5,
    "server.drop_after": 7.25,
    "server.chats_per_minute": 0.5,
    "server.chat_burst": 7,
    "server.frames_per_second": 12.5,
    "server.frame_burst": 33,
    "server.history_turns": 6,
    "server.summary_every": 3,
    "server.summary_tokens": 1111,
    "server.summary_chars": 333,
    "server.resume_within": 42.0,
    "server.max_connections": 9,
    "server.preauth_pool": 2,
    "server.fail_delay_max": 0.75,
    "server.send_timeout": 9.5,
    "server.write_queue_frames": 17,
    "server.open_timeout": 4.5,
    "server.close_timeout": 0.75,
    "server.stop_timeout": 3.25,
    "memory.embedding_timeout_ms": 250,
    "memory.extraction": False,
    "memory.budget.total_chars": 900,
    "model.vision": False,
    "model.daily_token_budget": 5000,
    "model.budget_low_share": 0.35,
    "images.max_decoded_bytes": 1_234_567,
    "images.max_side": 999,
    "texts.busy": "等等",
}


@pytest.fixture(scope="module")
def changed() -> Settings:
    return load_settings(None, env={}, overrides=CHANGED)


def test_the_limits_a_mod_is_told_carry_every_changed_setting(changed: Settings) -> None:
    assert protocol_limits(changed) == msgspec.structs.replace(
        Limits(),
        context_stale_after_ms=2500,
        context_drop_after_ms=7250,
        image_max_bytes=1_234_567,
        image_max_side_px=999,
        chat_per_minute=0.5,
        chat_burst=7,
        frames_per_second=12.5,
        frame_burst=33,
        heartbeat_misses=4,
    )


def test_a_session_is_told_every_changed_setting(changed: Settings) -> None:
    told = session_settings(changed, model_configured=False, local_timezone="Europe/Paris")
    assert (told.hello_timeout, told.preauth_hello_timeout) == (3.5, 1.25)
    assert (told.heartbeat_ms, told.flood_refusals) == (1234, 77)
    assert told.default_timezone == "Asia/Tokyo"  # the setting wins over the PC's zone
    assert (told.model_configured, told.vision) == (False, False)
    assert (told.memory, told.extraction) == (True, False)
    assert told.daily_budget == DailyBudget(5000, 0.35)
    assert told.budget.total_chars == 900
    assert told.limits == protocol_limits(changed)
    assert told.working == WorkingSettings(
        window=6, fold_every=3, fold_tokens=1111, summary_chars=333, resume_within=42.0
    )
    assert told.texts.busy == "等等"
    here = session_settings(Settings(), model_configured=True, local_timezone="Europe/Paris")
    assert here.default_timezone == "Europe/Paris"  # "" is this PC's zone


def test_memory_off_turns_extraction_off_whatever_it_says() -> None:
    off = load_settings(None, env={}, overrides={"memory.enabled": False})
    told = session_settings(off, model_configured=True)
    assert (told.memory, told.extraction) == (False, False)


def test_the_gate_and_a_connection_carry_every_changed_setting(changed: Settings) -> None:
    assert gate_limits(changed) == msgspec.structs.replace(
        GateLimits(), max_connections=9, preauth_pool=2, fail_delay_max=0.75
    )
    assert runtime_limits(changed) == RuntimeLimits(
        send_timeout=9.5, write_queue=17, embedding_timeout=0.25
    )
    assert runtime_limits(Settings()).embedding_timeout is None  # by where the model runs
    assert wire_limits(changed) == WireLimits(
        open_timeout=4.5, close_timeout=0.75, stop_timeout=3.25
    )


def test_the_daily_budget_of_the_jobs_is_the_sessions(changed: Settings) -> None:
    assert daily_budget(changed) == session_settings(changed, model_configured=True).daily_budget


def test_a_small_context_window_shrinks_only_down_to_what_it_leaves() -> None:
    route = {"models.chat.model": "m", "models.chat.context_window": 4096}
    small = load_settings(None, env={}, overrides=route)
    default = Settings()
    assert working_settings(small).window < working_settings(default).window
    assert memory_budget(small).total_chars < memory_budget(default).total_chars
    # Below the fit, the configured numbers stand.
    tiny = load_settings(None, env={}, overrides={"server.history_turns": 1})
    assert working_settings(tiny).window == 1


def test_a_raised_memory_budget_stands_where_the_window_holds_it() -> None:
    raised = {"memory.budget.total_chars": 5000}
    assert memory_budget(load_settings(None, env={}, overrides=raised)).total_chars == 5000
    small = load_settings(None, env={}, overrides={**raised, "model.context_window": 8192})
    assert memory_budget(small).total_chars == (8192 - 1024 - 700) // 4


def test_a_4k_model_shrinks_the_window_and_the_session_summary() -> None:
    """Where a model's context window is small, working memory shrinks to fit."""
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


# -- each default written once ---------------------------------------------------------


@pytest.mark.parametrize(
    ("struct", "own"),
    [
        (SessionSettings, {"layers"}),
        (WorkingSettings, {"item_chars"}),
        (RuntimeLimits, {"inbox", "store_queue"}),
        (WireLimits, {"head_bytes", "body_bytes", "frame_bytes"}),
    ],
)
def test_a_runtime_struct_has_defaults_only_for_what_no_setting_gives(
    struct: type[msgspec.Struct], own: set[str]
) -> None:
    with_default = {
        f.name
        for f in msgspec.structs.fields(struct)
        if f.default is not msgspec.NODEFAULT or f.default_factory is not msgspec.NODEFAULT
    }
    assert with_default == own


def test_the_defaults_the_core_and_the_gate_keep_are_the_settings_defaults() -> None:
    """Limits and GateLimits keep defaults (a mod's schema, the gate's tests): the Settings'."""
    assert protocol_limits(Settings()) == Limits()
    assert gate_limits(Settings()) == GateLimits()
    assert daily_budget(Settings()) == DailyBudget()
