"""``xtyserver doctor``: the model check a player runs once (issue 18 section 5).

For each configured route (chat, vision, quick; a model shared by several is
checked once): the provider is reachable, the model name exists (``/models``
where served), streaming works, usage arrives in the stream, a tool call works
(one scripted tool), JSON mode works, an image part is accepted, and how long
the first token took. Each failure names the setting to change.

:func:`check_routing` is the one entry point; the command line prints its
:class:`DoctorReport` as a table (:func:`render_table`) or JSON, and the memory
page can call the same function ("测试连接"). Every call is bounded: small
``max_tokens``, the route's own deadlines, and ``DOCTOR_SECONDS`` per check.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from typing import Any, Literal

import anyio
import msgspec
import openai

from xtyserver.errors import ModelError
from xtyserver.memory.lenient import json_object
from xtyserver.model.client import Delta, Done, ImageRefusedError, ModelClient
from xtyserver.model.routing import Routing
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
    """One check of one route: its status, what was seen, and the setting to change."""

    name: str
    status: Status
    detail: str = ""
    hint: str = ""


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


def _prefix(roles: Sequence[str]) -> str:
    role = roles[0]
    return "model" if role == "chat" else f"models.{role}"


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
    key = _prefix(roles)
    if not settings.configured:
        missing = "base_url" if not settings.base_url.strip() else "model"
        hint = f"set {key}.{missing} (or XTY_MODEL_BASE_URL / XTY_MODEL, or a preset)"
        none = [Check("reachable", "fail", "no model is configured", hint)]
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
            checks[0] = Check("reachable", "ok", "the chat endpoint answers")
        checks += [streaming, usage]
        if streaming.status != "ok":
            checks += [
                Check(n, "skip", "streaming failed") for n in ("tools", "json_mode", "image")
            ]
        else:
            checks.append(await _tools(client, key, seconds))
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
            page = await raw.models.list()
    except TimeoutError:
        return [
            Check(
                "reachable", "fail", "no answer", f"check {key}.base_url; is the server running?"
            ),
            Check("model", "skip"),
        ]
    except openai.APIStatusError as err:
        if err.status_code in (401, 403):
            hint = "check the API key (XTY_MODEL_API_KEY or the route's api_key_env)"
            return [
                Check("reachable", "fail", f"the key was refused (HTTP {err.status_code})", hint),
                Check("model", "skip"),
            ]
        # Many providers serve no /models: the chat check says whether it is reachable.
        detail = f"/models not served (HTTP {err.status_code})"
        return [Check("reachable", "warn", detail), Check("model", "skip", detail)]
    except (openai.APIConnectionError, openai.APITimeoutError):
        return [
            Check(
                "reachable",
                "fail",
                "cannot connect",
                f"check {key}.base_url ({settings.base_url}); is the server running?",
            ),
            Check("model", "skip"),
        ]
    except (openai.OpenAIError, ValueError) as err:
        return [Check("reachable", "warn", type(err).__name__), Check("model", "skip")]
    ids = [m.id for m in page.data][:200]
    if not ids or settings.model in ids or settings.model in (i.rsplit("/", 1)[-1] for i in ids):
        return [Check("reachable", "ok"), Check("model", "ok" if ids else "skip", settings.model)]
    shown = ", ".join(ids[:5])
    hint = f"set {key}.model to one the provider serves, e.g. {shown}"
    if len(ids) == 1:
        # A single-model local server (llama.cpp) answers whatever name is sent.
        name = ids[0].rsplit("/", 1)[-1][:80]
        return [Check("reachable", "ok"), Check("model", "ok", f"the one model served: {name}")]
    return [Check("reachable", "ok"), Check("model", "fail", f"{settings.model} not listed", hint)]


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


def _failed(name: str, err: BaseException, hint: str) -> Check:
    if isinstance(err, TimeoutError):
        return Check(name, "fail", "no answer in time", hint)
    code = getattr(err, "code", type(err).__name__)
    return Check(name, "fail", str(code), hint)


async def _streaming(
    client: ModelClient, settings: ModelSettings, key: str, seconds: float
) -> tuple[Check, Check, Check, int | None]:
    messages = [{"role": "user", "content": "Reply with one short word: hello."}]
    try:
        done, first = await _stream(client, messages, seconds)
    except (ModelError, TimeoutError) as err:
        hint = {
            "model_auth_failed": "check the API key (XTY_MODEL_API_KEY or api_key_env)",
            "model_bad_request": f"check {key}.model ({settings.model})",
            "model_unavailable": f"check {key}.base_url; is the server running?",
        }.get(getattr(err, "code", ""), f"check {key}.base_url and {key}.model")
        return (
            _failed("streaming", err, hint),
            Check("usage", "skip"),
            Check("latency", "skip"),
            None,
        )
    if not done.text and not done.tool_calls:
        detail = "the answer was empty" + (" (reasoning only)" if done.reasoned else "")
        hint = f"raise {key}.max_tokens, or choose a model that answers directly"
        streaming = Check("streaming", "warn", detail, hint)
    else:
        streaming = Check("streaming", "ok", f"{len(done.text)} chars")
    usage = (
        Check("usage", "ok")
        if done.usage is not None
        else Check("usage", "warn", "no usage in the stream", "the token bill stays empty")
    )
    ms = None if first is None else round(first * 1000)
    latency = (
        Check("latency", "skip", "no text came")
        if ms is None
        else Check(
            "latency",
            "ok" if ms < settings.first_token_timeout * 500 else "warn",
            f"first token after {ms} ms",
            "" if ms < settings.first_token_timeout * 500 else f"raise {key}.first_token_timeout",
        )
    )
    return streaming, usage, latency, ms


async def _tools(client: ModelClient, key: str, seconds: float) -> Check:
    messages = [
        {"role": "system", "content": "You can call tools. When asked to ping, call the tool."},
        {"role": "user", "content": "Ping with the word 'pong'. Call xiaotangyuan_ping now."},
    ]
    try:
        done, _ = await _stream(client, messages, seconds, tools=[_PING_TOOL])
    except (ModelError, TimeoutError) as err:
        return _failed("tools", err, "memory tools need tool calling: choose a model that has it")
    if any(c.name == "xiaotangyuan_ping" for c in done.tool_calls):
        return Check("tools", "ok")
    return Check(
        "tools",
        "warn",
        "the model answered without calling the tool",
        'memory tools ("你记得我什么") need a model that calls tools',
    )


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
    except ModelError as err:
        if err.code == "model_bad_request":
            hint = f"set {key}.json_mode = false" if settings.json_mode else ""
            return Check("json_mode", "fail" if settings.json_mode else "skip", "refused", hint)
        return _failed("json_mode", err, "")
    except TimeoutError as err:
        return _failed("json_mode", err, "")
    if json_object(done.text) is None:
        hint = f"set {key}.json_mode = false" if settings.json_mode else ""
        return Check("json_mode", "warn", "accepted, but the answer was no JSON object", hint)
    hint = "" if settings.json_mode else f"set {key}.json_mode = true"
    return Check("json_mode", "ok", "supported" + (" (not enabled)" if hint else ""), hint)


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
            hint = f"set {key}.vision = false, or name a vision model (see README Providers)"
            return Check("image", "fail", "the model refused the image", hint)
        return Check("image", "skip", "no vision (as configured)")
    except (ModelError, TimeoutError) as err:
        if not settings.vision:
            code = getattr(err, "code", "timeout")
            return Check(
                "image", "skip", f"no vision (as configured); an image part failed: {code}"
            )
        return _failed("image", err, f"set {key}.vision = false, or name a vision model")
    if settings.vision:
        return Check("image", "ok")
    return Check("image", "ok", "accepted", f"set {key}.vision = true to send screenshots")


def render_table(report: DoctorReport) -> str:
    """The report as a plain-text table, one block per route."""
    marks = {"ok": "ok", "fail": "FAIL", "warn": "warn", "skip": "-"}
    lines: list[str] = []
    for route in report.routes:
        lines.append(f"{'/'.join(route.roles)}: {route.model or '(no model)'} at {route.base_url}")
        for c in route.checks:
            row = f"  {c.name:<10} {marks[c.status]:<5} {c.detail}"
            lines.append(row.rstrip())
            if c.hint:
                lines.append(f"  {'':<10} {'':<5} -> {c.hint}")
    lines.append("chat route can answer: " + ("yes" if report.ok else "NO"))
    return "\n".join(lines)
