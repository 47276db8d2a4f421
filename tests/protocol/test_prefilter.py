"""Tests for xtyserver.protocol.prefilter: the cheap check never passes what find_forbidden refuses.

Each string is put into a real modelContext, its strings gathered and joined
as the decoder does, and judged both ways: whenever ``find_forbidden`` finds
something, ``texts_clean`` must say False. It may say False for clean text
(the exact check then runs), but ordinary in-game strings should pass.
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.property_budget import examples
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
from xtyserver.protocol.prefilter import (
    context_strings,
    context_texts,
    gatherer_sources,
    texts_clean,
)

from .test_forbidden import _CAUGHT_VARIANTS, CAUGHT, CLEAN, VARIANTS
from .test_forbidden_round3 import CAUGHT3

_WHEN = datetime(2026, 11, 30, 12, 0, 1, 123456, tzinfo=UTC)


def _model_context(text: str) -> ModelContext:
    return ModelContext(
        schema_version=1,
        captured_at=_WHEN,
        world=World(location="Farm", time="08:10", day=-3),
        player=PlayerState(
            health=100, status=["hungry", text], held_item="Fishing Rod", held_item_name="鱼竿"
        ),
        focus=Focus(kind="water", name=text, reachable=True),
        nearby=[NearbyEntity(kind="npc", name="Abigail", distance=2)],
        relevant_items=[RelevantItem(name="Item 1", count=3)],
        ui=UiState(busy=False, menu=None),
    )


def _clean(context: ModelContext) -> bool:
    return texts_clean(context_texts(context))


def _context(text: str) -> ModelContext:
    return _model_context(text)


def _judged_alike(text: str) -> None:
    if find_forbidden(text) is not None:
        assert not _clean(_context(normalize(text))), text
        assert not _clean(_context(text)), text


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


@settings(max_examples=examples(3000), deadline=None)
@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=40))
def test_never_passes_what_find_forbidden_refuses(text: str) -> None:
    _judged_alike(text)


@settings(max_examples=examples(2000), deadline=None)
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
    assert _clean(_context(text))


def test_most_clean_table_entries_pass() -> None:
    passed = [t for t in CLEAN if _clean(_context(normalize(t)))]
    assert len(passed) > len(CLEAN) // 4


def test_every_string_field_is_gathered_and_nothing_else() -> None:
    context = _context("x")
    builtins = msgspec.to_builtins(context)
    del builtins["capturedAt"]  # a datetime in the Struct, not text
    strings: list[str] = []
    stack: list[object] = [builtins]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            strings.append(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    lines = "\n".join(context_texts(context)).split("\n")
    unset = lines.count("None")  # how a part writes an unset string
    gather_source, strings_source = gatherer_sources()
    assert sorted(line for line in lines if line != "None") == sorted(strings), gather_source
    assert unset == 3, gather_source  # world.season, world.weather, ui.menu
    assert sorted(filter(None, context_strings(context))) == sorted(strings), strings_source
    assert not _clean(msgspec.structs.replace(context, ui=UiState(menu="a:b")))


@pytest.mark.parametrize("text", [row[0] for row in CAUGHT3])
def test_every_new_spelling_of_round_three_is_not_passed(text: str) -> None:
    _judged_alike(text)
    _judged_alike(f"好的 {text} 然后")


@settings(max_examples=examples(2000), deadline=None)
@given(
    st.text(alphabet=st.sampled_from(list(" .-0123456789qQwWxX[(at)dot]>微信扣扣")), max_size=40)
)
def test_never_passes_on_dense_round_three_text(text: str) -> None:
    _judged_alike(text)


@pytest.mark.parametrize("text", ["C:\\Users\\zhangwei", "76561198000000000", "bob@example.com"])
def test_a_part_that_differs_from_the_last_clean_modelcontext_is_judged(text: str) -> None:
    """Only the parts of the last clean modelContext are taken as clean, in place and whole."""
    clean = context_texts(_model_context("Abigail"))
    assert texts_clean(clean)
    assert texts_clean(list(clean))  # the same strings: nothing to judge
    for changed in range(len(clean)):
        parts = [*clean[:changed], text, *clean[changed + 1 :]]
        assert not texts_clean(parts), changed
        assert not texts_clean(parts), "a refused modelContext was remembered as clean"
    assert not texts_clean([*clean, text])  # a part past the end of the last ones
    assert not texts_clean([text, *clean])  # every part shifted by one
    assert not texts_clean([*clean[:2], f"{clean[2]}\n{text}"])  # one string of a part


def test_an_unset_string_written_none_changes_no_verdict() -> None:
    """A part writes an unset string as ``None``: a word that sets off no rule."""
    assert texts_clean(["None", "None\nNone", "Farm\nNone\n08:10"])
    assert texts_clean(["None", "None\nNone"])
    for text, _ in CAUGHT:
        assert not texts_clean([f"None\n{text}\nNone"]), text
