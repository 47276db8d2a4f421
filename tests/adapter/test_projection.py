"""project(): topics per game in Chinese and English, the budget, the server's own decoder."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.adapter.observations import OBSERVATIONS, STARDEW
from tests.property_budget import examples
from xtyserver.adapter.projection import context_bytes, project, rules, topics
from xtyserver.protocol.codec import decode_client_frame


def names(context: dict[str, Any], key: str) -> list[str]:
    return [entry.get("name", "") for entry in context.get(key, [])]


# (game, question, topics, kept [paths or names], left out)
TABLE: list[tuple[str, str, list[str], list[str], list[str]]] = [
    (
        "stardew-valley",
        "今天适合钓鱼吗？",
        ["fishing"],
        ["focus.name", "player.stamina", "player.heldItem", "world.weather", "Bait", "Fishing Rod"],
        ["player.health", "Abigail", "Pickaxe", "Green Slime"],
    ),
    (
        "stardew-valley",
        "Is it a good day to go fishing?",
        ["fishing"],
        ["focus.kind", "player.stamina", "Bait"],
        ["Parsnip Seeds", "Sebastian"],
    ),
    (
        "stardew-valley",
        "防风草种子什么时候种？",
        ["farming"],
        ["Parsnip Seeds", "Watering Can", "Parsnip", "world.weather"],
        ["Bait", "Abigail"],
    ),
    (
        "stardew-valley",
        "When should I plant these seeds?",
        ["farming"],
        ["Parsnip Seeds", "Parsnip"],
        ["Fishing Rod"],
    ),
    (
        "stardew-valley",
        "送什么礼物给阿比盖尔？",
        ["villagers"],
        ["Abigail", "Sebastian", "Amethyst"],
        ["Green Slime", "Bait", "player.stamina"],
    ),
    (
        "stardew-valley",
        "What gift does Abigail love?",
        ["villagers"],
        ["Abigail", "Amethyst"],
        ["Parsnip"],
    ),
    (
        "stardew-valley",
        "矿洞下一层要带什么？",
        ["mining"],
        ["player.health", "player.stamina", "Green Slime", "Pickaxe", "Copper Ore"],
        ["Abigail", "Bait"],
    ),
    (
        "stardew-valley",
        "How deep should I mine today?",
        ["mining"],
        ["player.health", "Pickaxe"],
        ["Sebastian"],
    ),
    (
        "stardew-valley",
        "怎么赚更多钱？",
        ["money"],
        ["Pierre's General Store", "Gold Coin"],
        ["Abigail", "player.health"],
    ),
    ("stardew-valley", "What sells for the best price?", ["money"], ["Gold Coin"], ["Parsnip"]),
    (
        "stardew-valley",
        "附近有危险吗？",
        ["danger"],
        ["player.health", "player.stamina", "Green Slime"],
        ["Abigail", "Parsnip", "Pierre's General Store", "Bait"],
    ),
    (
        "stardew-valley",
        "Is it safe here? That slime attacks me",
        ["mining", "danger"],
        ["player.health", "Green Slime"],
        ["Sebastian", "Parsnip Seeds"],
    ),
    (
        "stardew-valley",
        "明天是什么节日？",
        ["festivals"],
        ["world.season", "Abigail", "Sebastian"],
        ["Green Slime", "Bait", "player.stamina"],
    ),
    (
        "stardew-valley",
        "What do I bring to the egg festival?",
        ["festivals"],
        ["world.season", "Abigail"],
        ["Green Slime", "Parsnip"],
    ),
    (
        "stardew-valley",
        "乔迪的任务要交什么？",
        ["quests"],
        ["Abigail", "Sebastian"],
        ["Green Slime", "Bait", "player.health"],
    ),
    (
        "stardew-valley",
        "Which bundle should I finish for the community center?",
        ["quests"],
        ["Abigail"],
        ["Green Slime", "Parsnip"],
    ),
    (
        "dont-starve-together",
        "附近危险吗？",
        ["danger"],
        [
            "player.health",
            "player.status",
            "Spider",
            "Hound",
            "Deerclops",
            "Log Suit",
            "Healing Salve",
        ],
        ["Berry Bush", "Berries", "Flower"],
    ),
    (
        "dont-starve-together",
        "Am I in danger from that hound?",
        ["danger"],
        ["Hound", "Spider", "player.health"],
        ["Crock Pot"],
    ),
    (
        "dont-starve-together",
        "我好饿，吃什么？",
        ["food"],
        ["Meat", "Berries", "Berry Bush", "Crock Pot", "player.status"],
        ["Hound", "Log Suit"],
    ),
    (
        "dont-starve-together",
        "What should I cook? I'm starving",
        ["food"],
        ["Meat", "Crock Pot"],
        ["Spider"],
    ),
    (
        "dont-starve-together",
        "理智太低了怎么办",
        ["sanity"],
        ["player.status", "Flower", "Petals"],
        ["Meat", "Crock Pot"],
    ),
    ("dont-starve-together", "My sanity is dropping", ["sanity"], ["Flower"], ["Berries"]),
    (
        "dont-starve-together",
        "基地建在哪里好？",
        ["base"],
        ["focus.name", "Fire Pit", "Crock Pot", "Logs"],
        ["Hound", "Meat"],
    ),
    ("dont-starve-together", "Where should I build my base?", ["base"], ["Logs"], ["Berries"]),
    (
        "dont-starve-together",
        "冬天怎么过？",
        ["season"],
        ["world.weather", "player.status", "Thermal Stone", "Fire Pit"],
        ["Berries", "Spider"],
    ),
    (
        "dont-starve-together",
        "How do I survive the winter cold?",
        ["season"],
        ["Thermal Stone"],
        ["Meat"],
    ),
    (
        "dont-starve-together",
        "How do I stop overheating in summer?",
        ["season"],
        ["world.weather", "player.status"],
        ["Meat", "Crock Pot"],
    ),
    (
        "dont-starve-together",
        "巨鹿来了怎么办？",
        ["bosses"],
        ["Deerclops", "player.health", "world.season", "Log Suit", "Healing Salve"],
        ["Berry Bush", "Berries", "Flower"],
    ),
    (
        "dont-starve-together",
        "How do I beat Deerclops?",
        ["bosses"],
        ["Deerclops", "player.health"],
        ["Berries", "Crock Pot"],
    ),
    (
        "oxygen-not-included",
        "氧气不够了怎么办？",
        ["oxygen"],
        ["player.status", "Algae", "Oxylite", "Algae Deoxidizer", "focus.name"],
        ["Meep", "Coal"],
    ),
    (
        "oxygen-not-included",
        "My base is running out of oxygen",
        ["oxygen"],
        ["Algae", "Oxylite"],
        ["Meal Lice"],
    ),
    (
        "oxygen-not-included",
        "食物还够吃几个周期？",
        ["food"],
        ["Meal Lice", "Mealwood"],
        ["Algae", "Coal"],
    ),
    ("oxygen-not-included", "Do we have enough food?", ["food"], ["Meal Lice"], ["Oxylite"]),
    (
        "oxygen-not-included",
        "复制人压力太大",
        ["stress", "duplicants"],
        ["Massage Table", "Meep", "Ada", "player.status"],
        ["Algae", "Coal"],
    ),
    ("oxygen-not-included", "How do I lower stress?", ["stress"], ["Massage Table"], ["Oxylite"]),
    ("oxygen-not-included", "电力不够", ["power"], ["Manual Generator", "Coal"], ["Meep", "Algae"]),
    (
        "oxygen-not-included",
        "Should I build another battery for power?",
        ["power"],
        ["Manual Generator", "Coal"],
        ["Meal Lice"],
    ),
    (
        "oxygen-not-included",
        "哪个复制人技能最好？",
        ["duplicants"],
        ["Meep", "Ada"],
        ["Coal", "Algae Deoxidizer"],
    ),
    (
        "oxygen-not-included",
        "Which duplicant has the best skills?",
        ["duplicants"],
        ["Meep"],
        ["Coal"],
    ),
    (
        "oxygen-not-included",
        "复制人生病了，是病菌吗？",
        ["duplicants", "germs"],
        ["player.status", "Meep"],
        ["Coal", "Algae"],
    ),
    (
        "oxygen-not-included",
        "Where do these slimelung germs come from?",
        ["germs"],
        ["player.status", "Algae Deoxidizer"],
        ["Meep", "Coal"],
    ),
    (
        "oxygen-not-included",
        "基地太热了怎么降温？",
        ["temperature"],
        ["player.status", "focus.name", "Algae Deoxidizer"],
        ["Meep", "Meal Lice"],
    ),
    (
        "oxygen-not-included",
        "The base is overheating",
        ["temperature"],
        ["focus.name"],
        ["Meep", "Coal"],
    ),
    (
        "oxygen-not-included",
        "复制人士气太低",
        ["stress", "duplicants"],
        ["Massage Table", "Meep", "player.status"],
        ["Coal", "Algae"],
    ),
    (
        "oxygen-not-included",
        "Their morale is below expectations",
        ["stress"],
        ["Massage Table"],
        ["Oxylite"],
    ),
]


def present(context: dict[str, Any], what: str) -> bool:
    section, dot, field = what.partition(".")
    if dot and section in ("world", "player", "focus", "ui"):
        return field in context.get(section, {})
    return what in names(context, "nearby") + names(context, "relevantItems")


@pytest.mark.parametrize(("game", "question", "found", "kept", "left"), TABLE)
def test_projection_keeps_the_topic_and_leaves_the_rest(
    game: str, question: str, found: list[str], kept: list[str], left: list[str]
) -> None:
    assert topics(question, game) == found
    context = project(OBSERVATIONS[game], question, game)
    for what in kept:
        assert present(context, what), (what, context)
    for what in left:
        assert not present(context, what), (what, context)
    # The always fields are there whatever the topic.
    assert context["world"]["day"] == OBSERVATIONS[game]["world"]["day"]
    assert context["world"]["location"] == OBSERVATIONS[game]["world"]["location"]
    decode_client_frame(json.dumps({"type": "state.update", "modelContext": context}))


def test_every_game_has_the_topics_its_players_ask_about() -> None:
    games = rules()["games"]
    assert [t["topic"] for t in games["stardew-valley"]] == [
        "fishing",
        "farming",
        "villagers",
        "mining",
        "money",
        "danger",
        "festivals",
        "quests",
    ]
    assert [t["topic"] for t in games["dont-starve-together"]] == [
        "danger",
        "food",
        "sanity",
        "base",
        "season",
        "bosses",
    ]
    assert [t["topic"] for t in games["oxygen-not-included"]] == [
        "oxygen",
        "food",
        "stress",
        "power",
        "duplicants",
        "germs",
        "temperature",
    ]


MINES: dict[str, Any] = {
    "world": {"location": "The Mines 42", "time": "14:20", "season": "summer", "day": 12},
    "player": {"health": 38, "stamina": 55, "heldItem": "Steel Smallsword"},
    "nearby": [
        {"kind": "building", "name": "Coop", "distance": 2},
        {"kind": "animal", "name": "Cow", "distance": 3},
        {"kind": "water", "name": "farm pond", "distance": 4},
        {"kind": "monster", "name": "Green Slime", "distance": 6},
        {"kind": "monster", "name": "Bat", "distance": 9},
        {"kind": "monster", "name": "Skeleton", "distance": 15},
    ],
    "inventory": [
        {"name": "Steel Smallsword", "count": 1, "tags": ["weapon"]},
        {"name": "Cheese", "count": 3, "tags": ["food"]},
        {"name": "Parsnip Seeds", "count": 15},
    ],
}


@pytest.mark.parametrize("question", ["附近有危险吗？", "Is anything dangerous nearby?"])
def test_a_stardew_danger_question_keeps_the_monsters_not_the_farm(question: str) -> None:
    context = project(MINES, question, "stardew-valley")
    assert names(context, "nearby") == ["Green Slime", "Bat", "Skeleton"]
    assert context["player"]["health"] == 38
    assert set(names(context, "relevantItems")) >= {"Steel Smallsword", "Cheese"}
    assert "Parsnip Seeds" not in names(context, "relevantItems")


def test_a_question_without_topic_gets_the_general_fields_and_the_closest() -> None:
    context = project(STARDEW, "你好呀", "stardew-valley")
    assert context["player"]["health"] == 100
    assert names(context, "nearby") == ["Parsnip", "Abigail", "Sebastian"]
    assert len(context["relevantItems"]) <= 5


def test_an_unknown_game_gets_the_general_rules() -> None:
    context = project(STARDEW, "今天适合钓鱼吗？", "terraria")
    assert "health" in context["player"]


def test_projection_is_deterministic_and_leaves_the_observation_alone() -> None:
    before = copy.deepcopy(STARDEW)
    first = project(STARDEW, "今天适合钓鱼吗？", "stardew-valley")
    again = project(copy.deepcopy(STARDEW), "今天适合钓鱼吗？", "stardew-valley")
    assert json.dumps(first) == json.dumps(again)
    assert before == STARDEW


def test_only_whitelisted_fields_come_out() -> None:
    observation = {**STARDEW, "secret": "x", "world": {**STARDEW["world"], "seed": 42}}
    observation["player"] = {**STARDEW["player"], "steamId": "76561198000000001"}
    context = project(observation, "你好", "stardew-valley")
    assert "secret" not in context and "inventory" not in context and "quests" not in context
    assert "seed" not in context["world"] and "steamId" not in context["player"]


def test_a_big_observation_is_cut_to_the_target_by_dropping_whole_pieces() -> None:
    big = copy.deepcopy(STARDEW)
    big["nearby"] = [
        {"kind": "monster", "name": f"怪物{'甲' * 60}{i}", "distance": i} for i in range(40)
    ]
    big["inventory"] = [{"name": f"Pickaxe {'x' * 180} {i}", "count": i} for i in range(40)]
    context = project(big, "矿洞里危险吗？", "stardew-valley")
    assert context_bytes(context) <= rules()["targetBytes"]
    # The highest priorities stay: the topic fields, then the always fields.
    assert context["player"]["health"] == 100 and context["world"]["day"] == 5
    # Whatever is kept is whole and closest first.
    kept = context.get("nearby", [])
    assert kept and all(e["name"].startswith("怪物") and len(e["name"]) == 63 for e in kept)
    assert [e["distance"] for e in kept] == sorted(e["distance"] for e in kept)


def test_values_the_server_would_refuse_are_left_out_not_cut() -> None:
    observation = copy.deepcopy(STARDEW)
    observation["world"]["location"] = "L" * 201
    observation["player"]["heldItem"] = "C:\\Users\\Ann\\rod.txt"
    observation["player"]["health"] = float("nan")
    observation["world"]["day"] = 45.0
    context = project(observation, "矿洞里危险吗？", "stardew-valley")
    assert "location" not in context["world"] and "heldItem" not in context["player"]
    assert "health" not in context["player"]
    assert context["world"]["day"] == 45 and type(context["world"]["day"]) is int


# -- property: every projection passes the server's own decoder --------------------------

_ANY = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=300),
    lambda inner: (
        st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=12), inner, max_size=6)
    ),
    max_leaves=20,
)
_ENTITY = st.fixed_dictionaries(
    {},
    optional={
        "kind": st.text(max_size=210) | _ANY,
        "name": st.text(max_size=210) | _ANY,
        "distance": st.floats() | st.integers() | _ANY,
        "count": _ANY,
        "tags": _ANY,
    },
)
_SECTION = st.dictionaries(
    st.sampled_from(
        [
            "location",
            "time",
            "season",
            "weather",
            "day",
            "health",
            "stamina",
            "status",
            "heldItem",
            "kind",
            "name",
            "reachable",
            "busy",
            "menu",
            "x",
        ]
    ),
    _ANY | st.text(max_size=210) | st.lists(st.text(max_size=210), max_size=12),
    max_size=8,
)
_OBSERVATION = st.fixed_dictionaries(
    {},
    optional={
        "capturedAt": st.sampled_from(["2026-05-03T01:10:04Z", "yesterday", "2026-05-03T01:10:04"])
        | _ANY,
        "world": _SECTION,
        "player": _SECTION,
        "focus": _SECTION,
        "ui": _SECTION,
        "nearby": st.lists(_ENTITY, max_size=30) | _ANY,
        "relevantItems": st.lists(_ENTITY, max_size=30),
        "inventory": st.lists(_ENTITY, max_size=30),
        "quests": st.lists(
            st.fixed_dictionaries({"items": st.lists(st.text(max_size=20))}), max_size=3
        )
        | _ANY,
    },
)
_QUESTIONS = st.sampled_from([q for _, q, *_ in TABLE]) | st.text(max_size=40)


@settings(max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    observation=_OBSERVATION,
    question=_QUESTIONS,
    game=st.sampled_from([*OBSERVATIONS, "other-game"]),
)
def test_every_projection_passes_the_servers_decoder_within_the_target(
    observation: dict[str, Any], question: str, game: str
) -> None:
    context = project(observation, question, game)
    assert context_bytes(context) <= rules()["targetBytes"]
    frame = json.dumps({"type": "state.update", "modelContext": context}, ensure_ascii=False)
    decoded = decode_client_frame(frame)
    assert not decoded.context_over_target
    assert project(observation, question, game) == context
