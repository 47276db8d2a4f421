"""Round three's spellings are refused by the decoder wherever a mod puts them.

Every row of ``test_forbidden_round3.CAUGHT3`` (and a look-alike of it) in a
modelContext string, in a ``nearby`` name, and as a save name of every frame
that carries one is refused with ``forbidden_content`` naming the field and
the kind (v1.md "Forbidden content"); ordinary text near the new kinds
(``CLEAN3``) passes and comes out as typed.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.protocol.test_codec import _CARRIERS, decode
from tests.protocol.test_forbidden import full_width
from tests.protocol.test_forbidden_round3 import CAUGHT3, CLEAN3
from xtyserver.errors import ForbiddenContentError, PeerError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.frames import StateUpdate
from xtyserver.protocol.normalize import normalize


def _ctx(**parts: Any) -> dict[str, Any]:
    return {"schemaVersion": 1, "capturedAt": "2026-09-21T08:00:00Z", **parts}


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT3)
@pytest.mark.parametrize("carrier", sorted(_CARRIERS))
def test_every_new_spelling_in_a_model_context_string_is_refused(
    text: str, kind: str, secret: str, carrier: str
) -> None:
    _, prefix = _CARRIERS[carrier]
    for value in (text, f"好的 {text} 然后"):
        with pytest.raises(ForbiddenContentError) as caught:
            decode(carrier, _ctx(world={"location": value}, nearby=[{"name": "Abigail"}]))
        assert caught.value.fields == (f"{prefix}.world.location",)
        assert f"({kind})" in caught.value.message
        assert secret not in caught.value.message


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT3)
def test_every_new_spelling_as_a_nearby_name_or_its_full_width_form_is_refused(
    text: str, kind: str, secret: str
) -> None:
    for value in (text, full_width(text)):
        if len(normalize(value)) > 200:  # pragma: no cover - every row fits
            continue
        with pytest.raises(ForbiddenContentError) as caught:
            decode("state.update", _ctx(nearby=[{"kind": "npc", "name": value}]))
        assert caught.value.fields == ("modelContext.nearby[0].name",)


def _frames_with_save_name(name: str) -> list[dict[str, Any]]:
    identity = {"gameId": "stardew-valley", "saveId": "farm-a", "saveName": name}
    return [
        {
            "type": "adapter.hello",
            "protocol": "v1",
            "adapter": {"name": "xty-stardew", "version": "1.0.0"},
            "identity": identity,
        },
        {"type": "state.update", "modelContext": _ctx(), "identity": identity},
        {
            "type": "chat.send",
            "id": "c1",
            "text": "hi",
            "source": "text",
            "context": {"identity": identity},
        },
    ]


@pytest.mark.parametrize(("text", "kind", "secret"), CAUGHT3)
def test_every_new_spelling_as_a_save_name_is_refused_in_every_frame(
    text: str, kind: str, secret: str
) -> None:
    if len(normalize(text)) > 64:
        pytest.skip("longer than a save name may be")
    for frame in _frames_with_save_name(text):
        with pytest.raises(PeerError) as caught:
            decode_client_frame(json.dumps(frame, ensure_ascii=False))
        assert caught.value.code == "forbidden_content", frame["type"]
        assert caught.value.fields[-1].endswith("identity.saveName")


@pytest.mark.parametrize("text", [t for t in CLEAN3 if len(normalize(t)) <= 64])
def test_ordinary_text_near_the_new_kinds_passes_and_comes_out_as_typed(text: str) -> None:
    if find_forbidden(text, strict=True) is not None:
        # A number of 11 digits or more: a save name may hold it, a modelContext
        # string (game names and numbers) may not (v1.md "Forbidden content").
        with pytest.raises(ForbiddenContentError):
            decode("state.update", _ctx(world={"location": text}))
    else:
        decoded = decode("state.update", _ctx(world={"location": text}))
        frame = decoded.frame
        assert isinstance(frame, StateUpdate) and frame.model_context.world is not None
        assert frame.model_context.world.location == text
    for raw in _frames_with_save_name(text):
        decode_client_frame(json.dumps(raw, ensure_ascii=False))


@pytest.mark.parametrize("version", ["1.0.0.0", "2.1.3.4", "10.0.19041.1"])
def test_a_four_part_adapter_version_is_not_an_ip_address(version: str) -> None:
    frame = _frames_with_save_name("Sunny Farm")[0]
    frame["adapter"]["version"] = version
    decode_client_frame(json.dumps(frame))
    frame["adapter"]["name"] = "xty 192.168.1.5"
    with pytest.raises(ForbiddenContentError) as caught:
        decode_client_frame(json.dumps(frame))
    assert caught.value.fields == ("adapter.name",)
