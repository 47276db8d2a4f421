"""What may enter the shared profile automatically (issue 9 section 1): the refusal table."""

from __future__ import annotations

import json

import pytest

from xtyserver.memory.extraction import (
    AUTO_PROFILE_FIELDS,
    EXTRACTION_SYSTEM_PROMPT,
    ProfileChange,
    parse_extraction,
)
from xtyserver.memory.game_names import game_name, with_game
from xtyserver.memory.shared_guard import context_names, names_save, refusal
from xtyserver.memory.types import SharedProfile
from xtyserver.protocol.frames import Focus, ModelContext, NearbyEntity, RelevantItem, World

FARM_A = ["鸡舍计划", "答应阿比盖尔明天在河边建鸡舍", "Build the coop by the river for Abigail"]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("很懒", "character"),
        ("脾气急躁", "character"),
        ("是个自私的人", "character"),
        ("lazy", "character"),
        ("a bit selfish and impatient", "character"),
        ("可能喜欢恐怖游戏", "inference"),
        ("probably likes horror games", "inference"),
        ("扮演骑士", "roleplay"),
        ("喜欢假装自己是海盗", "roleplay"),
        ("role-playing as a pirate", "roleplay"),
        ("有抑郁症", "sensitive"),
        ("住在杭州", "sensitive"),
        ("今年17岁", "sensitive"),
        ("信仰佛教", "sensitive"),
        ("lives in Berlin", "sensitive"),
        ("takes medication", "sensitive"),
        ("high salary", "sensitive"),
        ("在河边建鸡舍", "save_specific"),
        ("阿比盖尔", "save_specific"),
        ("building the river coop for Abigail", "save_specific"),
        ("Abigail", "save_specific"),
        ("钓鱼", None),
        ("fishing", None),
        ("简短、带点幽默", None),
        ("小明", None),
        ("puzzle games", None),
    ],
)
def test_refusal_table_in_chinese_and_english(value: str, why: str | None) -> None:
    assert refusal(value, [*FARM_A, "阿比盖尔", "Abigail"]) == why


def test_names_save_edges() -> None:
    assert not names_save("", FARM_A)
    assert not names_save("钓鱼", [])
    assert not names_save("钓鱼", ["鸡"])  # one-character terms do not match on their own
    # Half the value's tokens in the save's texts is the edge: refused at 0.5, kept below.
    assert names_save("river fishing", ["the river bank"])
    assert not names_save("night river fishing", ["the river bank"])


def test_the_model_may_propose_only_nickname_language_style_and_hobbies() -> None:
    assert AUTO_PROFILE_FIELDS == ("nickname", "language", "reply_style", "hobbies")
    for field in ("notes", "personality", "games", "companion_name", "companionPersona"):
        answer = json.dumps({"profile": {"field": field, "value": "x"}})
        assert parse_extraction(answer, profile=SharedProfile(), day=None).profile is None


def test_the_extraction_prompt_says_what_is_never_saved() -> None:
    for words in ("性格", "角色扮演", "敏感", "存档"):
        assert words in EXTRACTION_SYSTEM_PROMPT
    assert "notes、personality、games" in EXTRACTION_SYSTEM_PROMPT


def test_a_smuggled_save_fact_is_refused_and_reported_while_events_stay() -> None:
    answer = json.dumps(
        {
            "profile": {"field": "hobbies", "value": "在河边建鸡舍"},
            "events": [{"kind": "promise", "subject": "鸡舍", "summary": "答应阿比盖尔建鸡舍"}],
        },
        ensure_ascii=False,
    )
    result = parse_extraction(answer, profile=SharedProfile(), day=3, save_texts=FARM_A)
    assert result.profile is None and result.refused == "save_specific"
    assert [e.subject for e in result.events] == ["鸡舍"]


def test_a_value_named_by_the_same_answers_events_is_refused() -> None:
    answer = json.dumps(
        {
            "profile": {"field": "nickname", "value": "枫叶谷农夫"},
            "events": [{"kind": "milestone", "subject": "枫叶谷农场", "summary": "农场起名枫叶谷"}],
        },
        ensure_ascii=False,
    )
    result = parse_extraction(answer, profile=SharedProfile(), day=None)
    assert result.profile is None and result.refused == "save_specific"


def test_a_clean_hobby_passes() -> None:
    answer = json.dumps({"profile": {"field": "hobbies", "value": "钓鱼"}}, ensure_ascii=False)
    result = parse_extraction(answer, profile=SharedProfile(), day=None, save_texts=FARM_A)
    assert result.profile == ProfileChange("hobbies", "钓鱼") and result.refused is None


def test_context_names_are_every_name_of_the_model_context() -> None:
    assert context_names(None) == ()
    ctx = ModelContext(
        world=World(location="鹈鹕镇"),
        focus=Focus(name="阿比盖尔"),
        nearby=[NearbyEntity(name="鸡"), NearbyEntity(kind="tree"), NearbyEntity(name="鸡")],
        relevant_items=[RelevantItem(name="防风草")],
    )
    assert context_names(ctx) == ("鹈鹕镇", "阿比盖尔", "鸡", "防风草")


def test_games_get_readable_names_and_unknown_ids_stay_as_given() -> None:
    assert game_name("stardew-valley") == "星露谷物语"
    assert game_name("dont-starve-together") == "饥荒联机版"
    assert game_name("oxygen-not-included") == "缺氧"
    assert game_name("my-mod-game") == "my-mod-game"
    assert with_game(SharedProfile(), "stardew-valley") == ["星露谷物语"]
    assert with_game(SharedProfile(games=["星露谷物语"]), "stardew-valley") is None
    assert with_game(SharedProfile(auto_shared=False), "stardew-valley") is None
    full = SharedProfile(games=[f"g{i}" for i in range(8)])
    assert with_game(full, "oxygen-not-included") == [*(f"g{i}" for i in range(1, 8)), "缺氧"]
