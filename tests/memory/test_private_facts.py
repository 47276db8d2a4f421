"""The player's health, address and real name: blanked out before a background model
reads them, refused by the server's own check in Chinese and English; a game's own
sick villagers and hospitals are not the player's. Relative dates resolved."""

from __future__ import annotations

import datetime as dt

import pytest

from xtyserver.memory import dates, private_facts
from xtyserver.memory.extraction import (
    EXTRACTION_SYSTEM_PROMPT,
    PRIVACY_RULES,
    SUMMARY_SYSTEM_PROMPT,
    Turn,
    build_extraction_messages,
    build_summary_messages,
    parse_summary,
    same_memory,
)
from xtyserver.memory.shared_guard import event_refusal, kind_refusal
from xtyserver.memory.types import MemoryEvent

PRIVATE = [
    ("我真名叫张伟", "张伟"),
    ("其实我的真实姓名是李娜啦", "李娜"),
    ("my real name is John Smith", "John Smith"),
    ("My address is 12 Baker Street", "Baker"),
    ("我家住在北京市朝阳区建国路88号", "建国路"),
    ("我的地址是上海市徐汇区漕溪北路", "漕溪"),
    ("I live at 221B Baker Street", "221B"),
    ("I have diabetes", "diabetes"),
    ("I was diagnosed with epilepsy last year", "epilepsy"),
    ("我有糖尿病，得少吃糖", "糖尿病"),
    ("我得了抑郁症", "抑郁"),
    ("我每天都要吃药", "吃药"),
]
GAME = [
    "阿比盖尔生病了",
    "去医院看望哈维",
    "我吃了回血药水",
    "我住的农场在鹈鹕镇南边",
    "Leah lives in the cottage",
]


@pytest.mark.parametrize(("said", "value"), PRIVATE)
def test_a_private_fact_is_blanked_out_and_refused(said: str, value: str) -> None:
    assert value not in private_facts.redact(f"好的，{said}。我们去钓鱼吧")
    assert "我们去钓鱼吧" in private_facts.redact(f"好的，{said}。我们去钓鱼吧")
    assert event_refusal("玩家", said) == "sensitive"
    assert kind_refusal(said) == "sensitive"


# What an extraction or summary model writes of the player: the server's own check reads it.
WRITTEN = [
    ("玩家的真名叫张伟", "张伟"),
    ("The player's real name is John Smith", "Smith"),
    ("Real name: John Smith", "Smith"),
    ("玩家有糖尿病", "糖尿病"),
    ("玩家每天在吃降压药", "降压"),
    ("The player has diabetes", "diabetes"),
    ("The player has a heart condition", "heart"),
    ("The player is diabetic", "diabetic"),
    ("Player is on insulin", "insulin"),
    ("The player lives at 12 Elm Street", "Elm"),
    ("The player's home address is 5 Main St", "Main"),
    ("Home address: 5 Main St", "Main"),
]
WRITTEN_GAME = [
    "The player lives on the farm",
    "The player has a cow named Bessie",
    "The player is on the beach",
    "玩家有一头奶牛",
    "玩家吃了治疗药膏",
    "玩家今天在吃烤鱼",
]


@pytest.mark.parametrize(("written", "value"), WRITTEN)
def test_the_servers_check_refuses_a_private_fact_written_of_the_player(
    written: str, value: str
) -> None:
    assert event_refusal("玩家", written) == "sensitive"
    assert kind_refusal(written) == "sensitive"
    assert value not in private_facts.redact(written)


@pytest.mark.parametrize("written", WRITTEN_GAME)
def test_the_players_game_life_written_of_them_passes(written: str) -> None:
    assert event_refusal("玩家", written) is None
    assert private_facts.find(written) is None


@pytest.mark.parametrize("said", GAME)
def test_the_games_own_people_and_places_pass(said: str) -> None:
    assert private_facts.find(said) is None
    assert private_facts.redact(said) == said


def test_no_background_model_reads_the_private_value_and_both_carry_one_privacy_rule() -> None:
    said = "我真名叫张伟，我有糖尿病。明天去矿洞"
    turn = build_extraction_messages(said, "好的")
    summary = build_summary_messages([Turn(said, "好的"), Turn("走吧", "出发")])
    assert summary is not None
    for messages in (turn, summary):
        text = "\n".join(m["content"] for m in messages)
        assert "张伟" not in text and "糖尿病" not in text and "明天去矿洞" in text
    for rule in PRIVACY_RULES:
        assert rule in EXTRACTION_SYSTEM_PROMPT and rule in SUMMARY_SYSTEM_PROMPT


def _held(kind: str, subject: str) -> MemoryEvent:
    return MemoryEvent(
        id=7, game_id="stardew-valley", save_id="farm-a", kind=kind, subject=subject,
        summary="计划完成鱼缸收集包", importance=3, status="active", pinned=False, day=None,
        created_at=0.0, updated_at=0.0, last_used_at=0.0,
    )  # fmt: skip


def test_a_reworded_subject_of_the_same_kind_is_the_held_memory() -> None:
    held = [_held("goal", "鱼缸收集包")]
    assert same_memory("goal", "完成鱼缸收集包", held) is held[0]
    assert same_memory("promise", "完成鱼缸收集包", held) is None
    assert same_memory("goal", "种草莓", held) is None
    answer = '{"events": [{"kind": "goal", "subject": "完成鱼缸收集包", "summary": "明天钓鲶鱼"}]}'
    [event] = parse_summary(answer, day=5, today=dt.date(2026, 12, 7), held=held)
    assert (event.subject, event.summary) == ("鱼缸收集包", "明天（2026-12-08，游戏第6天）钓鲶鱼")


MONDAY = dt.date(2026, 12, 7)


@pytest.mark.parametrize(
    ("said", "day", "stored"),
    [
        ("明天去找阿比盖尔", 12, "明天（2026-12-08，游戏第13天）去找阿比盖尔"),
        ("明天去找阿比盖尔", None, "明天（2026-12-08）去找阿比盖尔"),
        ("后天", 1, "后天（2026-12-09，游戏第3天）"),
        ("下周二一起去钓鱼", 12, "下周二（2026-12-15）一起去钓鱼"),
        ("周一前", None, "周一（2026-12-07）前"),
        ("星期天去教堂", None, "星期天（2026-12-13）去教堂"),
        ("下个月", None, "下个月（2027-01）"),
        ("明年春天种草莓", 12, "明年春天（游戏第12天说的）种草莓"),
        ("meet Leah tomorrow", 3, "meet Leah tomorrow (2026-12-08, in-game day 4)"),
        ("next Tuesday we fish", None, "next Tuesday (2026-12-15) we fish"),
        ("plant it next spring", 12, "plant it next spring (said on in-game day 12)"),
        ("明天（2026-12-08）去", 12, "明天（2026-12-08）去"),
    ],
)
def test_relative_dates_are_stored_resolved(said: str, day: int | None, stored: str) -> None:
    assert dates.resolve(said, MONDAY, day) == stored
    assert dates.resolve(stored, MONDAY, day) == stored  # twice changes nothing


def test_a_year_end_resolves_into_the_next_year() -> None:
    assert dates.resolve("下个月", dt.date(2026, 12, 31)) == "下个月（2027-01）"
    assert dates.resolve("明天", dt.date(2026, 12, 31)) == "明天（2027-01-01）"
