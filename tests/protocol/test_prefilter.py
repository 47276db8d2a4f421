"""Tests for xtyserver.protocol.prefilter: the cheap check never passes what find_forbidden refuses.

Each string is put into a real modelContext, encoded as the decoder encodes
it, and judged both ways: whenever ``find_forbidden`` finds something,
``strings_clean`` must say False. It may say False for clean text (the exact
check then runs), but ordinary in-game strings should pass.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.frames import (
    Focus,
    ModelContext,
    NearbyEntity,
    PlayerState,
    RelevantItem,
    UiState,
    World,
)
from xtyserver.protocol.normalize import normalize
from xtyserver.protocol.prefilter import strings_clean

from .test_forbidden import _CAUGHT_VARIANTS, CAUGHT, CLEAN, VARIANTS
from .test_forbidden_round3 import CAUGHT3

_ENCODER = msgspec.json.Encoder()
_WHEN = datetime(2026, 11, 30, 12, 0, 1, 123456, tzinfo=UTC)


def _context(text: str) -> bytes:
    context = ModelContext(
        schema_version=1,
        captured_at=_WHEN,
        world=World(location="Farm", time="08:10", day=-3),
        player=PlayerState(health=100, status=["hungry", text], held_item="Fishing Rod"),
        focus=Focus(kind="water", name=text, reachable=True),
        nearby=[NearbyEntity(kind="npc", name="Abigail", distance=2)],
        relevant_items=[RelevantItem(name="Item 1", count=3)],
        ui=UiState(busy=False, menu=None),
    )
    return _ENCODER.encode(context)


def _judged_alike(text: str) -> None:
    if find_forbidden(text) is not None:
        assert not strings_clean(_context(normalize(text)), skip_key=b"capturedAt"), text
        assert not strings_clean(_context(text), skip_key=b"capturedAt"), text


@pytest.mark.parametrize(("text", "kind"), CAUGHT)
def test_every_table_entry_is_not_passed(text: str, kind: str) -> None:
    assert find_forbidden(text) == kind
    _judged_alike(text)
    _judged_alike(f"游戏崩了：{text}")
    _judged_alike(f"{text} 然后")


def test_every_look_alike_is_not_passed() -> None:
    for param in _CAUGHT_VARIANTS:
        text, _, family = param.values
        for variant in VARIANTS[str(family)](str(text)):
            _judged_alike(variant)


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_never_passes_what_find_forbidden_refuses(text: str) -> None:
    _judged_alike(text)


@settings(max_examples=2000, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list(' :-_[]/"\\@=apidAKIeyJ7656119进程ERROR0123')), max_size=30
    )
)
def test_never_passes_on_dense_trigger_text(text: str) -> None:
    _judged_alike(text)


@pytest.mark.parametrize(
    "text", ["Farm", "Fishing Rod", "钓鱼", "NPC 4", "08:10", "Item 7", "spring"]
)
def test_ordinary_strings_and_every_key_pass(text: str) -> None:
    assert strings_clean(_context(text), skip_key=b"capturedAt")


def test_most_clean_table_entries_pass() -> None:
    passed = [t for t in CLEAN if strings_clean(_context(normalize(t)), skip_key=b"capturedAt")]
    assert len(passed) > len(CLEAN) // 4


def test_the_skipped_timestamp_is_the_only_thing_left_out() -> None:
    encoded = _context("x")
    assert not strings_clean(encoded)  # the timestamp alone has ":01:"
    assert strings_clean(encoded, skip_key=b"capturedAt")
    assert not strings_clean(encoded.replace(b'"x"', b'"a:b"'), skip_key=b"capturedAt")


@pytest.mark.parametrize("text", [row[0] for row in CAUGHT3])
def test_every_new_spelling_of_round_three_is_not_passed(text: str) -> None:
    _judged_alike(text)
    _judged_alike(f"好的 {text} 然后")


@settings(max_examples=2000, deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list(" .-0123456789qQwWxX[(at)dot]>微信扣扣")), max_size=40)
)
def test_never_passes_on_dense_round_three_text(text: str) -> None:
    _judged_alike(text)
