"""The memory page's HTTP API over the real server and a real store: what works, what is refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from tests.conftest import Harness, running
from tests.manage.ui_fixtures import DAYS_PLAYED, GAMES, MINUTE_BEATS, HttpAnswer, fill, http
from xtyserver.clock import ManualClock
from xtyserver.manage.access import COOKIE, CSP, CSRF_HEADER, LAUNCH_HEADER
from xtyserver.memory.types import NewEvent, Scope

pytestmark = pytest.mark.anyio
FARM = Scope("stardew-valley", "farm-a")


class Page:
    """What the page's script does, by hand: the session exchange, then API calls."""

    def __init__(self, h: Harness) -> None:
        assert h.server.port is not None
        self.h = h
        self.port = h.server.port
        self.host = ("Host", f"127.0.0.1:{self.port}")
        self.origin = ("Origin", f"http://127.0.0.1:{self.port}")
        self.cookie = ""
        self.csrf = ""

    async def open(self) -> HttpAnswer:
        answer = await http(
            self.port,
            "POST",
            "/ui/api/session",
            [self.host, self.origin, (LAUNCH_HEADER, self.h.server.ui.key)],
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

    async def post(self, name: str, status: int = 200, **params: Any) -> Any:
        path = f"/ui/api/{name}?{urlencode(params)}"
        answer = await http(self.port, "POST", path, [*self.auth(), self.origin])
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
            h.server.port or 0,
            "GET",
            "/ui/api/session",
            [Page(h).host, ("Cookie", cookie.split(";")[0])],
        )
        assert cookie_only.status == 403  # the cookie alone never yields the CSRF token
        assert b'csrf"' not in cookie_only.body


async def test_view_stats_and_every_change_through_the_api(tmp_path: Path) -> None:
    clock = ManualClock()
    async with running(tmp_path, clock=clock, overrides=MINUTE_BEATS) as h:
        await fill(h)
        page = Page(h)
        await page.open()
        view = await page.get("view")
        assert view["profile"]["nickname"] == "小明"
        assert {g["gameId"]: {s["saveId"] for s in g["saves"]} for g in view["games"]} == GAMES
        for game in view["games"]:
            for save in game["saves"]:
                assert save["name"] is None  # no save names in today's store
                assert len(save["events"]) >= 2 and save["stats"]["sessions"] >= 1
        stats = await page.get("stats")
        for game_id, days in DAYS_PLAYED.items():
            dates = {d["date"] for d in stats["daily"] if d["gameId"] == game_id}
            assert len(dates) == days
        farm_a = next(s for s in stats["saves"] if s["saveId"] == "farm-a")
        assert farm_a["activeMs"] == 50 * 60_000 and farm_a["sessions"] == 2

        # correct a shared field, switch automatic forming off
        await page.post("shared", field="nickname", value=json.dumps("阿明"))
        await page.post("shared", field="hobbies", value=json.dumps(["钓鱼"]))
        await page.post("auto-shared", on="false")
        profile = h.store.get_profile()
        assert (profile.nickname, profile.hobbies, profile.auto_shared) == ("阿明", ["钓鱼"], False)
        refused = await page.post("shared", 400, field="nickname", value=json.dumps("x" * 40))
        assert "nickname" in json.dumps(refused) or refused["error"]
        assert h.store.get_profile().nickname == "阿明"

        # pin, then forget one event in two steps
        event = h.store.load_scope(FARM)[0]
        await page.post("pin", gameId="stardew-valley", saveId="farm-a", id=event.id, pinned="true")
        assert [e.pinned for e in h.store.load_scope(FARM) if e.id == event.id] == [True]
        preview = await page.post(
            "forget/preview",
            kind="event",
            gameId="stardew-valley",
            saveId="farm-a",
            eventId=event.id,
        )
        assert [e["id"] for e in preview["events"]] == [event.id] and preview["statisticsKept"]
        assert event.id in [e.id for e in h.store.load_scope(FARM)]  # nothing gone yet
        await page.post("forget/confirm", token=preview["token"])
        assert event.id not in [e.id for e in h.store.load_scope(FARM)]
        again = await page.post("forget/confirm", 409, token=preview["token"])
        assert "preview again" in again["error"]

        # a whole game; its statistics stay
        preview = await page.post("forget/preview", kind="game", gameId="dont-starve-together")
        assert len(preview["events"]) == 4
        await page.post("forget/confirm", token=preview["token"])
        assert h.store.load_scope(Scope("dont-starve-together", "world-a")) == []
        assert any(g.game_id == "dont-starve-together" for g in h.store.stats().games)

        # a shared field is reset to empty
        preview = await page.post("forget/preview", kind="shared_field", field="hobbies")
        assert preview["value"] == ["钓鱼"]
        await page.post("forget/confirm", token=preview["token"])
        assert h.store.get_profile().hobbies == []


async def test_a_preview_is_refused_once_memory_changed(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        h.store.upsert_event(FARM, NewEvent(kind="goal", subject="鱼缸", summary="完成鱼缸"), 1.0)
        page = Page(h)
        await page.open()
        preview = await page.post(
            "forget/preview", kind="save", gameId="stardew-valley", saveId="farm-a"
        )
        h.store.upsert_event(FARM, NewEvent(kind="goal", subject="温室", summary="修好温室"), 2.0)
        answer = await page.post("forget/confirm", 409, token=preview["token"])
        assert "changed" in answer["error"]
        assert len(h.store.load_scope(FARM)) == 2
        expired = await page.post(
            "forget/preview", kind="save", gameId="stardew-valley", saveId="farm-a"
        )
        h.clock.advance(301)
        await page.post("forget/confirm", 409, token=expired["token"])
        assert len(h.store.load_scope(FARM)) == 2


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
        for path in (
            "/ui/api/shared?" + urlencode({"field": "nickname", "value": '"坏人"'}),
            "/ui/api/forget/preview?kind=save&gameId=stardew-valley&saveId=farm-a",
        ):
            write = await http(page.port, "POST", path, headers)
            assert (write.status, write.json()) == (status, {"error": reason})
        assert h.store.get_profile().nickname == "小明"
        assert len(h.store.load_scope(FARM)) == 1


async def test_a_wrong_launch_token_opens_no_session(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        page = Page(h)
        for token in (
            "",
            "x" * 43,
            h.server.ui.key[:-1],
            "test-token-0123456789abcdef0123456789abcdef",
        ):
            answer = await http(
                page.port,
                "POST",
                "/ui/api/session",
                [page.host, page.origin, (LAUNCH_HEADER, token)],
            )
            assert (answer.status, answer.json()) == (401, {"error": "wrong token"})
            assert answer.header("set-cookie") is None
        assert h.server.ui.sessions == {}


async def test_the_websocket_endpoint_is_unchanged(tmp_path: Path) -> None:
    async with running(tmp_path) as h:
        async with h.adapter() as ws:
            assert ws.request is not None
        assert (await http(h.server.port or 0, "GET", "/other", [Page(h).host])).status == 404
