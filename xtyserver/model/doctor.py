"""``xtyserver doctor``: the model check a player runs once (docs/commands.md).

Each configured route is checked once, however many roles share it. What a check
saw and what to change are stable codes with parameters
(:mod:`xtyserver.model.doctor_codes`) as well as English: the page shows them in
its own language. :func:`check_routing` is the one entry point, for the command
line (:func:`render_table` or JSON) and the memory page ("测试连接"). Every call
is bounded: small ``max_tokens``, the route's own deadlines, ``DOCTOR_SECONDS``.
"""

from __future__ import annotations

import contextlib
import urllib.parse
from typing import Any, Literal

import anyio
import msgspec

from xtyserver.errors import ModelError
from xtyserver.memory.lenient import json_object
from xtyserver.model.client import Delta, Done, ImageRefusedError, ModelClient
from xtyserver.model.doctor_codes import (
    DETAILS,
    HINTS,
    ZH_DETAILS,
    ZH_HINTS,
    chinese,
    english,
    shown_model,
)
from xtyserver.model.presets import PRESETS
from xtyserver.model.provider_errors import (
    ProviderConnection,
    ProviderError,
    ProviderStatus,
    ProviderTimeout,
)
from xtyserver.model.routing import Routing, local_host
from xtyserver.model.settings import ModelSettings

Status = Literal["ok", "fail", "warn", "skip"]

DOCTOR_SECONDS = 30.0
"""Longest wait for one check."""

CHECKS = ("reachable", "model", "streaming", "usage", "tools", "json_mode", "image", "latency")

_PING_TOOL = {
    "type": "function",
    "function": {
        "name": "xiaotangyuan_ping",
        "description": "Answer the user's ping. Always call this tool when asked to ping.",
        "parameters": {
            "type": "object",
            "properties": {"word": {"type": "string", "description": "the word to echo"}},
            "required": ["word"],
        },
    },
}

# A 1x1 PNG: small enough for any provider, a real image part all the same.
_PNG = (
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR4nGNgYGD4"
    "DwABBAEAcCBlCwAAAABJRU5ErkJggg=="
)


class Check(msgspec.Struct, frozen=True):
    """One check of one route: its status, what was seen, and the setting to change.

    The codes and their English: :mod:`xtyserver.model.doctor_codes`.
    """

    name: str
    status: Status
    detail: str = ""
    hint: str = ""
    detail_code: str = ""
    hint_code: str = ""
    params: dict[str, str | int] = msgspec.field(default_factory=dict)


def check(
    name: str, status: Status, detail: str = "", hint: str = "", /, **params: str | int
) -> Check:
    """A :class:`Check` from codes and their parameters; ``url`` fills only the English."""
    kept = {k: v for k, v in params.items() if k != "url"}  # the page shows it elsewhere
    return Check(
        name,
        status,
        english(DETAILS, detail, params),
        english(HINTS, hint, params),
        detail,
        hint,
        kept,
    )


class RouteReport(msgspec.Struct, frozen=True):
    """Every check of one route (``roles``: which of chat, vision, quick use it)."""

    roles: tuple[str, ...]
    model: str
    base_url: str
    checks: tuple[Check, ...]
    first_token_ms: int | None = None

    def check(self, name: str) -> Check | None:
        return next((c for c in self.checks if c.name == name), None)


class DoctorReport(msgspec.Struct, frozen=True):
    """The whole check: ``ok`` is whether the chat route can answer."""

    ok: bool
    routes: tuple[RouteReport, ...]


def _roles(routing: Routing) -> list[tuple[ModelSettings, tuple[str, ...]]]:
    found: dict[int, tuple[ModelSettings, list[str]]] = {}
    for role in ("chat", "vision", "quick"):
        settings: ModelSettings = getattr(routing, role)
        found.setdefault(id(settings), (settings, []))[1].append(role)
    return [(s, tuple(roles)) for s, roles in found.values()]


async def check_routing(routing: Routing, *, seconds: float = DOCTOR_SECONDS) -> DoctorReport:
    """Check every route of ``routing``; never raises for a provider's failure."""
    routes = [await check_route(s, roles, seconds=seconds) for s, roles in _roles(routing)]
    chat = routes[0]
    streaming = chat.check("streaming")
    return DoctorReport(ok=streaming is not None and streaming.status == "ok", routes=tuple(routes))


async def check_route(
    settings: ModelSettings, roles: tuple[str, ...] = ("chat",), *, seconds: float = DOCTOR_SECONDS
) -> RouteReport:
    """Run every check against one route's provider."""
    key = "model" if roles[0] == "chat" else f"models.{roles[0]}"
    if not settings.configured:
        missing = "base_url" if not settings.base_url.strip() else "model"
        none = [
            check(
                "reachable", "fail", "not_configured", "set_missing", setting=key, missing=missing
            )
        ]
        none += [Check(n, "skip") for n in CHECKS[1:]]
        return RouteReport(roles, settings.model, settings.base_url, tuple(none))
    probe = msgspec.structs.replace(
        settings,
        max_tokens=32,
        background_max_tokens=64,
        max_retries=0,
        reply_seconds=min(settings.reply_seconds, seconds),
        first_token_timeout=min(settings.first_token_timeout, seconds),
    )
    client = ModelClient(probe)
    checks: list[Check] = []
    try:
        checks += await _models(client, settings, key, seconds)
        streaming, usage, latency, ms = await _streaming(client, settings, key, seconds)
        reachable = checks[0]
        if reachable.status != "ok" and streaming.status == "ok":
            checks[0] = check("reachable", "ok", "chat_answers")
        checks += [streaming, usage]
        if streaming.status != "ok":
            checks += [
                check(n, "skip", "streaming_failed") for n in ("tools", "json_mode", "image")
            ]
        else:
            checks.append(await _tools(client, seconds))
            checks.append(await _json_mode(client, settings, key, seconds))
            checks.append(await _image(client, settings, key, seconds))
        checks.append(latency)
    finally:
        await client.aclose()
    return RouteReport(roles, settings.model, settings.base_url, tuple(checks), ms)


async def _models(
    client: ModelClient, settings: ModelSettings, key: str, seconds: float
) -> list[Check]:
    raw = client.raw
    try:
        with anyio.fail_after(min(seconds, 15.0)):
            page = await raw.get_json("/models")
    except TimeoutError:
        reachable = check("reachable", "fail", "no_answer", "check_base_url", setting=key)
    except ProviderStatus as err:
        status = err.status
        if status not in (401, 403):
            # Many providers serve no /models: the chat check says whether it is reachable.
            return [
                check("reachable", "warn", "models_not_served", http=status),
                check("model", "skip", "models_not_served", http=status),
            ]
        reachable = check("reachable", "fail", "key_refused", "check_key", http=status)
    except (ProviderConnection, ProviderTimeout):
        url = settings.base_url
        hint = _unreachable_hint(url)
        reachable = check("reachable", "fail", "cannot_connect", hint, setting=key, url=url)
    except ProviderError as err:
        reachable = check("reachable", "warn", "error", error=type(err).__name__)
    else:
        return _listed(_model_ids(page)[:200], settings.model, key)
    return [reachable, Check("model", "skip")]


def _unreachable_hint(base_url: str) -> str:
    """What to change when ``base_url``'s host cannot be reached.

    A server on this PC or the home network: is it running (the address may be
    wrong too)? A provider's own address (a preset's): the network or a proxy,
    not the address. Any other cloud address: the network first, then the address.
    """
    host = (urllib.parse.urlsplit(base_url).hostname or "").lower()
    if local_host(host):
        return "check_base_url_at"
    wanted = base_url.strip().rstrip("/").lower()
    if any(str(p.get("base_url", "")).lower() == wanted for p in PRESETS.values()):
        return "check_network"
    return "check_network_or_url"


def _listed(ids: list[str], model: str, key: str) -> list[Check]:
    """The checks of a provider that listed ``ids`` (``/models``) for ``model``."""
    if not ids or model in ids or model in (i.rsplit("/", 1)[-1] for i in ids):
        listed = check("model", "ok" if ids else "skip", "model", model=model)
    elif len(ids) == 1:
        # A single-model local server (llama.cpp) answers whatever name is sent.
        name = shown_model(ids[0].rsplit("/", 1)[-1])
        listed = check("model", "ok", "one_model", model=name)
    else:
        shown = ", ".join(shown_model(i) for i in ids[:5])
        listed = check(
            "model", "fail", "not_listed", "pick_model", setting=key, model=model, models=shown
        )
    return [Check("reachable", "ok"), listed]


def _model_ids(page: object) -> list[str]:
    """The ids a ``/models`` answer lists, read leniently (a part of the wrong shape is absent)."""
    data = page.get("data") if isinstance(page, dict) else None
    if not isinstance(data, list):
        return []
    return [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]


async def _stream(
    client: ModelClient, messages: list[dict[str, Any]], seconds: float, **kwargs: Any
) -> tuple[Done, float | None]:
    started = anyio.current_time()
    first: float | None = None
    done = Done("")
    with anyio.fail_after(seconds):
        async with contextlib.aclosing(client.stream_chat(messages, **kwargs)) as events:
            async for event in events:
                if isinstance(event, Delta) and first is None:
                    first = anyio.current_time() - started
                elif isinstance(event, Done):
                    done = event
    return done, first


def _failed(name: str, err: BaseException, hint: str = "", /, **params: str | int) -> Check:
    if isinstance(err, TimeoutError):
        return check(name, "fail", "timeout", hint, **params)
    code = str(getattr(err, "code", type(err).__name__))
    return check(name, "fail", "error", hint, error=code, **params)


async def _streaming(
    client: ModelClient, settings: ModelSettings, key: str, seconds: float
) -> tuple[Check, Check, Check, int | None]:
    messages = [{"role": "user", "content": "Reply with one short word: hello."}]
    try:
        done, first = await _stream(client, messages, seconds)
    except (ModelError, TimeoutError) as err:
        hint = {
            "model_auth_failed": "check_key",
            "model_bad_request": "check_model",
            "model_unavailable": "check_base_url",
        }.get(getattr(err, "code", ""), "check_url_and_model")
        return (
            _failed("streaming", err, hint, setting=key, model=settings.model),
            Check("usage", "skip"),
            Check("latency", "skip"),
            None,
        )
    if not done.text and not done.tool_calls:
        detail = "reasoning_only" if done.reasoned else "empty"
        streaming = check("streaming", "warn", detail, "raise_max_tokens", setting=key)
    else:
        streaming = check("streaming", "ok", "chars", chars=len(done.text))
    usage = (
        Check("usage", "ok")
        if done.usage is not None
        else check("usage", "warn", "no_usage", "no_bill")
    )
    ms = None if first is None else round(first * 1000)
    if ms is None:
        latency = check("latency", "skip", "no_text")
    elif ms < settings.first_token_timeout * 500:
        latency = check("latency", "ok", "first_token", ms=ms)
    else:
        latency = check(
            "latency", "warn", "first_token", "raise_first_token_timeout", setting=key, ms=ms
        )
    return streaming, usage, latency, ms


async def _tools(client: ModelClient, seconds: float) -> Check:
    messages = [
        {"role": "system", "content": "You can call tools. When asked to ping, call the tool."},
        {"role": "user", "content": "Ping with the word 'pong'. Call xiaotangyuan_ping now."},
    ]
    try:
        done, _ = await _stream(client, messages, seconds, tools=[_PING_TOOL])
    except (ModelError, TimeoutError) as err:
        return _failed("tools", err, "need_tools")
    if any(c.name == "xiaotangyuan_ping" for c in done.tool_calls):
        return Check("tools", "ok")
    return check("tools", "warn", "no_tool_call", "need_tool_calls")


async def _json_mode(
    client: ModelClient, settings: ModelSettings, key: str, seconds: float
) -> Check:
    messages = [
        {"role": "system", "content": "Answer with one JSON object only."},
        {"role": "user", "content": 'Give the JSON object {"ok": true}.'},
    ]
    try:
        with anyio.fail_after(seconds):
            done = await client.complete_done(messages, json_mode=True)
    except (ModelError, TimeoutError) as err:
        if getattr(err, "code", "") != "model_bad_request":
            return _failed("json_mode", err)
        if settings.json_mode:
            return check("json_mode", "fail", "refused", "json_mode_off", setting=key)
        return check("json_mode", "skip", "refused")
    if json_object(done.text) is None:
        if settings.json_mode:
            return check("json_mode", "warn", "not_json", "json_mode_off", setting=key)
        return check("json_mode", "warn", "not_json")
    if settings.json_mode:
        return check("json_mode", "ok", "supported")
    return check("json_mode", "ok", "supported_off", "json_mode_on", setting=key)


async def _image(client: ModelClient, settings: ModelSettings, key: str, seconds: float) -> Check:
    messages = [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "What colour is this pixel? One word."},
                {"type": "image_url", "image_url": {"url": _PNG}},
            ],
        }
    ]
    try:
        await _stream(client, messages, seconds, vision=True)
    except ImageRefusedError:
        if settings.vision:
            return check("image", "fail", "image_refused", "vision_off", setting=key)
        return check("image", "skip", "no_vision")
    except (ModelError, TimeoutError) as err:
        if not settings.vision:
            code = str(getattr(err, "code", "timeout"))
            return check("image", "skip", "no_vision_failed", error=code)
        return _failed("image", err, "vision_off_or_route", setting=key)
    if settings.vision:
        return Check("image", "ok")
    return check("image", "ok", "accepted", "vision_on", setting=key)


def render_table(report: DoctorReport, language: Literal["zh", "en"] = "en") -> str:
    """The report as a plain-text table, one block per route, in ``language``."""
    if language == "en":
        marks = {"ok": "ok", "fail": "FAIL", "warn": "warn", "skip": "-"}
        lines: list[str] = []
        for route in report.routes:
            model = route.model or "(no model)"
            lines.append(f"{'/'.join(route.roles)}: {model} at {route.base_url}")
            for c in route.checks:
                lines.append(f"  {c.name:<10} {marks[c.status]:<5} {c.detail}".rstrip())
                if c.hint:
                    lines.append(f"  {'':<10} {'':<5} -> {c.hint}")
        lines.append("chat route can answer: " + ("yes" if report.ok else "NO"))
        return "\n".join(lines)
    zh_marks = {"ok": "通过", "fail": "失败", "warn": "注意", "skip": "跳过"}
    roles = {"chat": "聊天", "vision": "看图", "quick": "后台整理"}
    lines = []
    for route in report.routes:
        who = " / ".join(roles.get(r, r) for r in route.roles)
        lines.append(f"{who}：{route.model or '（没有模型）'} · {route.base_url or '（没有地址）'}")
        for c in route.checks:
            name = _ZH_CHECKS.get(c.name, c.name)
            seen = chinese(ZH_DETAILS, c.detail_code, c.params) or c.detail
            lines.append(f"  {name}  {zh_marks[c.status]}  {seen}".rstrip())
            hint = chinese(ZH_HINTS, c.hint_code, c.params) or c.hint
            if hint:
                lines.append(f"      → {hint}")
    lines.append("聊天模型可以回答。" if report.ok else "聊天模型还不能回答：按上面的提示修改。")
    return "\n".join(lines)


_ZH_CHECKS = {
    "reachable": "能连上",
    "model": "模型名",
    "streaming": "流式回答",
    "usage": "用量统计",
    "tools": "工具调用",
    "json_mode": "JSON 模式",
    "image": "图片",
    "latency": "首字延迟",
}
