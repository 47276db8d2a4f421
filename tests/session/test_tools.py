"""The memory tools' pure core: arguments, confirmation tokens at their edges, rendering."""

from __future__ import annotations

import json

import pytest

from xtyserver.memory.commands import Forget, Search, Words
from xtyserver.memory.manage import (
    TOKEN_TTL,
    Confirmations,
    ForgetPreview,
    ForgetSpec,
    Overview,
    SaveView,
)
from xtyserver.memory.types import MemoryEvent, PlayStats, Scope, SharedProfile
from xtyserver.session.consent import admit
from xtyserver.session.tool_results import render
from xtyserver.session.tool_schemas import CORRECT, FORGET, SEARCH, VIEW, ForgetArgs
from xtyserver.session.tools import (
    REFUSED,
    Confirming,
    CorrectOp,
    PreviewOp,
    ToolCall,
    ToolFailure,
    ViewOp,
    guard_correction,
    names_target,
    parse_call,
    resolve,
    unsaid,
)

FARM_A = Scope("stardew-valley", "farm-a")
FARM_B = Scope("stardew-valley", "farm-b")
T0 = 1_790_000_000.0


def _event(id_: int, scope: Scope = FARM_A) -> MemoryEvent:
    return MemoryEvent(
        id=id_,
        game_id=scope.game_id,
        save_id=scope.save_id,
        kind="goal",
        subject="社区中心",
        summary="计划先完成社区中心",
        importance=3,
        status="active",
        pinned=False,
        day=None,
        created_at=T0,
        updated_at=T0,
        last_used_at=T0,
    )


def _preview(item: int = 7) -> ForgetPreview:
    spec = ForgetSpec(kind="item", game_id="stardew-valley", save_id="farm-a", item_id=item)
    view = SaveView(scope=FARM_A, name="阳光农场", events=(_event(item),))
    return ForgetPreview(spec=spec, saves=(view,), profile_fields=(), stats_saves=())


def _forget(**args: object) -> ToolCall:
    return ToolCall("c", FORGET, json.dumps(args, ensure_ascii=False))


def _confirming(**args: object) -> ForgetArgs:
    op = parse_call(_forget(**args), FARM_B)
    assert isinstance(op, Confirming)
    return op.args


def test_a_tool_the_turn_did_not_offer_is_an_error_text_and_runs_nothing() -> None:
    view = ToolCall("a", VIEW, "")
    assert parse_call(view, FARM_B, offered=(VIEW, SEARCH)) == ViewOp("stardew-valley", None, "all")
    assert parse_call(view, FARM_B, offered=()) == f"错误：这一轮没有提供工具 {VIEW!r}"
    forget = _forget(target="save", save="阳光农场")
    assert "这一轮没有提供工具" in str(parse_call(forget, FARM_B, offered=(VIEW, SEARCH)))
    # A name that is no tool at all says so, offered or not.
    assert parse_call(ToolCall("a", "nope", ""), FARM_B, offered=()) == "错误：没有工具 'nope'"


def test_arguments_become_typed_operations_and_bad_ones_error_texts() -> None:
    assert parse_call(ToolCall("a", VIEW, ""), FARM_B) == ViewOp("stardew-valley", None, "all")
    correct = ToolCall("a", CORRECT, '{"field":"hobbies","value":["自动化"]}')
    assert parse_call(correct, FARM_B, player_text="我更喜欢自动化") == (
        CorrectOp("hobbies", ["自动化"], FARM_B)
    )
    assert parse_call(_forget(target="save", save="阳光农场"), FARM_B) == PreviewOp(
        FARM_B, "save", "阳光农场", None
    )
    # null counts as absent (models send it for optional arguments)
    assert parse_call(_forget(target="save", save=None, item=None), FARM_B) == PreviewOp(
        FARM_B, "save", None, None
    )
    for bad in (
        ToolCall("a", CORRECT, '{"field":"autoShared","value":"x"}'),
        ToolCall("a", CORRECT, '{"field":"companionPersona","value":"x"}'),
        ToolCall("a", CORRECT, '{"field":"notes","value":["x"]}'),
        ToolCall("a", CORRECT, '{"field":"games","value":["x"]}'),
        ToolCall("a", FORGET, '{"target":"all","includeStats":true}'),
        ToolCall("a", FORGET, '{"target":"all","includeStats":false}'),
        ToolCall("a", FORGET, '{"target":"all","includeStats":null}'),
        ToolCall("a", FORGET, '["all"]'),
        ToolCall("a", FORGET, '{"target":"item"}'),
        ToolCall("a", FORGET, '{"target":"everything"}'),
        ToolCall("a", "rm_rf", "{}"),
        ToolCall("a", VIEW, "{oops"),
    ):
        assert isinstance(parse_call(bad, FARM_B), str)


def _words(token: str, text: str = "好") -> Words:
    """The player's words answering the server's question about ``token``'s item."""
    return Words(token=token, text=text, asked="要删掉吗？")


def test_a_token_is_valid_at_exactly_its_ttl_and_refused_just_past_it() -> None:
    assert TOKEN_TTL == 120.0
    tokens = Confirmations("s1")
    forget = Forget(target=_preview().spec)
    at_edge = tokens.issue(_preview(), T0, turn=1)
    assert admit(forget, _words(at_edge), tokens, T0 + 120.0, turn=2) == forget
    late = tokens.issue(_preview(), T0, turn=1)
    assert admit(forget, _words(late), tokens, T0 + 120.001, turn=2) == "expired"
    assert "过期" in REFUSED["expired"]


def test_a_token_is_single_use_bound_to_its_target_connection_and_a_later_turn() -> None:
    tokens = Confirmations("s1")
    forget = Forget(target=_preview().spec)
    token = tokens.issue(_preview(), T0, turn=1)
    assert admit(forget, _words(token), tokens, T0 + 1, turn=1) == "too_soon"
    assert "还没有得到玩家的确认" in REFUSED["too_soon"]
    other = _confirming(target="item", save="阳光农场", item=8, confirmToken=token)
    assert not names_target(other, FARM_B, _preview())
    elsewhere = Forget(target=_preview(8).spec)
    refused = admit(elsewhere, _words(token), tokens, T0 + 1, turn=2)
    assert refused == "other_target" and "另一个删除目标" in REFUSED[refused]
    assert admit(forget, _words(token), Confirmations("s2"), T0 + 1, turn=2) == "unknown"
    right = _confirming(target="item", save="阳光农场", item=7, confirmToken=token)
    assert names_target(right, FARM_B, _preview())
    # No explicit yes from the player, or no question asked: refused, the token not spent.
    assert admit(forget, _words(token, "好的，谢谢"), tokens, T0 + 1, turn=2) == "not_agreed"
    assert admit(forget, Words(token=token, text="好"), tokens, T0 + 1, turn=2) == "not_agreed"
    assert admit(forget, _words(token), tokens, T0 + 1, turn=2) == forget
    assert admit(forget, _words(token), tokens, T0 + 2, turn=3) == "unknown"
    assert "已经用过" in REFUSED["unknown"]


def test_a_save_is_found_by_its_readable_name_or_id() -> None:
    overview = Overview(
        profile=SharedProfile(),
        saves=(
            SaveView(scope=FARM_A, name="阳光农场", events=()),
            SaveView(scope=FARM_B, name=None, events=()),
        ),
        stats=PlayStats(games=[], saves=[]),
    )
    op = PreviewOp(FARM_B, "item", "阳光农场", 7)
    assert resolve(op, overview) == _preview().spec
    assert resolve(PreviewOp(FARM_B, "save", "FARM-A", None), overview) == ForgetSpec(
        kind="save", game_id="stardew-valley", save_id="farm-a"
    )
    assert isinstance(resolve(PreviewOp(FARM_B, "save", "月光", None), overview), str)


@pytest.mark.parametrize("secret", ["sk-proj-abcdefghijklmnop1234", "C:\\Users\\ann\\save"])
def test_results_are_redacted_like_prompts(secret: str) -> None:
    text = render(ToolFailure("x", f"bad {secret}"), current=FARM_A)
    assert secret not in text and "已隐去" in text


def test_a_preview_names_the_save_and_the_token_and_keeps_statistics() -> None:
    text = render(_preview(), current=FARM_B, token="abc123")
    assert "阳光农场" in text and "abc123" in text and "还没有删" in text and "保留" in text
    assert "farm-a" not in text.split("确认码")[0].replace("stardew-valley", "")


@pytest.mark.parametrize(
    ("field", "value", "text", "missing"),
    [
        ("hobbies", ["自动化"], "我其实更喜欢自动化，把共同爱好改一下", None),
        ("hobbies", ["自动化", "钓鱼"], "我喜欢自动化和钓鱼", None),
        ("hobbies", ["自动化", "钓鱼"], "我喜欢自动化", "钓鱼"),
        ("nickname", "小明", "以后叫我 小明 吧", None),
        ("nickname", "我", "叫我小明吧", "我"),
        ("nickname", "Ann", "call me ann", None),
        ("nickname", "ＡＢＣ", "叫我ABC", None),  # judged on the normal form
        ("replyStyle", "简短 一点", "说话简短一点", None),
        ("replyStyle", "简短", "今天天气不错", "简短"),
        ("language", "NPC", "这个NPC说话好奇怪", "NPC"),
        ("hobbies", [], "把爱好清空", ""),
        ("nickname", "", "把昵称清空", ""),
    ],
)
def test_a_correction_value_must_be_said_as_a_value(
    field: str, value: str | list[str], text: str, missing: str | None
) -> None:
    assert unsaid(value, text, field) == missing


def test_a_correction_passes_the_shared_profile_guard() -> None:
    ok = CorrectOp("hobbies", ["自动化"], FARM_A, ("阿比盖尔",))
    assert guard_correction(ok, ["社区中心", "计划先完成社区中心的鱼缸收集包"]) is None
    for bad, texts in (
        (CorrectOp("hobbies", ["社区中心"], FARM_A), ["社区中心"]),
        (CorrectOp("hobbies", ["阿比盖尔"], FARM_A, ("阿比盖尔",)), []),
        (CorrectOp("replyStyle", "脾气暴躁", FARM_A), []),
        (CorrectOp("hobbies", ["吃药治抑郁"], FARM_A), []),
        (CorrectOp("hobbies", ["扮演海盗"], FARM_A), []),
    ):
        assert isinstance(guard_correction(bad, texts), str)


def test_a_search_call_searches_the_current_save_only() -> None:
    from xtyserver.session.tools import ToolCall, parse_call

    here = Scope("stardew-valley", "farm-a")

    def call(**args: object) -> object:
        return parse_call(ToolCall("c", SEARCH, json.dumps(args)), here, 12)

    assert call(query="Ａｂｉｇａｉｌ", kind="relationship") == Search(
        scope=here, query="Abigail", kind="relationship", day=12
    )
    for bad in ({"query": "x", "save": "farm-b"}, {"query": ""}, {"query": "x", "kind": "boss"}):
        assert str(call(**bad)).startswith("错误")
    assert str(call(query="   ")).startswith("错误")


def test_search_results_are_at_most_5_whole_lines_within_600_characters() -> None:
    from xtyserver.memory.retrieval import SearchResult
    from xtyserver.session.tool_results import render
    from xtyserver.session.tools import MAX_SEARCH_CHARS

    here = Scope("stardew-valley", "farm-a")

    def ev(i: int, summary: str) -> MemoryEvent:
        return MemoryEvent(
            i,
            here.game_id,
            here.save_id,
            "event",
            f"事{i}",
            summary,
            3,
            "active",
            False,
            None,
            0.0,
            0.0,
            0.0,
        )

    short = render(SearchResult(tuple(ev(i, "短") for i in range(1, 9))), current=here)
    assert short.count("\n  #") == 5
    long = render(SearchResult(tuple(ev(i, "长" * 150) for i in range(1, 6))), current=here)
    assert len(long) <= MAX_SEARCH_CHARS and long.count("\n  #") == 3  # whole lines only
    none = render(SearchResult(), current=here)
    assert "没有找到" in none
