"""Readable names of the games that connect (pure).

The shared profile's ``games`` ("games played together") is written by the
server alone, from the games whose adapters connect; the extraction model may
not touch it. Known game ids get a readable name; an unknown id is shown as given.
"""

from __future__ import annotations

from xtyserver.memory.types import SharedProfile

GAME_NAMES: dict[str, str] = {
    "stardew-valley": "星露谷物语",
    "dont-starve-together": "饥荒联机版",
    "oxygen-not-included": "缺氧",
    "minecraft": "我的世界",
    "terraria": "泰拉瑞亚",
}
GAME_NAMES_EN: dict[str, str] = {
    "stardew-valley": "Stardew Valley",
    "dont-starve-together": "Don't Starve Together",
    "oxygen-not-included": "Oxygen Not Included",
    "minecraft": "Minecraft",
    "terraria": "Terraria",
}
MAX_GAMES = 8  # SharedProfile.games holds at most 8 items


def game_name(game_id: str, language: str = "zh") -> str:
    """The readable name of ``game_id`` (Chinese, or English), or the id when unknown."""
    return (GAME_NAMES_EN if language == "en" else GAME_NAMES).get(game_id, game_id)


def with_game(profile: SharedProfile, game_id: str) -> list[str] | None:
    """The new ``games`` list once ``game_id`` has connected, or None when unchanged.

    None when the player turned automatic shared memory off or the game is
    already listed. A full list drops its oldest name.
    """
    name = game_name(game_id)
    if not profile.auto_shared or name in profile.games:
        return None
    return [*profile.games, name][-MAX_GAMES:]
