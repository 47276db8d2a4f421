"""The adapter's half of the design: project a full observation into a small modelContext.

Pure and deterministic, no model call; the observation, the topics and the
priority order of the pieces kept within the 2 KiB target are described in
docs/adapter-client.md "Projection". The rules are data, ``projection.json``
beside this module, and the C# and Lua reference adapters carry a copy of the
same file (``adapters/*/``; a test keeps the copies equal).
"""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec

from xtyserver.errors import PeerError
from xtyserver.protocol.codec import decode_client_frame
from xtyserver.protocol.forbidden import find_forbidden
from xtyserver.protocol.normalize import normalize

RULES_PATH = Path(__file__).with_name("projection.json")
_ENCODER = msgspec.json.Encoder()
# The whitelist, in wire order: section -> field -> kind of value.
_SECTIONS: dict[str, dict[str, str]] = {
    "world": {"location": "str", "time": "str", "season": "str", "weather": "str", "day": "count"},
    "player": {
        "health": "gauge",
        "stamina": "gauge",
        "status": "strs",
        "heldItem": "str",
        "heldItemName": "str",
    },
    "focus": {"kind": "str", "name": "str", "reachable": "bool"},
    "ui": {"busy": "bool", "menu": "str"},
}
_ORDER = (
    "schemaVersion",
    "capturedAt",
    "world",
    "player",
    "focus",
    "nearby",
    "relevantItems",
    "ui",
)


@functools.cache
def rules() -> dict[str, Any]:
    """The projection rules (``projection.json``), read once."""
    value = json.loads(RULES_PATH.read_text(encoding="utf-8"))
    assert isinstance(value, dict)
    return value


def topics(question: str, game: str) -> list[str]:
    """The topics of ``game`` whose words occur in ``question`` (any case), in rule order.

    A word that begins with a space (``" eat"``) matches only at the start of a word of the
    question (not in "overheat"): the question is read with a space before it.
    """
    text = " " + question.lower()
    return [
        rule["topic"]
        for rule in rules()["games"].get(game, [])
        if any(word in text for word in rule["words"])
    ]


def project(observation: Mapping[str, Any], question: str, game: str) -> dict[str, Any]:
    """The modelContext (wire form) for ``question`` from a full ``observation``.

    A ``game`` without rules of its own gets the general rules; the result is one
    the server accepts, within the 2 KiB target.
    """
    r = rules()
    found = [t for t in r["games"].get(game, []) if t["topic"] in topics(question, game)]
    pieces: list[tuple[str, Any]] = []
    fields = [f for t in found for f in t["fields"]] if found else list(r["general"]["fields"])
    for path in dict.fromkeys([*fields, *r["always"]]):
        value = _field(observation, path)
        if value is not None:
            pieces.append((path, value))
    pieces += [("nearby", e) for e in _nearby(observation, found, r)]
    pieces += [("relevantItems", i) for i in _items(observation, found, r)]

    context: dict[str, Any] = {"schemaVersion": 1}
    stamp = observation.get("capturedAt")
    if isinstance(stamp, str) and _string_ok(stamp):
        context["capturedAt"] = stamp
    for path, value in pieces:
        trial = _with(context, path, value, r)
        if trial is not None and context_bytes(trial) <= r["targetBytes"]:
            context = trial
    return _accepted(_ordered(context))


def context_bytes(context: Mapping[str, Any]) -> int:
    """The compact UTF-8 JSON size of a modelContext, as the server measures it."""
    return len(_ENCODER.encode(context))


def _field(observation: Mapping[str, Any], path: str) -> Any:
    section, _, name = path.partition(".")
    part = observation.get(section)
    if not isinstance(part, Mapping):
        return None
    return _valid(_SECTIONS[section][name], part.get(name))


def _valid(kind: str, value: Any) -> Any:
    """``value`` as the server accepts it for ``kind``, or None to leave it out."""
    if isinstance(value, bool):
        return value if kind == "bool" else None
    match kind:
        case "str":
            return value if isinstance(value, str) and _string_ok(value) else None
        case "strs":
            if not isinstance(value, list):
                return None
            kept = [s for s in value if isinstance(s, str) and _string_ok(s)]
            return kept[: rules()["maxStatus"]] or None
        case "gauge" | "distance":
            low = 0.0 if kind == "distance" else -1e9
            ok = isinstance(value, int | float) and math.isfinite(value) and low <= value <= 1e9
            return value if ok else None
        case "count":
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            return value if isinstance(value, int) and 0 <= value <= 1_000_000_000 else None
    return None


def _string_ok(text: str) -> bool:
    limit = rules()["maxStringChars"]
    if len(text) > limit:
        return False
    try:
        normal = normalize(text)
    except ValueError:
        return False
    return len(normal) <= limit and find_forbidden(normal) is None


def _matches(name: str, tags: Sequence[Any], words: Sequence[str], topic: str) -> bool:
    low = name.lower()
    tagged = {t.lower() for t in tags if isinstance(t, str)}
    return topic in tagged or any(w in low or w in tagged for w in words)


def _entity(raw: Any) -> dict[str, Any] | None:
    if not isinstance(raw, Mapping):
        return None
    out: dict[str, Any] = {}
    for key, kind in (("kind", "str"), ("name", "str"), ("distance", "distance")):
        value = _valid(kind, raw.get(key))
        if value is not None:
            out[key] = value
    return out or None


def _nearby(
    observation: Mapping[str, Any], found: list[dict[str, Any]], r: Mapping[str, Any]
) -> list[dict[str, Any]]:
    raw = observation.get("nearby")
    entities = [e for e in map(_entity, raw if isinstance(raw, list) else []) if e]
    # Closest first; the observation's order breaks ties (a stable sort).
    entities.sort(key=lambda e: e.get("distance", math.inf))
    if not found:
        return entities[: r["general"]["nearby"]]
    kinds = {k for t in found for k in t["kinds"]}
    words = [w for t in found for w in t["match"]]
    return [
        e
        for e in entities
        if str(e.get("kind", "")).lower() in kinds
        or _matches(str(e.get("name", "")), [], words, "")
    ]


def _item(raw: Any) -> tuple[dict[str, Any], list[Any]] | None:
    if not isinstance(raw, Mapping):
        return None
    name = _valid("str", raw.get("name"))
    if name is None:
        return None
    item: dict[str, Any] = {"name": name}
    count = _valid("count", raw.get("count"))
    if count is not None:
        item["count"] = count
    tags = raw.get("tags")
    return item, tags if isinstance(tags, list) else []


def _items(
    observation: Mapping[str, Any], found: list[dict[str, Any]], r: Mapping[str, Any]
) -> list[dict[str, Any]]:
    candidates = []
    for key in ("relevantItems", "inventory"):
        raw = observation.get(key)
        candidates += [i for i in map(_item, raw if isinstance(raw, list) else []) if i]
    if found:
        picked = [
            item
            for item, tags in candidates
            if any(_matches(item["name"], tags, t["match"], t["topic"]) for t in found)
        ]
    else:
        picked = [item for item, _ in candidates[: r["general"]["items"]]]
    wanted = _quest_items(observation)
    picked += [item for item, _ in candidates if item["name"].lower() in wanted]
    unique: dict[str, dict[str, Any]] = {}
    for item in picked:
        unique.setdefault(item["name"], item)
    return list(unique.values())


def _quest_items(observation: Mapping[str, Any]) -> set[str]:
    quests = observation.get("quests")
    names: set[str] = set()
    for quest in quests if isinstance(quests, list) else []:
        items = quest.get("items") if isinstance(quest, Mapping) else None
        names |= (
            {i.lower() for i in items if isinstance(i, str)} if isinstance(items, list) else set()
        )
    return names


def _with(
    context: dict[str, Any], path: str, value: Any, r: Mapping[str, Any]
) -> dict[str, Any] | None:
    """``context`` with one more piece, or None when its list is full."""
    trial = dict(context)
    if path in ("nearby", "relevantItems"):
        limit = r["maxNearby"] if path == "nearby" else r["maxItems"]
        current = list(trial.get(path, []))
        if len(current) >= limit:
            return None
        trial[path] = [*current, value]
        return trial
    section, _, name = path.partition(".")
    trial[section] = {**trial.get(section, {}), name: value}
    return trial


def _ordered(context: Mapping[str, Any]) -> dict[str, Any]:
    """Sections and their fields in whitelist order, whatever order they were added in."""
    out: dict[str, Any] = {}
    for key in _ORDER:
        if key not in context:
            continue
        value = context[key]
        if key in _SECTIONS:
            value = {name: value[name] for name in _SECTIONS[key] if name in value}
        out[key] = value
    return out


def _accepted(context: dict[str, Any]) -> dict[str, Any]:
    """Check with the server's decoder; leave out whatever it names (never expected to)."""
    for _ in range(8):
        frame = _ENCODER.encode({"type": "state.update", "modelContext": context})
        try:
            decode_client_frame(frame)
            return context
        except PeerError as exc:
            context = _without(context, exc.fields)
    return {"schemaVersion": 1}


def _without(context: dict[str, Any], fields: Sequence[str]) -> dict[str, Any]:
    out = json.loads(json.dumps(context))
    for field in fields:
        path = field.removeprefix("modelContext").lstrip(".")
        section, _, rest = path.partition(".")
        head = section.split("[", 1)[0]
        if not rest or head != section or head not in _SECTIONS:
            out.pop(head, None)
        else:
            out.get(head, {}).pop(rest.split("[", 1)[0], None)
    return out if fields else {"schemaVersion": 1}
