"""Access decisions for the memory page under ``/ui/`` (docs/memory-page.md "Memory page"). Pure.

A request's method, path and headers, the page's launch key, the open page
sessions and the time in; a :class:`Decision` out. The shell
(:mod:`xtyserver.manage.http`) only carries it out. Checked in this order:

1. ``Host`` must name this loopback server and port (403, DNS rebinding), as
   for the WebSocket upgrade.
2. ``Origin``, when sent, must be this page's own origin (403); a request that
   changes something (``POST``) must send it (403). ``Sec-Fetch-Site``, when
   sent, must be ``same-origin`` (or ``none`` for opening the page itself);
   only a top-level navigation to the page's HTML (``GET``, ``Sec-Fetch-Mode:
   navigate``, ``Sec-Fetch-Dest: document``) may come from another site: a
   link followed or a file opened, which reads nothing and changes nothing.
   ``POST /ui/open`` is the hand-off file's form (:func:`_open_form`).
3. By path: the page's files are public (they hold no data); ``POST
   /ui/api/session`` trades the launch key (``X-XTY-Launch``) for a session
   (401 when wrong); every other API call needs a session cookie (401) and
   that session's CSRF token in ``X-XTY-CSRF`` (403). Each open session has its
   own cookie (:func:`cookie_name`), so opening the page again leaves the open
   tabs working. The cookie alone never
   yields the CSRF token (the page keeps it in ``sessionStorage``), so a
   cookie leaked to another port of ``127.0.0.1`` opens nothing. ``GET`` reads,
   ``POST`` writes and must say ``Content-Type: application/json`` (415; a
   cross-site form cannot send that type without a CORS preflight, which is
   never answered); other methods are refused (405).

Launch keys (random, single-use, ``server.page_key_ttl``) and the page secret
that mints them (``POST /ui/api/launch-key`` with ``X-XTY-Page-Secret``, from a
local program only) are described in docs/memory-page.md "Memory page".
"""

from __future__ import annotations

import hmac
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Literal

import msgspec

from xtyserver.protocol.upgrade import allowed_hosts, header_values

PREFIX = "/ui/"
PAGE_ROUTES = frozenset({PREFIX, PREFIX + "index.html"})
API = "/ui/api/"
SESSION_PATH = "/ui/api/session"
OPEN_PATH = "/ui/open"
FORM_TYPE = "application/x-www-form-urlencoded"
LAUNCH_KEY_PATH = "/ui/api/launch-key"
SECRET_HEADER = "X-XTY-Page-Secret"
COOKIE = "xty_ui"
CSRF_HEADER = "X-XTY-CSRF"
LAUNCH_HEADER = "X-XTY-Launch"
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 8

Kind = Literal["static", "open", "exchange", "mint", "read", "write", "refused"]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS: tuple[tuple[str, str], ...] = (
    ("Content-Security-Policy", CSP),
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
    ("Cache-Control", "no-store"),
)


class UiSession(msgspec.Struct, frozen=True):
    """One open page: its CSRF token, when it ends (epoch seconds) and its cookie's slot.

    Each open session has its own cookie (:func:`cookie_name` of its ``slot``), so a
    page opened again in the same browser leaves the tabs already open working.
    """

    csrf: str
    expires_at: float
    slot: int = 0


def cookie_name(slot: int) -> str:
    """The session cookie of ``slot`` (0 to ``MAX_SESSIONS - 1``): ``xty_ui``, ``xty_ui_1``, ..."""
    return COOKIE if slot == 0 else f"{COOKIE}_{slot}"


def free_slot(sessions: Mapping[str, UiSession]) -> int:
    """The lowest cookie slot no session in ``sessions`` holds (fewer than MAX_SESSIONS)."""
    taken = {s.slot for s in sessions.values()}
    return next(n for n in range(MAX_SESSIONS) if n not in taken)


class Decision(msgspec.Struct, frozen=True):
    """What to do with one request: ``refused`` (its status and a reason safe to show),
    or what it may do; ``session_id`` for ``read`` and ``write``, the ``key`` an
    ``exchange`` uses up."""

    kind: Kind
    status: int = 0
    reason: str = ""
    session_id: str | None = None
    key: str | None = None


def refuse(status: int, reason: str) -> Decision:
    return Decision("refused", status, reason)


def _exchange(given: str | None, keys: Mapping[str, float], now: float) -> Decision:
    """Trade the unexpired launch key equal to ``given`` (each compared in constant time)."""
    found = None
    for key, expires_at in keys.items():
        if _same(given, key) and expires_at > now:
            found = key
    if found is None:
        return refuse(401, "wrong, used or expired launch key")
    return Decision("exchange", key=found)


def open_link(host: str, port: int, key: str) -> str:
    """The link that opens the page (the key rides in the fragment, never sent to a server)."""
    shown = f"[{host}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    return f"http://{shown}:{port}{PREFIX}#token={key}"


def cookie(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    """The value of cookie ``name``, or None when absent or sent more than once."""
    found: list[str] = []
    for line in header_values(headers, "Cookie"):
        for part in line.split(";"):
            key, sep, value = part.strip().partition("=")
            if sep and key == name:
                found.append(value)
    return found[0] if len(found) == 1 else None


def set_cookie(session_id: str, slot: int = 0) -> str:
    """The ``Set-Cookie`` value of a new session in cookie slot ``slot``."""
    return (
        f"{cookie_name(slot)}={session_id}; Path={PREFIX}; HttpOnly; SameSite=Strict; "
        f"Max-Age={SESSION_SECONDS}"
    )


def _session_of(
    headers: Sequence[tuple[str, str]], sessions: Mapping[str, UiSession], now: float
) -> Decision:
    """The live session whose cookie came and whose CSRF token the request carries.

    A browser sends every tab's cookie with each request; the tab's own CSRF token
    (in its ``sessionStorage``) picks its session. Each slot's token is compared, in
    constant time, without stopping at the first match.
    """
    given = _single(headers, CSRF_HEADER)
    live = False
    found: str | None = None
    for slot in range(MAX_SESSIONS):
        session_id = cookie(headers, cookie_name(slot))
        session = sessions.get(session_id) if session_id is not None else None
        if session_id is None or session is None or session.slot != slot:
            continue
        if session.expires_at <= now:
            continue
        live = True
        if _same(given, session.csrf):
            found = session_id
    if not live:
        return refuse(401, "no session")
    if found is None:
        return refuse(403, "csrf token missing or wrong")
    return Decision("read", session_id=found)


def _same(given: str | None, expected: str) -> bool:
    if given is None:
        return False
    return hmac.compare_digest(given.encode("utf-8", "surrogatepass"), expected.encode("utf-8"))


def _open_form(
    method: str, origins: list[str], headers: Sequence[tuple[str, str]], *, own: str
) -> Decision:
    """``POST /ui/open``: the hand-off file's form, a top-level navigation from ``file://``.

    Its origin is opaque (``Origin: null``) and its site cross-site or none; what
    makes it safe is the single-use key in its body (:func:`open_with_form`),
    which no other page can know. No cookie or CSRF token is read here.
    """
    if method != "POST":
        return refuse(405, "method not allowed")
    sites = header_values(headers, "Sec-Fetch-Mode") + header_values(headers, "Sec-Fetch-Dest")
    if sites and not _navigation(headers):
        return refuse(403, "not a page navigation")
    if len(origins) > 1 or (origins and origins[0] not in ("null", own)):
        return refuse(403, "origin not allowed")  # a web site's form: never the hand-off
    if _content_type(headers) != FORM_TYPE:
        return refuse(415, f"content-type must be {FORM_TYPE}")
    return Decision("open")


def open_with_form(body: bytes, keys: Mapping[str, float], now: float) -> Decision:
    """The hand-off form's body (``key=…``): an ``exchange`` of its key, or refused (401)."""
    try:
        fields = urllib.parse.parse_qs(body.decode("ascii"), strict_parsing=True)
    except (UnicodeDecodeError, ValueError):
        fields = {}
    given = fields.get("key", [])
    return _exchange(given[0] if len(given) == 1 else None, keys, now)


def _navigation(headers: Sequence[tuple[str, str]]) -> bool:
    """A top-level navigation to a document (a link followed, a page opened from a file)."""
    return _single(headers, "Sec-Fetch-Mode") == "navigate" and (
        _single(headers, "Sec-Fetch-Dest") == "document"
    )


def _single(headers: Sequence[tuple[str, str]], name: str) -> str | None:
    values = header_values(headers, name)
    return values[0] if len(values) == 1 else None


def _content_type(headers: Sequence[tuple[str, str]]) -> str:
    return (_single(headers, "Content-Type") or "").split(";", 1)[0].strip().lower()


def check_ui_request(
    method: str,
    path: str,
    headers: Sequence[tuple[str, str]],
    *,
    bind_host: str,
    port: int,
    keys: Mapping[str, float],
    secret: str,
    sessions: Mapping[str, UiSession],
    now: float,
) -> Decision:
    """Decide what a request under ``/ui`` may do (``keys``: unused launch keys' expiry)."""
    route = path.split("?", 1)[0]
    hosts = header_values(headers, "Host")
    if len(hosts) != 1 or hosts[0].lower() not in allowed_hosts(bind_host, port):
        return refuse(403, "host not allowed")
    origins = header_values(headers, "Origin")
    if route == LAUNCH_KEY_PATH and method == "POST":
        # A local program that read the page secret file, never a browser (no Origin,
        # no Fetch metadata).
        if origins or header_values(headers, "Sec-Fetch-Site"):
            return refuse(403, "not from a browser")
        if not _same(_single(headers, SECRET_HEADER), secret):
            return refuse(401, "wrong page secret")
        return Decision("mint")
    if route == OPEN_PATH:
        return _open_form(method, origins, headers, own=f"http://{hosts[0].lower()}")
    if origins and (len(origins) > 1 or origins[0] != f"http://{hosts[0].lower()}"):
        return refuse(403, "origin not allowed")
    if method == "POST" and not origins:
        return refuse(403, "origin required")
    site = header_values(headers, "Sec-Fetch-Site")
    api = route.startswith(API)
    allowed_sites = ("same-origin",) if api else ("same-origin", "none")
    opened = method == "GET" and route in PAGE_ROUTES and _navigation(headers)
    if site and (len(site) > 1 or site[0] not in allowed_sites) and not opened:
        return refuse(403, "cross-site request")
    if not api:
        return Decision("static") if method == "GET" else refuse(405, "method not allowed")
    if method not in ("GET", "POST"):
        return refuse(405, "method not allowed")
    if route == SESSION_PATH and method == "POST":
        return _exchange(_single(headers, LAUNCH_HEADER), keys, now)
    found = _session_of(headers, sessions, now)
    if found.kind == "refused":
        return found
    if method == "POST" and _content_type(headers) != "application/json":
        return refuse(415, "content-type must be application/json")
    return Decision("read" if method == "GET" else "write", session_id=found.session_id)
