"""The memory tools' schemas are generated from the Structs that parse their arguments."""

from __future__ import annotations

import msgspec

from xtyserver.memory.tokenize import approx_tokens
from xtyserver.session.tool_schemas import ARGUMENTS, TOOL_SPECS, tool_specs

TARGET_TOKENS = 150  # issue 22: the three memory tools' schemas in every chat request
THREE = ("view", "shared", "forget")  # view, correct_shared, forget
ALL_TOKENS = 190


def test_the_specs_are_the_argument_structs_schemas() -> None:
    for spec in TOOL_SPECS:
        function = spec["function"]
        args = ARGUMENTS[function["name"]]
        (component,) = msgspec.json.schema_components([args])[1].values()
        assert function["description"] == component["description"] == args.__doc__
        assert function["parameters"]["properties"] == component["properties"]
        assert function["parameters"]["additionalProperties"] is False


def test_the_specs_are_byte_stable_and_small() -> None:
    encoded = msgspec.json.encode(TOOL_SPECS)
    assert msgspec.json.encode(tool_specs()) == encoded
    three = [s for s in TOOL_SPECS if s["function"]["name"].split("_")[-1] in THREE]
    assert len(three) == 3
    assert approx_tokens(msgspec.json.encode(three).decode()) <= TARGET_TOKENS
    # ... and search and restore beside them stay short too (189 with all five).
    assert approx_tokens(encoded.decode()) <= ALL_TOKENS
    assert b"includeStats" not in encoded
    for name in (b"companionPersona", b"companionName", b"personality", b"notes", b"games"):
        assert name not in encoded
