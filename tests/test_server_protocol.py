"""protocol/v1 over a real loopback WebSocket: every client frame, hello rules, the budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest
from websockets.asyncio.client import ClientConnection

from tests.conftest import Harness, chat, hello_frame, model_context, recv, running, send
from xtyserver.protocol.frames import ModelContext
from xtyserver.protocol.limits import Limits

pytestmark = pytest.mark.anyio


# -- helpers --------------------------------------------------------------------


async def answer_to(ws: ClientConnection, frame: dict[str, Any] | str | bytes) -> dict[str, Any]:
    """Send a frame that has an answer and return that answer (skipping memory.notice)."""
    await send(ws, frame)
    while (answer := await recv(ws))["type"] == "memory.notice":
        pass
    return answer


async def accepted(ws: ClientConnection, frame: dict[str, Any]) -> None:
    """Send a frame that has no answer and prove no error came back for it."""
    await send(ws, frame)
    probe = await answer_to(ws, {"type": "stats.get", "id": "probe"})
    assert probe["type"] == "stats.result", probe
    assert probe["id"] == "probe"


async def refused(ws: ClientConnection, frame: dict[str, Any]) -> dict[str, Any]:
    """Send a frame that must be refused; return the error frame."""
    error = await answer_to(ws, frame)
    assert error["type"] == "error", error
    return error


def state(h: Harness, **parts: Any) -> dict[str, Any]:
    return {"type": "state.update", "id": "s1", "modelContext": model_context(h.clock, **parts)}


def served_size(context: dict[str, Any]) -> int:
    """The serialized size the server measures (it re-encodes the decoded context)."""
    typed = msgspec.json.decode(json.dumps(context).encode(), type=ModelContext)
    return len(msgspec.json.encode(msgspec.to_builtins(typed)))


def context_of_size(h: Harness, target: int) -> dict[str, Any]:
    """A modelContext within every other limit whose served size is exactly ``target`` bytes."""
    ctx = model_context(
        h.clock,
        player={"status": ["s" * 200] * 8},
        relevantItems=[{"name": "i" * 200, "count": 1}] * 8,
        nearby=[{"kind": "npc", "name": "n" * 200, "distance": 1.5}] * 5,
        world={},
        focus={},
        ui={},
    )
    slots = [
        ("world", "location"),
        ("world", "season"),
        ("world", "weather"),
        ("world", "time"),
        ("focus", "name"),
        ("focus", "kind"),
        ("ui", "menu"),
    ]
    for obj, key in slots:
        ctx[obj][key] = ""
        room = target - served_size(ctx)
        ctx[obj][key] = "x" * max(0, min(200, room))
        if served_size(ctx) == target:
            return ctx
    raise AssertionError(f"cannot build a context of {target} bytes")


# -- adapter.hello ------------------------------------------------------------------


async def test_server_answers_hello_with_session_heartbeat_and_every_limit(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        hello = await answer_to(ws, hello_frame())
        assert hello["type"] == "server.hello"
        assert hello["id"] == "h1"
        assert hello["protocol"] == "v1"
        assert hello["sessionId"]
        assert hello["heartbeatMs"] == h.settings.server.heartbeat_ms
        expected = msgspec.to_builtins(Limits())
        assert set(hello["limits"]) == set(expected)
        assert hello["limits"]["contextMaxBytes"] == 6 * 1024
        assert hello["limits"]["chatTextMaxChars"] == 2000
        assert hello["limits"]["contextMaxNearby"] == 5


async def test_server_refuses_any_frame_before_hello_with_hello_required(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        error = await refused(ws, {"type": "chat.send", "id": "c1", "text": "hi", "source": "text"})
        assert error["code"] == "hello_required"
        assert error["id"] == "c1"
        error = await refused(ws, {"type": "stats.get", "id": "s1"})
        assert error["code"] == "hello_required"
        # The connection stays usable: a hello still works.
        assert (await answer_to(ws, hello_frame()))["type"] == "server.hello"
        assert not h.fake.chat_requests


async def test_server_refuses_second_hello_with_already_hello(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused(ws, hello_frame(id="h2"))
        assert error["code"] == "already_hello"
        assert error["id"] == "h2"
        await accepted(ws, {"type": "heartbeat"})


@pytest.mark.parametrize(
    "save_id",
    ["C:\\Users\\x", "my save", "../x", "a/b", "存档", "", "x" * 129],
)
async def test_server_refuses_hello_with_bad_save_id_naming_the_field(
    tmp_path: Path, save_id: str
) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        error = await refused(ws, hello_frame(save=save_id))
        assert error["code"] == "invalid_frame"
        assert error["fields"] == ["identity.saveId"]
        assert error["id"] == "h1"
        # Not a session yet: the next frame still needs a hello.
        assert (await refused(ws, {"type": "heartbeat"}))["code"] == "hello_required"


async def test_server_accepts_save_id_of_128_chars(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter(save="S" * 128) as ws:
        await accepted(ws, {"type": "heartbeat"})


async def test_server_counts_play_of_a_save_id_of_128_chars(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter(save="S" * 128) as ws:
        await accepted(ws, {"type": "heartbeat"})
        assert [s.save_id for s in h.store.stats().saves] == ["S" * 128]


async def test_server_accepts_game_id_of_64_chars_and_refuses_65(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        async with h.adapter(game="g" * 64) as ws:
            await accepted(ws, {"type": "heartbeat"})
        async with h.client() as ws:
            error = await refused(ws, hello_frame(game="g" * 65))
            assert error["fields"] == ["identity.gameId"]


@pytest.mark.parametrize("game_id", ["Stardew", "-dst", "my game", "C:\\games"])
async def test_server_refuses_hello_with_bad_game_id(tmp_path: Path, game_id: str) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        error = await refused(ws, hello_frame(game=game_id))
        assert error["fields"] == ["identity.gameId"]


async def test_server_refuses_unknown_timezone_naming_timezone(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        error = await refused(ws, hello_frame(timezone="Mars/Olympus_Mons"))
        assert error["code"] == "invalid_frame"
        assert error["fields"] == ["timezone"]
        assert (await answer_to(ws, hello_frame()))["type"] == "server.hello"


async def test_server_refuses_hello_with_save_name_carrying_a_path(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        frame = hello_frame()
        frame["identity"]["saveName"] = "C:\\Users\\Canary\\Saves\\Farm"
        error = await refused(ws, frame)
        assert error["code"] == "forbidden_content"
        assert error["fields"] == ["identity.saveName"]
        assert "Canary" not in error["message"]


async def test_server_refuses_hello_with_wrong_protocol(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.client() as ws:
        error = await refused(ws, hello_frame(protocol="v2"))
        assert error["fields"] == ["protocol"]


# -- malformed frames -----------------------------------------------------------------


async def test_server_answers_binary_frame_with_binary_not_supported_and_stays_usable(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused_raw(ws, b'{"type":"heartbeat"}')
        assert error["code"] == "binary_not_supported"
        await accepted(ws, {"type": "heartbeat"})


async def refused_raw(ws: ClientConnection, data: str | bytes) -> dict[str, Any]:
    error = await answer_to(ws, data)
    assert error["type"] == "error", error
    return error


@pytest.mark.parametrize(
    ("data", "code"),
    [
        ("{not json", "invalid_json"),
        ("[1, 2]", "invalid_frame"),
        ('{"type": "teleport", "id": "t1"}', "unknown_type"),
        ('{"id": "x"}', "invalid_frame"),
        ('{"type": "heartbeat", "type": "heartbeat"}', "invalid_json"),
    ],
)
async def test_server_answers_malformed_frame_with_error_and_stays_usable(
    tmp_path: Path, data: str, code: str
) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        assert (await refused_raw(ws, data))["code"] == code
        await accepted(ws, {"type": "heartbeat"})


async def test_server_refuses_frame_id_over_64_chars(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        await accepted(ws, {"type": "heartbeat", "id": "i" * 64})
        error = await refused(ws, {"type": "heartbeat", "id": "i" * 65})
        assert error["fields"] == ["id"]


# -- heartbeat, stats, memory, profile ------------------------------------------------


async def test_heartbeat_has_no_answer_and_counts_play_time(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        h.clock.advance(10)
        await accepted(ws, {"type": "heartbeat", "id": "b1"})
        stats = await answer_to(ws, {"type": "stats.get", "id": "st"})
        assert stats["type"] == "stats.result"
        [save] = stats["saves"]
        assert (save["gameId"], save["saveId"]) == ("stardew-valley", "farm-a")
        assert save["sessions"] == 1
        assert save["activeMs"] == 10_000
        assert save["days"] == 1
        [game] = stats["games"]
        assert game["gameId"] == "stardew-valley"


async def test_memory_get_answers_memory_result_with_profile_and_events(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        result = await answer_to(ws, {"type": "memory.get", "id": "m1"})
        assert result["type"] == "memory.result"
        assert result["id"] == "m1"
        assert result["events"] == []
        assert "nickname" in result["profile"]


async def test_profile_update_answers_memory_result_with_the_field_changed(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        result = await answer_to(
            ws, {"type": "profile.update", "id": "p1", "field": "nickname", "value": "阿明"}
        )
        assert result["type"] == "memory.result"
        assert result["id"] == "p1"
        assert result["profile"]["nickname"] == "阿明"
        assert h.store.get_profile().nickname == "阿明"
        result = await answer_to(
            ws, {"type": "profile.update", "field": "hobbies", "value": ["钓鱼", "种地"]}
        )
        assert result["profile"]["hobbies"] == ["钓鱼", "种地"]


async def test_profile_update_refuses_value_with_forbidden_content(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused(
            ws,
            {"type": "profile.update", "id": "p1", "field": "nickname", "value": "a@b.example"},
        )
        assert error["code"] == "forbidden_content"
        assert error["fields"] == ["value"]
        assert h.store.get_profile().nickname == ""


async def test_profile_update_refuses_unknown_field(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused(ws, {"type": "profile.update", "field": "password", "value": "x"})
        assert error["fields"] == ["field"]


async def test_memory_forget_previews_then_deletes_with_the_token(tmp_path: Path) -> None:
    from xtyserver.memory.types import NewEvent, Scope

    async with running(tmp_path) as h:
        scope = Scope("stardew-valley", "farm-a")
        h.store.upsert_event(
            scope,
            NewEvent(kind="goal", subject="鸡舍", summary="玩家想建鸡舍", importance=3),
            h.clock.now(),
        )
        h.store.set_profile_field("nickname", "阿明")
        async with h.adapter() as ws:
            before = await answer_to(ws, {"type": "memory.get"})
            assert [e["subject"] for e in before["events"]] == ["鸡舍"]
            forget = {"type": "memory.forget", "id": "f1", "target": "save"}
            preview = await answer_to(ws, forget)
            assert (preview["type"], preview["id"], preview["itemCount"]) == (
                "memory.preview",
                "f1",
                1,
            )
            assert [e["subject"] for e in preview["saves"][0]["events"]] == ["鸡舍"]
            assert len(h.store.load_scope(scope)) == 1  # a preview deletes nothing
            done = await answer_to(ws, {**forget, "confirmToken": preview["confirmToken"]})
            assert (done["type"], done["id"], done["items"]) == ("memory.forgotten", "f1", 1)
            after = await answer_to(ws, {"type": "memory.get"})
            assert after["events"] == [] and after["profile"]["nickname"] == "阿明"


async def test_memory_forget_old_confirm_form_and_missing_event_id_name_the_field(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused(ws, {"type": "memory.forget", "target": "all", "confirm": True})
        assert (error["code"], error["fields"]) == ("invalid_frame", ["confirm"])
        assert "confirmToken" in error["message"]
        error = await refused(
            ws, {"type": "memory.forget", "target": "event", "eventId": 1, "confirm": True}
        )
        assert error["fields"] == ["confirm", "target"] and '"item"' in error["message"]
        error = await refused(ws, {"type": "memory.forget", "id": "f2", "target": "item"})
        assert error["fields"] == ["eventId"]
        assert error["id"] == "f2"


async def test_chat_cancel_of_unknown_id_answers_unknown_chat(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused(ws, {"type": "chat.cancel", "id": "nope"})
        assert (error["code"], error["id"]) == ("unknown_chat", "nope")
        _, done = await chat(ws, "还在吗")
        assert done["type"] == "chat.done"


# -- modelContext budget at its edges, over the wire -------------------------------------


async def test_state_update_accepts_strings_of_200_and_refuses_201(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        await accepted(ws, state(h, world={"location": "L" * 200}))
        error = await refused(ws, state(h, world={"location": "L" * 201}))
        assert error["code"] == "budget_exceeded"
        assert error["fields"] == ["modelContext.world.location"]
        assert error["id"] == "s1"


async def test_state_update_counts_string_limit_in_characters_not_bytes(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        await accepted(ws, state(h, focus={"name": "鱼" * 200}))
        error = await refused(ws, state(h, focus={"name": "鱼" * 201}))
        assert error["fields"] == ["modelContext.focus.name"]


async def test_state_update_accepts_5_nearby_and_refuses_6(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        one = {"kind": "npc", "name": "Abigail", "distance": 2.0}
        await accepted(ws, state(h, nearby=[one] * 5))
        error = await refused(ws, state(h, nearby=[one] * 6))
        assert error["code"] == "budget_exceeded"
        assert error["fields"] == ["modelContext.nearby"]


async def test_state_update_accepts_8_relevant_items_and_refuses_9(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        item = {"name": "Parsnip", "count": 3}
        await accepted(ws, state(h, relevantItems=[item] * 8))
        error = await refused(ws, state(h, relevantItems=[item] * 9))
        assert error["fields"] == ["modelContext.relevantItems"]


async def test_state_update_accepts_8_status_strings_and_refuses_9(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        await accepted(ws, state(h, player={"status": ["tired"] * 8}))
        error = await refused(ws, state(h, player={"status": ["tired"] * 9}))
        assert error["fields"] == ["modelContext.player.status"]


async def test_state_update_accepts_6_kib_and_refuses_one_byte_more(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        at_limit = context_of_size(h, 6 * 1024)
        over = context_of_size(h, 6 * 1024 + 1)
        await accepted(ws, {"type": "state.update", "modelContext": at_limit})
        error = await refused(ws, {"type": "state.update", "id": "big", "modelContext": over})
        assert error["code"] == "budget_exceeded"
        assert error["fields"] == ["modelContext"]
        assert error["id"] == "big"


@pytest.mark.parametrize(
    ("parts", "field"),
    [
        ({"world": {"mood": "happy"}}, "modelContext.world.mood"),
        ({"log": "[12:00] player joined"}, "modelContext.log"),
        ({"player": {"inventory": {"slot1": "axe"}}}, "modelContext.player.inventory"),
        ({"nearby": [{"name": "Linus", "secret": "x"}]}, "modelContext.nearby[0].secret"),
    ],
)
async def test_state_update_refuses_unknown_fields(
    tmp_path: Path, parts: dict[str, Any], field: str
) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused(ws, state(h, **parts))
        assert error["code"] == "invalid_frame"
        assert error["fields"] == [field]


@pytest.mark.parametrize(
    ("parts", "field"),
    [
        ({"player": {"health": "full"}}, "modelContext.player.health"),
        ({"world": {"day": 3.5}}, "modelContext.world.day"),
        ({"world": {"day": -1}}, "modelContext.world.day"),
        ({"focus": {"reachable": "yes"}}, "modelContext.focus.reachable"),
        (
            {"relevantItems": [{"name": "Wood", "count": "many"}]},
            "modelContext.relevantItems[0].count",
        ),
        ({"nearby": {"name": "Linus"}}, "modelContext.nearby"),
        ({"ui": {"busy": 1}}, "modelContext.ui.busy"),
        ({"world": {"time": 810}}, "modelContext.world.time"),
    ],
)
async def test_state_update_refuses_wrong_types_naming_the_field(
    tmp_path: Path, parts: dict[str, Any], field: str
) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused(ws, state(h, **parts))
        assert error["code"] == "invalid_frame"
        assert error["fields"] == [field]


async def test_state_update_refuses_bad_schema_version_and_naive_captured_at(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        ctx = model_context(h.clock)
        ctx["schemaVersion"] = 2
        error = await refused(ws, {"type": "state.update", "modelContext": ctx})
        assert error["fields"] == ["modelContext.schemaVersion"]
        ctx = model_context(h.clock)
        ctx["capturedAt"] = "2026-09-21T08:00:00"
        error = await refused(ws, {"type": "state.update", "modelContext": ctx})
        assert error["fields"] == ["modelContext.capturedAt"]
        # Both are optional: without them the context is version 1, captured on arrival.
        del ctx["capturedAt"], ctx["schemaVersion"]
        ctx["world"] = {"location": "Farm"}
        await send(ws, {"type": "state.update", "modelContext": ctx})
        _, done = await chat(ws, "我在哪")
        assert done["context"] == "fresh"
        assert "Farm" in h.turn_request().text


async def test_state_update_names_every_offending_field(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused(
            ws,
            state(
                h,
                world={"location": "L" * 201, "mood": "x"},
                player={"health": "full"},
                nearby=[{"name": "n"}] * 6,
            ),
        )
        assert set(error["fields"]) == {
            "modelContext.world.location",
            "modelContext.world.mood",
            "modelContext.player.health",
            "modelContext.nearby",
        }


async def test_refused_state_update_leaves_the_previous_context_whole(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        await accepted(ws, state(h, world={"location": "Alpha-Farm", "season": "spring"}))
        await refused(ws, state(h, world={"location": "Beta-Mine", "season": "s" * 201}))
        _, done = await chat(ws, "我在哪")
        assert done["context"] == "fresh"
        prompt = h.turn_request().text
        assert "Alpha-Farm" in prompt
        assert "Beta-Mine" not in prompt


@pytest.mark.parametrize(
    "text",
    [
        "C:\\Users\\Canary\\AppData\\Roaming",
        "\\\\fileserver\\share\\saves",
        "/home/canary/.local/share",
        "76561198012345678",
        "sk-" + "a1B2" * 8,
        "canary@example.com",
    ],
)
async def test_state_update_refuses_forbidden_content_naming_the_field(
    tmp_path: Path, text: str
) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        error = await refused(
            ws, state(h, world={"season": "spring"}, nearby=[{"name": "ok"}, {"name": text}])
        )
        assert error["code"] == "forbidden_content"
        assert error["fields"] == ["modelContext.nearby[1].name"]
        assert text not in error["message"]


async def test_chat_context_model_context_is_checked_like_state_update(tmp_path: Path) -> None:
    async with running(tmp_path) as h, h.adapter() as ws:
        ctx = model_context(h.clock, world={"location": "L" * 201})
        error = await refused(
            ws,
            {
                "type": "chat.send",
                "id": "c9",
                "text": "hi",
                "source": "text",
                "context": {"modelContext": ctx},
            },
        )
        assert error["code"] == "budget_exceeded"
        assert error["fields"] == ["context.modelContext.world.location"]
        assert error["id"] == "c9"
        ctx = model_context(h.clock, world={"location": "/home/canary/farm"})
        error = await refused(
            ws,
            {
                "type": "chat.send",
                "id": "c10",
                "text": "hi",
                "source": "text",
                "context": {"modelContext": ctx},
            },
        )
        assert error["code"] == "forbidden_content"
        assert error["fields"] == ["context.modelContext.world.location"]
        assert not h.fake.chat_requests
