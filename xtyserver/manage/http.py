"""The memory page's HTTP server: its files and its JSON API under ``/ui/`` (h11 over anyio).

Its own listener (``server.ui_port``), one request per connection read by the
wire's h11 loop (:mod:`xtyserver.serve.wire`) within the limits below (docs/memory-page.md
"Memory page"). Who may do what is decided by the pure
:func:`xtyserver.manage.access.check_ui_request`; the API (:meth:`UiHttp.api`)
goes through :mod:`xtyserver.manage.ops` like MCP's tools.
"""

from __future__ import annotations

import email.utils
import errno
import http as http_status
import importlib.resources
import secrets
import urllib.parse
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Annotated, Any, TypeVar

import anyio
import anyio.abc
import h11
import msgspec
from anyio.streams.stapled import MultiListener

from xtyserver import log
from xtyserver.clock import Clock
from xtyserver.manage import ops
from xtyserver.manage.access import (
    API,
    MAX_SESSIONS,
    PREFIX,
    SECURITY_HEADERS,
    SESSION_SECONDS,
    Decision,
    UiSession,
    check_ui_request,
    free_slot,
    open_with_form,
    set_cookie,
)
from xtyserver.manage.ops import Refused
from xtyserver.manage.pages import problem_page
from xtyserver.manage.pairing import DecideBody, PagePairing, RevokeBody
from xtyserver.manage.settings import KeyBody, PageSettings, SettingsBody
from xtyserver.memory.commands import Page
from xtyserver.memory.manage import Confirmations, ForgetRequest
from xtyserver.memory.types import GameIdText, SaveIdText, Scope, error_field
from xtyserver.serve.instance import NotStarted, PortBusy
from xtyserver.serve.memory_service import MemoryService
from xtyserver.serve.wire.http import BadRequest, HttpStream
from xtyserver.serve.wire.listen import accept_forever

STATIC = {
    "": ("index.html", "text/html; charset=utf-8"),
    "index.html": ("index.html", "text/html; charset=utf-8"),
    "app.js": ("app.js", "text/javascript; charset=utf-8"),
    "i18n.js": ("i18n.js", "text/javascript; charset=utf-8"),
    "app.css": ("app.css", "text/css; charset=utf-8"),
    "pairing.js": ("pairing.js", "text/javascript; charset=utf-8"),
}
MAX_HEAD = 16 * 1024
MAX_BODY = 16 * 1024
REQUEST_SECONDS = 10.0
HEAD_SECONDS = 2.0  # a request's head must be in this soon after the connection opens
MAX_CONNECTIONS = 16  # requests handled at once
MAX_READING = 64  # connections whose request is still coming; a new one drops the oldest
SESSION_META = b'<meta name="xty-session" content="">'  # index.html's; the hand-off fills it
MAX_LAUNCH_KEYS = 32  # unused keys kept at once; the oldest goes first
T = TypeVar("T")


class ProfileBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """``POST profile``: replace one field (wire name) whole; ``autoShared`` too."""

    field: str
    value: str | list[str] | bool


class PinBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """``POST pin``: pin or unpin one item of one save."""

    game_id: GameIdText
    save_id: SaveIdText
    event_id: int
    pinned: bool


class ForgetNameBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """``POST forget-name``: delete one of the player's own names for a thing."""

    game_id: GameIdText
    save_id: SaveIdText
    name_id: int


class RestoreBody(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """``POST restore``: put one trash entry back."""

    trash_id: Annotated[int, msgspec.Meta(ge=1, le=2**63 - 1)]


class ExportQuery(msgspec.Struct, frozen=True, forbid_unknown_fields=True, rename="camel"):
    """``GET export?gameId=…&saveId=…``: one save; without both, everything."""

    game_id: GameIdText | None = None
    save_id: SaveIdText | None = None


def decode_query(target: str, kind: type[T]) -> T:
    """The query string of ``target`` as a ``kind`` (each name once), or Refused (400)."""
    query = target.split("?", 1)[1] if "?" in target else ""
    pairs = urllib.parse.parse_qsl(query, keep_blank_values=True)
    fields = dict(pairs)
    if len(fields) != len(pairs):
        raise Refused("a query parameter is given twice", 400)
    try:
        return msgspec.convert(fields, type=kind)
    except msgspec.ValidationError as exc:
        field = error_field(exc)
        raise Refused(f"bad query: {exc}", 400, [field] if field else []) from None


def decode_body(body: bytes, kind: type[T]) -> T:
    """``body`` as a ``kind``, or Refused naming the byte or the field at fault."""
    if not body.strip():
        raise Refused("a JSON body is required", 400)
    try:
        return msgspec.json.decode(body, type=kind)
    except msgspec.ValidationError as exc:
        field = error_field(exc)
        raise Refused(f"bad request body: {exc}", 400, [field] if field else []) from None
    except msgspec.DecodeError as exc:
        raise Refused(f"bad JSON: {exc}", 400) from None


class Answer(msgspec.Struct, frozen=True):
    """One HTTP answer: status, extra headers, body and its type."""

    status: int
    body: bytes
    content_type: str
    headers: tuple[tuple[str, str], ...] = ()


def json_answer(status: int, value: Any, headers: tuple[tuple[str, str], ...] = ()) -> Answer:
    return Answer(status, msgspec.json.encode(value), "application/json; charset=utf-8", headers)


def error(
    status: int, message: str, fields: Sequence[str] = (), os_error: str = "", code: str = ""
) -> Answer:
    """``{"error": message}``, with ``fields`` naming what was wrong when there are any.

    ``os_error`` (the OS refused): ``code`` ``os_error`` and its reason as ``detail``,
    the same answer as any other OS error of a page request (:meth:`UiHttp._answer`).
    ``code``: what the page says instead, in its language (i18n.js ``refused``).
    """
    value: dict[str, Any] = {"error": message}
    if fields:
        value["fields"] = list(fields)
    if code:
        value["code"] = code
    if os_error:
        value.update(code="os_error", detail=os_error)
    return json_answer(status, value)


class UiHttp:
    """The page's listener, files and sessions.

    Args:
        secret: The page secret (:mod:`xtyserver.manage.page_secret`): ``xtyserver ui``
            proves it to mint a launch key.
        timezone: The zone whose date ends the statistics window (this PC's).
        key_ttl: Seconds a launch key stays good if unused (``server.page_key_ttl``).
        punish: Awaited before answering a wrong page secret (the guess delay).
    """

    def __init__(
        self,
        memory: MemoryService,
        *,
        bind_host: str,
        secret: str,
        clock: Clock,
        timezone: str = "UTC",
        key_ttl: float = 600.0,
        punish: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        self.memory = memory
        self.timezone = timezone
        self.confirmations = Confirmations(secrets.token_hex(16))
        self.bind_host = bind_host
        self._secret = secret
        self._key_ttl = key_ttl
        self._punish = punish
        self.launch_keys: dict[str, float] = {}
        self.clock = clock
        self.port: int | None = None
        self.settings: PageSettings | None = None  # the settings view's steps (Server sets them)
        self.pairing: PagePairing | None = None  # the pairing section's (Server sets them)
        self.sessions: dict[str, UiSession] = {}
        self.refused: Counter[str] = Counter()
        self._log = log.get("xtyserver.ui")
        self._files = importlib.resources.files("xtyserver.manage") / "ui"
        self._slots = anyio.CapacityLimiter(MAX_CONNECTIONS)
        self._reading: OrderedDict[anyio.CancelScope, None] = OrderedDict()

    async def listen(self, port: int) -> MultiListener[anyio.abc.SocketStream]:
        """The page's listener on ``bind_host:port``, bound before anything is served.

        Raises:
            PortBusy: another program holds the port (said to the player, no traceback).
            NotStarted: the OS refused it for another reason.
        """
        try:
            return await anyio.create_tcp_listener(local_host=self.bind_host, local_port=port)
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, 10048, 10013):  # POSIX, Windows
                raise PortBusy(port, "page") from None
            raise NotStarted(
                f"cannot listen for the memory page on port {port} ({exc.strerror}); "
                "set server.ui_port (--ui-port)"
            ) from None

    async def serve(
        self,
        port: int | MultiListener[anyio.abc.SocketStream],
        *,
        task_status: anyio.abc.TaskStatus[int] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen on ``bind_host:port`` (or a :meth:`listen` listener) until cancelled.

        ``task_status`` gets the port.
        """
        listener = await self.listen(port) if isinstance(port, int) else port
        async with listener, anyio.create_task_group() as tg:
            self.port = int(listener.extra(anyio.abc.SocketAttribute.local_port))
            self._log.info("ui.listening", port=self.port)
            task_status.started(self.port)
            for one in listener.listeners:
                assert isinstance(one, anyio.abc.SocketListener)  # one per address of the host
                tg.start_soon(
                    accept_forever, one, self._connection, tg, self._log, "ui.accept_failed"
                )

    @property
    def reading(self) -> int:
        """Connections whose request has not come in yet."""
        return len(self._reading)

    async def _connection(self, stream: anyio.abc.SocketStream) -> None:
        """Read one request, then answer it holding one of the page's slots.

        Reading takes no slot, so connections that never send a request cannot keep
        the page from answering; :data:`HEAD_SECONDS` and :data:`MAX_READING` bound them.
        """
        async with stream:
            http = HttpStream(stream, head_bytes=MAX_HEAD)
            read: Answer | tuple[h11.Request, bytes] | None = None
            with anyio.move_on_after(REQUEST_SECONDS) as reading:
                self._reading[reading] = None
                if len(self._reading) > MAX_READING:
                    oldest, _ = self._reading.popitem(last=False)
                    oldest.cancel()
                try:
                    read = await self._exchange(http)
                finally:
                    self._reading.pop(reading, None)
            async with self._slots:
                answer = await self._answer(*read) if isinstance(read, tuple) else read
                if answer is None:
                    return  # the peer went away or was too slow: nothing to answer
                try:
                    await stream.send(self._encode(http, answer))
                except (
                    anyio.BrokenResourceError,
                    anyio.ClosedResourceError,
                    h11.LocalProtocolError,
                ):
                    return

    async def _exchange(self, http: HttpStream) -> Answer | tuple[h11.Request, bytes] | None:
        """Read one request with its body (None: the peer left; an answer: refused as read).

        Only the reading is bounded: an answer may wait for a provider (the model check).
        """
        request = None
        with anyio.move_on_after(HEAD_SECONDS):
            try:
                request = await http.read_head()
            except BadRequest as exc:
                return None if http.eof else error(exc.status, "bad HTTP request")
        if request is None:
            return None  # no request head in time, or none at all: nothing to answer
        try:
            return request, await http.read_body(request, MAX_BODY)
        except BadRequest as exc:
            if exc.status == 413:
                return error(413, f"request body over {MAX_BODY} bytes")
            return error(exc.status, "bad HTTP request")

    def _encode(self, http: HttpStream, answer: Answer) -> bytes:
        headers = [
            ("Date", email.utils.formatdate(usegmt=True)),
            ("Connection", "close"),
            ("Content-Length", str(len(answer.body))),
            ("Content-Type", answer.content_type),
            *SECURITY_HEADERS,
            *answer.headers,
        ]
        reason = http_status.HTTPStatus(answer.status).phrase.encode()
        return http.response(answer.status, headers, answer.body, reason)

    async def _answer(self, request: h11.Request, body: bytes) -> Answer:
        """:meth:`handle`, with whatever it raises (the OS, a bug) answered as a 500.

        That ends this request only, never the listener's task group and with it the server.
        """
        try:
            answer = await self.handle(request, body)
        except Exception as exc:
            call = request.target.decode("ascii", "replace").split("?", 1)[0]
            detail = (exc.strerror or type(exc).__name__) if isinstance(exc, OSError) else ""
            self._log.warning("ui.failed", call=call, status=500, error=type(exc).__name__)
            code = "os_error" if isinstance(exc, OSError) else "internal"
            message = f"the server could not do this: {detail}" if detail else "internal error"
            answer = json_answer(500, {"error": message, "code": code, "detail": detail})
        return _for_navigation(request, answer)

    async def handle(self, request: h11.Request, body: bytes) -> Answer:
        """Answer one request (its whole body read)."""
        method = request.method.decode("ascii", "replace")
        target = request.target.decode("ascii", "replace")
        path = target.split("?", 1)[0]
        if path == "/ui":
            return Answer(308, b"", "text/plain", (("Location", PREFIX),))
        if not path.startswith(PREFIX):
            return error(404, "not found")
        now = self.clock.now()
        headers = [(k.decode("latin-1"), v.decode("latin-1")) for k, v in request.headers]
        decision = check_ui_request(
            method,
            target,
            headers,
            bind_host=self.bind_host,
            port=self.port or 0,
            keys=self.launch_keys,
            secret=self._secret,
            sessions=self.sessions,
            now=now,
        )
        if decision.kind == "refused":
            if decision.reason == "wrong page secret" and self._punish is not None:
                await self._punish("page")
            return self._refuse(decision)
        if decision.kind == "static":
            return self._static(path.removeprefix(PREFIX))
        if decision.kind == "mint":
            return json_answer(200, {"key": self.mint_key()})
        if decision.kind == "open":
            decision = open_with_form(body, self.launch_keys, now)
            if decision.kind == "refused":
                return self._refuse(decision)
            return self._page(*self._open_session(decision, now))
        if decision.kind == "exchange":
            csrf, cookie = self._open_session(decision, now)
            return json_answer(200, {"csrf": csrf}, (cookie,))
        name = path.removeprefix(PREFIX + "api/")
        assert decision.session_id is not None
        try:
            result = await self.api(
                name, decision.kind == "write", body, decision.session_id, target
            )
        except Refused as exc:
            if exc.status >= 500:
                self._log.info("ui.failed", call=name, status=exc.status)
            return error(exc.status, exc.message, exc.fields, exc.os_error, exc.code)
        return json_answer(200, {"ok": True, "result": result})

    async def api(
        self, name: str, write: bool, body: bytes, session_id: str, target: str = ""
    ) -> Any:
        """Run one API call of the page session ``session_id`` (Refused 404: no such call)."""
        match (name, write):
            case ("view", False):
                return await ops.view(self.memory, self.clock, self.timezone)
            case ("export", False):
                query = decode_query(target, ExportQuery)
                if (query.game_id is None) != (query.save_id is None):
                    raise Refused("export one save with gameId and saveId, or neither", 400)
                scope = None if query.game_id is None else Scope(query.game_id, query.save_id or "")
                return await ops.export(self.memory, scope)
            case ("trash", False):
                return await ops.trash(self.memory, self.clock)
            case ("restore", True):
                wanted = decode_body(body, RestoreBody)
                return await ops.restore(self.memory, wanted.trash_id)
            case ("settings", False):
                return await self._settings().view()
            case ("settings", True):
                return await self._settings().change(decode_body(body, SettingsBody))
            case ("key", True):
                return await self._settings().key(decode_body(body, KeyBody))
            case ("doctor", True):
                return await self._settings().doctor()
            case ("pairing", False):
                return self._pairing().view()
            case ("pair", True):
                return await self._pairing().decide(decode_body(body, DecideBody))
            case ("revoke", True):
                return await self._pairing().revoke(decode_body(body, RevokeBody))
            case ("profile", True):
                change = decode_body(body, ProfileBody)
                return await ops.correct(self.memory, change.field, change.value)
            case ("pin", True):
                pin = decode_body(body, PinBody)
                scope = Scope(pin.game_id, pin.save_id)
                await ops.pin(self.memory, scope, pin.event_id, pin.pinned)
                return None
            case ("forget-name", True):
                gone = decode_body(body, ForgetNameBody)
                await ops.forget_name(self.memory, Scope(gone.game_id, gone.save_id), gone.name_id)
                return None
            case ("forget", True):
                request = decode_body(body, ForgetRequest)
                now = self.clock.now()
                token = request.confirm_token
                clicked = Page(token=token, session=session_id) if token is not None else None
                return await ops.forget(
                    self.memory, self.confirmations, request, clicked, asker=session_id, now=now
                )
        raise Refused("no such API call", 404)

    def mint_key(self) -> str:
        """A new single-use launch key, good for ``key_ttl`` seconds; others stay good."""
        now = self.clock.now()
        self.launch_keys = {k: at for k, at in self.launch_keys.items() if at > now}
        while len(self.launch_keys) >= MAX_LAUNCH_KEYS:
            del self.launch_keys[min(self.launch_keys, key=self.launch_keys.__getitem__)]
        key = secrets.token_urlsafe(32)
        self.launch_keys[key] = now + self._key_ttl
        return key

    def _pairing(self) -> PagePairing:
        if self.pairing is None:
            raise Refused("this server does not pair mods", 404)
        return self.pairing

    def _settings(self) -> PageSettings:
        if self.settings is None:
            raise Refused("this server has no stored settings", 404)
        return self.settings

    def _static(self, name: str) -> Answer:
        entry = STATIC.get(name)
        if entry is None:
            return error(404, "not found")
        file, content_type = entry
        return Answer(200, (self._files / file).read_bytes(), content_type)

    def _page(self, csrf: str, cookie: tuple[str, str]) -> Answer:
        """The page itself, its new session's CSRF token in its ``xty-session`` meta tag.

        Not a redirect: the token goes to this tab alone, in no URL and no cookie.
        """
        page = (self._files / "index.html").read_bytes()
        filled = page.replace(SESSION_META, SESSION_META.replace(b'""', f'"{csrf}"'.encode()), 1)
        return Answer(200, filled, "text/html; charset=utf-8", (cookie,))

    def _refuse(self, decision: Decision) -> Answer:
        self.refused[decision.reason] += 1
        self._log.info("ui.refused", status=decision.status, reason=decision.reason)
        return error(decision.status, decision.reason)

    def _open_session(self, decision: Decision, now: float) -> tuple[str, tuple[str, str]]:
        """Spend the decision's launch key on a new page session: its CSRF token and cookie."""
        assert decision.key is not None
        del self.launch_keys[decision.key]  # single-use
        self.sessions = {k: s for k, s in self.sessions.items() if s.expires_at > now}
        while len(self.sessions) >= MAX_SESSIONS:
            oldest = min(self.sessions, key=lambda k: self.sessions[k].expires_at)
            del self.sessions[oldest]
        session_id = secrets.token_urlsafe(32)
        csrf = secrets.token_urlsafe(32)
        slot = free_slot(self.sessions)  # its own cookie: the tabs open already keep theirs
        self.sessions[session_id] = UiSession(csrf, now + SESSION_SECONDS, slot)
        self._log.info("ui.session_opened", sessions=len(self.sessions))
        return csrf, ("Set-Cookie", set_cookie(session_id, slot))


def _for_navigation(request: h11.Request, answer: Answer) -> Answer:
    """An error a browser tab would show as bare JSON, as a readable page instead.

    A navigation says so (``Sec-Fetch-Mode: navigate``); a browser without
    Fetch metadata is known by asking for HTML outside the API.
    """
    if answer.status < 400 or not answer.content_type.startswith("application/json"):
        return answer
    headers = {k.lower(): v for k, v in request.headers}
    mode = headers.get(b"sec-fetch-mode")
    target = request.target.split(b"?", 1)[0]
    if mode != b"navigate" and (
        mode is not None
        or target.startswith(API.encode())
        or b"text/html" not in headers.get(b"accept", b"")
    ):
        return answer
    reason = str(msgspec.json.decode(answer.body).get("error", ""))
    return Answer(answer.status, problem_page(reason), "text/html; charset=utf-8", answer.headers)
