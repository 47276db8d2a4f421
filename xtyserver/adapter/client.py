"""The adapter client: one protocol/v1 session from the adapter's side, kept alive.

A shell over a ``websockets`` asyncio client, with anyio tasks owned by the
client's task group: a *supervisor* (connect, hello, reconnect with backoff),
a *reader* (routes every server frame to the reply or request waiting for it)
and a *heartbeat* loop at the server's ``heartbeatMs``. Every frame is checked
with the server's own decoder before it is sent (:mod:`.precheck`).
"""

from __future__ import annotations

import contextlib
import itertools
from collections import deque
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import anyio
import anyio.abc
import msgspec
import websockets
from websockets.asyncio.client import ClientConnection, connect

from xtyserver.adapter.backoff import Backoff, should_reconnect
from xtyserver.adapter.pairing import install_id, pair, read_key, store_key
from xtyserver.adapter.precheck import Refused, encode, precheck
from xtyserver.adapter.reply import CONNECTION_LOST, ChatReply, CompanionLine
from xtyserver.adapter.support import Answer, ConnectionLost, Waiter, expect, same_save
from xtyserver.adapter.voice import VoiceTurn
from xtyserver.clock import Clock, SystemClock
from xtyserver.protocol.action_frames import ActionSpec
from xtyserver.protocol.frames import (
    ActionRequest,
    ActionsDeclared,
    AdapterInfo,
    Capabilities,
    ChatDelta,
    ChatDone,
    ChatError,
    Error,
    Hello,
    Identity,
    ImageInput,
    MemoryConfirmRequest,
    MemoryForgotten,
    MemoryNotice,
    MemoryPreview,
    MemoryResult,
    ModelContext,
    ServerFrame,
    ServerHello,
    StatsResult,
    VoiceError,
    VoiceSpeech,
    VoiceTranscript,
)

_DECODER = msgspec.json.Decoder(ServerFrame)
_HEARTBEAT = b'{"type":"heartbeat"}'
THREAD_CHECK_BYTES = 64 * 1024  # a screenshot frame is checked off the event loop
ContextArg = ModelContext | Mapping[str, Any]


class AdapterClient:
    """One adapter's session with xtyserver; use as ``async with AdapterClient(...) as client``.

    Entering connects (pairing first with ``key_file`` and no token), says hello and
    waits for ``server.hello``; a refusal raises :class:`Refused`. With ``backoff``
    a dropped connection is opened again (v1.md "Close codes"). Every parameter and
    callback is described in docs/adapter-client.md "What the client does";
    ``timezone`` is the player's IANA zone (play days are counted in it),
    ``heartbeat=False`` only tests the server's deadline, and ``timeout`` bounds the
    handshake, each send and each request's answer.
    """

    def __init__(
        self,
        url: str,
        *,
        token: str = "",
        identity: Identity,
        adapter: AdapterInfo,
        timezone: str | None = None,
        capabilities: Capabilities | None = None,
        token_in_hello: bool = False,
        backoff: Backoff | None = None,
        clock: Clock | None = None,
        heartbeat: bool = True,
        timeout: float = 30.0,
        on_error: Callable[[Refused], None] | None = None,
        key_file: Path | None = None,
        on_pair_code: Callable[[str], None] | None = None,
        on_confirm: Callable[[MemoryConfirmRequest], None] | None = None,
        on_notice: Callable[[MemoryNotice], None] | None = None,
        actions: list[ActionSpec] | None = None,
        on_action: Callable[[ActionRequest], tuple[ActionStatus, str]] | None = None,
        on_companion: Callable[[CompanionLine], None] | None = None,
    ) -> None:
        self.url = url
        self._key_file = key_file
        self._on_pair_code = on_pair_code
        token = token or read_key(key_file)
        self.identity = identity
        self.refusals: deque[Refused] = deque(maxlen=64)
        self.confirms: deque[MemoryConfirmRequest] = deque(maxlen=16)
        self.notices: deque[MemoryNotice] = deque(maxlen=64)
        self._on_confirm = on_confirm
        self._on_notice = on_notice
        # The companion's own lines (speaking up about a game.event): the last ones, and the
        # pieces of the one streaming.
        self.lines: deque[CompanionLine] = deque(maxlen=64)
        self._on_companion = on_companion
        self._line_parts: dict[str, str] = {}
        self.sessions: list[str] = []
        self._token = token
        self._hello_parts = (adapter, timezone, capabilities, token_in_hello)
        # Game actions (v1.md "Actions"): declared in the hello; on_action checks and runs one.
        self._actions = actions
        self._on_action = on_action
        self.action_requests: deque[ActionRequest] = deque(maxlen=64)
        self._hello_frame()  # refuse a bad identity or adapter name here, not on the wire
        self._backoff = backoff if backoff is not None else Backoff()
        self._reconnect = backoff is not None
        self._clock = clock or SystemClock()
        self._heartbeat = heartbeat
        self._timeout = timeout
        self._on_error = on_error
        self._ids = itertools.count(1)
        self._ws: ClientConnection | None = None
        self._hello: ServerHello | None = None
        self._gone: ConnectionLost | None = None
        self._changed = anyio.Event()
        self._send_lock = anyio.Lock()
        self._chats: dict[str, ChatReply] = {}
        self._voices: dict[str, VoiceTurn] = {}
        self._requests: dict[str, Waiter] = {}
        self._last_state: bytes | None = None
        self._stack = contextlib.AsyncExitStack()

    async def __aenter__(self) -> AdapterClient:
        tg = await self._stack.enter_async_context(anyio.create_task_group())
        self._stack.callback(tg.cancel_scope.cancel)
        try:
            await tg.start(self._supervise)
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._gone = ConnectionLost("the client was closed", 1000)
        ws = self._ws
        if ws is not None:
            with anyio.move_on_after(self._timeout, shield=True):
                await ws.close(1000)
        await self._stack.aclose()

    @property
    def server_hello(self) -> ServerHello:
        """The current connection's ``server.hello`` (limits, ``heartbeatMs``, ``sessionId``)."""
        if self._hello is None:
            raise ConnectionLost("not connected")
        return self._hello

    @property
    def connected(self) -> bool:
        """Whether a session is up right now (false while reconnecting)."""
        return self._ws is not None

    async def wait_connected(self) -> None:
        """Return once a session is up (after a reconnect); raise if it never will be."""
        while self._ws is None:
            if self._gone is not None:
                raise self._gone
            await self._changed.wait()

    async def update_state(
        self, model_context: ContextArg, *, identity: Identity | None = None
    ) -> None:
        """Send ``state.update``; a refusal the server would give is raised here first.

        ``identity``: another save's, a save switch (v1.md "Save switch"), refused
        (``reply_in_progress``) while a reply streams.
        """
        frame: dict[str, Any] = {"type": "state.update", "id": self._next("state")}
        frame["modelContext"] = model_context
        switch = identity is not None and not same_save(identity, self.identity)
        if identity is not None:
            frame["identity"] = identity
        data = await self._check(frame)
        if switch and self._chats:
            raise Refused(
                "reply_in_progress",
                "a save switch must wait for the reply to end",
                fields=["identity"],
                frame_id=frame["id"],
                local=True,
            )
        await self._send(data)
        if identity is not None:
            self.identity = identity
        self._last_state = data

    async def chat(
        self,
        text: str,
        *,
        source: Literal["text", "voice"] = "text",
        image: ImageInput | None = None,
        model_context: ContextArg | None = None,
        identity: Identity | None = None,
    ) -> ChatReply:
        """Send one player turn; iterate the returned reply for deltas, await ``result()``.

        Refused when the server would refuse the frame (``text`` too long, a bad modelContext).
        """
        frame: dict[str, Any] = {
            "type": "chat.send",
            "id": self._next("chat"),
            "text": text,
            "source": source,
        }
        if image is not None:
            frame["image"] = image
        context = {"modelContext": model_context, "identity": identity}
        if model_context is not None or identity is not None:
            frame["context"] = {k: v for k, v in context.items() if v is not None}
        data = await self._check(frame)
        reply = ChatReply(frame["id"], self.cancel)
        self._chats[reply.id] = reply
        try:
            await self._send(data)
        except BaseException:
            self._chats.pop(reply.id, None)
            raise
        if identity is not None:
            self.identity = identity
        return reply

    async def typing(self, text: str) -> None:
        """Send ``chat.typing``: the player is typing ``text`` (no answer; v1.md "chat.typing")."""
        await self._send_frame({"type": "chat.typing", "text": text})

    async def voice_start(
        self,
        *,
        audio: Literal["microphone", "stream"] = "microphone",
        speech: Literal["speakers", "frames", "none"] = "speakers",
    ) -> VoiceTurn:
        """Push-to-talk pressed (v1.md "voice.start"): the server records the PC's microphone
        (``audio="microphone"``) or takes :meth:`VoiceTurn.audio`; ``speech``: where the
        reply is spoken. Release with :meth:`VoiceTurn.stop`."""
        frame: dict[str, Any] = {"type": "voice.start", "id": self._next("voice")}
        if audio != "microphone":
            frame["audio"] = audio
        if speech != "speakers":
            frame["speech"] = speech
        data = await self._check(frame)
        reply = ChatReply(frame["id"], self.cancel)
        turn = VoiceTurn(frame["id"], reply, self._send_frame)
        self._chats[reply.id], self._voices[turn.id] = reply, turn
        while len(self._voices) > 16:  # speech frames may trail chat.done: keep the last few
            self._voices.pop(next(iter(self._voices)))
        await self._send(data)
        return turn

    async def event(
        self, kind: str, facts: Mapping[str, Any] | None = None, *, captured_at: str | None = None
    ) -> None:
        """Report what just happened in the game (v1.md "game.event"), once when it starts.

        ``facts``: any of ``subject``, ``place``, ``value``, ``maxValue``, ``count``;
        ``captured_at``: when the game saw it (:func:`~xtyserver.adapter.support.captured_at`).
        Refused here when the server would refuse it (an unknown kind, facts too large); the
        server answers only a refusal (:attr:`refusals`). A line the companion says about it
        arrives in :attr:`lines` and ``on_companion``.
        """
        frame: dict[str, Any] = {
            "type": "game.event",
            "kind": kind,
            "saveId": self.identity.save_id,
        }
        if facts:
            frame["facts"] = dict(facts)
        if captured_at is not None:
            frame["capturedAt"] = captured_at
        await self._send(await self._check(frame))

    async def _send_frame(self, frame: dict[str, Any]) -> None:
        await self._send(await self._check(frame))

    async def cancel(self, chat_id: str) -> None:
        """Send ``chat.cancel`` for a streaming reply."""
        await self._send(encode({"type": "chat.cancel", "id": chat_id}))

    async def stats(self) -> StatsResult:
        """``stats.get``: play statistics of every game and save."""
        return expect(await self._request({"type": "stats.get"}), StatsResult)

    async def memory(
        self, scope: Literal["save", "game", "profile"] = "save", *, save_id: str | None = None
    ) -> MemoryResult:
        """``memory.get``: the profile and this save's (or another save's, the game's) items."""
        frame: dict[str, Any] = {"type": "memory.get", "scope": scope}
        if save_id is not None:
            frame["saveId"] = save_id
        return expect(await self._request(frame), MemoryResult)

    async def forget_preview(
        self,
        target: Literal["item", "save", "game", "profile", "all"],
        *,
        event_id: int | None = None,
        save_id: str | None = None,
        include_stats: bool = False,
    ) -> MemoryPreview:
        """Step one of ``memory.forget``: what would be deleted, and its confirmation token.

        Show the preview to the player; call :meth:`forget` only after they said yes.
        """
        frame = _forget_frame(target, event_id, save_id, include_stats)
        return expect(await self._request(frame), MemoryPreview)

    async def forget(
        self,
        preview: MemoryPreview,
        *,
        event_id: int | None = None,
        save_id: str | None = None,
    ) -> MemoryForgotten:
        """Step two of ``memory.forget``: confirm ``preview`` (same target) with its token."""
        frame = _forget_frame(preview.target, event_id, save_id, preview.include_stats)
        frame["confirmToken"] = preview.confirm_token
        return expect(await self._request(frame), MemoryForgotten)

    async def answer_confirm(self, confirm_id: str, yes: bool) -> MemoryForgotten | None:
        """Answer a ``memory.confirm.request`` dialog (v1.md "memory.confirm").

        A yes returns the ``memory.forgotten`` (the deletion is done); a no has no
        answer (None: the token is void).
        """
        frame: dict[str, Any] = {"type": "memory.confirm", "confirmId": confirm_id}
        if not yes:
            await self._send(await self._check({**frame, "answer": "no"}))
            return None
        answer = await self._request({**frame, "answer": "yes"})
        return expect(answer, MemoryForgotten)

    async def pin(self, event_id: int, pinned: bool = True) -> MemoryResult:
        """``memory.pin``: keep one item of this save from ever being merged (or unpin it)."""
        frame = {"type": "memory.pin", "eventId": event_id, "pinned": pinned}
        return expect(await self._request(frame), MemoryResult)

    async def update_profile(self, field: str, value: str | list[str] | bool) -> MemoryResult:
        """``profile.update`` of one shared-profile field; returns the memory after it."""
        frame = {"type": "profile.update", "field": field, "value": value}
        return expect(await self._request(frame), MemoryResult)

    async def declare_actions(self, actions: list[ActionSpec]) -> ActionsDeclared:
        """Replace the declared actions (``actions.declare``); kept for the next hello too."""
        frame = {"type": "actions.declare", "actions": msgspec.to_builtins(actions)}
        answer = expect(await self._request(frame), ActionsDeclared)
        self._actions = actions
        return answer

    def _next(self, kind: str) -> str:
        return f"{kind}-{next(self._ids)}"

    async def _act(self, request: ActionRequest) -> None:
        """Answer one ``action.request``: ``on_action`` checks and runs it (none: refused)."""
        self.action_requests.append(request)
        if self._on_action is None:
            status: ActionStatus = "refused"
            text = "this mod runs no actions"
        else:
            try:
                status, text = self._on_action(request)
            except Exception as exc:  # the mod's own code: a failure, never a dead reader
                status, text = "failed", type(exc).__name__
        result = {"type": "action.result", "id": request.id, "status": status, "text": text[:200]}
        with contextlib.suppress(ConnectionLost, TimeoutError):
            await self._send(await self._check(result))

    def _hello_frame(self, token_in_hello: bool = False) -> bytes:
        adapter, timezone, capabilities, in_hello = self._hello_parts
        hello = Hello(
            protocol="v1",
            adapter=adapter,
            identity=self.identity,
            id="hello",
            token=self._token if (in_hello or token_in_hello) and self._token else None,
            capabilities=capabilities,
            timezone=timezone,
            actions=self._actions,
        )
        data = encode(hello)
        precheck(data)
        return data

    async def _check(self, frame: Mapping[str, Any]) -> bytes:
        data = encode(frame)
        if len(data) > THREAD_CHECK_BYTES:
            await anyio.to_thread.run_sync(precheck, data)
        else:
            precheck(data)
        return data

    async def _request(self, frame: dict[str, Any]) -> Answer:
        frame["id"] = self._next(frame["type"].split(".")[0])
        data = await self._check(frame)
        waiter = self._requests[frame["id"]] = Waiter()
        try:
            await self._send(data)
            with anyio.fail_after(self._timeout):
                await waiter.event.wait()
        finally:
            self._requests.pop(frame["id"], None)
        assert waiter.value is not None
        if isinstance(waiter.value, ConnectionLost):
            raise waiter.value
        return waiter.value

    async def _send(self, data: bytes) -> None:
        with anyio.fail_after(self._timeout):
            await self.wait_connected()
            ws = self._ws
            assert ws is not None
            try:
                async with self._send_lock:
                    await ws.send(data, text=True)
            except websockets.ConnectionClosed as exc:
                raise ConnectionLost(
                    "the connection closed", exc.rcvd.code if exc.rcvd else None
                ) from None

    def _set_connection(self, ws: ClientConnection | None, hello: ServerHello | None) -> None:
        self._ws, self._hello = ws, hello
        self._changed.set()
        self._changed = anyio.Event()

    async def _open(self) -> ClientConnection:
        """Connect (pairing first without a token) and say hello; wait for ``server.hello``."""
        pairing = not self._token
        if pairing and self._key_file is None:
            raise Refused("unauthorized", "no token and no key_file to pair with")
        in_hello = self._hello_parts[3] or pairing
        headers = {} if in_hello else {"Authorization": f"Bearer {self._token}"}
        ws = await connect(
            self.url,
            additional_headers=headers,
            open_timeout=self._timeout,
            max_size=None,
            # No permessage-deflate: on loopback it only costs CPU on both ends
            # (a screenshot frame, most of a turn's bytes, barely shrinks).
            compression=None,
            ping_interval=20,
            ping_timeout=20,
        )
        try:
            if pairing:
                await self._pair(ws)
            await ws.send(self._hello_frame(token_in_hello=pairing), text=True)
            with anyio.fail_after(self._timeout):
                answer = _DECODER.decode(await ws.recv())
            if isinstance(answer, Error):
                raise Refused(
                    answer.code, answer.message, fields=answer.fields or (), frame_id="hello"
                )
            if not isinstance(answer, ServerHello):
                raise Refused(
                    "unexpected_frame", f"expected server.hello, got {type(answer).__name__}"
                )
            if self._last_state is not None:  # resume: the new session knows nothing yet
                await ws.send(self._last_state, text=True)
        except BaseException:
            with anyio.move_on_after(self._timeout, shield=True):
                await ws.close(1000)
            raise
        self.sessions.append(answer.session_id)
        self._set_connection(ws, answer)
        return ws

    async def _pair(self, ws: ClientConnection) -> None:
        """Ask the player for a key on ``ws``; store it, and use it from now on."""
        assert self._key_file is not None
        adapter = self._hello_parts[0]
        install = await anyio.to_thread.run_sync(install_id, self._key_file)
        key = await pair(
            ws,
            adapter,
            self.identity.game_id,
            timeout=self._timeout,
            on_code=self._on_pair_code,
            install=install,
        )
        await anyio.to_thread.run_sync(store_key, self._key_file, key)
        self._token = key

    async def _supervise(self, *, task_status: anyio.abc.TaskStatus[None]) -> None:
        ws = await self._open()
        task_status.started()
        while True:
            code = await self._serve(ws)
            self._set_connection(None, None)
            lost = ConnectionLost(f"the connection closed ({code})", code)
            for reply in list(self._chats.values()):
                reply._end(ChatError(id=reply.id, code=CONNECTION_LOST, message=str(lost)))
            self._chats.clear()
            for waiter in self._requests.values():
                waiter.set(lost)
            if self._gone is not None or not self._reconnect or not should_reconnect(code):
                self._gone = self._gone or lost
                self._set_connection(None, None)  # wakes wait_connected to raise
                return
            next_ws = await self._reopen()
            if next_ws is None:
                self._gone = lost
                self._set_connection(None, None)
                return
            ws = next_ws

    async def _reopen(self) -> ClientConnection | None:
        attempt = 1
        while not self._backoff.gives_up(attempt):
            await self._clock.sleep(self._backoff.delay(attempt))
            try:
                return await self._open()
            except Refused:
                return None  # a refused hello (e.g. the token changed) needs a person
            except (OSError, TimeoutError, websockets.WebSocketException):
                attempt += 1
        return None

    async def _serve(self, ws: ClientConnection) -> int | None:
        """Read until the connection closes; returns the close code (``None``: dropped)."""
        assert self._hello is not None
        async with anyio.create_task_group() as tg:
            if self._heartbeat:
                tg.start_soon(self._beat, ws, self._hello.heartbeat_ms / 1000)
            with contextlib.suppress(websockets.ConnectionClosed):
                async for message in ws:
                    await self._route(message)
            tg.cancel_scope.cancel()
        return ws.close_code if ws.close_code != 1006 else None

    async def _beat(self, ws: ClientConnection, seconds: float) -> None:
        with contextlib.suppress(websockets.ConnectionClosed):
            while True:
                await self._clock.sleep(seconds)
                async with self._send_lock:
                    await ws.send(_HEARTBEAT, text=True)

    async def _route(self, message: str | bytes) -> None:
        try:
            frame = _DECODER.decode(message)
        except msgspec.DecodeError:
            return  # a frame type newer than this client: not ours to answer
        match frame:
            case ChatDelta(id=line_id, text=text, origin="companion"):
                if len(self._line_parts) >= 4:  # one line at a time: old pieces are ended ones
                    self._line_parts.clear()
                self._line_parts[line_id] = self._line_parts.get(line_id, "") + text
            case ChatDone(origin="companion") | ChatError(origin="companion"):
                self._said(frame)
            case ChatDelta(id=chat_id, text=text) if chat_id in self._chats:
                await self._chats[chat_id]._delta(text)
            case ChatDone(id=chat_id) | ChatError(id=chat_id) if chat_id in self._chats:
                self._chats.pop(chat_id)._end(frame)
            case Error(id=frame_id) if frame_id in self._chats:
                self._chats.pop(frame_id)._end(frame)
            case (
                Error(id=frame_id)
                | StatsResult(id=frame_id)
                | MemoryResult(id=frame_id)
                | MemoryPreview(id=frame_id)
                | MemoryForgotten(id=frame_id)
                | ActionsDeclared(id=frame_id)
            ) if frame_id in self._requests:
                self._requests[frame_id].set(frame)
            case ActionRequest():
                await self._act(frame)
            case VoiceTranscript(id=vid) | VoiceError(id=vid) | VoiceSpeech(id=vid) if (
                vid in self._voices
            ):
                self._voices[vid]._frame(frame)
                if isinstance(frame, VoiceError) and self._voices[vid].reply.ended:
                    self._chats.pop(vid, None)
            case MemoryConfirmRequest():
                self.confirms.append(frame)
                if self._on_confirm is not None:
                    self._on_confirm(frame)
            case MemoryNotice():
                self.notices.append(frame)
                if self._on_notice is not None:
                    self._on_notice(frame)
            case Error():
                refusal = Refused(
                    frame.code, frame.message, fields=frame.fields or (), frame_id=frame.id
                )
                self.refusals.append(refusal)
                if self._on_error is not None:
                    self._on_error(refusal)

    def _said(self, frame: ChatDone | ChatError) -> None:
        streamed = self._line_parts.pop(frame.id, "")
        if isinstance(frame, ChatDone):
            line = CompanionLine(frame.id, frame.text or streamed, frame.why, frame)
        else:
            line = CompanionLine(frame.id, streamed, None, frame)
        self.lines.append(line)
        if self._on_companion is not None:
            self._on_companion(line)


ActionStatus = Literal["done", "refused", "failed"]


def _forget_frame(
    target: str, event_id: int | None, save_id: str | None, include_stats: bool
) -> dict[str, Any]:
    frame: dict[str, Any] = {"type": "memory.forget", "target": target}
    if event_id is not None:
        frame["eventId"] = event_id
    if save_id is not None:
        frame["saveId"] = save_id
    if include_stats:
        frame["includeStats"] = True
    return frame
