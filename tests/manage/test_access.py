"""The page's access decisions, as a table (the pure function, no server)."""

from __future__ import annotations

import pytest

from xtyserver.manage.access import (
    COOKIE,
    CSRF_HEADER,
    LAUNCH_HEADER,
    LAUNCH_KEY_PATH,
    SECRET_HEADER,
    Decision,
    UiSession,
    check_ui_request,
    cookie,
    cookie_name,
    free_slot,
    open_link,
    open_with_form,
    set_cookie,
)

PORT = 8765
KEY = "launch-key-0123456789abcdef0123456789abcdefg"
KEYS = {KEY: 1600.0, "expired-key": 900.0}
ADAPTER_TOKEN = "adapter-token-0123456789abcdef0123456789"
PAGE_SECRET = "page-secret-0123456789abcdef0123456789ab"
HOST = ("Host", f"127.0.0.1:{PORT}")
ORIGIN = ("Origin", f"http://127.0.0.1:{PORT}")
SESSIONS = {"s1": UiSession("csrf-1", 2000.0), "old": UiSession("csrf-old", 500.0)}
GOOD = [HOST, ("Cookie", f"{COOKIE}=s1"), (CSRF_HEADER, "csrf-1")]
JSON = ("Content-Type", "application/json")
WRONG_KEY = "wrong, used or expired launch key"
NAVIGATE = [
    ("Sec-Fetch-Site", "cross-site"),
    ("Sec-Fetch-Mode", "navigate"),
    ("Sec-Fetch-Dest", "document"),
]
FORM = ("Content-Type", "application/x-www-form-urlencoded")
HANDOFF = [FORM, ("Origin", "null"), *NAVIGATE]

CASES: list[tuple[str, str, str, list[tuple[str, str]], tuple[str, int, str]]] = [
    # (case, method, path, headers, (kind, status, reason))
    ("the page", "GET", "/ui/", [HOST], ("static", 0, "")),
    (
        "the page by localhost",
        "GET",
        "/ui/app.js",
        [("Host", f"localhost:{PORT}")],
        ("static", 0, ""),
    ),
    ("typed into the bar", "GET", "/ui/", [HOST, ("Sec-Fetch-Site", "none")], ("static", 0, "")),
    (
        "rebinding host",
        "GET",
        "/ui/",
        [("Host", f"evil.example:{PORT}")],
        ("refused", 403, "host not allowed"),
    ),
    ("other port", "GET", "/ui/", [("Host", "127.0.0.1:9")], ("refused", 403, "host not allowed")),
    ("two hosts", "GET", "/ui/", [HOST, HOST], ("refused", 403, "host not allowed")),
    ("no host", "GET", "/ui/", [], ("refused", 403, "host not allowed")),
    ("page posted to", "POST", "/ui/", [HOST, ORIGIN], ("refused", 405, "method not allowed")),
    (
        "exchange",
        "POST",
        "/ui/api/session",
        [HOST, ORIGIN, (LAUNCH_HEADER, KEY)],
        ("exchange", 0, ""),
    ),
    (
        "wrong token",
        "POST",
        "/ui/api/session",
        [HOST, ORIGIN, (LAUNCH_HEADER, KEY + "x")],
        ("refused", 401, WRONG_KEY),
    ),
    ("no token", "POST", "/ui/api/session", [HOST, ORIGIN], ("refused", 401, WRONG_KEY)),
    (
        "expired key",
        "POST",
        "/ui/api/session",
        [HOST, ORIGIN, (LAUNCH_HEADER, "expired-key")],
        ("refused", 401, WRONG_KEY),
    ),
    (
        "the adapter token is not a launch key",
        "POST",
        "/ui/api/session",
        [HOST, ORIGIN, (LAUNCH_HEADER, ADAPTER_TOKEN)],
        ("refused", 401, WRONG_KEY),
    ),
    (
        "xtyserver ui mints a key",
        "POST",
        LAUNCH_KEY_PATH,
        [HOST, (SECRET_HEADER, PAGE_SECRET)],
        ("mint", 0, ""),
    ),
    (
        "minting with a wrong secret",
        "POST",
        LAUNCH_KEY_PATH,
        [HOST, (SECRET_HEADER, PAGE_SECRET + "x")],
        ("refused", 401, "wrong page secret"),
    ),
    (
        "a mod's adapter token mints nothing",
        "POST",
        LAUNCH_KEY_PATH,
        [HOST, (SECRET_HEADER, ADAPTER_TOKEN)],
        ("refused", 401, "wrong page secret"),
    ),
    (
        "a page cannot mint",
        "POST",
        LAUNCH_KEY_PATH,
        [HOST, ORIGIN, (SECRET_HEADER, PAGE_SECRET)],
        ("refused", 403, "not from a browser"),
    ),
    (
        "a page without origin cannot mint",
        "POST",
        LAUNCH_KEY_PATH,
        [HOST, ("Sec-Fetch-Site", "cross-site"), (SECRET_HEADER, PAGE_SECRET)],
        ("refused", 403, "not from a browser"),
    ),
    (
        "minting from a rebinding host",
        "POST",
        LAUNCH_KEY_PATH,
        [("Host", f"evil.example:{PORT}"), (SECRET_HEADER, PAGE_SECRET)],
        ("refused", 403, "host not allowed"),
    ),
    (
        "token twice",
        "POST",
        "/ui/api/session",
        [HOST, ORIGIN, (LAUNCH_HEADER, KEY), (LAUNCH_HEADER, KEY)],
        ("refused", 401, WRONG_KEY),
    ),
    (
        "exchange without origin",
        "POST",
        "/ui/api/session",
        [HOST, (LAUNCH_HEADER, KEY)],
        ("refused", 403, "origin required"),
    ),
    (
        "exchange from a foreign origin",
        "POST",
        "/ui/api/session",
        [HOST, ("Origin", "http://evil.example"), (LAUNCH_HEADER, KEY)],
        ("refused", 403, "origin not allowed"),
    ),
    (
        "origin of the other loopback name",
        "POST",
        "/ui/api/session",
        [HOST, ("Origin", f"http://localhost:{PORT}"), (LAUNCH_HEADER, KEY)],
        ("refused", 403, "origin not allowed"),
    ),
    (
        "null origin",
        "POST",
        "/ui/api/pin",
        [*GOOD, ("Origin", "null")],
        ("refused", 403, "origin not allowed"),
    ),
    (
        "the cookie alone",
        "GET",
        "/ui/api/session",
        [HOST, ("Cookie", f"{COOKIE}=s1")],
        ("refused", 403, "csrf token missing or wrong"),
    ),
    ("resume without a session", "GET", "/ui/api/session", [HOST], ("refused", 401, "no session")),
    ("read", "GET", "/ui/api/view", GOOD, ("read", 0, "")),
    (
        "read among other cookies",
        "GET",
        "/ui/api/view",
        [HOST, ("Cookie", f"a=b; {COOKIE}=s1; c=d"), (CSRF_HEADER, "csrf-1")],
        ("read", 0, ""),
    ),
    ("write", "POST", "/ui/api/pin", [*GOOD, ORIGIN, JSON], ("write", 0, "")),
    (
        "write with a charset",
        "POST",
        "/ui/api/pin",
        [*GOOD, ORIGIN, ("Content-Type", "Application/JSON; charset=utf-8")],
        ("write", 0, ""),
    ),
    (
        "write without a type",
        "POST",
        "/ui/api/pin",
        [*GOOD, ORIGIN],
        ("refused", 415, "content-type must be application/json"),
    ),
    (
        "write as a form",
        "POST",
        "/ui/api/pin",
        [*GOOD, ORIGIN, ("Content-Type", "text/plain")],
        ("refused", 415, "content-type must be application/json"),
    ),
    (
        "write with two types",
        "POST",
        "/ui/api/pin",
        [*GOOD, ORIGIN, JSON, JSON],
        ("refused", 415, "content-type must be application/json"),
    ),
    (
        "no session",
        "GET",
        "/ui/api/view",
        [HOST, (CSRF_HEADER, "csrf-1")],
        ("refused", 401, "no session"),
    ),
    (
        "unknown session",
        "GET",
        "/ui/api/view",
        [HOST, ("Cookie", f"{COOKIE}=s2"), (CSRF_HEADER, "csrf-1")],
        ("refused", 401, "no session"),
    ),
    (
        "expired session",
        "GET",
        "/ui/api/view",
        [HOST, ("Cookie", f"{COOKIE}=old"), (CSRF_HEADER, "csrf-old")],
        ("refused", 401, "no session"),
    ),
    (
        "two session cookies",
        "GET",
        "/ui/api/view",
        [HOST, ("Cookie", f"{COOKIE}=s1; {COOKIE}=s1"), (CSRF_HEADER, "csrf-1")],
        ("refused", 401, "no session"),
    ),
    (
        "missing csrf",
        "POST",
        "/ui/api/pin",
        [HOST, ("Cookie", f"{COOKIE}=s1"), ORIGIN],
        ("refused", 403, "csrf token missing or wrong"),
    ),
    (
        "wrong csrf",
        "GET",
        "/ui/api/view",
        [HOST, ("Cookie", f"{COOKIE}=s1"), (CSRF_HEADER, "csrf-x")],
        ("refused", 403, "csrf token missing or wrong"),
    ),
    ("write without origin", "POST", "/ui/api/pin", GOOD, ("refused", 403, "origin required")),
    (
        "write from a foreign origin",
        "POST",
        "/ui/api/pin",
        [*GOOD, ("Origin", "http://evil.example")],
        ("refused", 403, "origin not allowed"),
    ),
    (
        "read from a foreign origin",
        "GET",
        "/ui/api/view",
        [*GOOD, ("Origin", "http://127.0.0.1:9")],
        ("refused", 403, "origin not allowed"),
    ),
    (
        "same-site other port",
        "GET",
        "/ui/api/view",
        [*GOOD, ("Sec-Fetch-Site", "same-site")],
        ("refused", 403, "cross-site request"),
    ),
    (
        "cross-site",
        "POST",
        "/ui/api/pin",
        [*GOOD, ORIGIN, ("Sec-Fetch-Site", "cross-site")],
        ("refused", 403, "cross-site request"),
    ),
    (
        "api opened from the bar",
        "GET",
        "/ui/api/view",
        [*GOOD, ("Sec-Fetch-Site", "none")],
        ("refused", 403, "cross-site request"),
    ),
    # A link followed or a file opened: only a top-level GET navigation to the page's HTML.
    ("opened from a file", "GET", "/ui/", [HOST, *NAVIGATE], ("static", 0, "")),
    ("opened from a file by name", "GET", "/ui/index.html", [HOST, *NAVIGATE], ("static", 0, "")),
    (
        "a script from another site",
        "GET",
        "/ui/app.js",
        [HOST, *NAVIGATE],
        ("refused", 403, "cross-site request"),
    ),
    (
        "the page in another site's frame",
        "GET",
        "/ui/",
        [HOST, NAVIGATE[0], ("Sec-Fetch-Mode", "navigate"), ("Sec-Fetch-Dest", "iframe")],
        ("refused", 403, "cross-site request"),
    ),
    (
        "the page fetched by another site",
        "GET",
        "/ui/",
        [HOST, NAVIGATE[0], ("Sec-Fetch-Mode", "cors"), ("Sec-Fetch-Dest", "empty")],
        ("refused", 403, "cross-site request"),
    ),
    (
        "the API navigated to",
        "GET",
        "/ui/api/view",
        [*GOOD, *NAVIGATE],
        ("refused", 403, "cross-site request"),
    ),
    ("the hand-off form", "POST", "/ui/open", [HOST, *HANDOFF], ("open", 0, "")),
    (
        "the hand-off form without Fetch metadata",
        "POST",
        "/ui/open",
        [HOST, FORM],
        ("open", 0, ""),
    ),
    (
        "a web site's form",
        "POST",
        "/ui/open",
        [HOST, *HANDOFF[1:], ("Origin", "http://evil.example")],
        ("refused", 403, "origin not allowed"),
    ),
    (
        "the hand-off fetched",
        "POST",
        "/ui/open",
        [HOST, FORM, ("Origin", "null"), ("Sec-Fetch-Mode", "cors"), ("Sec-Fetch-Dest", "empty")],
        ("refused", 403, "not a page navigation"),
    ),
    (
        "the hand-off as JSON",
        "POST",
        "/ui/open",
        [HOST, JSON, *HANDOFF[1:]],
        ("refused", 415, "content-type must be application/x-www-form-urlencoded"),
    ),
    (
        "the hand-off reloaded",
        "GET",
        "/ui/open",
        [HOST, *NAVIGATE],
        ("refused", 405, "method not allowed"),
    ),
    (
        "preflight",
        "OPTIONS",
        "/ui/api/pin",
        [*GOOD, ORIGIN],
        ("refused", 405, "method not allowed"),
    ),
    (
        "preflight from elsewhere",
        "OPTIONS",
        "/ui/api/pin",
        [HOST, ("Origin", "http://evil.example")],
        ("refused", 403, "origin not allowed"),
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "headers", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_decision(
    method: str, path: str, headers: list[tuple[str, str]], expected: tuple[str, int, str]
) -> None:
    got = check(method, path, headers)
    assert (got.kind, got.status, got.reason) == expected


def check(
    method: str,
    path: str,
    headers: list[tuple[str, str]],
    sessions: dict[str, UiSession] = SESSIONS,
) -> Decision:
    """The decision at time 1000 with this table's keys and secret."""
    return check_ui_request(
        method,
        path,
        headers,
        bind_host="127.0.0.1",
        port=PORT,
        keys=KEYS,
        secret=PAGE_SECRET,
        sessions=sessions,
        now=1000.0,
    )


def test_allowed_calls_name_their_session() -> None:
    got = check_ui_request(
        "GET",
        "/ui/api/view",
        GOOD,
        bind_host="127.0.0.1",
        port=PORT,
        keys=KEYS,
        secret=PAGE_SECRET,
        sessions=SESSIONS,
        now=1000.0,
    )
    assert got.session_id == "s1"


def test_link_cookie_and_parsing() -> None:
    assert open_link("127.0.0.1", 8765, "k") == "http://127.0.0.1:8765/ui/#token=k"
    assert open_link("0.0.0.0", 8765, "k") == "http://127.0.0.1:8765/ui/#token=k"
    assert open_link("::1", 8765, "k") == "http://[::1]:8765/ui/#token=k"
    value = set_cookie("abc")
    assert value.startswith(f"{COOKIE}=abc;")
    for part in ("HttpOnly", "SameSite=Strict", "Path=/ui/"):
        assert part in value
    assert cookie([("Cookie", "x=1"), ("Cookie", f"{COOKIE}=v")], COOKIE) == "v"
    assert cookie([("Cookie", f"{COOKIE}")], COOKIE) is None


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (f"key={KEY}".encode(), ("exchange", KEY)),
        (b"key=expired-key", ("refused", None)),
        (b"key=unknown", ("refused", None)),
        (f"key={KEY}&key={KEY}".encode(), ("refused", None)),
        (b"", ("refused", None)),
        (b"key", ("refused", None)),
        ("key=\u5bc6".encode(), ("refused", None)),
        (ADAPTER_TOKEN.encode(), ("refused", None)),
    ],
)
def test_the_hand_off_form_opens_with_an_unused_key_only(
    body: bytes, expected: tuple[str, str | None]
) -> None:
    got = open_with_form(body, KEYS, 1000.0)
    assert (got.kind, got.key) == expected
    if got.kind == "refused":
        assert (got.status, got.reason) == (401, WRONG_KEY)


def test_each_session_has_its_own_cookie_and_its_tab_s_csrf_token_picks_it() -> None:
    tabs = {
        "a": UiSession("csrf-a", 2000.0, 0),
        "b": UiSession("csrf-b", 2000.0, 1),
        "gone": UiSession("csrf-gone", 500.0, 2),
    }
    assert set_cookie("b", 1).startswith(f"{cookie_name(1)}=b;") and cookie_name(0) == COOKIE
    assert free_slot(tabs) == 3 and free_slot({}) == 0
    jar = ("Cookie", f"{cookie_name(0)}=a; {cookie_name(1)}=b; {cookie_name(2)}=gone")

    def decide(*headers: tuple[str, str]) -> tuple[str, int, str | None]:
        got = check("GET", "/ui/api/view", [HOST, *headers], tabs)
        return got.kind, got.status, got.session_id

    # the browser sends every tab's cookie; each tab's token names its own session
    assert decide(jar, (CSRF_HEADER, "csrf-a")) == ("read", 0, "a")
    assert decide(jar, (CSRF_HEADER, "csrf-b")) == ("read", 0, "b")
    assert decide(jar, (CSRF_HEADER, "csrf-gone"))[:2] == ("refused", 403)  # ended
    assert decide(jar, (CSRF_HEADER, "csrf-x"))[:2] == ("refused", 403)
    # a session's id under another slot's cookie opens nothing
    assert decide(("Cookie", f"{cookie_name(1)}=a"), (CSRF_HEADER, "csrf-a"))[:2] == (
        "refused",
        401,
    )
    assert decide(("Cookie", f"{cookie_name(2)}=gone"), (CSRF_HEADER, "csrf-gone"))[:2] == (
        "refused",
        401,
    )
