"""The memory tools' schemas are generated from the Structs that parse their arguments."""

from __future__ import annotations

import json
from typing import Any

import msgspec
import pytest

from xtyserver.memory.tokenize import approx_tokens
from xtyserver.memory.types import Scope
from xtyserver.session.tool_schemas import (
    ALL,
    ARGUMENTS,
    OFFER_TEXTS,
    OFFERS,
    READ,
    TOOL_SPECS,
    tool_specs,
)
from xtyserver.session.tools import ToolCall, parse_call

TARGET_TOKENS = 150  # the most a turn offers (all five tools) in every chat request
VALIDATION = ("maxLength", "minLength", "maxItems", "minimum", "default", "additionalProperties")


def _without_validation(schema: Any) -> Any:
    if isinstance(schema, dict):
        return {
            k: _without_validation(v)
            for k, v in schema.items()
            if k not in (*VALIDATION, "title", "description") and v != []
        }
    if isinstance(schema, list):
        return [_without_validation(v) for v in schema]
    return schema


def test_the_specs_are_the_argument_structs_schemas() -> None:
    for spec in TOOL_SPECS:
        function = spec["function"]
        args = ARGUMENTS[function["name"]]
        (component,) = msgspec.json.schema_components([args])[1].values()
        assert function["description"] == component["description"] == args.__doc__
        assert function["parameters"] == _without_validation(component)
        assert component["additionalProperties"] is False  # ... still refused when parsed
    sent = msgspec.json.encode(TOOL_SPECS).decode()
    assert not any(f'"{word}"' in sent for word in VALIDATION)


def test_the_limits_left_out_of_the_schema_still_hold_when_a_call_is_parsed() -> None:
    here = Scope("stardew-valley", "farm-a")

    def call(name: str, **args: object) -> object:
        return parse_call(ToolCall("c", name, json.dumps(args)), here, player_text="x" * 300)

    search, correct, forget = ALL[1], ALL[2], ALL[3]
    assert isinstance(call(search, query="x" * 201), str)  # maxLength 200
    assert isinstance(call(search, query=""), str)  # minLength 1
    assert isinstance(call(correct, field="nickname", value="x" * 201), str)
    assert isinstance(call(forget, target="item", item=0), str)  # minimum 1
    assert isinstance(call(forget, target="save", includeStats=True), str)  # unknown field
    assert not isinstance(call(search, query="x" * 200), str)


def test_the_offered_sets_are_byte_stable_ordered_and_small() -> None:
    assert msgspec.json.encode(tool_specs()) == msgspec.json.encode(TOOL_SPECS)
    assert list(OFFERS) == [READ, ALL] and OFFERS[ALL] is TOOL_SPECS
    for names, specs in OFFERS.items():
        assert [s["function"]["name"] for s in specs] == list(names)
        assert OFFER_TEXTS[names] == msgspec.json.encode(tool_specs(names)).decode()
    # The read tools open both sets, so their bytes are the same prefix.
    assert OFFER_TEXTS[ALL].startswith(OFFER_TEXTS[READ][:-1])
    assert approx_tokens(OFFER_TEXTS[ALL]) <= TARGET_TOKENS
    encoded = OFFER_TEXTS[ALL].encode()
    assert b"includeStats" not in encoded
    for name in (b"companionPersona", b"companionName", b"personality", b"notes", b"games"):
        assert name not in encoded


@pytest.mark.parametrize("names", [READ, ALL])
def test_each_set_is_generated_once(names: tuple[str, ...]) -> None:
    assert OFFERS[names] is OFFERS[names] and OFFERS[names] == tool_specs(names)
