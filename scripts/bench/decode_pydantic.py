"""A pydantic v2 implementation of the state.update receive rules, for scripts/bench/decode.py.

The same rules as ``decode_client_frame`` for a ``state.update``: the typed
whitelist with string, array and number limits and unknown fields refused,
duplicate keys refused (pydantic keeps the last one, so ``json`` parses with a
pairs hook, the usual way), every string normalised and scanned for forbidden
content, and the serialized modelContext measured against its budget.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, AwareDatetime, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.limits import (
    CONTEXT_ARRAY_MAX,
    CONTEXT_MAX_BYTES,
    CONTEXT_NEARBY_MAX,
    CONTEXT_STRING_MAX,
)
from xtyserver.protocol.normalize import normalize


def _text(value: str) -> str:
    value = normalize(value)
    if len(value) > CONTEXT_STRING_MAX:
        raise ValueError("too long after normalisation")
    if find_forbidden(value):
        raise ValueError("forbidden content")
    return value


Text = Annotated[str, Field(max_length=CONTEXT_STRING_MAX), AfterValidator(_text)]


class _Obj(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


class World(_Obj):
    location: Text | None = None
    time: Text | None = None
    season: Text | None = None
    weather: Text | None = None
    day: Annotated[int, Field(ge=0, le=1_000_000_000)] | None = None


class PlayerState(_Obj):
    health: Annotated[float, Field(ge=-1e9, le=1e9)] | None = None
    stamina: Annotated[float, Field(ge=-1e9, le=1e9)] | None = None
    status: Annotated[list[Text], Field(max_length=CONTEXT_ARRAY_MAX)] | None = None
    held_item: Text | None = None


class Focus(_Obj):
    kind: Text | None = None
    name: Text | None = None
    reachable: bool | None = None


class NearbyEntity(_Obj):
    kind: Text | None = None
    name: Text | None = None
    distance: Annotated[float, Field(ge=0, le=1e9)] | None = None


class RelevantItem(_Obj):
    name: Text
    count: Annotated[int, Field(ge=0, le=1_000_000_000)] | None = None


class UiState(_Obj):
    busy: bool | None = None
    menu: Text | None = None


class ModelContext(_Obj):
    schema_version: Literal[1]
    captured_at: AwareDatetime
    world: World | None = None
    player: PlayerState | None = None
    focus: Focus | None = None
    nearby: Annotated[list[NearbyEntity], Field(max_length=CONTEXT_NEARBY_MAX)] | None = None
    relevant_items: Annotated[list[RelevantItem], Field(max_length=CONTEXT_ARRAY_MAX)] | None = None
    ui: UiState | None = None


class StateUpdate(_Obj):
    type: Literal["state.update"]
    model_context: ModelContext
    id: Annotated[str, Field(min_length=1, max_length=64)] | None = None


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise ValueError("duplicate key")
    return out


def decode_state_update(raw: bytes) -> StateUpdate:
    """Decode and check one state.update frame; raises ValueError on any refusal."""
    frame = StateUpdate.model_validate(json.loads(raw, object_pairs_hook=_no_duplicates))
    size = len(frame.model_context.model_dump_json(by_alias=True, exclude_none=True))
    if size > CONTEXT_MAX_BYTES:
        raise ValueError("modelContext over budget")
    return frame
