"""The memory page's HTTP shell: its files and its small JSON API under ``/ui/``.

Served by the WebSocket listener's ``process_request`` (same process, host and
port). Who may do what is decided by the pure
:func:`xtyserver.manage.access.check_ui_request`; this module carries it out and
calls :class:`~xtyserver.manage.api.ManageApi` for every memory operation.

websockets' HTTP parser takes no request body, so API calls that change
something are ``POST`` requests with their arguments in the query string (the
request line may be up to 8 KiB).
"""

from __future__ import annotations

import email.utils
import http
import importlib.resources
import json
import secrets
from collections import Counter
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import parse_qs

import msgspec
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from xtyserver import log
from xtyserver.clock import Clock
from xtyserver.errors import XtyError
from xtyserver.manage.access import (
    MAX_SESSIONS,
    PREFIX,
    SECURITY_HEADERS,
    SESSION_SECONDS,
    UiSession,
    check_ui_request,
    set_cookie,
)
from xtyserver.manage.api import ManageApi, ManageError, decode_target

STATIC = {
    "": ("index.html", "text/html; charset=utf-8"),
    "index.html": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "i18n.js": ("i18n.js", "text/javascript; charset=utf-8"),
    "app.css": ("app.css", "text/css; charset=utf-8"),
}

Query = dict[str, str]


def response(
    status: int, body: bytes, content_type: str, extra: list[tuple[str, str]] | None = None
) -> Response:
    """An HTTP response with the page's security headers."""
    headers = Headers(
        [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(body))),
            ("Content-Type", content_type),
            *SECURITY_HEADERS,
            *(extra or []),
        ]
    )
    return Response(status, http.HTTPStatus(status).phrase, headers, body)


def json_response(status: int, value: Any, extra: list[tuple[str, str]] | None = None) -> Response:
    return response(status, msgspec.json.encode(value), "application/json; charset=utf-8", extra)


def error(status: int, message: str) -> Response:
    return json_response(status, {"error": message})


def _flag(q: Query, name: str) -> bool:
    value = q.get(name, "")
    if value not in ("true", "false"):
        raise ManageError(f"{name} must be true or false")
    return value == "true"


def _int(q: Query, name: str) -> int:
    try:
        return int(q[name])
    except (KeyError, ValueError):
        raise ManageError(f"{name} must be a whole number") from None


class UiHttp:
    """The page's files, sessions and API.

    Args:
        api: The management operations.
        bind_host: The address the server listens on.
        key: The launch key (:func:`xtyserver.manage.access.launch_key`).
        clock: Time for session expiry.

    Attributes:
        sessions: Open page sessions by id.
        refused: Refused requests by reason, since the start (for tests and logs).
    """

    def __init__(self, api: ManageApi, *, bind_host: str, key: str, clock: Clock) -> None:
        self.api = api
        self.bind_host = bind_host
        self.key = key
        self.clock = clock
        self.sessions: dict[str, UiSession] = {}
        self.refused: Counter[str] = Counter()
        self._log = log.get("xtyserver.ui")
        self._files = importlib.resources.files("xtyserver.manage") / "ui"
        self._reads: dict[str, Callable[[Query], Awaitable[Any]]] = {
            "view": lambda q: self.api.view(),
            "stats": lambda q: self.api.stats(),
        }
        self._writes: dict[str, Callable[[Query], Awaitable[Any]]] = {
            "shared": self._correct_shared,
            "auto-shared": lambda q: self.api.set_auto_shared(_flag(q, "on")),
            "pin": lambda q: self.api.pin(
                q.get("gameId", ""), q.get("saveId", ""), _int(q, "id"), _flag(q, "pinned")
            ),
            "forget/preview": self._forget_preview,
            "forget/confirm": lambda q: self.api.forget_confirm(q.get("token", "")),
        }

    async def handle(self, request: Request, port: int) -> Response:
        """Answer one request whose path is ``/ui`` or under ``/ui/``."""
        path, _, query = request.path.partition("?")
        if path == "/ui":
            return response(308, b"", "text/plain", [("Location", PREFIX)])
        now = self.clock.now()
        decision = check_ui_request(
            request.method,
            request.path,
            list(request.headers.raw_items()),
            bind_host=self.bind_host,
            port=port,
            key=self.key,
            sessions=self.sessions,
            now=now,
        )
        if decision.kind == "refused":
            self.refused[decision.reason] += 1
            self._log.info("ui.refused", status=decision.status, reason=decision.reason)
            return error(decision.status, decision.reason)
        if decision.kind == "static":
            return self._static(path.removeprefix(PREFIX))
        if decision.kind == "exchange":
            return self._open_session(now)
        q = {k: v[0] for k, v in parse_qs(query, keep_blank_values=True).items()}
        name = path.removeprefix(PREFIX + "api/")
        table = self._reads if decision.kind == "read" else self._writes
        op = table.get(name)
        if op is None:
            return error(404, "no such API call")
        try:
            return json_response(200, {"ok": True, "result": await op(q)})
        except ManageError as exc:
            return error(exc.status, exc.message)
        except XtyError as exc:
            self._log.info("ui.failed", call=name, code=exc.code)
            return error(503 if exc.code.startswith("store") else 400, exc.message)

    def _static(self, name: str) -> Response:
        entry = STATIC.get(name)
        if entry is None:
            return error(404, "not found")
        file, content_type = entry
        return response(200, (self._files / file).read_bytes(), content_type)

    def _open_session(self, now: float) -> Response:
        self.sessions = {k: s for k, s in self.sessions.items() if s.expires_at > now}
        while len(self.sessions) >= MAX_SESSIONS:
            oldest = min(self.sessions, key=lambda k: self.sessions[k].expires_at)
            del self.sessions[oldest]
        session_id = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        self.sessions[session_id] = UiSession(csrf, now + SESSION_SECONDS)
        self._log.info("ui.session_opened", sessions=len(self.sessions))
        return json_response(200, {"csrf": csrf}, [("Set-Cookie", set_cookie(session_id))])

    async def _correct_shared(self, q: Query) -> Any:
        try:
            value = json.loads(q.get("value", ""))
        except ValueError:
            raise ManageError("value must be JSON") from None
        return await self.api.correct_shared(q.get("field", ""), value)

    async def _forget_preview(self, q: Query) -> Any:
        target: dict[str, Any] = {k: v for k, v in q.items() if k in ("kind", "gameId", "saveId")}
        if "eventId" in q:
            target["eventId"] = _int(q, "eventId")
        if "field" in q:
            target["field"] = q["field"]
        return await self.api.forget_preview(decode_target(target))
