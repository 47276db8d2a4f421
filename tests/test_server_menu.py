"""A mod's menu frames end to end: real server, real WebSocket, real SQLite (v1.md "memory.get").

View by scope, correct a shared field, pin/unpin, and the two-step forget with
its tokens at their edges (single-use, bound to this connection and target,
valid for 120 s on the injected clock); statistics survive unless included.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.conftest import Harness, recv, running, send
from tests.memory.conftest import buried
from xtyserver.memory.types import NewEvent, Scope

pytestmark = pytest.mark.anyio
GAME = "stardew-valley"
FARM_A = Scope(GAME, "farm-a")
FARM_B = Scope(GAME, "farm-b")
OTHER = Scope("terraria", "world-1")
TZ = "Asia/Shanghai"
# Timers run on the manual clock: a 120 s jump must not time the heartbeat out.
SLOW_BEAT = {"server.heartbeat_ms": 600_000, "memory.extraction": False}


def _seed(h: Harness) -> dict[str, int]:
    now = h.clock.now()
    h.store.set_profile_field("hobbies", ["钓鱼"])
    for scope, name in ((FARM_A, "阳光农场"), (FARM_B, "月光农场"), (OTHER, None)):
        play = h.store.open_play_session(scope, now - 600, TZ, save_name=name)
        h.store.close_play_session(play, now - 300)
    plan = h.store.upsert_event(FARM_A, NewEvent("goal", "社区中心", "完成社区中心"), now)
    coop = h.store.upsert_event(FARM_A, NewEvent("goal", "鸡舍", "建一个鸡舍"), now)
    barn = h.store.upsert_event(FARM_B, NewEvent("goal", "温室", "修好温室"), now)
    h.store.upsert_event(OTHER, NewEvent("goal", "地狱", "打败肉山"), now)
    return {"plan": plan.id, "coop": coop.id, "barn": barn.id}


async def _ask(ws: Any, frame: dict[str, Any]) -> dict[str, Any]:
    """Send ``frame`` and return its answer (an earlier deletion's memory.notice is skipped)."""
    await send(ws, frame)
    while (answer := await recv(ws))["type"] == "memory.notice":
        pass
    return answer


def _subjects(save: dict[str, Any]) -> list[str]:
    return [e["subject"] for e in save["events"]]


async def test_view_current_save_another_save_the_game_and_the_profile(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=SLOW_BEAT) as h:
        _seed(h)
        async with h.adapter(save="farm-b") as ws:
            mine = await _ask(ws, {"type": "memory.get", "id": "m1"})
            assert (mine["type"], mine["scope"], mine["id"]) == ("memory.result", "save", "m1")
            [save] = mine["saves"]
            assert (save["saveName"], save["current"], _subjects(save)) == (
                "月光农场",
                True,
                ["温室"],
            )
            assert [e["subject"] for e in mine["events"]] == ["温室"]

            other = await _ask(ws, {"type": "memory.get", "saveId": "farm-a"})
            [save] = other["saves"]
            assert (save["saveId"], save["saveName"], save["current"]) == (
                "farm-a",
                "阳光农场",
                False,
            )
            assert _subjects(save) == ["社区中心", "鸡舍"]

            game = await _ask(ws, {"type": "memory.get", "scope": "game"})
            names = {s["saveId"]: s.get("saveName") for s in game["saves"]}
            assert names == {"farm-a": "阳光农场", "farm-b": "月光农场"}  # this game only
            assert game["events"] == []

            profile = await _ask(ws, {"type": "memory.get", "scope": "profile"})
            assert profile["saves"] == [] and profile["profile"]["hobbies"] == ["钓鱼"]

            error = await _ask(ws, {"type": "memory.get", "scope": "game", "saveId": "farm-a"})
            assert (error["type"], error["fields"]) == ("error", ["saveId"])
        assert h.fake.chat_requests == []  # managing memory asks no model


async def test_correct_a_shared_field_replaces_it_whole(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=SLOW_BEAT) as h:
        _seed(h)
        async with h.adapter() as ws:
            frame = {"type": "profile.update", "id": "p1", "field": "hobbies", "value": ["自动化"]}
            result = await _ask(ws, frame)
            assert result["profile"]["hobbies"] == ["自动化"]
            assert result["saves"][0]["saveName"] == "阳光农场"
        assert h.store.get_profile().hobbies == ["自动化"]


async def test_pin_and_unpin_an_item_of_this_or_another_save(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=SLOW_BEAT) as h:
        ids = _seed(h)
        async with h.adapter(save="farm-b") as ws:
            pin = {"type": "memory.pin", "id": "n1", "eventId": ids["barn"], "pinned": True}
            result = await _ask(ws, pin)
            assert result["type"] == "memory.result" and result["events"][0]["pinned"] is True
            other = {**pin, "eventId": ids["plan"], "saveId": "farm-a"}
            result = await _ask(ws, other)
            assert result["saves"][0]["saveName"] == "阳光农场"
            assert {e["id"]: e["pinned"] for e in result["events"]}[ids["plan"]] is True
            result = await _ask(ws, {**other, "pinned": False})
            assert {e["id"]: e["pinned"] for e in result["events"]}[ids["plan"]] is False
            # An id of farm-a is not an item of farm-b.
            error = await _ask(ws, {**pin, "eventId": ids["plan"]})
            assert (error["type"], error["code"], error["fields"]) == (
                "error",
                "not_found",
                ["eventId"],
            )
        assert [e.pinned for e in h.store.load_scope(FARM_B)] == [True]
        assert not any(e.pinned for e in h.store.load_scope(FARM_A))


async def test_forget_another_saves_item_names_the_save_and_needs_the_token(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=SLOW_BEAT) as h:
        ids = _seed(h)
        async with h.adapter(save="farm-b") as ws:
            forget = {
                "type": "memory.forget",
                "id": "f1",
                "target": "item",
                "saveId": "farm-a",
                "eventId": ids["plan"],
            }
            preview = await _ask(ws, forget)
            assert preview["type"] == "memory.preview" and preview["expiresInMs"] == 120_000
            [save] = preview["saves"]
            assert (save["saveName"], save["current"], _subjects(save)) == (
                "阳光农场",
                False,
                ["社区中心"],
            )
            assert preview["statsSaves"] == [] and preview["includeStats"] is False
            assert len(h.store.load_scope(FARM_A)) == 2  # no token: nothing deleted

            done = await _ask(ws, {**forget, "confirmToken": preview["confirmToken"]})
            assert (done["type"], done["items"], done["statsSaves"]) == ("memory.forgotten", 1, 0)
            # The mod's own menu deletion is announced too, with how to undo it.
            notice = await recv(ws)
            assert (notice["type"], notice["action"], notice["id"]) == (
                "memory.notice",
                "forgotten",
                "f1",
            )
            assert notice["trashId"] == done["trashId"] and "恢复" in notice["text"]
            again = await _ask(ws, {**forget, "confirmToken": preview["confirmToken"]})
            assert (again["code"], again["fields"]) == ("confirmation_refused", ["confirmToken"])
            assert "already used" in again["message"]
        assert [e.subject for e in h.store.load_scope(FARM_A)] == ["鸡舍"]
        assert (GAME, "farm-a", "goal", "社区中心") in buried(h.store)
        kept = {s.save_id: s.sessions for s in h.store.stats().saves}
        assert kept["farm-a"] == 1 and len(kept) == 3  # statistics kept


async def test_a_token_is_bound_to_its_target_and_its_connection(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=SLOW_BEAT) as h:
        ids = _seed(h)
        item = {"type": "memory.forget", "target": "item", "eventId": ids["plan"]}
        async with h.adapter() as ws:
            token = (await _ask(ws, item))["confirmToken"]
            for other in (
                {**item, "eventId": ids["coop"]},
                {"type": "memory.forget", "target": "save"},
                {"type": "memory.forget", "target": "all"},
            ):
                refused = await _ask(ws, {**other, "confirmToken": token})
                assert refused["code"] == "confirmation_refused"
                assert "another target" in refused["message"]
            async with h.adapter() as second:
                stolen = await _ask(second, {**item, "confirmToken": token})
                assert stolen["code"] == "confirmation_refused"
            assert len(h.store.load_scope(FARM_A)) == 2
            # Refusals for another target do not spend it: the right target still works.
            done = await _ask(ws, {**item, "confirmToken": token})
            assert done["items"] == 1


async def test_a_token_is_valid_at_120_seconds_and_refused_just_after(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=SLOW_BEAT) as h:
        ids = _seed(h)
        plan = {"type": "memory.forget", "target": "item", "eventId": ids["plan"]}
        coop = {**plan, "eventId": ids["coop"]}
        async with h.adapter() as ws:
            early = (await _ask(ws, plan))["confirmToken"]
            late = (await _ask(ws, coop))["confirmToken"]
            h.clock.advance(120.0)
            assert (await _ask(ws, {**plan, "confirmToken": early}))["items"] == 1
            h.clock.advance(0.001)
            expired = await _ask(ws, {**coop, "confirmToken": late})
            assert expired["code"] == "confirmation_refused" and "expired" in expired["message"]
        assert [e.subject for e in h.store.load_scope(FARM_A)] == ["鸡舍"]


async def test_statistics_go_only_with_include_stats_and_its_own_confirmation(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, overrides=SLOW_BEAT) as h:
        _seed(h)
        save = {"type": "memory.forget", "target": "game"}
        with_stats = {**save, "includeStats": True}
        async with h.adapter() as ws:
            plain = await _ask(ws, save)
            assert plain["statsSaves"] == []
            # The token of the forget without statistics cannot delete them.
            refused = await _ask(ws, {**with_stats, "confirmToken": plain["confirmToken"]})
            assert refused["code"] == "confirmation_refused"
            preview = await _ask(ws, with_stats)
            assert {s["saveName"] for s in preview["statsSaves"]} == {"阳光农场", "月光农场"}
            done = await _ask(ws, {**with_stats, "confirmToken": preview["confirmToken"]})
            assert (done["items"], done["statsSaves"]) == (3, 2)
        left = {(s.game_id, s.save_id): s for s in h.store.stats().saves}
        # Another game's statistics stay; the save being played counts again from the forget.
        assert set(left) == {("terraria", "world-1"), (GAME, "farm-a")}
        assert (left[(GAME, "farm-a")].sessions, left[(GAME, "farm-a")].active_ms) == (1, 0)
        assert len(h.store.load_scope(OTHER)) == 1


async def test_every_forget_keeps_statistics_and_touches_only_the_store(tmp_path: Path) -> None:
    game_save = tmp_path / "Saves" / "farm-a" / "farm-a.xml"
    game_save.parent.mkdir(parents=True)
    game_save.write_text("<SaveGame/>", encoding="utf-8")

    def outside_the_store() -> dict[str, str]:
        return {
            str(p.relative_to(tmp_path)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in tmp_path.rglob("*")
            if p.is_file() and "memory-v1.sqlite" not in p.name
        }

    async with running(tmp_path / "data", overrides=SLOW_BEAT) as h:
        ids = _seed(h)
        before = outside_the_store()
        targets: list[dict[str, Any]] = [
            {"target": "item", "eventId": ids["coop"]},
            {"target": "save", "saveId": "farm-b"},
            {"target": "game"},
            {"target": "profile"},
            {"target": "all"},
        ]
        async with h.adapter() as ws:
            for target in targets:
                frame = {"type": "memory.forget", **target}
                preview = await _ask(ws, frame)
                assert preview["type"] == "memory.preview", preview
                done = await _ask(ws, {**frame, "confirmToken": preview["confirmToken"]})
                assert done["type"] == "memory.forgotten" and done["statsSaves"] == 0
        assert {s.save_id for s in h.store.stats().saves} == {"farm-a", "farm-b", "world-1"}
        assert all(s.sessions >= 1 for s in h.store.stats().saves)
        assert h.store.get_profile().hobbies == []
        assert all(h.store.load_scope(s) == [] for s in (FARM_A, FARM_B, OTHER))
        assert outside_the_store() == before


async def test_bad_forget_fields_are_errors_naming_them(tmp_path: Path) -> None:
    async with running(tmp_path, overrides=SLOW_BEAT) as h, h.adapter() as ws:
        cases: list[tuple[dict[str, Any], list[str]]] = [
            ({"target": "item"}, ["eventId"]),
            ({"target": "save", "eventId": 3}, ["eventId"]),
            ({"target": "game", "saveId": "farm-b"}, ["saveId"]),
            ({"target": "item", "eventId": 3, "includeStats": True}, ["includeStats"]),
            ({"target": "profile", "includeStats": True}, ["includeStats"]),
            ({"target": "all", "confirm": True}, ["confirm"]),
            ({"target": "all", "confirmToken": ""}, ["confirmToken"]),
        ]
        for fields, named in cases:
            error = await _ask(ws, {"type": "memory.forget", "id": "f", **fields})
            assert (error["type"], error["fields"]) == ("error", named), fields
        missing = await _ask(ws, {"type": "memory.forget", "target": "item", "eventId": 999})
        assert (missing["code"], missing["fields"]) == ("not_found", ["eventId"])


async def test_forgetting_statistics_of_the_save_being_played_keeps_its_session_counting(
    tmp_path: Path,
) -> None:
    from structlog.testing import capture_logs

    async with running(tmp_path, overrides=SLOW_BEAT) as h:
        _seed(h)
        [earlier] = [s for s in h.store.stats().saves if s.save_id == "farm-a"]
        save = {"type": "memory.forget", "target": "save", "includeStats": True}
        with capture_logs() as logs:
            async with h.adapter() as ws:
                h.clock.advance(30)
                await send(ws, {"type": "heartbeat"})
                preview = await _ask(ws, save)
                assert [s["saveId"] for s in preview["statsSaves"]] == ["farm-a"]
                done = await _ask(ws, {**save, "confirmToken": preview["confirmToken"]})
                assert done["statsSaves"] == 1
                # Counting goes on from the forget: 20 s of play after it.
                h.clock.advance(20)
                await send(ws, {"type": "heartbeat"})
                stats = await _ask(ws, {"type": "stats.get", "id": "s1"})
                [mine] = [s for s in stats["saves"] if s["saveId"] == "farm-a"]
                assert (mine["sessions"], mine["activeMs"], mine["days"]) == (1, 20_000, 1)
            with anyio.fail_after(5):
                await h.server.wait_connections(at_most=0)
        events = [x["event"] for x in logs]
        assert "connection.failed" not in events and "store.failed" not in events
        [row] = [s for s in h.store.stats().saves if s.save_id == "farm-a"]
        assert (row.sessions, row.active_ms, row.days) == (1, 20_000, 1)
        # The trash keeps what went (the earlier session and the 30 s before the forget).
        restored = h.store.restore()
        assert restored.stats_saves == 1
        [row] = [s for s in h.store.stats().saves if s.save_id == "farm-a"]
        assert (row.sessions, row.active_ms) == (3, earlier.active_ms + 30_000 + 20_000)
