"""The upgrade guard as a pure function: one row per request a browser or adapter could send."""

from __future__ import annotations

import pytest

from xtyserver.protocol.upgrade import Refusal, allowed_hosts, bearer, check_upgrade

TOKEN = "upgrade-token-0123456789abcdef"
PORT = 8765
OK_HOST = ("Host", f"127.0.0.1:{PORT}")


def guard(
    headers: list[tuple[str, str]],
    path: str = "/v1",
    *,
    bind: str = "127.0.0.1",
    origins: tuple[str, ...] = (),
    connections: int = 0,
) -> Refusal | None:
    return check_upgrade(
        path,
        headers,
        bind_host=bind,
        port=PORT,
        allowed_origins=origins,
        token=TOKEN,
        connections=connections,
        max_connections=16,
    )


@pytest.mark.parametrize(
    ("headers", "path", "expected"),
    [
        ([OK_HOST], "/v1", None),
        ([OK_HOST], "/v1?x=1", None),
        ([("Host", f"localhost:{PORT}")], "/v1", None),
        ([("Host", f"[::1]:{PORT}")], "/v1", None),
        ([("host", f"LOCALHOST:{PORT}")], "/v1", None),
        ([OK_HOST], "/", Refusal(404, "not found; the endpoint is /v1")),
        ([OK_HOST], "/v2", Refusal(404, "not found; the endpoint is /v1")),
        ([], "/v1", Refusal(403, "host not allowed")),
        ([("Host", "evil.example:8765")], "/v1", Refusal(403, "host not allowed")),
        ([("Host", "127.0.0.1:9999")], "/v1", Refusal(403, "host not allowed")),
        ([("Host", "[::1]:9999")], "/v1", Refusal(403, "host not allowed")),
        ([("Host", "127.0.0.1")], "/v1", Refusal(403, "host not allowed")),
        ([OK_HOST, OK_HOST], "/v1", Refusal(403, "host not allowed")),
        ([OK_HOST, ("Origin", "https://evil.example")], "/v1", Refusal(403, "origin not allowed")),
        ([OK_HOST, ("Origin", "null")], "/v1", Refusal(403, "origin not allowed")),
        ([OK_HOST, ("Authorization", f"Bearer {TOKEN}")], "/v1", None),
        ([OK_HOST, ("Authorization", f"bearer {TOKEN}")], "/v1", None),
        ([OK_HOST, ("Authorization", "Bearer wrong")], "/v1", Refusal(401, "wrong token")),
        ([OK_HOST, ("Authorization", f"Basic {TOKEN}")], "/v1", Refusal(401, "wrong token")),
        (
            [OK_HOST, ("Authorization", f"Bearer {TOKEN}"), ("Authorization", f"Bearer {TOKEN}")],
            "/v1",
            Refusal(401, "wrong token"),
        ),
    ],
)
def test_guard_decides_each_request(
    headers: list[tuple[str, str]], path: str, expected: Refusal | None
) -> None:
    assert guard(headers, path) == expected


def test_guard_allows_a_listed_origin_once_and_refuses_it_twice() -> None:
    origin = ("Origin", "http://127.0.0.1:3000")
    assert guard([OK_HOST, origin], origins=("http://127.0.0.1:3000",)) is None
    refused = guard([OK_HOST, origin, origin], origins=("http://127.0.0.1:3000",))
    assert refused == Refusal(403, "origin not allowed")


def test_guard_refuses_past_max_connections_and_admits_at_one_below() -> None:
    auth = ("Authorization", f"Bearer {TOKEN}")
    assert guard([OK_HOST, auth], connections=15) is None
    assert guard([OK_HOST, auth], connections=16) == Refusal(503, "too many connections")


def test_guard_lets_a_tokenless_upgrade_through_to_the_preauth_pool_when_full() -> None:
    # Its hello must prove the token before it takes a seat (v1.md "Upgrade").
    assert guard([OK_HOST], connections=16) is None
    assert guard([OK_HOST], connections=1000) is None


def test_guard_accepts_a_specific_bind_address_as_host() -> None:
    assert guard([("Host", f"192.168.1.5:{PORT}")], bind="192.168.1.5") is None
    assert guard([("Host", f"192.168.1.5:{PORT}")]) == Refusal(403, "host not allowed")
    assert f"[fe80::1]:{PORT}" in allowed_hosts("fe80::1", PORT)


def test_bearer_reads_one_header_only() -> None:
    assert bearer([("Authorization", "Bearer abc ")]) == "abc"
    assert bearer([("Authorization", "Bearer a"), ("Authorization", "Bearer a")]) is None
    assert bearer([]) is None
