"""Issue 18 section 3: a model's JSON answer read leniently, each tolerated shape tested.

The same reader serves the turn extractor, the stage summary and the session
fold; an answer that cannot be read changes nothing.
"""

from __future__ import annotations

import json

import pytest

from xtyserver.memory import lenient
from xtyserver.memory.extraction import parse_extraction, parse_summary
from xtyserver.memory.types import SharedProfile
from xtyserver.session.fold import parse_fold
from xtyserver.session.working import SessionSummary

FOLD = {"requests": ["先修温室"], "decisions": ["明天去矿洞"], "mood": "开心"}
FOLD_JSON = json.dumps(FOLD, ensure_ascii=False)
WANT = SessionSummary(requests=("先修温室",), decisions=("明天去矿洞",), mood="开心")
EVENT = {"kind": "goal", "subject": "鱼缸收集包", "summary": "计划完成鱼缸收集包", "importance": 4}
EXTRACTION_JSON = json.dumps({"profile": None, "events": [EVENT]}, ensure_ascii=False)

SHAPES = {
    "bare": "{}",
    "bom": "\ufeff{}",
    "fence": "```json\n{}\n```",
    "fence with prose around": "好的，这是摘要：\n```json\n{}\n```\n希望有帮助！",
    "bare fence": "```\n{}\n```",
    "object in prose": "当然可以。摘要如下 {} 以上。",
    "trailing commas": None,  # built below: commas before } and ]
    "bom, prose and fence": "\ufeff以下是 JSON：```JSON {} ```",
}


def shaped(name: str, body: str) -> str:
    if name == "trailing commas":
        return body.replace('"]', '",]')[:-1] + ",\n}"
    template = SHAPES[name]
    assert template is not None
    return template.replace("{}", body)


@pytest.mark.parametrize("name", list(SHAPES))
def test_each_tolerated_shape_is_read_by_the_fold(name: str) -> None:
    assert parse_fold(shaped(name, FOLD_JSON)) == WANT


@pytest.mark.parametrize("name", list(SHAPES))
def test_each_tolerated_shape_is_read_by_the_extractor_and_the_summary(name: str) -> None:
    answer = shaped(name, EXTRACTION_JSON)
    (event,) = parse_extraction(answer, profile=SharedProfile(), day=3).events
    assert event.subject == "鱼缸收集包" and event.day == 3
    (again,) = parse_summary(answer, day=None)
    assert again.subject == "鱼缸收集包"


def test_trailing_commas_inside_strings_are_kept() -> None:
    assert lenient.json_object('{"a": "x,}", "b": [1, 2,],}') == {"a": "x,}", "b": [1, 2]}


def test_braces_inside_strings_do_not_end_the_object_in_prose() -> None:
    text = '先说一句 {"requests": ["用 } 和 { 的名字"], "mood": "好"} 后面还有 {"x": 1}'
    assert lenient.json_object(text) == {"requests": ["用 } 和 { 的名字"], "mood": "好"}


def test_a_plain_text_fold_answer_becomes_the_free_text_within_the_cap() -> None:
    previous = SessionSummary(requests=("先修温室",))
    prose = "玩家和小汤圆聊了钓鱼，\n决定明天去矿洞。"
    summary = parse_fold(prose, previous)
    assert summary == SessionSummary(
        requests=("先修温室",), text="玩家和小汤圆聊了钓鱼， 决定明天去矿洞。"
    )
    assert summary is not None and "概要：玩家和小汤圆聊了钓鱼" in summary.render()
    long = parse_fold("很长的概要" * 400, previous)
    assert long is not None
    capped = long.capped(800, 80)
    assert len(capped.render()) == 800 and capped.requests == ("先修温室",)


@pytest.mark.parametrize(
    "answer",
    [
        "",
        "   ",
        '{"requests": ["先修温室"',  # tries to be JSON, cut off
        "```json\n{broken}\n```",
        '{"requests": [1, 2]}',  # wrong shape
        '{"requests": "not a list"}',
        '{"mood": 5}',
        "[1, 2, 3]",
    ],
)
def test_malformed_answers_change_nothing(answer: str) -> None:
    assert parse_fold(answer, SessionSummary(requests=("旧的",))) is None
    assert parse_extraction(answer, profile=SharedProfile(), day=None).events == ()
    assert parse_summary(answer, day=None) == ()


def test_a_prose_answer_gives_the_extractor_nothing() -> None:
    assert parse_extraction("这一轮没有值得记的。", profile=SharedProfile(), day=None).events == ()
