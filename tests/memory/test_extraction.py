"""Background extraction: prompt building and tolerant parsing of model answers."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from xtyserver.memory.extraction import (
    SUMMARY_SYSTEM_PROMPT,
    ProfileChange,
    Turn,
    build_extraction_messages,
    build_summary_messages,
    parse_extraction,
    parse_summary,
    profile_update,
)
from xtyserver.memory.types import SharedProfile


def _event(
    subject: str = "社区中心", summary: str = "先完成鱼缸收集包", **kw: object
) -> dict[str, object]:
    return {"kind": "goal", "subject": subject, "summary": summary, "importance": 4, **kw}


def test_extraction_messages_carry_the_player_text_and_the_reply() -> None:
    msgs = build_extraction_messages("我想先做鱼缸收集包", "好呀，我们一起钓鲶鱼")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "JSON" in msgs[0]["content"]
    assert "我想先做鱼缸收集包" in msgs[1]["content"] and "钓鲶鱼" in msgs[1]["content"]


def test_extractor_answer_yields_one_profile_change_and_two_events_stamped_with_the_day() -> None:
    answer = json.dumps(
        {
            "profile": {"field": "nickname", "value": "小明"},
            "events": [_event(), _event("温室", "修温室"), _event("矿洞", "下矿")],
        },
        ensure_ascii=False,
    )
    result = parse_extraction(answer, profile=SharedProfile(), day=12)
    assert result.profile == ProfileChange("nickname", "小明")
    assert [e.subject for e in result.events] == ["社区中心", "温室"]
    assert all(e.day == 12 and e.status == "active" for e in result.events)


def test_extractor_answer_inside_a_code_fence_is_accepted() -> None:
    raw = "```json\n" + json.dumps({"events": [_event()]}, ensure_ascii=False) + "\n```"
    assert len(parse_extraction(raw, profile=SharedProfile(), day=None).events) == 1


@pytest.mark.parametrize(
    "raw", ["", "not json", "[]", '{"events": 3}', '{"profile": "x"}', "null", '{"events": [1]}']
)
def test_bad_extractor_answers_give_an_empty_result_without_raising(raw: str) -> None:
    result = parse_extraction(raw, profile=SharedProfile(), day=1)
    assert result.profile is None and result.events == ()


def test_extractor_candidates_with_forbidden_content_or_bad_limits_are_dropped() -> None:
    answer = json.dumps(
        {
            "profile": {"field": "notes", "value": "邮箱是 ming@example.com"},
            "events": [
                _event("存档", "存档在 C:\\Users\\ming\\AppData"),
                _event("长", "长" * 161),
                _event("坏", "x", importance=9),
                _event("类", "x", kind="secret"),
                _event("好", "留下这一条"),
            ],
        },
        ensure_ascii=False,
    )
    result = parse_extraction(answer, profile=SharedProfile(), day=None)
    assert result.profile is None
    assert [e.subject for e in result.events] == ["好"]


@pytest.mark.parametrize(
    ("subject", "summary"),
    [
        ("账号", "steam ７６５６１１９８０００００００００１"),
        ("邮箱", "bob＠example.com"),
        ("账号", "76561198\u200b000000001"),
        ("邮箱", "bob@exam\u200bple.com"),
        ("路径", "存档在 Ｃ：＼Ｕｓｅｒｓ＼ａｌｉｃｅ"),
        ("密钥", "ｓｋ－ｐｒｏｊ－ABCDEFGHIJKLMNOPQRSTUVWX"),
        ("崩溃", "游戏崩了 pid=4242"),
        ("Ｃ：＼Ｕｓｅｒｓ＼ａｌｉｃｅ", "bob＠example.com"),  # in the subject too
    ],
)
def test_extractor_candidates_with_look_alike_forbidden_content_are_dropped(
    subject: str, summary: str
) -> None:
    answer = json.dumps(
        {
            "profile": {"field": "notes", "value": summary},
            "events": [_event(subject, summary), _event("好", "留下这一条")],
        },
        ensure_ascii=False,
    )
    result = parse_extraction(answer, profile=SharedProfile(), day=None)
    assert result.profile is None
    assert [e.subject for e in result.events] == ["好"]


def test_extractor_candidates_are_kept_as_proposed_without_invisibles() -> None:
    answer = json.dumps(
        {
            "profile": {"field": "nickname", "value": "小明\u200b！"},
            "events": [_event("Ｆｉｓｈ　Ｔａｎｋ", "先做鱼\u200b缸，再钓鱼！")],
        },
        ensure_ascii=False,
    )
    result = parse_extraction(answer, profile=SharedProfile(), day=None)
    assert result.profile == ProfileChange("nickname", "小明！")
    assert [(e.subject, e.summary) for e in result.events] == [
        ("Ｆｉｓｈ　Ｔａｎｋ", "先做鱼缸，再钓鱼！")
    ]
    summary = parse_summary(answer, day=None)
    assert [(e.subject, e.summary) for e in summary] == [
        ("Ｆｉｓｈ　Ｔａｎｋ", "先做鱼缸，再钓鱼！")
    ]


def test_a_candidate_that_is_only_invisible_characters_is_dropped() -> None:
    answer = json.dumps(
        {
            "profile": {"field": "nickname", "value": "\u200b\u200d"},
            "events": [_event("\u200b", "x")],
        }
    )
    result = parse_extraction(answer, profile=SharedProfile(), day=None)
    assert result.profile is None and result.events == ()


def test_extractor_proposes_no_profile_change_when_auto_share_is_off() -> None:
    answer = json.dumps({"profile": {"field": "nickname", "value": "小明"}}, ensure_ascii=False)
    off = parse_extraction(answer, profile=SharedProfile(auto_shared=False), day=None)
    assert off.profile is None


@pytest.mark.parametrize("field", ["companion_name", "auto_shared", "password", "companionPersona"])
def test_extractor_may_not_touch_companion_identity_or_unknown_fields(field: str) -> None:
    answer = json.dumps({"profile": {"field": field, "value": "x"}})
    assert parse_extraction(answer, profile=SharedProfile(), day=None).profile is None


def test_list_field_change_adds_one_item_and_skips_duplicates() -> None:
    profile = SharedProfile(hobbies=["钓鱼"])
    add = parse_extraction(
        '{"profile": {"field": "hobbies", "value": "种田"}}', profile=profile, day=None
    )
    assert add.profile is not None
    assert profile_update(profile, add.profile) == ("hobbies", ["钓鱼", "种田"])
    dup = parse_extraction(
        '{"profile": {"field": "hobbies", "value": "钓鱼"}}', profile=profile, day=None
    )
    assert dup.profile is None
    full = SharedProfile(hobbies=[f"h{i}" for i in range(8)])
    over = parse_extraction(
        '{"profile": {"field": "hobbies", "value": "new"}}', profile=full, day=None
    )
    assert over.profile is None


def test_summary_needs_at_least_two_turns_and_reads_only_the_last_twelve() -> None:
    assert build_summary_messages([]) is None
    assert build_summary_messages([Turn("你好", "你好呀")]) is None
    assert build_summary_messages([Turn("a", "b"), Turn("c", "d")]) is not None
    turns = [Turn(f"玩家话{i:02d}", f"回复{i:02d}") for i in range(20)]
    msgs = build_summary_messages(turns)
    assert msgs is not None
    text = msgs[1]["content"]
    assert "玩家话08" in text and "玩家话19" in text and "玩家话07" not in text


def test_summary_answer_yields_at_most_two_durable_events() -> None:
    raw = json.dumps({"events": [_event(str(i), "进展") for i in range(4)]})
    assert len(parse_summary(raw, day=3)) == 2
    assert parse_summary("oops", day=3) == ()


@given(st.text(max_size=300))
def test_parsing_arbitrary_text_never_raises(raw: str) -> None:
    result = parse_extraction(raw, profile=SharedProfile(), day=None)
    assert len(result.events) <= 2
    assert len(parse_summary(raw, day=None)) <= 2


def test_summary_keeps_only_durable_kinds_never_a_plain_event() -> None:
    kinds = ["event", "goal", "event", "decision", "promise"]
    raw = json.dumps({"events": [_event(str(i), "进展", kind=k) for i, k in enumerate(kinds)]})
    assert [e.kind for e in parse_summary(raw, day=3)] == ["goal", "decision"]
    for kind in ("goal", "decision", "promise", "relationship", "milestone"):
        one = json.dumps({"events": [_event("x", "y", kind=kind)]})
        assert [e.kind for e in parse_summary(one, day=None)] == [kind]
    only_events = json.dumps({"events": [_event("x", "y", kind="event")]})
    assert parse_summary(only_events, day=None) == ()
    assert "event" not in SUMMARY_SYSTEM_PROMPT.split("事件格式")[1].split("importance")[0]
