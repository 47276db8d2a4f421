"""The game glossary: names in both languages, ids and aliases meet; files are validated."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.memory.conftest import relevant
from xtyserver.errors import UsageError
from xtyserver.memory.glossary import (
    TERM_PREFIX,
    GlossaryError,
    parse_documents,
)
from xtyserver.memory.retrieval import SaveIndex
from xtyserver.memory.types import MemoryEvent, Scope
from xtyserver.serve.glossary import load_glossary

GLOSSARY = load_glossary(None)
SV, DST, ONI = "stardew-valley", "dont-starve-together", "oxygen-not-included"

# (game, what a mod sends / a player says, the entity it must map to)
MAPPING = [
    # Stardew Valley: English name, Chinese name, alias, internal id
    (SV, "Abigail", "abigail"),
    (SV, "阿比盖尔喜欢什么", "abigail"),
    (SV, "那个紫发女孩", "abigail"),
    (SV, "the purple-haired girl", "abigail"),
    (SV, "Coop", "coop"),
    (SV, "鸡舍还差木头", "coop"),
    (SV, "鸡窝盖好了吗", "coop"),
    (SV, "Big Coop", "coop"),  # broader
    (SV, "大鸡舍", "big_coop"),
    (SV, "Fishing Rod", "fishing_rod"),
    (SV, "钓竿", "fishing_rod"),
    (SV, "鱼竿", "fishing_rod"),
    (SV, "玻璃纤维鱼竿", "fiberglass_rod"),
    (SV, "Fiberglass Rods", "fishing_rod"),  # plural, broader
    (SV, "(O)66", "amethyst"),
    (SV, "紫水晶", "amethyst"),
    (SV, "CommunityCenter", "community_center"),
    (SV, "社区中心", "community_center"),
    (SV, "镇长", "lewis"),
    (SV, "Ｐａｒｓｎｉｐ", "parsnip"),  # full-width forms are normalised
    (SV, "防风草", "parsnip"),
    (SV, "Winter Star", "winter_star"),
    (SV, "冬星节", "winter_star"),
    # one-character names inside a sentence, and beside another one
    (SV, "我的牛呢", "cow"),
    (SV, "鸡怎么还不下蛋", "chicken"),
    (SV, "我家鸡", "chicken"),
    (SV, "牛", "cow"),
    # names as the game shows them
    (SV, "把泪晶送人了", "frozen_tear"),
    (SV, "棚屋里放了什么", "shed"),
    (SV, "钓到一条比目鱼", "flounder"),
    (SV, "大比目鱼", "halibut"),
    (ONI, "甜素甲虫", "sweetle"),
    # Don't Starve Together: prefab ids
    (DST, "pigking", "pig_king"),
    (DST, "Pig King", "pig_king"),
    (DST, "猪王", "pig_king"),
    (DST, "heatrock", "thermal_stone"),
    (DST, "保暖石", "thermal_stone"),
    (DST, "Deerclops", "deerclops"),
    (DST, "独眼巨鹿", "deerclops"),
    (DST, "冬季boss", "deerclops"),
    (DST, "firehound", "hound"),
    (DST, "狗来了", "hound_attack"),
    (DST, "Pig Man", "pig"),
    (DST, "讨伐", "boss"),
    # Oxygen Not Included: building and element ids
    (ONI, "MineralDeoxidizer", "oxygen_diffuser"),
    (ONI, "Oxygen Diffuser", "oxygen_diffuser"),
    (ONI, "氧气扩散器", "oxygen_diffuser"),
    (ONI, "DirtyWater", "polluted_water"),
    (ONI, "污染水", "polluted_water"),
    (ONI, "脏水", "polluted_water"),
    (ONI, "Oilfloater", "slickster"),
    (ONI, "SteamTurbine2", "steam_turbine"),
    (ONI, "蒸汽涡轮机", "steam_turbine"),
    (ONI, "Slimelung", "slimelung"),
    (ONI, "黏液肺", "slimelung"),
]


@pytest.mark.parametrize(("game", "text", "key"), MAPPING)
def test_names_map_to_their_entity(game: str, text: str, key: str) -> None:
    assert TERM_PREFIX + key in GLOSSARY.for_game(game).terms(text)


# Texts that must NOT map to an entity (no false friends)
NOT_MAPPING = [
    (SV, "coopers", "coop"),  # a longer word is not the name
    (SV, "Lightning Rod", "fishing_rod"),  # the longest name wins
    (DST, "Abigail", "abigail_sv"),
    (ONI, "pigking", "pig_king"),  # another game's id
    (SV, "MineralDeoxidizer", "oxygen_diffuser"),
    (SV, "牛奶卖了", "cow"),  # a longer name starting there wins over the one character
    (SV, "买了一头奶牛", "milk"),
    (SV, "钓到一条比目鱼", "halibut"),
]


@pytest.mark.parametrize(("game", "text", "key"), NOT_MAPPING)
def test_other_names_do_not_map(game: str, text: str, key: str) -> None:
    assert TERM_PREFIX + key not in GLOSSARY.for_game(game).terms(text)


def test_every_packaged_game_has_a_few_hundred_entries_and_the_game_ids_of_the_code() -> None:
    from xtyserver.memory.game_names import GAME_NAMES

    for game in (SV, DST, ONI):
        assert game in GAME_NAMES
        assert len(GLOSSARY.for_game(game)) >= 200
    abigail = GLOSSARY.for_game(SV).entries["abigail"]
    assert (abigail.en, abigail.zh, abigail.unverified) == ("Abigail", "阿比盖尔", False)
    assert GLOSSARY.for_game(SV).entries["leo"].unverified
    assert len(GLOSSARY.for_game("minecraft")) == 0


def _ev(i: int, subject: str, summary: str, game: str = SV) -> MemoryEvent:
    return MemoryEvent(
        i, game, "s1", "relationship", subject, summary, 3, "active", False, None, 0.0, 0.0, 0.0
    )


@pytest.mark.parametrize(
    ("memory", "query"),
    [
        ("阿比盖尔已经四颗心了，她最喜欢紫水晶", "What gift does Abigail like?"),
        ("阿比盖尔已经四颗心了，她最喜欢紫水晶", "那个紫发女孩爱收什么"),
        ("Abigail likes amethyst best", "阿比盖尔喜欢什么"),
        ("打算秋天前盖好鸡舍", "鸡窝"),
        ("打算秋天前盖好鸡舍", "Coop"),
        ("第3天买了一头奶牛", "牛奶拿去卖了吗"),  # related: a source and what it gives
        ("牛奶攒了十瓶", "我的牛呢"),  # ... both ways, the one character inside a sentence
        ("鸡窝已经盖好了", "小鸡怎么样了"),
    ],
)
def test_the_index_meets_names_across_languages(memory: str, query: str) -> None:
    scope = Scope(SV, "s1")
    events = [_ev(1, "x", memory), _ev(2, "y", "在皮埃尔的店买了种子")]
    with_glossary = SaveIndex(scope, events, glossary=GLOSSARY.for_game(SV))
    words_only = SaveIndex(scope, events)
    assert relevant(with_glossary, query) == [1]
    assert relevant(words_only, query) == []


def test_a_kind_names_its_members_and_warm_clothes_meet_the_cold() -> None:
    # Every DST boss is a boss ("which bosses have I killed"), and what keeps the cold
    # out meets freezing (「没那么容易冻僵」 and the earmuffs).
    scope = Scope(DST, "s1")
    events = [
        _ev(1, "x", "Day 31: Killed Deerclops in the ice field", DST),
        _ev(2, "y", "Day 18: Killed Bearger with a team of pigs", DST),
        _ev(3, "z", "第22天，玩家用兔毛做了一顶兔耳罩戴上了", DST),
        _ev(4, "w", "Day 6: Made a backpack from twigs and grass", DST),
    ]
    index = SaveIndex(scope, events, glossary=GLOSSARY.for_game(DST))
    assert sorted(relevant(index, "which bosses have I taken down?")) == [1, 2]
    assert relevant(index, "入冬以后我从哪天起没那么容易冻僵的") == [3]


def _write(folder: Path, name: str, text: str) -> None:
    (folder / "glossary").mkdir(exist_ok=True)
    (folder / "glossary" / name).write_text(text, encoding="utf-8")


def test_a_player_file_adds_and_replaces_entries(tmp_path: Path) -> None:
    _write(
        tmp_path,
        "my-mod.toml",
        'game = "stardew-valley"\n[npc]\n'
        'abigail = { en = "Abigail", zh = "阿比盖尔", aliases = ["小紫"] }\n'
        'sophia = { en = "Sophia", zh = "索菲亚", ids = ["SophiaSVE"] }\n',
    )
    sv = load_glossary(tmp_path).for_game(SV)
    assert "@abigail" in sv.terms("小紫在哪")
    assert "@abigail" not in sv.terms("紫发女孩")  # the player's entry replaced the packaged one
    assert sv.terms("SophiaSVE") == ["@sophia"]
    assert sv.entries["sophia"].source.endswith("my-mod.toml")


SVH = 'game = "stardew-valley"\n[npc]\n'


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (SVH + 'bob = { zh = "鲍勃" }\n', "entry npc.bob: field 'en' is missing"),
        (SVH + 'bob = { en = "Bob", zh = 3 }\n', "entry npc.bob: field 'zh'"),
        (
            'game = "stardew-valley"\n[npc]\nbob = { en = "Bob", zh = "鲍勃", alias = ["b"] }\n',
            "entry npc.bob: unknown field 'alias'",
        ),
        (
            'game = "stardew-valley"\n[npc]\nbob = { en = "Bob", zh = "鲍勃", aliases = "b" }\n',
            "entry npc.bob: field 'aliases' must be a list",
        ),
        (
            SVH + 'bob = { en = "Bob", zh = "鲍勃", broader = "nobody" }\n',
            "entry npc.bob: field 'broader' names 'nobody'",
        ),
        (
            'game = "stardew-valley"\n[npc]\nBob = { en = "Bob", zh = "鲍勃" }\n',
            "entry npc.Bob: the key must be",
        ),
        ('[npc]\nbob = { en = "Bob", zh = "鲍勃" }\n', "'game' must name the game id"),
        ('game = "stardew-valley"\n[npc\n', "not valid TOML"),
    ],
)
def test_a_bad_player_file_stops_the_start_naming_file_entry_and_field(
    tmp_path: Path, text: str, message: str
) -> None:
    _write(tmp_path, "bad.toml", text)
    with pytest.raises(UsageError) as info:
        load_glossary(tmp_path)
    assert "bad.toml" in str(info.value)
    assert message in str(info.value)


def test_related_entries_are_found_from_either_side_and_must_name_entries() -> None:
    scope = Scope(DST, "s1")
    events = [_ev(1, "冬天", "冬天快到了，还没准备", DST), _ev(2, "猪王", "跟猪王换了金子", DST)]
    index = SaveIndex(scope, events, glossary=GLOSSARY.for_game(DST))
    assert relevant(index, "冬帽做了吗") == [1]  # clothing and its weather
    assert GLOSSARY.for_game(DST).terms("冬帽") == ["@winter_hat"]  # a query adds none
    bad = {"game": "g", "npc": {"a": {"en": "Ann", "zh": "安", "related": ["zed"]}}}
    with pytest.raises(GlossaryError, match=r"entry npc\.a: field 'related' names 'zed'"):
        parse_documents([("one", bad)])


def test_parse_documents_is_pure_and_later_documents_win() -> None:
    doc1 = {"game": "g", "npc": {"a": {"en": "Ann", "zh": "安"}}}
    doc2 = {"game": "g", "npc": {"a": {"en": "Ann", "zh": "安妮"}}}
    glossary = parse_documents([("one", doc1), ("two", doc2)])
    assert glossary.for_game("g").entries["a"].zh == "安妮"
    with pytest.raises(GlossaryError, match=r"one: entry npc\.a: field 'en'"):
        parse_documents([("one", {"game": "g", "npc": {"a": {"en": 1, "zh": "安"}}})])


def test_no_packaged_name_means_two_entities_of_one_game() -> None:
    from xtyserver.memory.tokenize import tokenize

    for game in (SV, DST, ONI):
        owners: dict[tuple[str, ...], set[str]] = {}
        for entry in GLOSSARY.for_game(game).entries.values():
            for name in entry.names:
                tokens = tuple(tokenize(name))
                assert tokens, f"{game}: {entry.key}: {name!r} has no token"
                owners.setdefault(tokens, set()).add(entry.key)
        ambiguous = {" ".join(t): sorted(k) for t, k in owners.items() if len(k) > 1}
        assert ambiguous == {}, game


@pytest.mark.parametrize(
    ("game", "text", "key"),
    [
        ("oxygen-not-included", "小哈那个圈是哪天搭好的", "hatch"),  # 哈奇
        (SV, "小阿比最近怎么样", "abigail"),  # inside a longer run
        (SV, "老齐那屋我是哪天进去的", "qi"),
    ],
)
def test_pet_names_of_people_and_creatures_find_them(game: str, text: str, key: str) -> None:
    assert TERM_PREFIX + key in GLOSSARY.for_game(game).terms(text)


def test_a_pet_name_two_entities_share_or_a_common_word_finds_none() -> None:
    oni = GLOSSARY.for_game("oxygen-not-included")
    assert oni.terms("小米是啥时候来我家的") == []  # 米普 and 米玛 both
    assert GLOSSARY.for_game(SV).terms("老师说小心点") == []


@pytest.mark.parametrize(
    ("game", "text", "key"),
    [
        ("oxygen-not-included", "build a gas generator next", "natural_gas_generator"),
        ("oxygen-not-included", "the generator", "coal_generator"),  # the head alone: as before
        ("stardew-valley", "went to Pierre's store", "pierres_shop"),
        ("dont-starve-together", "the fruit fly lord again", "fruit_fly_lord"),
    ],
)
def test_a_long_name_is_found_by_its_head_word_and_one_more(game: str, text: str, key: str) -> None:
    assert TERM_PREFIX + key in GLOSSARY.for_game(game).terms(text)


def test_a_part_of_a_name_needs_a_distinctive_head_and_a_word_only_one_name_has() -> None:
    doc = {
        "game": "g",
        "item": {
            "salt": {"en": "Salt Water Geyser", "zh": "盐水泉"},
            "dirty": {"en": "Polluted Water Geyser", "zh": "污水泉"},
            "coop": {"en": "Big Chicken House", "zh": "大鸡舍"},
            "hat": {"en": "Big Purple Hat", "zh": "紫帽"},
        },
    }
    game = parse_documents([("one", doc)]).for_game("g")
    assert "@salt" in game.terms("the salt geyser")
    assert not {"@salt", "@dirty"} & set(game.terms("the water geyser"))  # two names share it
    assert "@coop" not in game.terms("my chicken house")  # a generic head word
    assert "@hat" in game.terms("my purple hat") and "@hat" not in game.terms("a big hat")
    assert "@salt" not in game.terms("salt on the fish, then a long walk to the geyser")
