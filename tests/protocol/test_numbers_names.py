"""Numbers and names as C# and Lua write them (v1.md "JSON rules").

Newtonsoft writes a ``double`` day as ``45.0``, Lua has one number type, a C#
class serialized as is writes ``Nearby``, a Python one ``held_item``, and a
culture with a decimal comma writes ``45,0``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import chat, model_context, recv, running, send
from xtyserver.errors import PeerError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.frames import MemoryForget, StateUpdate
from xtyserver.testing import Reply


def state(context: dict[str, Any]) -> bytes:
    return json.dumps({"type": "state.update", "modelContext": context}).encode()


def refusal(data: bytes | str) -> PeerError:
    with pytest.raises(PeerError) as info:
        decode_client_frame(data)
    return info.value


@pytest.mark.parametrize("spelled", ["45.0", "4.5e1", "45e0", "450e-1", "45.000"])
def test_integer_field_accepts_integral_json_number(spelled: str) -> None:
    raw = (
        '{"type":"state.update","modelContext":{"world":{"day":N},'
        '"relevantItems":[{"name":"Bait","count":N}]}}'
    ).replace("N", spelled)
    frame = decode_client_frame(raw).frame
    assert isinstance(frame, StateUpdate)
    assert frame.model_context.world is not None
    day = frame.model_context.world.day
    assert day == 45 and type(day) is int
    items = frame.model_context.relevant_items
    assert items is not None and type(items[0].count) is int and items[0].count == 45


def test_integral_float_outside_the_context_is_a_whole_number_too() -> None:
    frame = decode_client_frame(b'{"type":"memory.pin","eventId":12.0,"pinned":true}').frame
    assert frame.event_id == 12 and type(frame.event_id) is int  # type: ignore[union-attr]
    frame = decode_client_frame(b'{"type":"memory.forget","target":"item","eventId":1.2e1}').frame
    assert isinstance(frame, MemoryForget) and frame.event_id == 12


@pytest.mark.parametrize("value", ["45.5", "4.55e1", "0.1"])
def test_integer_field_refuses_fraction_naming_the_field(value: str) -> None:
    err = refusal('{"type":"state.update","modelContext":{"world":{"day":N}}}'.replace("N", value))
    assert err.code == "invalid_frame"
    assert err.fields == ("modelContext.world.day",)
    assert "whole number" in err.message and float(value).__repr__() in err.message


def test_integral_float_out_of_range_is_refused_as_out_of_range() -> None:
    err = refusal(state({"world": {"day": 2e9}}))
    assert err.fields == ("modelContext.world.day",)
    assert "out of range" in err.message


def test_a_refused_integral_float_frame_names_every_other_problem() -> None:
    err = refusal(state({"world": {"day": 45.0, "Season": "spring"}, "nearby": "x"}))
    assert set(err.fields) == {"modelContext.world.Season", "modelContext.nearby"}


def test_number_field_keeps_its_float() -> None:
    frame = decode_client_frame(state({"player": {"health": 45.5}})).frame
    assert isinstance(frame, StateUpdate) and frame.model_context.player is not None
    assert frame.model_context.player.health == 45.5


def test_booleans_are_still_not_numbers() -> None:
    err = refusal(state({"world": {"day": True}}))
    assert err.fields == ("modelContext.world.day",)


@pytest.mark.parametrize(
    ("context", "path", "expected"),
    [
        ({"Nearby": []}, "modelContext.Nearby", "nearby"),
        ({"player": {"held_item": "Rod"}}, "modelContext.player.held_item", "heldItem"),
        ({"player": {"HeldItem": "Rod"}}, "modelContext.player.HeldItem", "heldItem"),
        ({"relevant_items": []}, "modelContext.relevant_items", "relevantItems"),
        ({"World": {"Day": 3}}, "modelContext.World", "world"),
        ({"CapturedAt": "2026-05-03T01:10:04Z"}, "modelContext.CapturedAt", "capturedAt"),
    ],
)
def test_pascal_or_snake_key_is_refused_with_the_expected_key(
    context: dict[str, Any], path: str, expected: str
) -> None:
    err = refusal(state(context))
    assert err.code == "invalid_frame"
    assert path in err.fields
    assert f"use `{expected}`" in err.message


def test_pascal_key_at_the_top_and_inside_a_frame_are_hinted() -> None:
    err = refusal(b'{"type":"state.update","ModelContext":{}}')
    assert "ModelContext" in err.fields and "use `modelContext`" in err.message
    err = refusal(b'{"Type":"heartbeat"}')
    assert err.fields == ("type",) and "use `type`" in err.message


def test_an_unknown_key_like_no_field_gets_no_hint() -> None:
    err = refusal(state({"log": "x"}))
    assert err.fields == ("modelContext.log",) and "use `" not in err.message


@pytest.mark.parametrize(
    ("raw", "position", "near"),
    [
        (b'{"type":"state.update","modelContext":{"world":{"day":45,0}}}', 57, "45,0"),
        (b'{"type":"heartbeat"} x', 22, "} x"),
        (b'{"type":"heartbeat","id":NaN}', 25, "NaN"),
        (b"\xff{}", 0, "{}"),
        (b'{"type":', 8, '{\\"type\\":'),
    ],
)
def test_not_json_is_refused_with_byte_position_and_excerpt(
    raw: bytes, position: int, near: str
) -> None:
    err = refusal(raw)
    assert err.code == "invalid_json"
    assert f"at byte {position}" in err.message
    assert near in err.message


def test_not_json_excerpt_is_short() -> None:
    raw = b'{"type":"chat.send","text":"' + b"a" * 5000 + b'" oops}'
    err = refusal(raw)
    assert err.code == "invalid_json" and len(err.message) < 160


# -- over the real server ------------------------------------------------------------------


@pytest.mark.anyio
async def test_server_takes_csharp_numbers_and_hints_pascal_case(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        context = model_context(h.clock, world={"location": "Farm", "day": 45.0})
        await send(ws, {"type": "state.update", "id": "s1", "modelContext": context})
        await send(ws, {"type": "state.update", "id": "s2", "modelContext": {"Nearby": []}})
        error = await recv(ws)
        assert error["type"] == "error" and error["id"] == "s2", error
        assert error["fields"] == ["modelContext.Nearby"] and "use `nearby`" in error["message"]
        await send(ws, '{"type":"state.update","id":"s3","modelContext":{"world":{"day":45,0}}}')
        error = await recv(ws)
        assert error["code"] == "invalid_json" and "at byte 67" in error["message"], error
        h.fake.enqueue(Reply(text="好"))
        _, done = await chat(ws, "今天第几天？")
        assert done["type"] == "chat.done", done
        prompt = json.dumps(h.turn_request().json, ensure_ascii=False)
        assert "45" in prompt and "45.0" not in prompt
