"""Pure tests of turn planning: facts, memories, prompt and what is marked as used."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import msgspec
from hypothesis import given
from hypothesis import strategies as st

from xtyserver.memory.retrieval import MemoryBudget, SaveIndex
from xtyserver.memory.types import MemoryEvent, Scope, SharedProfile
from xtyserver.protocol.frames import ModelContext
from xtyserver.protocol.images import PreparedImage
from xtyserver.session.events import SaveMemory
from xtyserver.session.prompt import unfence
from xtyserver.session.turn import focus_terms, plan_turn

T0 = 1_790_000_000.0
FARM = Scope("stardew-valley", "farm-a")


def context(age: float, **parts: Any) -> ModelContext:
    stamp = datetime.fromtimestamp(T0 - age, UTC).isoformat().replace("+00:00", "Z")
    raw = {"schemaVersion": 1, "capturedAt": stamp, **parts}
    return msgspec.json.decode(json.dumps(raw), type=ModelContext)


def event(event_id: int, subject: str, summary: str, **kw: Any) -> MemoryEvent:
    values: dict[str, Any] = {
        "id": event_id,
        "game_id": FARM.game_id,
        "save_id": FARM.save_id,
        "kind": "event",
        "subject": subject,
        "summary": summary,
        "importance": 3,
        "status": "active",
        "pinned": False,
        "day": None,
        "created_at": T0,
        "updated_at": T0,
        "last_used_at": T0,
    }
    values.update(kw)
    return MemoryEvent(**values)


def plan(**kw: Any) -> Any:
    args: dict[str, Any] = {
        "save": FARM,
        "text": "今天钓什么鱼",
        "context": None,
        "day": None,
        "memory": None,
        "history": [],
        "image": None,
        "now": T0,
        "persona": "你是小汤圆。",
        "budget": MemoryBudget(),
        "stale_after": 5.0,
        "drop_after": 30.0,
    }
    args.update(kw)
    return plan_turn(**args)


def text_of(messages: list[dict[str, Any]]) -> str:
    return json.dumps(messages, ensure_ascii=False)


def test_plan_without_memory_or_context_is_persona_then_the_players_text() -> None:
    result = plan()
    assert result.messages == [
        {"role": "system", "content": "你是小汤圆。"},
        {"role": "user", "content": "今天钓什么鱼"},
    ]
    assert (result.context_use, result.used_ids, result.image_sent) == ("none", (), False)


def test_plan_injects_relevant_memories_and_reports_their_ids_to_mark_as_used() -> None:
    index = SaveIndex(FARM, [event(1, "钓鱼", "约好一起去河边钓鱼"), event(2, "温室", "修温室")])
    memory = SaveMemory(SharedProfile(nickname="阿汤"), index)
    result = plan(text="我们去钓鱼吧", memory=memory, budget=MemoryBudget(recent=0))
    assert "约好一起去河边钓鱼" in text_of(result.messages)
    assert "阿汤" in text_of(result.messages)
    assert result.used_ids == (1,)


def test_plan_leaves_out_memories_from_a_later_in_game_day() -> None:
    index = SaveIndex(FARM, [event(1, "钓鱼", "第九天钓到鲟鱼", day=9)])
    result = plan(memory=SaveMemory(None, index), day=5)
    assert "鲟鱼" not in text_of(result.messages)
    assert result.used_ids == ()


def test_plan_at_the_stale_and_drop_edges() -> None:
    ctx = lambda age: context(age, world={"location": "Farm"})  # noqa: E731
    assert plan(context=ctx(5.0)).context_use == "fresh"
    assert plan(context=ctx(5.001)).context_use == "stale"
    assert plan(context=ctx(30.0)).context_use == "stale"
    dropped = plan(context=ctx(30.001))
    assert dropped.context_use == "dropped"
    assert "Farm" not in text_of(dropped.messages)


def test_plan_sends_the_image_as_the_last_users_second_part() -> None:
    image = PreparedImage(
        mime="image/png",
        data=b"\x89PNG",
        width=1,
        height=1,
        original_width=1,
        original_height=1,
        original_bytes=4,
    )
    result = plan(image=image)
    assert result.image_sent
    assert result.messages[-1]["content"][1]["image_url"]["url"].startswith(
        "data:image/png;base64,"
    )


def test_focus_terms_come_from_focus_held_item_nearby_and_location() -> None:
    ctx = context(
        0,
        world={"location": "Beach"},
        focus={"kind": "water", "name": "pond"},
        nearby=[{"kind": "npc", "name": "Willy"}],
        player={"heldItem": "Bamboo Pole"},
    )
    assert focus_terms(ctx) == ["pond", "water", "Bamboo Pole", "Willy", "Beach"]
    assert focus_terms(None) == []


@given(
    st.lists(st.text(min_size=1, max_size=30), min_size=0, max_size=12),
    st.text(min_size=1, max_size=60),
)
def test_plan_never_exceeds_the_memory_budget_and_only_uses_ids_it_was_given(
    summaries: list[str], question: str
) -> None:
    events = [event(i + 1, s[:20], s) for i, s in enumerate(summaries)]
    budget = MemoryBudget(total_chars=200)
    result = plan(text=question, memory=SaveMemory(None, SaveIndex(FARM, events)), budget=budget)
    assert set(result.used_ids) <= {e.id for e in events}
    assert [m["role"] for m in result.messages] == ["system", "user"]
    data, rest = unfence(result.messages[-1]["content"])
    assert rest == question
    assert len(data) <= 200 + 40


def test_the_profile_and_the_memories_share_the_one_1200_character_cap() -> None:
    # Five memories of about 215 characters fill 1,200 alone; the profile's
    # lines come first and the memories get what is left, whole items only.
    events = [event(n, f"鱼{n}", f"钓鱼的事{n}：" + "钓鱼" * 100) for n in range(1, 9)]
    profile = SharedProfile(nickname="阿汤", hobbies=["钓鱼" * 40], notes=["喜欢" * 60])
    memory = SaveMemory(profile, SaveIndex(FARM, events))
    result = plan(text="钓鱼", memory=memory)
    layers = {layer.name: layer.chars for layer in result.injection.layers}
    assert 200 < layers["profile"] <= 400
    assert layers["memory"] > 0
    assert layers["profile"] + layers["memory"] <= 1200 + len("你记得的事：\n")
    # Without the profile the memories alone take more of the cap.
    alone = plan(text="钓鱼", memory=SaveMemory(None, SaveIndex(FARM, events)))
    assert len(alone.used_ids) > len(result.used_ids)
