"""The pure scoring: prompt layers, injected and leaked memories, figures, the comparison."""

from __future__ import annotations

from typing import Any

from xtyeval.evalset import EvalSet, Question, check_set
from xtyeval.scoring import (
    Baseline,
    Loaded,
    Turn,
    compare,
    layer_texts,
    make_baseline,
    score,
    score_turn,
    stats,
    summarize,
)
from xtyserver.memory.types import SharedProfile
from xtyserver.session.prompt import build_messages

OWN = "秋天前盖好鸡舍"
OTHER = "温室还差三个收集包"


def request(memory: str, *, history: bool = True, profile: str = "") -> dict[str, Any]:
    """A chat request as the server builds it (``build_messages``), with a screenshot."""
    messages = build_messages(
        identity="你是小汤圆",
        profile="关于玩家（共享档案）：\n" + profile,
        memory_text=memory,
        history=[("早", "早呀")] if history else [],
        facts_text="当前游戏状态：\n- 世界：地点：Farm",
        text="鸡舍呢？",
        image_url="data:image/png;base64,AAAA",
    )
    return {"messages": messages, "tools": [{"type": "function"}]}


LOADED = Loaded(
    events={"own": ("g/a", OWN), "other": ("g/b", OTHER)},
    profile=SharedProfile(nickname="豆豆", hobbies=["钓鱼", "盖房子"]),
)


def test_layers_follow_the_prompt_order_and_heads() -> None:
    texts = layer_texts(request(OWN))
    assert texts["persona"] == "你是小汤圆"
    assert texts["memory"].endswith(OWN)
    assert texts["facts"].startswith("当前游戏状态")
    assert texts["history"] == "早\n早呀"
    assert texts["player"] == "鸡舍呢？"
    assert texts["other"] == ""
    assert texts["profile"].startswith("关于玩家")
    assert texts["fence"] == "<资料></资料>\n好的。\n<资料></资料>"
    assert "function" in texts["tools"]


def test_recall_leaks_and_wrong_memories_are_found_by_stored_text() -> None:
    q = Question(key="q", text="鸡舍呢？", expect=["own", "profile:hobbies"], must_not=["own"])
    hit = score_turn("g/a", q, Turn("q", request(OWN, profile="爱好：钓鱼、盖房子"), 1, 2), LOADED)
    assert hit.recalled == ["own", "profile:hobbies"] and hit.wrong == ["own"]
    assert hit.leaked == [] and hit.injected == ["own"]
    leak = score_turn(
        "g/b", Question(key="p", text="鸡舍呢？"), Turn("p", request(OWN), 1, 2), LOADED
    )
    assert leak.leaked == ["own"] and leak.recalled == []
    half = score_turn("g/a", q, Turn("q", request("爱好：钓鱼"), 1, 2), LOADED)
    assert half.recalled == []  # a list field counts only when all of it is there


def test_a_turn_without_a_request_is_an_error() -> None:
    q = Question(key="q", text="?")
    result = score_turn("g/a", q, Turn("q", None, 1, 2, None), LOADED)
    assert result.error == "no model request"


def _set(**question: Any) -> EvalSet:
    events = [{"key": "own", "kind": "goal", "subject": "鸡舍", "summary": OWN}]
    doc = {
        "name": "t",
        "start": 0,
        "profile": {},
        "saves": [
            {
                "game": "g",
                "save": "a",
                "name": "A",
                "context": {},
                "events": events,
                "questions": [{"key": "q", "text": "鸡舍呢？", **question}],
            },
            {
                "game": "g",
                "save": "b",
                "name": "B",
                "context": {},
                "events": [{"key": "other", "kind": "goal", "subject": "温室", "summary": OTHER}],
                "questions": [],
            },
        ],
    }
    import msgspec

    return msgspec.convert(doc, EvalSet)


def test_check_set_names_what_is_inconsistent() -> None:
    assert check_set(_set(expect=["own"], about=["other"])) == []
    problems = check_set(_set(expect=["other"], mustNot=["x"], about=["own"], text=OTHER + "？"))
    assert any("expect other is not an event of g/a" in p for p in problems)
    assert any("mustNot x" in p for p in problems)
    assert any("about own" in p for p in problems)
    assert any("other: its summary occurs" in p for p in problems)


def test_compare_fails_on_leaks_and_lower_recall_only() -> None:
    evalset = _set(expect=["own"])
    good = score(evalset, [Turn("q", request(OWN), 1.0, 2.0)], LOADED)
    summary = summarize(evalset, good)
    baseline = make_baseline(summary, good)
    assert [f.fail for f in compare(summary, good, baseline)] == [False, False]
    worse = score(evalset, [Turn("q", request(OTHER), 1.0, 2.0)], LOADED)
    fails = [f.message for f in compare(summarize(evalset, worse), worse, baseline) if f.fail]
    assert fails[0].startswith("1 cross-scope leak(s): q: other")
    assert fails[1].startswith("recall dropped: 0.0000")
    other_set = Baseline("x", 1.0, 0, 0, {}, {}, {})
    assert compare(summary, good, other_set)[-1].fail


def test_stats_use_nearest_rank() -> None:
    s = stats([float(x) for x in range(1, 21)])
    assert (s.p50, s.p95, s.max, s.mean) == (10.0, 19.0, 20.0, 10.5)
    assert stats([]).max == 0.0


def test_a_paraphrase_question_sharing_a_token_with_its_memory_is_refused() -> None:
    # OWN is 秋天前盖好鸡舍: 鸡舍 is one of its tokens
    assert check_set(_set(expect=["own"], kind="synonym", text="鸡窝呢？")) == []
    problems = check_set(_set(expect=["own"], kind="synonym"))  # text 鸡舍呢？
    assert problems == ["q: a synonym question shares 鸡舍 with own"]
    # the question's modelContext names count too
    near = {"nearby": [{"kind": "npc", "name": "鸡舍"}]}
    problems = check_set(_set(expect=["own"], kind="context", text="嗯？", context=near))
    assert problems == ["q: a context question shares 鸡舍 with own"]
    # a literal question may share words
    assert check_set(_set(expect=["own"], kind="literal")) == []


def test_recall_and_others_are_reported_per_question_kind() -> None:
    evalset = _set(expect=["own"], kind="indirect")
    results = score(evalset, [Turn("q", request(OWN), 1.0, 2.0)], LOADED)
    kinds = {row.save: row for row in summarize(evalset, results).kinds}
    assert set(kinds) == {"indirect", "paraphrase (all but literal)"}
    assert kinds["indirect"].recall == 1.0 and kinds["indirect"].others_mean == 0.0
