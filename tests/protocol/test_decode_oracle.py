"""The fast receive path against a plain reference of the same rules, on generated frames.

``decode_client_frame`` takes shortcuts for speed (colons counted instead of
keys, the forbidden-content check run once on the modelContext's strings
joined and only on the parts that differ from the last clean modelContext's,
frames without text settled early). The reference below takes none:
duplicate keys are found by ``json`` with an ``object_pairs_hook``, every
string of the modelContext is kept (invisible characters removed, v1.md
"Normalisation") and judged on its own by ``find_forbidden``, and the fields
are named by walking the frame. Both must give the same verdict, the same
refused fields and the same kept frame for every generated ``state.update``
and ``chat.send``: clean game words, every forbidden spelling of the tables
in full width, with invisible characters or Cyrillic look-alikes inside,
dense text of the characters the shortcuts look for, keys repeated, defaults
and nulls spelled out, any JSON spacing and ``\\u`` escapes; and streams of
frames each made from the one before with one part changed.
"""

from __future__ import annotations

import copy
import importlib.util
import json
import random
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.property_budget import examples
from xtyserver.errors import PeerError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.limits import CONTEXT_STRING_MAX
from xtyserver.protocol.normalize import normalize, visible

from .test_forbidden import CAUGHT, CLEAN, VARIANTS
from .test_forbidden_round3 import CAUGHT3, CLEAN3


class Obj(list[tuple[str, Any]]):
    """A JSON object as the pairs it is written with, so that a key can repeat."""


class Item(Obj):
    """A relevantItems entry, whose name may not be null."""


_WORDS = ["Farm", "Fishing Rod", "spring", "08:10", "NPC 4", "Item 7", "钓鱼", "阿比盖尔", ""]
_FORBIDDEN = [text for text, _ in CAUGHT] + [row[0] for row in CAUGHT3]
_DENSE = list(' :-_[]()/"\\@=.apidqwxAKIeyJ7656119进程微信扣扣ERROR0123456789abcdef\n\t')
_REQUIRED = frozenset({"type", "id", "text", "source", "context", "modelContext", "schemaVersion"})


def _look_alikes(text: str) -> list[str]:
    out = [text, text.replace("o", "о").replace("a", "а")]  # Cyrillic о and а
    for family in VARIANTS.values():
        out.extend(family(text)[:3])
    return out


_SPELLINGS = st.sampled_from(_FORBIDDEN).flatmap(lambda t: st.sampled_from(_look_alikes(t)))
_TEXT = st.one_of(
    st.sampled_from(_WORDS + CLEAN + CLEAN3),
    _SPELLINGS,
    st.text(st.sampled_from(_DENSE), max_size=24),
    st.text(max_size=12),
).filter(lambda t: len(normalize(t)) <= CONTEXT_STRING_MAX and len(t) <= CONTEXT_STRING_MAX)


def _struct(
    draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]], cls: type[Obj] = Obj
) -> Obj:
    """An object with each field left out, spelled as null, or given a value."""
    pairs = cls()
    for key, value in fields.items():
        choice = draw(st.integers(0, 5))
        if choice == 1 and cls is Obj:
            pairs.append((key, None))
        elif choice >= 2 or cls is Item:
            pairs.append((key, draw(value)))
    return pairs


@st.composite
def _model_context(draw: st.DrawFn) -> Obj:
    entity = st.composite(
        lambda d: _struct(d, {"kind": _TEXT, "name": _TEXT, "distance": st.integers(0, 50)})
    )()
    item = st.composite(lambda d: _struct(d, {"name": _TEXT, "count": st.integers(0, 9)}, Item))()
    parts: dict[str, st.SearchStrategy[Any]] = {
        "schemaVersion": st.just(1),
        "capturedAt": st.sampled_from(["2026-11-30T12:00:01Z", "2026-11-30T20:00:01+08:00"]),
        "world": st.composite(
            lambda d: _struct(
                d,
                {
                    "location": _TEXT,
                    "time": _TEXT,
                    "season": _TEXT,
                    "weather": _TEXT,
                    "day": st.integers(0, 99),
                },
            )
        )(),
        "player": st.composite(
            lambda d: _struct(
                d,
                {
                    "health": st.integers(0, 100),
                    "status": st.lists(_TEXT, max_size=3),
                    "heldItem": _TEXT,
                },
            )
        )(),
        "focus": st.composite(
            lambda d: _struct(d, {"kind": _TEXT, "name": _TEXT, "reachable": st.booleans()})
        )(),
        "nearby": st.lists(entity, max_size=3),
        "relevantItems": st.lists(item, max_size=3),
        "ui": st.composite(lambda d: _struct(d, {"busy": st.booleans(), "menu": _TEXT}))(),
    }
    context = _struct(draw, parts)
    return Obj((key, 1 if key == "schemaVersion" else value) for key, value in context)


def _repeat_a_key(draw: st.DrawFn, value: Obj) -> None:
    """Repeat one key of one object somewhere in ``value``, in place.

    The repeat holds the same value or, where the field may be null, null
    (before or after the other: the spellings a colon count could miss).
    """
    objects: list[Obj] = []

    def collect(v: Any) -> None:
        if isinstance(v, Obj):
            if v:
                objects.append(v)
            for _, item in v:
                collect(item)
        elif isinstance(v, list):
            for item in v:
                collect(item)

    collect(value)
    target = draw(st.sampled_from(objects))
    key, old = draw(st.sampled_from(target))
    nullable = key not in _REQUIRED and not (isinstance(target, Item) and key == "name")
    new = draw(st.sampled_from([old, None] if nullable else [old]))
    target.insert(draw(st.integers(0, len(target))), (key, new))


@st.composite
def frames(draw: st.DrawFn) -> bytes:
    """One state.update or chat.send as bytes, maybe with a key repeated."""
    return _frame(draw, draw(_model_context()))


@st.composite
def streams(draw: st.DrawFn) -> list[bytes]:
    """Frames as a game sends them: each modelContext the one before with a part changed.

    The prefilter remembers the last clean modelContext's parts and judges
    only the parts that differ; the stream makes every part of a frame come
    from a frame before it but one, which may be forbidden, repeat a key,
    be left out or be added.
    """
    context = draw(_model_context())
    out = [_frame(draw, copy.deepcopy(context))]
    for _ in range(draw(st.integers(1, 4))):
        other = dict(draw(_model_context()))
        key = draw(st.sampled_from(["world", "player", "focus", "nearby", "relevantItems", "ui"]))
        context = Obj([(k, v) for k, v in context if k != key])
        if key in other:
            context.append((key, other[key]))
        out.append(_frame(draw, copy.deepcopy(context)))  # a repeated key is put in place
    return out


def _frame(draw: st.DrawFn, context: Obj) -> bytes:
    """``context`` in a state.update or a chat.send, as bytes, maybe with a key repeated."""
    if draw(st.booleans()):
        frame = Obj([("type", "state.update"), ("modelContext", context)])
    else:
        frame = Obj(
            [
                ("type", "chat.send"),
                ("id", "c1"),
                ("text", draw(st.sampled_from(["今天钓什么鱼？", "hi"]))),
                ("source", "text"),
                ("context", Obj([("modelContext", context)])),
            ]
        )
    if draw(st.integers(0, 2)) == 0:
        _repeat_a_key(draw, frame)
    spacing = draw(st.sampled_from([(",", ":"), (", ", ": "), (" ,\n", " :\t")]))
    return _dumps(frame, spacing, ascii_only=draw(st.booleans())).encode()


def _dumps(value: Any, spacing: tuple[str, str], *, ascii_only: bool) -> str:
    comma, colon = spacing
    if isinstance(value, Obj):
        body = comma.join(
            json.dumps(k) + colon + _dumps(v, spacing, ascii_only=ascii_only) for k, v in value
        )
        return "{" + body + "}"
    if isinstance(value, list):
        return "[" + comma.join(_dumps(v, spacing, ascii_only=ascii_only) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii_only)


# -- the reference -------------------------------------------------------------


class _Duplicate(Exception):
    pass


def _no_repeats(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    for key in keys:
        if keys.count(key) > 1:
            raise _Duplicate(key)
    return dict(pairs)


def _strings(value: Any, path: str) -> list[tuple[str, str]]:
    if isinstance(value, str):
        return [(path, value)]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in _strings(item, f"{path}.{key}")]
    if isinstance(value, list):
        return [s for i, item in enumerate(value) for s in _strings(item, f"{path}[{i}]")]
    return []


def _kept(value: Any) -> Any:
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, dict):
        return {key: _kept(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_kept(item) for item in value]
    return value


def reference(raw: bytes) -> tuple[str, Any]:
    """The verdict by the plain rules: ("ok", kept frame) or (code, refused fields)."""
    try:
        frame = json.loads(raw, object_pairs_hook=_no_repeats)
    except _Duplicate as dup:
        return "invalid_json", [str(dup.args[0])]
    holder = frame if frame["type"] == "state.update" else frame["context"]
    prefix = "" if frame["type"] == "state.update" else "context."
    context = holder["modelContext"]
    context.pop("capturedAt", None)
    strings = _strings(_kept(context), f"{prefix}modelContext")
    # modelContext strings are judged strictly (v1.md "Forbidden content": long digit runs and
    # path shapes refused outright).
    refused = sorted(
        path for path, text in strings if find_forbidden(text, strict=True) is not None
    )
    if refused:
        return "forbidden_content", refused
    return "ok", _without_defaults(_kept(frame))


def _without_defaults(value: Any) -> Any:
    """``value`` as the server's encoding writes it: no nulls, no ``schemaVersion: 1``."""
    if isinstance(value, dict):
        return {
            key: _without_defaults(item)
            for key, item in value.items()
            if item is not None and key not in {"schemaVersion", "capturedAt"}
        }
    if isinstance(value, list):
        return [_without_defaults(item) for item in value]
    return value


def fast(raw: bytes) -> tuple[str, Any]:
    """The verdict of ``decode_client_frame``, in the reference's terms."""
    try:
        decoded = decode_client_frame(raw)
    except PeerError as exc:
        return exc.code, sorted(exc.fields)
    return "ok", _without_defaults(json.loads(json.dumps(_builtins(decoded.frame))))


def _builtins(frame: Any) -> Any:
    return msgspec.to_builtins(frame)


def same(raw: bytes) -> None:
    assert fast(raw) == reference(raw), raw.decode("utf-8", "replace")


SETTINGS = {
    "deadline": None,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
}


@settings(max_examples=examples(400), **SETTINGS)  # type: ignore[arg-type]
@given(frames())
def test_the_fast_path_and_the_reference_agree(raw: bytes) -> None:
    same(raw)


def test_the_long_run_script_checks_the_same_property() -> None:
    """``scripts/decode_oracle.py`` runs it on 8,000 frames and 3,000 streams by hand."""
    spec = importlib.util.spec_from_file_location(
        "decode_oracle", Path(__file__).resolve().parents[2] / "scripts" / "decode_oracle.py"
    )
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    assert script.main(["--examples", "20", "--streams", "5"]) == 0


@settings(max_examples=examples(300), **SETTINGS)  # type: ignore[arg-type]
@given(streams())
def test_the_fast_path_and_the_reference_agree_on_a_stream(stream: list[bytes]) -> None:
    for raw in stream:
        same(raw)


@pytest.mark.parametrize("text", [*_FORBIDDEN, "a0-b1-c2-d3-e4-f5", "a0:b1:c2:d3:e4:f5"])
@pytest.mark.parametrize("key", ["location", "menu"])
def test_every_table_spelling_is_refused_in_any_string_of_a_state_update(
    text: str, key: str
) -> None:
    holder = "world" if key == "location" else "ui"
    for variant in _look_alikes(text):
        raw = json.dumps(
            {"type": "state.update", "modelContext": {"schemaVersion": 1, holder: {key: variant}}},
            ensure_ascii=random.Random(variant).random() < 0.5,
        ).encode()
        assert fast(raw) == ("forbidden_content", [f"modelContext.{holder}.{key}"]), variant
