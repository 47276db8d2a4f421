"""What may enter the shared profile automatically: the refusal table."""

from __future__ import annotations

import json

import pytest

from xtyserver.memory.extraction import (
    AUTO_PROFILE_FIELDS,
    EXTRACTION_SYSTEM_PROMPT,
    ProfileChange,
    parse_extraction,
    parse_summary,
)
from xtyserver.memory.game_names import game_name, with_game
from xtyserver.memory.shared_guard import context_names, event_refusal, names_save, refusal
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


# Game events: a sensitive fact or a judgement of the
# player is never stored; a game full of NPC birthdays, tempers, potions and
# hospitals still is.
EVENT_REFUSED = [
    # the four: said about the player, and by the player
    ("玩家说自己最近得了抑郁症在吃药", "sensitive"),
    ("玩家很懒，脾气暴躁", "character"),
    ("我最近得了抑郁症", "sensitive"),
    ("我这人就是懒", "character"),
    # health, age, home, beliefs, money, sexuality, work
    ("玩家最近失眠很严重", "sensitive"),
    ("玩家下周要去医院做手术", "sensitive"),
    ("我确诊了糖尿病", "sensitive"),
    ("玩家怀孕了", "sensitive"),
    ("我今年17岁", "sensitive"),
    ("玩家住在杭州西湖区", "sensitive"),
    ("我信基督教", "sensitive"),
    ("玩家是党员", "sensitive"),
    ("我月薪八千", "sensitive"),
    ("玩家欠了很多网贷", "sensitive"),
    ("我是同性恋", "sensitive"),
    ("玩家刚失业", "sensitive"),
    ("The player says they were diagnosed with depression", "sensitive"),
    ("I've been on antidepressants", "sensitive"),
    ("The player is 16 years old", "sensitive"),
    ("I live in Berlin", "sensitive"),
    ("The player's salary is 5000 a month", "sensitive"),
    ("Player mentioned seeing a therapist every week", "sensitive"),
    # character judgements
    ("玩家性格内向，不爱说话", "character"),
    ("玩家是个自私的人", "character"),
    ("我太笨了", "character"),
    ("The player is lazy and impatient", "character"),
    ("I'm so stupid", "character"),
    ("The player seems arrogant", "character"),
]
EVENT_KEPT = [
    "玩家今天钓到了一条大鱼",
    "玩家打算秋天前盖好鸡舍",
    "玩家决定不跟 Joja 公司合作",
    "玩家在 Emily 生日那天送了紫水晶",
    "Emily 的生日是春季27日",
    "给复制人吃了药片治好了黏液肺",
    "玩家做了三瓶治疗药水",
    "Shane 脾气很臭但喜欢啤酒",
    "Clint 脾气不好，总是闷闷的",
    "Abigail 性格开朗，喜欢紫水晶",
    "玩家懒得去矿洞，想先钓鱼",
    "我傻眼了，鸡舍被烧了",
    "复制人 Meep 压力很大",
    "玩家在基地附近建了医疗站",
    "玩家和 Shane 结婚了",
    "猪王给了玩家十块金子",
    "我们约好明天一起去打蜂后",
    "玩家的农场今天收入 5000 金",
    "玩家有点害怕冬天",
    "The player caught a legendary fish today",
    "The player plans to build a coop by the river",
    "Emily's birthday is Spring 27",
    "The colony's hospital bed is next to the toilets",
    "The player disabled the gas pump",
    "Harvey runs the clinic in Pelican Town",
    "Allergy Medication 可以治过敏",
]


@pytest.mark.parametrize(("text", "why"), EVENT_REFUSED)
def test_event_guard_refuses_sensitive_facts_and_judgements_of_the_player(
    text: str, why: str
) -> None:
    assert event_refusal(text) == why
    assert event_refusal("近况", text) == why  # in the summary behind a plain subject


@pytest.mark.parametrize("text", EVENT_KEPT)
def test_event_guard_keeps_ordinary_game_facts(text: str) -> None:
    assert event_refusal(text) is None


def test_refused_events_are_dropped_and_reported_kept_ones_stay() -> None:
    events = [
        {"kind": "event", "subject": "近况", "summary": "玩家说自己最近得了抑郁症在吃药"},
        {"kind": "event", "subject": "钓鱼", "summary": "玩家今天钓到了一条大鱼"},
    ]
    answer = json.dumps({"profile": None, "events": events}, ensure_ascii=False)
    result = parse_extraction(answer, profile=SharedProfile(), day=None)
    assert [e.summary for e in result.events] == ["玩家今天钓到了一条大鱼"]
    assert result.events_refused == ("sensitive",)
    summary = json.dumps(
        {"events": [{"kind": "milestone", "subject": "我", "summary": "我这人就是懒"}]},
        ensure_ascii=False,
    )
    assert parse_summary(summary, day=None) == ()
