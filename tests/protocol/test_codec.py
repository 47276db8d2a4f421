"""Tests for xtyserver.protocol.codec: the modelContext budget as properties, and frame edges."""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from functools import partial
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property_budget import examples
from xtyserver.errors import BudgetError, ForbiddenContentError, FrameError, PeerError
from xtyserver.protocol.codec import decode_client_frame, encode_frame
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.frames import (
    ChatDone,
    ChatSend,
    Error,
    Heartbeat,
    ModelContext,
    StateUpdate,
)
from xtyserver.protocol.limits import CONTEXT_MAX_BYTES, SMALL_FRAME_MAX_BYTES

# -- strategies -------------------------------------------------------------------

_ALPHABET = st.sampled_from(
    list("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ 0123456789._-钓鱼农场小镇矿洞")
)


def texts(max_size: int = 200) -> st.SearchStrategy[str]:
    return st.text(_ALPHABET, max_size=max_size).filter(
        lambda s: find_forbidden(s, strict=True) is None
    )


_STAMPS = st.datetimes(
    min_value=datetime(2000, 1, 1), max_value=datetime(2100, 1, 1), timezones=st.just(UTC)
).map(lambda d: d.isoformat().replace("+00:00", "Z"))
_GAUGE = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)
_DISTANCE = st.floats(min_value=0, max_value=1e9, allow_nan=False)
_COUNT = st.integers(min_value=0, max_value=1_000_000_000)


def contexts(max_str: int = 200) -> st.SearchStrategy[dict[str, Any]]:
    """modelContexts within every per-field limit (the size may still go over 6 KiB)."""
    s = texts(max_str)
    world = st.fixed_dictionaries(
        {},
        optional={"location": s, "time": s, "season": s, "weather": s, "day": _COUNT},
    )
    player = st.fixed_dictionaries(
        {},
        optional={
            "health": _GAUGE,
            "stamina": _GAUGE,
            "status": st.lists(s, max_size=8),
            "heldItem": s,
            "heldItemName": s,
        },
    )
    focus = st.fixed_dictionaries({}, optional={"kind": s, "name": s, "reachable": st.booleans()})
    nearby = st.lists(
        st.fixed_dictionaries({}, optional={"kind": s, "name": s, "distance": _DISTANCE}),
        max_size=5,
    )
    items = st.lists(st.fixed_dictionaries({"name": s}, optional={"count": _COUNT}), max_size=8)
    ui = st.fixed_dictionaries({}, optional={"busy": st.booleans(), "menu": s})
    return st.fixed_dictionaries(
        {"schemaVersion": st.just(1), "capturedAt": _STAMPS},
        optional={
            "world": world,
            "player": player,
            "focus": focus,
            "nearby": nearby,
            "relevantItems": items,
            "ui": ui,
        },
    )


def served_size(context: dict[str, Any]) -> int:
    """The size the codec measures: the decoded context serialized again."""
    typed = msgspec.json.decode(json.dumps(context).encode(), type=ModelContext)
    return len(msgspec.json.encode(msgspec.to_builtins(typed)))


# Where a modelContext sits in a frame, and the prefix of its error paths.
_CARRIERS: dict[str, tuple[Callable[[dict[str, Any]], dict[str, Any]], str]] = {
    "state.update": (
        lambda ctx: {"type": "state.update", "id": "s1", "modelContext": ctx},
        "modelContext",
    ),
    "chat.send": (
        lambda ctx: {
            "type": "chat.send",
            "id": "c1",
            "text": "hi",
            "source": "text",
            "context": {"modelContext": ctx},
        },
        "context.modelContext",
    ),
}


def decode(carrier: str, ctx: dict[str, Any]) -> Any:
    wrap, _ = _CARRIERS[carrier]
    return decode_client_frame(json.dumps(wrap(ctx), ensure_ascii=False))


# -- mutations: each breaks exactly one limit and says which path must be named ---------

Mutation = Callable[[dict[str, Any]], str]
_STRING_SLOTS = [
    ("world", "location"),
    ("world", "time"),
    ("world", "season"),
    ("world", "weather"),
    ("player", "heldItem"),
    ("player", "heldItemName"),
    ("focus", "kind"),
    ("focus", "name"),
    ("ui", "menu"),
]
_FORBIDDEN = [
    "C:\\Users\\Canary\\save",
    "\\\\server\\share\\x",
    "/home/canary/x",
    "76561198012345678",
    "sk-" + "a1B2" * 6,
    "canary@example.com",
]


def _set(ctx: dict[str, Any], obj: str, key: str, value: Any) -> str:
    ctx.setdefault(obj, {})[key] = value
    return f"{obj}.{key}"


Draw = Callable[[st.SearchStrategy[Any]], Any]


def _top(ctx: dict[str, Any], key: str, value: Any) -> str:
    ctx[key] = value
    return key


def _schema_mutations(draw: Draw) -> dict[str, Mutation]:
    """Mutations that break the types or per-field limits, keyed by the path they break."""

    def pick(*values: Any) -> Any:
        return draw(st.sampled_from(values))

    out: dict[str, Mutation] = {}
    for obj, key in _STRING_SLOTS:
        out[f"{obj}.{key}"] = partial(_set, obj=obj, key=key, value="a" * 201)
    out["nearby"] = partial(_top, key="nearby", value=[{"name": "n"}] * 6)
    out["relevantItems"] = partial(_top, key="relevantItems", value=[{"name": "i"}] * 9)
    out["player.status"] = partial(_set, obj="player", key="status", value=["s"] * 9)
    out["world.day"] = lambda c: _set(c, "world", "day", pick("3", 1.5, -1, True))
    out["player.health"] = lambda c: _set(c, "player", "health", pick("x", True, [1]))
    out["focus.reachable"] = lambda c: _set(c, "focus", "reachable", pick(1, "yes"))
    out["ui.busy"] = lambda c: _set(c, "ui", "busy", pick(0, "no"))
    out["world.extra"] = partial(_set, obj="world", key="extra", value="x")
    out["player.inventory"] = partial(_set, obj="player", key="inventory", value={"s": "axe"})
    out["log"] = partial(_top, key="log", value=["[12:00] joined"])
    out["schemaVersion"] = partial(_top, key="schemaVersion", value=2)
    out["capturedAt"] = lambda c: _top(c, "capturedAt", pick("2026-01-01T00:00:00", "yesterday", 5))
    return out


@st.composite
def one_broken(draw: st.DrawFn) -> tuple[dict[str, Any], str, type[PeerError]]:
    """A context of small strings with exactly one limit broken, the path named, the error."""
    ctx = draw(contexts(max_str=24))
    kind = draw(st.sampled_from(["schema", "forbidden", "size"]))
    if kind == "schema":
        mutations = _schema_mutations(draw)
        path = mutations[draw(st.sampled_from(sorted(mutations)))](ctx)
        return ctx, path, PeerError
    if kind == "forbidden":
        obj, key = draw(st.sampled_from(_STRING_SLOTS))
        return ctx, _set(ctx, obj, key, draw(st.sampled_from(_FORBIDDEN))), ForbiddenContentError
    # Over 6 KiB with every string within 200 chars and every array within its limit.
    ctx["player"] = {**ctx.get("player", {}), "status": ["s" * 200] * 8}
    ctx["relevantItems"] = [{"name": "i" * 200}] * 8
    ctx["nearby"] = [{"name": "n" * 200, "kind": "k" * 200}] * 5
    ctx["world"] = {**ctx.get("world", {}), "location": "l" * 200, "season": "s" * 200}
    ctx["focus"] = {**ctx.get("focus", {}), "name": "f" * 200, "kind": "k" * 200}
    assert served_size(ctx) > CONTEXT_MAX_BYTES
    return ctx, "", BudgetError


def _full(prefix: str, path: str) -> str:
    return f"{prefix}.{path}" if path else prefix


# -- properties ---------------------------------------------------------------------------


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ctx=contexts(), carrier=st.sampled_from(sorted(_CARRIERS)))
def test_codec_accepts_any_context_within_limits_and_refuses_only_over_6_kib(
    ctx: dict[str, Any], carrier: str
) -> None:
    size = served_size(ctx)
    _, prefix = _CARRIERS[carrier]
    if size <= CONTEXT_MAX_BYTES:
        decoded = decode(carrier, ctx)
        assert decoded.context_bytes == size
        assert decoded.context_over_target == (size > 2 * 1024)
    else:
        with pytest.raises(BudgetError) as caught:
            decode(carrier, ctx)
        assert caught.value.fields == (prefix,)


@settings(max_examples=examples(400), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=one_broken(), carrier=st.sampled_from(sorted(_CARRIERS)))
def test_codec_refuses_context_breaking_one_limit_naming_that_field(
    case: tuple[dict[str, Any], str, type[PeerError]], carrier: str
) -> None:
    ctx, path, error_type = case
    _, prefix = _CARRIERS[carrier]
    frame_id = "s1" if carrier == "state.update" else "c1"
    with pytest.raises(error_type) as caught:
        decode(carrier, ctx)
    assert caught.value.fields == (_full(prefix, path),)
    assert caught.value.frame_id == frame_id
    assert caught.value.code in ("budget_exceeded", "invalid_frame", "forbidden_content")


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), carrier=st.sampled_from(sorted(_CARRIERS)))
def test_codec_refuses_context_whole_naming_every_broken_field(
    data: st.DataObject, carrier: str
) -> None:
    ctx = data.draw(contexts(max_str=24))
    mutations = _schema_mutations(data.draw)
    chosen = data.draw(
        st.lists(st.sampled_from(sorted(mutations)), min_size=2, max_size=5, unique=True)
    )
    paths = {mutations[name](ctx) for name in chosen}
    _, prefix = _CARRIERS[carrier]
    with pytest.raises(PeerError) as caught:
        decode(carrier, ctx)
    assert set(caught.value.fields) == {_full(prefix, p) for p in paths}


# -- edges, by example -------------------------------------------------------------------


def _ctx(**parts: Any) -> dict[str, Any]:
    return {"schemaVersion": 1, "capturedAt": "2026-09-21T08:00:00Z", **parts}


@pytest.mark.parametrize(
    ("ok", "over", "path"),
    [
        (
            _ctx(world={"location": "a" * 200}),
            _ctx(world={"location": "a" * 201}),
            "world.location",
        ),
        (_ctx(nearby=[{}] * 5), _ctx(nearby=[{}] * 6), "nearby"),
        (
            _ctx(relevantItems=[{"name": "x"}] * 8),
            _ctx(relevantItems=[{"name": "x"}] * 9),
            "relevantItems",
        ),
        (_ctx(player={"status": ["x"] * 8}), _ctx(player={"status": ["x"] * 9}), "player.status"),
        (
            _ctx(nearby=[{"name": "鱼" * 200}]),
            _ctx(nearby=[{"name": "鱼" * 201}]),
            "nearby[0].name",
        ),
    ],
)
def test_codec_accepts_each_limit_exactly_and_refuses_one_over(
    ok: dict[str, Any], over: dict[str, Any], path: str
) -> None:
    assert isinstance(decode("state.update", ok).frame, StateUpdate)
    with pytest.raises(BudgetError) as caught:
        decode("state.update", over)
    assert caught.value.fields == (f"modelContext.{path}",)


def test_codec_accepts_context_of_exactly_6_kib_and_refuses_6_kib_plus_one() -> None:
    base = _ctx(
        player={"status": ["s" * 200] * 8},
        relevantItems=[{"name": "i" * 200}] * 8,
        nearby=[{"name": "n" * 200, "kind": "k" * 200}] * 5,
        world={"season": "s" * 200, "weather": "w" * 200, "location": ""},
    )
    room = CONTEXT_MAX_BYTES - served_size(base)
    assert 0 < room <= 200
    base["world"]["location"] = "l" * room
    assert decode("state.update", base).context_bytes == CONTEXT_MAX_BYTES
    base["world"]["location"] += "l"
    with pytest.raises(BudgetError) as caught:
        decode("state.update", base)
    assert caught.value.fields == ("modelContext",)


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (b"\xff\xfe{}", "invalid_json"),
        ('{"type":"heartbeat","id":"\ud800"}', "invalid_json"),
        ("[" * 10_000 + "]" * 10_000, "invalid_json"),
        ('{"type":"heartbeat","id":NaN}', "invalid_json"),
        ('{"type":"heartbeat"} trailing', "invalid_json"),
        ('{"type":"heartbeat","type":"heartbeat"}', "invalid_json"),
        ("42", "invalid_frame"),
        ('{"type":"nope"}', "unknown_type"),
    ],
)
def test_codec_refuses_malformed_frames_with_a_code(data: str | bytes, code: str) -> None:
    with pytest.raises(PeerError) as caught:
        decode_client_frame(data)
    assert caught.value.code == code


def test_codec_refuses_huge_integer_naming_the_field() -> None:
    frame = {"type": "state.update", "modelContext": _ctx(world={"day": 10**400})}
    with pytest.raises(PeerError) as caught:
        decode_client_frame(json.dumps(frame))
    assert caught.value.fields == ("modelContext.world.day",)


def test_codec_refuses_deep_observation_without_crashing() -> None:
    deep = "[" * 100_000 + "]" * 100_000
    data = (
        '{"type":"chat.send","id":"c","text":"t","source":"text","context":{"observation":'
        + deep
        + "}}"
    )
    with pytest.raises(PeerError):
        decode_client_frame(data)


def test_codec_refuses_small_frame_type_over_16_kib() -> None:
    # Whitespace keeps the frame valid JSON of a valid type; only its size is wrong.
    head = '{"type":"heartbeat","id":"h"'
    at_limit = head + " " * (SMALL_FRAME_MAX_BYTES - len(head) - 1) + "}"
    frame = decode_client_frame(at_limit).frame
    assert isinstance(frame, Heartbeat)
    assert frame.id == "h"
    with pytest.raises(FrameError) as caught:
        decode_client_frame(head + " " + at_limit[len(head) :])
    assert caught.value.code == "frame_too_large"


def test_codec_accepts_chat_send_with_observation_up_to_16_kib() -> None:
    body = {"blob": ""}
    body["blob"] = "o" * (16 * 1024 - len(json.dumps(body, separators=(",", ":"))))
    frame = {
        "type": "chat.send",
        "id": "c",
        "text": "t",
        "source": "text",
        "context": {"observation": body},
    }
    decoded = decode_client_frame(json.dumps(frame, separators=(",", ":")))
    assert isinstance(decoded.frame, ChatSend)
    body["blob"] += "o"
    with pytest.raises(BudgetError) as caught:
        decode_client_frame(json.dumps(frame, separators=(",", ":")))
    assert caught.value.fields == ("context.observation",)


def test_encode_frame_writes_camel_case_and_omits_defaults() -> None:
    done = json.loads(encode_frame(ChatDone(id="c1", text="好", context="fresh")))
    assert done == {"type": "chat.done", "id": "c1", "text": "好", "context": "fresh"}
    error = json.loads(encode_frame(Error(code="x", message="m", fields=["a.b"])))
    assert error == {"type": "error", "code": "x", "message": "m", "fields": ["a.b"]}


def test_a_held_items_shown_name_is_decoded_beside_its_id_and_judged_like_any_context_string() -> (
    None
):
    ctx = {"player": {"heldItem": "(O)128", "heldItemName": "河豚"}}
    frame = decode_client_frame(json.dumps({"type": "state.update", "modelContext": ctx})).frame
    assert isinstance(frame, StateUpdate)
    assert frame.model_context.player is not None
    assert (frame.model_context.player.held_item, frame.model_context.player.held_item_name) == (
        "(O)128",
        "河豚",
    )
    # Optional: a mod that sends only the id is read as before.
    frame = decode_client_frame(
        json.dumps({"type": "state.update", "modelContext": {"player": {"heldItem": "Rod"}}})
    ).frame
    assert isinstance(frame, StateUpdate) and frame.model_context.player is not None
    assert frame.model_context.player.held_item_name is None
    ctx = {"player": {"heldItem": "(O)128", "heldItemName": "河豚 canary@example.com"}}
    with pytest.raises(ForbiddenContentError) as refused:
        decode_client_frame(json.dumps({"type": "state.update", "modelContext": ctx}))
    assert refused.value.fields == ("modelContext.player.heldItemName",)
    ctx = {"player": {"heldItemName": "鱼" * 201}}
    with pytest.raises(BudgetError) as over:
        decode_client_frame(
            json.dumps(
                {
                    "type": "chat.send",
                    "id": "c1",
                    "text": "hi",
                    "source": "text",
                    "context": {"modelContext": ctx},
                }
            )
        )
    assert over.value.fields == ("context.modelContext.player.heldItemName",)
