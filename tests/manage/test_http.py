"""The memory page's HTTP API over the real server and a real store: what works, what is refused."""

from __future__ import annotations

import json
import re
import socket
import stat
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Harness, running
from tests.manage.ui_fixtures import DAYS_PLAYED, GAMES, MINUTE_BEATS, HttpAnswer, fill, http
from xtyserver import token as tokens
from xtyserver.clock import ManualClock, SystemClock
from xtyserver.config import load_settings
from xtyserver.manage.access import (
    COOKIE,
    CSP,
    CSRF_HEADER,
    LAUNCH_HEADER,
    LAUNCH_KEY_PATH,
    SECRET_HEADER,
    SESSION_SECONDS,
)
from xtyserver.manage.http import IMPORT_BODY, MAX_BODY
from xtyserver.memory.export import encode_document
from xtyserver.memory.types import NewEvent, Scope
from xtyserver.server import serving

WRONG_KEY = "wrong, used or expired launch key"

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")
RFC3339 = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


class Page:
    """What the page's script does, by hand: the session exchange, then API calls."""

    def __init__(self, h: Harness) -> None:
        self.h = h
        self.port = h.server.ui_port
        self.host = ("Host", f"127.0.0.1:{self.port}")
        self.origin = ("Origin", f"http://127.0.0.1:{self.port}")
        self.json = ("Content-Type", "application/json")
        self.cookie = ""
        self.csrf = ""

    async def open(self) -> HttpAnswer:
        answer = await http(
            self.port,
            "POST",
            "/ui/api/session",
            [self.host, self.origin, (LAUNCH_HEADER, self.h.server.ui.mint_key())],
        )
        assert answer.status == 200, answer.body
        set_cookie = answer.header("set-cookie")
        assert set_cookie is not None
        self.cookie = set_cookie.split(";", 1)[0]
        csrf = answer.json()["csrf"]
        assert isinstance(csrf, str)
        self.csrf = csrf
        return answer

    def auth(self) -> list[tuple[str, str]]:
        return [self.host, ("Cookie", self.cookie), (CSRF_HEADER, self.csrf)]

    async def get(self, name: str) -> Any:
        answer = await http(self.port, "GET", f"/ui/api/{name}", self.auth())
        assert answer.status == 200, answer.body
        return answer.json()["result"]

    async def post(self, name: str, status: int = 200, **body: Any) -> Any:
        return await self.raw(name, json.dumps(body).encode(), status)

    async def raw(self, name: str, body: bytes, status: int) -> Any:
        headers = [*self.auth(), self.origin, self.json]
        answer = await http(self.port, "POST", f"/ui/api/{name}", headers, body)
        assert answer.status == status, answer.body
        return answer.json().get("result", answer.json())


async def test_the_page_and_its_files_carry_a_strict_policy(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        for path, kind in (("/ui/", "text/html"), ("/ui/app.js", "text/javascript")):
            answer = await http(page.port, "GET", path, [page.host])
            assert answer.status == 200
            assert (answer.header("content-type") or "").startswith(kind)
            assert answer.header("content-security-policy") == CSP
            assert answer.header("x-frame-options") == "DENY"
        html = (await http(page.port, "GET", "/ui/", [page.host])).body.decode()
        assert "<script src=" in html and "<script>" not in html  # no inline script
        assert " on" not in html.replace("<button", "")  # no inline handlers
        redirect = await http(page.port, "GET", "/ui", [page.host])
        assert (redirect.status, redirect.header("location")) == (308, "/ui/")
        assert (await http(page.port, "GET", "/ui/secret.txt", [page.host])).status == 404


async def test_the_session_cookie_is_httponly_and_strict(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        answer = await Page(h).open()
        cookie = answer.header("set-cookie") or ""
        assert cookie.startswith(f"{COOKIE}=")
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/ui/" in cookie
        cookie_only = await http(
            h.server.ui_port,
            "GET",
            "/ui/api/session",
            [Page(h).host, ("Cookie", cookie.split(";")[0])],
        )
        assert cookie_only.status == 403  # the cookie alone never yields the CSRF token
        assert b'csrf"' not in cookie_only.body


async def test_view_and_every_change_through_the_api(tmp_path: Path) -> None:
    clock = ManualClock()
    async with running(tmp_path, clock=clock, overrides=MINUTE_BEATS) as h:
        await fill(h)
        page = Page(h)
        await page.open()
        view = await page.get("view")
        assert view["profile"]["nickname"] == "小明"
        saves: dict[str, set[str]] = {}
        for save in view["saves"]:
            saves.setdefault(save["gameId"], set()).add(save["saveId"])
            assert "saveName" not in save  # the recorded games sent no names
            assert len(save["events"]) >= 2
            for item in save["events"]:
                assert RFC3339.fullmatch(item["updatedAt"]), item  # one time format everywhere
        assert saves == GAMES
        for game_id, days in DAYS_PLAYED.items():
            dates = {d["date"] for d in view["daily"] if d["gameId"] == game_id}
            assert len(dates) == days
        farm_a = next(s for s in view["stats"]["saves"] if s["saveId"] == "farm-a")
        assert farm_a["activeMs"] == 50 * 60_000 and farm_a["sessions"] == 2
        assert RFC3339.fullmatch(farm_a["lastPlayed"])
        assert view["stats"]["tokens"] and view["days"] == 30

        # correct a shared field, switch automatic forming off
        await page.post("profile", field="nickname", value="阿明")
        await page.post("profile", field="hobbies", value=["钓鱼"])
        await page.post("profile", field="autoShared", value=False)
        profile = h.store.get_profile()
        assert (profile.nickname, profile.hobbies, profile.auto_shared) == ("阿明", ["钓鱼"], False)
        refused = await page.post("profile", 400, field="nickname", value="x" * 40)
        assert refused["error"] and h.store.get_profile().nickname == "阿明"
        unknown = await page.post("profile", 400, field="salary", value="1")
        assert unknown["fields"] == ["field"] and "replyStyle" in unknown["error"]

        # pin, then forget one item in two steps
        event = h.store.load_scope(FARM)[0]
        game = {"gameId": "stardew-valley", "saveId": "farm-a"}
        await page.post("pin", **game, eventId=event.id, pinned=True)
        assert [e.pinned for e in h.store.load_scope(FARM) if e.id == event.id] == [True]
        target = {"target": "item", **game, "eventId": event.id}
        preview = await page.post("forget", **target)
        assert preview["type"] == "memory.preview" and preview["expiresInMs"] == 120_000
        [save] = preview["saves"]
        assert [e["id"] for e in save["events"]] == [event.id] and preview["statsSaves"] == []
        assert event.id in [e.id for e in h.store.load_scope(FARM)]  # nothing gone yet
        done = await page.post("forget", **target, confirmToken=preview["confirmToken"])
        assert (done["type"], done["items"], done["statsSaves"]) == ("memory.forgotten", 1, 0)
        assert event.id not in [e.id for e in h.store.load_scope(FARM)]
        again = await page.post("forget", 409, **target, confirmToken=preview["confirmToken"])
        assert again["fields"] == ["confirmToken"]

        # a whole game; its statistics stay
        preview = await page.post("forget", target="game", gameId="dont-starve-together")
        assert preview["itemCount"] == 4
        await page.post(
            "forget",
            target="game",
            gameId="dont-starve-together",
            confirmToken=preview["confirmToken"],
        )
        assert h.store.load_scope(Scope("dont-starve-together", "world-a")) == []
        assert any(g.game_id == "dont-starve-together" for g in h.store.stats().games)


async def test_a_token_is_bound_to_its_target_its_page_session_and_two_minutes(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h:
        h.store.upsert_event(FARM, NewEvent(kind="goal", subject="鱼缸", summary="完成鱼缸"), 1.0)
        page, other = Page(h), Page(h)
        await page.open()
        await other.open()
        save = {"target": "save", "gameId": "stardew-valley", "saveId": "farm-a"}
        token = (await page.post("forget", **save))["confirmToken"]
        wrong_target = {**save, "target": "game", "saveId": None}
        answer = await page.post("forget", 409, **wrong_target, confirmToken=token)
        assert "another target" in answer["error"]
        answer = await other.post("forget", 409, **save, confirmToken=token)  # another tab
        assert "unknown" in answer["error"]
        assert len(h.store.load_scope(FARM)) == 1
        h.clock.advance(120)  # valid at exactly its lifetime
        await page.post("forget", **save, confirmToken=token)
        assert h.store.load_scope(FARM) == []
        h.store.upsert_event(FARM, NewEvent(kind="goal", subject="温室", summary="修好温室"), 2.0)
        late = (await page.post("forget", **save))["confirmToken"]
        h.clock.advance(120.5)
        answer = await page.post("forget", 409, **save, confirmToken=late)
        assert "expired" in answer["error"]
        assert len(h.store.load_scope(FARM)) == 1


async def test_a_view_is_one_store_snapshot_whatever_the_number_of_saves(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        await page.open()
        costs = []
        for saves in (1, 10, 40):
            for n in range(saves):
                scope = Scope("stardew-valley", f"farm-{n}")
                h.store.upsert_event(scope, NewEvent("goal", "温室", "修好温室"), 1.0)
            before = h.store.snapshots
            view = await page.get("view")
            costs.append(h.store.snapshots - before)
            assert len(view["saves"]) == saves
        assert costs == [1, 1, 1]


async def test_bodies_are_json_named_by_byte_or_field_and_limited_in_size(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h:
        h.store.set_profile_field("nickname", "小明")
        page = Page(h)
        await page.open()
        bad = await page.raw("profile", b'{"field": "nickname", "value": }', 400)
        assert "(byte 31)" in bad["error"], bad  # the "}" where a value belongs, from 0
        wrong = await page.raw(
            "pin",
            b'{"gameId": "stardew-valley", "saveId": "a", "eventId": "x", "pinned": true}',
            400,
        )
        assert wrong["fields"] == ["eventId"], wrong
        extra = await page.post("forget", 400, target="profile", gameId="stardew-valley")
        assert extra["fields"] == ["gameId"]
        assert (await page.raw("profile", b"", 400))["error"] == "a JSON body is required"
        value = "x" * (MAX_BODY - len('{"field":"notes","value":""}'))
        at_limit = json.dumps({"field": "notes", "value": value}, separators=(",", ":")).encode()
        assert len(at_limit) == MAX_BODY
        refused = await page.raw("profile", at_limit, 400)  # read whole, refused by the store
        assert "413" not in json.dumps(refused)
        over = await page.raw("profile", at_limit + b" ", 413)
        assert str(MAX_BODY) in over["error"] and over["code"] == "too_large"

        # An import (导入) may be larger than any other body, once its head passed the checks.
        scope = Scope("stardew-valley", "farm-big")
        for n in range(200):
            h.store.upsert_event(scope, NewEvent("goal", f"目标{n}", f"第 {n} 个长目标" * 8), 1.0)
        big = encode_document(h.store.export())
        assert MAX_BODY < len(big) < IMPORT_BODY
        assert (await page.raw("import", big, 200)) == {"items": 200}
        page.csrf, csrf = "wrong", page.csrf
        refused = await page.raw("import", big, 413)  # no session's write: the small limit
        assert refused["code"] == "too_large"
        page.csrf = csrf
        headers = [*page.auth(), page.origin]  # a form's type, not JSON
        answer = await http(page.port, "POST", "/ui/api/profile", headers, b"field=nickname")
        assert answer.status == 415
        assert h.store.get_profile().nickname == "小明"


REFUSALS: list[tuple[str, int, str]] = [
    ("no session", 401, "no session"),
    ("foreign origin", 403, "origin not allowed"),
    ("rebinding host", 403, "host not allowed"),
    ("missing csrf", 403, "csrf token missing or wrong"),
    ("wrong csrf", 403, "csrf token missing or wrong"),
    ("cross-site fetch", 403, "cross-site request"),
]


def _refused_headers(case: str, page: Page) -> list[tuple[str, str]]:
    session = ("Cookie", page.cookie)
    csrf = (CSRF_HEADER, page.csrf)
    match case:
        case "no session":
            return [page.host, csrf, page.origin]
        case "foreign origin":
            return [page.host, session, csrf, ("Origin", "http://evil.example")]
        case "rebinding host":
            return [
                ("Host", f"evil.example:{page.port}"),
                session,
                csrf,
                ("Origin", f"http://evil.example:{page.port}"),
            ]
        case "missing csrf":
            return [page.host, session, page.origin]
        case "wrong csrf":
            return [page.host, session, (CSRF_HEADER, "x" * 43), page.origin]
        case _:
            return [page.host, session, csrf, page.origin, ("Sec-Fetch-Site", "same-site")]


@pytest.mark.parametrize(("case", "status", "reason"), REFUSALS, ids=[r[0] for r in REFUSALS])
async def test_refused_requests_neither_read_nor_change(
    tmp_path: Path, case: str, status: int, reason: str
) -> None:
    async with running(tmp_path) as h:
        h.store.upsert_event(FARM, NewEvent(kind="goal", subject="鱼缸", summary="完成鱼缸"), 1.0)
        h.store.set_profile_field("nickname", "小明")
        page = Page(h)
        await page.open()
        headers = _refused_headers(case, page)
        read = await http(page.port, "GET", "/ui/api/view", headers)
        assert (read.status, read.json()) == (status, {"error": reason})
        assert "小明" not in read.body.decode()
        for path, body in (
            ("/ui/api/profile", {"field": "nickname", "value": "坏人"}),
            ("/ui/api/forget", {"target": "save", "gameId": "stardew-valley", "saveId": "farm-a"}),
        ):
            sent = [*headers, page.json]
            write = await http(page.port, "POST", path, sent, json.dumps(body).encode())
            assert (write.status, write.json()) == (status, {"error": reason})
        assert h.store.get_profile().nickname == "小明"
        assert len(h.store.load_scope(FARM)) == 1


async def test_a_wrong_launch_token_opens_no_session(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        for token in (
            "",
            "x" * 43,
            h.server.ui.mint_key()[:-1],
            "test-token-0123456789abcdef0123456789abcdef",
        ):
            answer = await http(
                page.port,
                "POST",
                "/ui/api/session",
                [page.host, page.origin, (LAUNCH_HEADER, token)],
            )
            assert (answer.status, answer.json()) == (401, {"error": WRONG_KEY})
            assert answer.header("set-cookie") is None
        assert h.server.ui.sessions == {}


async def test_a_launch_key_opens_one_session_and_is_gone(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        key, other = h.server.ui.mint_key(), h.server.ui.mint_key()

        async def exchange(launch: str) -> int:
            headers = [page.host, page.origin, (LAUNCH_HEADER, launch)]
            answer = await http(page.port, "POST", "/ui/api/session", headers)
            return answer.status

        assert await exchange(key) == 200
        assert await exchange(key) == 401  # single-use
        assert await exchange(other) == 200  # minting one did not void the other


async def test_a_launch_key_lives_ten_minutes(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        early, late = h.server.ui.mint_key(), h.server.ui.mint_key()

        async def exchange(launch: str) -> int:
            headers = [page.host, page.origin, (LAUNCH_HEADER, launch)]
            answer = await http(page.port, "POST", "/ui/api/session", headers)
            return answer.status

        h.clock.advance(599.9)
        assert await exchange(early) == 200
        h.clock.advance(0.1)
        assert await exchange(late) == 401


async def test_a_mods_token_cannot_mint_a_page_session_the_owner_only_secret_can(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    token, path = tokens.load_or_create(data)
    settings = load_settings(None, env={}, overrides={"data_dir": str(data), "server.port": 0})
    async with serving(settings, token=token, clock=SystemClock(), token_file=path) as server:
        port = server.ui_port
        host, origin = ("Host", f"127.0.0.1:{port}"), ("Origin", f"http://127.0.0.1:{port}")

        async def mint(secret: str) -> HttpAnswer:
            return await http(port, "POST", LAUNCH_KEY_PATH, [host, (SECRET_HEADER, secret)])

        async def exchange(key: str) -> int:
            headers = [host, origin, (LAUNCH_HEADER, key)]
            return (await http(port, "POST", "/ui/api/session", headers)).status

        # the adapter token, as a mod holds it: no launch key, no session
        refused = await mint(token)
        assert (refused.status, refused.json()["error"]) == (401, "wrong page secret")
        assert await exchange(token) == 401
        old_header = [host, ("X-XTY-Token", token)]
        assert (await http(port, "POST", LAUNCH_KEY_PATH, old_header)).status == 401
        # the page secret, in a file only the player's account can read, mints one
        secret_file = data / "page-secret"
        assert stat.S_IMODE(secret_file.stat().st_mode) == 0o600
        secret = secret_file.read_text(encoding="ascii")
        assert len(secret) >= 43 and secret != token
        minted = await mint(secret)
        assert minted.status == 200
        assert await exchange(str(minted.json()["key"])) == 200
        # rotating the adapter token (a mod's copy leaked) leaves the page's secret alone
        tokens.rotate(data)
        assert (await mint(secret)).status == 200
    # each start writes a new one: an old copy opens nothing on the next server
    async with serving(settings, token=token, clock=SystemClock(), token_file=path) as server:
        port = server.ui_port
        stale = [("Host", f"127.0.0.1:{port}"), (SECRET_HEADER, secret)]
        assert (await http(port, "POST", LAUNCH_KEY_PATH, stale)).status == 401


async def test_the_websocket_port_serves_no_page_and_the_page_port_no_websocket(
    tmp_path: Path,
) -> None:
    async with running(tmp_path) as h:
        async with h.adapter() as ws:
            assert ws.request is not None
        port = h.server.port or 0
        ws_host = [("Host", f"127.0.0.1:{port}")]
        assert (await http(port, "GET", "/other", ws_host)).status == 404
        assert (await http(port, "GET", "/ui/", ws_host)).status != 200
        page = Page(h)
        assert page.port != port
        assert (await http(page.port, "GET", "/v1", [page.host])).status == 404


async def test_export_of_one_save_or_everything(tmp_path: Path) -> None:
    from xtyserver.memory.export import decode_document, encode_document

    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        await fill(h)
        page = Page(h)
        await page.open()
        everything = decode_document(json.dumps(await page.get("export")))
        assert encode_document(everything) == encode_document(h.store.export())
        one = decode_document(
            json.dumps(await page.get("export?gameId=stardew-valley&saveId=farm-a"))
        )
        assert {e.scope for e in one.events} == {FARM} and len(one.events) == 4
        assert one.sessions and {Scope(s.game_id, s.save_id) for s in one.sessions} == {FARM}
        assert {Scope(d.game_id, d.save_id) for d in one.days} == {FARM}
        assert one.profile == h.store.get_profile()
        for query, status in (
            ("export?gameId=stardew-valley", 400),  # a save needs both
            ("export?gameId=stardew-valley&saveId=nope", 404),
            ("export?gameId=Bad Id&saveId=farm-a", 400),
            ("export?gameId=stardew-valley&saveId=farm-a&saveId=farm-b", 400),
            ("export?what=1", 400),
        ):
            answer = await http(page.port, "GET", f"/ui/api/{query}", page.auth())
            assert answer.status == status, (query, answer.body)
        # without the session's CSRF token nothing is exported
        bare = [page.host, ("Cookie", page.cookie)]
        assert (await http(page.port, "GET", "/ui/api/export", bare)).status == 403


async def test_the_page_gets_each_memorys_search_keys_to_show_as_tags(tmp_path: Path) -> None:
    async with running(tmp_path, clock=ManualClock()) as h:
        keys = ("鸡窝", "Coop")
        h.store.upsert_event(FARM, NewEvent("goal", "鸡舍", "盖好鸡舍", search_keys=keys), 1.0)
        page = Page(h)
        await page.open()
        view = await page.get("view")
        (event,) = [e for s in view["saves"] for e in s["events"]]
        assert event["searchKeys"] == list(keys)
        h.store.upsert_event(FARM, NewEvent("goal", "温室", "修好温室"), 2.0)
        view = await page.get("view")
        plain = [e for s in view["saves"] for e in s["events"] if e["subject"] == "温室"]
        assert "searchKeys" not in plain[0]  # absent when none


async def test_the_trash_and_restore_over_the_api(tmp_path: Path) -> None:
    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        await fill(h)
        page = Page(h)
        await page.open()
        assert await page.get("trash") == {"hours": 24.0, "entries": []}
        preview = await page.post("forget", target="save", gameId="stardew-valley", saveId="farm-a")
        done = await page.post(
            "forget",
            target="save",
            gameId="stardew-valley",
            saveId="farm-a",
            confirmToken=preview["confirmToken"],
        )
        trash = await page.get("trash")
        [entry] = trash["entries"]
        assert entry["trashId"] == done["trashId"] and entry["target"] == "save"
        assert entry["itemCount"] == 4 and entry["leftMs"] == 24 * 3600 * 1000
        assert RFC3339.fullmatch(entry["expiresAt"])
        assert h.store.load_scope(FARM) == []
        await page.post("restore", 400, trashId=0)
        await page.post("restore", 400, trashId=entry["trashId"], extra=1)
        back = await page.post("restore", trashId=entry["trashId"])
        assert back == {
            "trashId": entry["trashId"],
            "target": "save",
            "items": 4,
            "profileFields": [],
        }
        assert len(h.store.load_scope(FARM)) == 4
        missing = await page.post("restore", 404, trashId=entry["trashId"])
        assert missing["fields"] == ["trashId"]


async def test_a_forget_is_restorable_from_a_new_page_session_after_the_old_one_ended(
    tmp_path: Path,
) -> None:
    """The page session lives 12 h, the trash 24 h: a page opened the next morning restores."""
    async with running(tmp_path, clock=ManualClock(), overrides=MINUTE_BEATS) as h:
        await fill(h)
        evening = Page(h)
        await evening.open()
        target = {"target": "save", "gameId": "stardew-valley", "saveId": "farm-a"}
        preview = await evening.post("forget", **target)
        done = await evening.post("forget", **target, confirmToken=preview["confirmToken"])
        assert h.store.load_scope(FARM) == []
        h.clock.advance(SESSION_SECONDS + 1)  # the evening's session is over ...
        ended = await evening.raw("trash", b"", 401)
        assert ended == {"error": "no session"}
        morning = Page(h)
        await morning.open()  # ... `xtyserver` (or `xtyserver ui`) opens a new one
        [entry] = (await morning.get("trash"))["entries"]
        assert entry["trashId"] == done["trashId"]
        assert entry["leftMs"] == (24 * 3600 - SESSION_SECONDS - 1) * 1000
        back = await morning.post("restore", trashId=done["trashId"])
        assert back["items"] == 4 and len(h.store.load_scope(FARM)) == 4


async def test_the_model_check_answers_codes_the_page_renders_never_the_key_or_a_path(
    tmp_path: Path,
) -> None:
    key = "sk-test-doctor-0000000000004321"
    async with running(tmp_path, model=False) as h:
        page = Page(h)
        await page.open()
        report = await page.post("doctor")
        reachable = report["routes"][0]["checks"][0]
        assert reachable["name"] == "reachable" and reachable["status"] == "fail"
        assert (reachable["detail_code"], reachable["hint_code"]) == (
            "not_configured",
            "set_missing",
        )
        assert reachable["params"] == {"setting": "model", "missing": "base_url"}
        assert reachable["hint"].startswith("set model.base_url")  # the English stays

        with socket.socket() as s:  # a port nothing listens on
            s.bind(("127.0.0.1", 0))
            closed = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
        await page.post("settings", changes={"model.base_url": closed, "model.model": "m1"})
        await page.post("key", apiKey=key)
        answer = await http(
            page.port,
            "POST",
            "/ui/api/doctor",
            [*page.auth(), page.origin, page.json],
            b"{}",
        )
        assert answer.status == 200
        text = answer.body.decode("utf-8")
        assert key not in text and key[-4:] not in text
        assert str(tmp_path) not in text and str(h.settings.data_path) not in text
        checks = {c["name"]: c for c in answer.json()["result"]["routes"][0]["checks"]}
        assert checks["reachable"]["detail_code"] == "cannot_connect"
        assert checks["reachable"]["params"] == {"setting": "model"}  # no address, no key
        for c in checks.values():
            assert closed not in json.dumps(c["params"])
