"""One full observation per game, as docs/adapter-client.md "Projection" shows them."""

from __future__ import annotations

from typing import Any

STAMP = "2026-05-03T01:10:04.250Z"

STARDEW: dict[str, Any] = {
    "capturedAt": STAMP,
    "world": {
        "location": "Farm",
        "time": "08:10",
        "season": "spring",
        "weather": "sunny",
        "day": 5,
    },
    "player": {"health": 100, "stamina": 72, "status": ["well-fed"], "heldItem": "Fishing Rod"},
    "focus": {"kind": "water", "name": "farm pond", "reachable": True},
    "nearby": [
        {"kind": "npc", "name": "Abigail", "distance": 4},
        {"kind": "crop", "name": "Parsnip", "distance": 2},
        {"kind": "monster", "name": "Green Slime", "distance": 12},
        {"kind": "shop", "name": "Pierre's General Store", "distance": 30},
        {"kind": "npc", "name": "Sebastian", "distance": 8},
    ],
    "relevantItems": [{"name": "Bait", "count": 18}],
    "inventory": [
        {"name": "Fishing Rod", "count": 1, "tags": ["fishing", "tool"]},
        {"name": "Parsnip Seeds", "count": 15, "tags": ["farming"]},
        {"name": "Watering Can", "count": 1, "tags": ["tool"]},
        {"name": "Pickaxe", "count": 1, "tags": ["tool"]},
        {"name": "Amethyst", "count": 2, "tags": ["villagers"]},
        {"name": "Copper Ore", "count": 7},
        {"name": "Gold Coin", "count": 3},
    ],
    "quests": [
        {"name": "Introductions", "items": []},
        {"name": "Jodi's Request", "items": ["Cauliflower"]},
    ],
    "ui": {"busy": False},
}

DST: dict[str, Any] = {
    "capturedAt": STAMP,
    "world": {
        "location": "Forest",
        "time": "dusk",
        "season": "winter",
        "weather": "snow",
        "day": 23,
    },
    "player": {
        "health": 62,
        "stamina": 80,
        "status": ["sanity:45", "freezing"],
        "heldItem": "Spear",
        "heldItemName": "长矛",
    },
    "focus": {"kind": "structure", "name": "Fire Pit", "reachable": True},
    "nearby": [
        {"kind": "monster", "name": "Hound", "distance": 14},
        {"kind": "monster", "name": "Spider", "distance": 6},
        {"kind": "bush", "name": "Berry Bush", "distance": 3},
        {"kind": "flower", "name": "Flower", "distance": 5},
        {"kind": "fire", "name": "Fire Pit", "distance": 1},
        {"kind": "structure", "name": "Crock Pot", "distance": 2},
        {"kind": "monster", "name": "Deerclops", "distance": 40},
    ],
    "inventory": [
        {"name": "Log Suit", "count": 1, "tags": ["armor"]},
        {"name": "Meat", "count": 2, "tags": ["food"]},
        {"name": "Berries", "count": 6, "tags": ["food"]},
        {"name": "Petals", "count": 4},
        {"name": "Thermal Stone", "count": 1},
        {"name": "Logs", "count": 12},
        {"name": "Healing Salve", "count": 1},
    ],
    "ui": {"busy": False},
}

ONI: dict[str, Any] = {
    "capturedAt": STAMP,
    "world": {"location": "Terra", "time": "cycle 41 75%", "day": 41},
    "player": {"status": ["oxygen low", "stress 38%", "power 12 kJ"]},
    "focus": {"kind": "building", "name": "Electrolyzer"},
    "nearby": [
        {"kind": "duplicant", "name": "Meep", "distance": 3},
        {"kind": "duplicant", "name": "Ada", "distance": 7},
        {"kind": "building", "name": "Algae Deoxidizer", "distance": 4},
        {"kind": "generator", "name": "Manual Generator", "distance": 6},
        {"kind": "building", "name": "Massage Table", "distance": 9},
        {"kind": "plant", "name": "Mealwood", "distance": 11},
    ],
    "inventory": [
        {"name": "Algae", "count": 320},
        {"name": "Oxylite", "count": 80},
        {"name": "Meal Lice", "count": 14},
        {"name": "Coal", "count": 500},
        {"name": "Copper Ore", "count": 900},
    ],
    "ui": {"menu": "Vitals"},
}

OBSERVATIONS = {"stardew-valley": STARDEW, "dont-starve-together": DST, "oxygen-not-included": ONI}
