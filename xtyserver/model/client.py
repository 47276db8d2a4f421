"""The model shell: stream a chat reply from any OpenAI-compatible provider.

Over the project's own provider client (:mod:`xtyserver.model.provider`), which
never retries, so the rules of ``protocol/v1.md`` ("chat.error codes") hold
exactly:

* 429 is retried, honouring ``Retry-After`` up to ``retry_after_cap`` seconds;
  5xx and refused connections are retried ``max_retries`` times with
  exponential backoff; 401/403 and other 4xx are never retried.
* Deadlines are enforced with anyio cancel scopes: no first token within
  ``first_token_timeout`` or a gap over ``idle_timeout`` ends in ``model_timeout``.
* Once a :class:`Delta` has been yielded nothing is retried (the player would
  see the reply twice); a break then is ``model_stream_cut``, and a silence
  over ``idle_timeout`` ends the reply with what came (``Done.incomplete``).
* Every call is bounded: ``max_tokens`` per purpose in the body,
  and server caps whatever the provider does (:mod:`xtyserver.model.bounds`):
  an SSE line over ``line_bytes``, a reply over ``reply_chars`` characters or
  ``reply_seconds`` seconds, ``finish_reason: length`` end the reply with the
  text kept so far (``Done.truncated``); tool calls past the fourth of one
  answer are refused (dropped, never echoed back). Reasoning
  (``reasoning_content``, a leading ``<think>`` block) never becomes a Delta.
* The API key never appears in a repr, a log line or an error message.

Every failure is a :class:`xtyserver.errors.ModelError` with a ``model_*`` code of
v1.md "chat.error codes" (:class:`ImageRefusedError` when a 400 named the image).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import anyio
import msgspec
import structlog

from xtyserver.errors import ModelError
from xtyserver.model.bounds import (
    OversizedLine,
    Purpose,
    ReplyCap,
    ThinkFilter,
    image_refused,
    time_left,
    token_limits,
)
from xtyserver.model.provider_errors import (
    ProviderAnswerError,
    ProviderConnection,
    ProviderError,
    ProviderStatus,
    ProviderTimeout,
)
from xtyserver.model.settings import ModelSettings
from xtyserver.protocol.frames import Usage
from xtyserver.session.tools import ToolCall

if TYPE_CHECKING:
    from xtyserver.model.provider import Provider
    from xtyserver.model.request import ChatStream, RawChunk

__all__ = [
    "Delta",
    "Done",
    "ImageRefusedError",
    "ModelClient",
    "ModelEvent",
    "ModelSettings",
    "Usage",
    "strip_images",
]

_log = structlog.get_logger("xtyserver.model")


_IMAGE_PART_TYPES = frozenset({"image_url", "input_image", "image"})

_NOT_CONFIGURED_HINT = {
    "base_url": "XTY_MODEL_BASE_URL (config key model.base_url)",
    "model": "XTY_MODEL (config key model.model)",
}


class Delta(msgspec.Struct, frozen=True):
    """A piece of reply text, in arrival order."""

    text: str


class Done(msgspec.Struct, frozen=True):
    """The end of a reply: the whole text, the usage when the provider gave it, and
    the tool calls the model made instead of (or after) text (v1.md "Memory tools").

    Attributes:
        truncated: The reply was cut: ``finish_reason: length`` or a server cap.
        incomplete: The provider fell silent after text was shown; ``text`` is what came.
        reasoned: The provider sent reasoning (kept from the player).
        image_dropped: The image parts were left out: the route takes no images (now).
        image_refused: The provider refused this turn's image; it was asked again without.
    """

    text: str
    usage: Usage | None = None
    tool_calls: tuple[ToolCall, ...] = ()
    truncated: bool = False
    incomplete: bool = False
    reasoned: bool = False
    image_dropped: bool = False
    image_refused: bool = False


class ImageRefusedError(ModelError):
    """The provider refused the request because of its image part (a 400 naming it)."""


ModelEvent = Delta | Done
"""What :meth:`ModelClient.stream_chat` yields: ``Delta``... then one ``Done``."""


def strip_images(
    messages: Iterable[Mapping[str, Any]],
) -> tuple[list[dict[str, Any]], bool]:
    """Drop image content parts, for a model without vision.

    Returns the messages (a message that lost a part is a new dict; one left with
    no parts gets "" content) and whether any image part was removed.
    """
    out: list[dict[str, Any]] = []
    removed = False
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            kept = [
                part
                for part in content
                if not (isinstance(part, Mapping) and part.get("type") in _IMAGE_PART_TYPES)
            ]
            if len(kept) != len(content):
                removed = True
                out.append({**message, "content": kept if kept else ""})
                continue
        # Nothing to drop: no copy (a turn's text messages, every turn).
        out.append(message if isinstance(message, dict) else dict(message))
    return out, removed


class _Failure(msgspec.Struct, frozen=True):
    error: ModelError
    retryable: bool


def _parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from ``retry-after-ms`` or a numeric ``retry-after``.

    An HTTP-date ``Retry-After`` is ignored (it would need a clock read); the
    exponential backoff applies instead.
    """
    for name, divisor in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            seconds = float(value) / divisor
        except ValueError:
            continue
        if math.isnan(seconds):
            continue
        return max(0.0, seconds)
    return None


def _fail(
    message: str,
    code: str = "model_error",
    *,
    retryable: bool = False,
    error: type[ModelError] = ModelError,
    **kw: Any,
) -> _Failure:
    return _Failure(error(message, code=code, **kw), retryable)


def _classify(err: Exception, *, began: bool) -> _Failure:
    """Map a provider failure before any text was shown to a ModelError.

    Messages are ours, never the provider's: a provider may echo the key back.
    """
    if isinstance(err, ProviderStatus):
        status = err.status
        if status in (401, 403):
            return _fail(
                f"the model provider refused the credentials (HTTP {status}); "
                "check XTY_MODEL_API_KEY",
                "model_auth_failed",
                status=status,
            )
        if status == 429:
            return _fail(
                "the model provider is rate limiting requests (HTTP 429); try again later",
                "model_rate_limited",
                retryable=True,
                status=status,
                retry_after=_parse_retry_after(err.headers),
            )
        if status >= 500 or status == 408:
            return _fail(
                f"the model provider is unavailable (HTTP {status})",
                "model_unavailable",
                retryable=True,
                status=status,
                retry_after=_parse_retry_after(err.headers),
            )
        if image_refused(status, err.message):
            return _fail(
                f"the model provider refused the image (HTTP {status}); the model takes no images",
                "model_bad_request",
                status=status,
                error=ImageRefusedError,
            )
        if 400 <= status < 500:
            return _fail(
                f"the model provider refused the request (HTTP {status}); "
                "check the model name and settings",
                "model_bad_request",
                status=status,
            )
        return _fail(f"unexpected answer from the model provider (HTTP {status})", status=status)
    if isinstance(err, ProviderTimeout):
        return _fail("the model provider did not answer in time", "model_timeout")
    if isinstance(err, ProviderConnection):
        if began:
            # The answer broke before any text: nothing was shown, so a retry is safe.
            return _fail("the model's reply broke off", "model_stream_cut", retryable=True)
        return _fail("cannot reach the model provider", "model_unavailable", retryable=True)
    return _fail("the model provider failed the request")


def model_error(err: ProviderError) -> ModelError:
    """The ModelError of a failed provider request that was not streamed."""
    return _classify(err, began=False).error


class _Progress:
    """What a stream has told us so far (mutable; local to one call)."""

    __slots__ = ("calls", "cap", "finish_reason", "finished", "parts", "reasoned", "think", "usage")

    def __init__(self, cap: ReplyCap | None = None) -> None:
        self.parts: list[str] = []
        self.usage: Usage | None = None
        self.finished = False
        self.finish_reason: str | None = None
        self.reasoned = False
        self.cap = cap or ReplyCap()
        self.think = ThinkFilter()
        # Streamed tool calls by index: [id, name, arguments so far].
        self.calls: dict[int, list[str]] = {}

    def tool_calls(self) -> tuple[ToolCall, ...]:
        return tuple(ToolCall(*self.calls[i]) for i in sorted(self.calls))

    def take(self, chunk: RawChunk) -> str:
        """Absorb one chunk; return its new text for the player (may be empty).

        Read leniently, as the SDK's untyped construction did: a part of the
        wrong shape counts as absent. A chunk that is not a JSON object at all
        is a broken provider. Reasoning is noted, never returned.
        """
        data = chunk.data
        if not isinstance(data, dict):
            raise ProviderAnswerError("a streamed chunk is not a JSON object")
        usage = data.get("usage")
        if isinstance(usage, dict):
            self.usage = Usage(
                prompt_tokens=_count(usage.get("prompt_tokens")),
                completion_tokens=_count(usage.get("completion_tokens")),
                total_tokens=_count(usage.get("total_tokens")),
            )
        piece = ""
        for choice in _list(data.get("choices")):
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                content = delta.get("content")
                if isinstance(content, str) and content and not self.cap.reached:
                    piece += self.cap.take(self.think.feed(content))
                for key in ("reasoning_content", "reasoning"):
                    if isinstance(delta.get(key), str) and delta[key]:
                        self.reasoned = True
                for call in _list(delta.get("tool_calls")):
                    self._take_call(call)
            reason = choice.get("finish_reason")
            if reason is not None:
                self.finished = True
                self.finish_reason = reason if isinstance(reason, str) else "stop"
        if self.finished and not self.cap.reached:
            piece += self.cap.take(self.think.flush())
        self.reasoned = self.reasoned or self.think.reasoned
        if piece:
            self.parts.append(piece)
        return piece

    def _take_call(self, call: object) -> None:
        if not isinstance(call, dict):
            return
        index = call.get("index", 0)
        if not isinstance(index, int):
            return
        if not self.cap.call_allowed(index, len(self.calls), index not in self.calls):
            return  # past the fourth call of this answer: refused, never echoed back
        entry = self.calls.setdefault(index, ["", "", ""])
        if isinstance(call_id := call.get("id"), str) and call_id:
            entry[0] = call_id[:200]
        function = call.get("function")
        if isinstance(function, dict):
            entry[1] += self.cap.take(_text(function.get("name")))
            entry[2] += self.cap.take(_text(function.get("arguments")))


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class ModelClient:
    """Streams chat replies from the configured provider."""

    def __init__(self, settings: ModelSettings) -> None:
        self.settings = settings
        # Built on the first call: the HTTP client (httpx2, the TLS context) is not
        # needed before the server listens.
        self._client: Provider | None = None

    @property
    def configured(self) -> bool:
        """Whether a base URL and a model are set (otherwise every call fails)."""
        return self.settings.configured

    @property
    def raw(self) -> Provider:
        """The provider client itself (``xtyserver doctor`` lists ``/models``)."""
        return self._require()

    def _require(self) -> Provider:
        if self._client is None and self.settings.configured:
            try:
                from xtyserver.model import request  # noqa: F401 - its first chat's
                from xtyserver.model.tls import provider_client
            except (ImportError, OSError) as exc:  # no descriptor left to read a module
                raise ModelError("cannot load the HTTP client", code="model_unavailable") from exc
            s = self.settings
            # A backstop only: the anyio deadlines below are the ones that count.
            backstop = max(s.first_token_timeout, s.idle_timeout) + 5.0
            # We retry ourselves (the client never does), so the rules above hold exactly.
            self._client = provider_client(s.base_url, s.api_key, timeout=backstop)
        if self._client is None:
            missing = [
                hint
                for key, hint in _NOT_CONFIGURED_HINT.items()
                if not str(getattr(self.settings, key)).strip()
            ]
            raise ModelError(
                "no model is configured: set " + " and ".join(missing),
                code="model_not_configured",
            )
        return self._client

    async def stream_chat(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        model: str | None = None,
        tools: Sequence[Mapping[str, Any]] | None = None,
        purpose: Purpose = "chat",
        json_mode: bool = False,
        vision: bool | None = None,
    ) -> AsyncGenerator[ModelEvent, None]:
        """Stream one reply: ``Delta`` events as text arrives, then one ``Done``.

        Consume it inside ``contextlib.aclosing`` so an early exit closes the HTTP
        stream at once. ``purpose`` picks ``max_tokens`` (chat) or
        ``background_max_tokens``; ``vision`` None is ``settings.vision`` (without
        it image parts are dropped). Raises ModelError (codes in the module docstring).
        """
        client = self._require()
        from xtyserver.model.request import chat_body  # loaded by _require

        s = self.settings
        name = model or s.model
        # Never changed below (the body is serialised as it is): no copies.
        payload = [m if isinstance(m, dict) else dict(m) for m in messages]
        if not (s.vision if vision is None else vision):
            payload, removed = strip_images(payload)
            if removed:
                _log.info("model.image_dropped", reason="model has no vision", model=name)

        offered = [t if isinstance(t, dict) else dict(t) for t in tools] if tools else None
        limit = s.max_tokens if purpose == "chat" else s.background_max_tokens
        body = chat_body(
            name,
            payload,
            offered,
            limits=token_limits(s.token_field, limit),
            json_mode=json_mode,
        )
        started = anyio.current_time()
        stream, progress, first = await self._open_with_retries(client, body, started)
        truncated = incomplete = False
        try:
            if first:
                yield Delta(first)
            while not progress.cap.reached:
                left = time_left(started, anyio.current_time(), s.reply_seconds)
                wait = min(s.idle_timeout, left)
                try:
                    chunk = await self._next(stream, wait)
                except _Silent:
                    if progress.finished:
                        break  # the answer was whole; only its usage or [DONE] is missing
                    if wait >= left:
                        truncated = True  # the reply ran out of its seconds
                    elif progress.parts or progress.calls:
                        incomplete = True  # fell silent after text was shown
                    else:
                        raise ModelError(
                            f"the model stopped sending for {s.idle_timeout:g} s",
                            code="model_timeout",
                        ) from None
                    break
                except OversizedLine:
                    _log.warning("model.line_too_long", cap_bytes=s.line_bytes, model=name)
                    if not (progress.parts or progress.finished):
                        raise ModelError(
                            "the model provider sent an oversized line", code="model_error"
                        ) from None
                    truncated = not progress.finished
                    break
                if chunk is None:
                    break
                piece = progress.take(chunk)
                if piece:
                    yield Delta(piece)
        finally:
            await _close(stream)
        if progress.cap.refused_calls:
            _log.warning("model.tool_calls_refused", refused=progress.cap.refused_calls)
        truncated = truncated or progress.cap.reached or progress.finish_reason == "length"
        if not (progress.finished or truncated or incomplete):
            # Ended without a finish_reason: the connection closed early, not a real end.
            raise ModelError(
                "the model's reply broke off before it was finished", code="model_stream_cut"
            )
        if truncated or incomplete:
            _log.info(
                "model.reply_bounded",
                truncated=truncated,
                incomplete=incomplete,
                finish_reason=progress.finish_reason,
                chars=progress.cap.used,
            )
        yield Done(
            "".join(progress.parts),
            progress.usage,
            progress.tool_calls(),
            truncated=truncated,
            incomplete=incomplete,
            reasoned=progress.reasoned,
        )

    async def complete_done(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        json_mode: bool | None = None,
    ) -> Done:
        """Run one background call to the end: its whole ``Done`` (text and usage).

        On ``settings.extraction_model``, else ``settings.model``; ``json_mode`` None:
        ``settings.json_mode``. An answer that fell silent half way is a
        ``model_timeout`` (half an answer is no answer).
        """
        done = Done("")
        stream = self.stream_chat(
            messages,
            model=self.settings.extraction_model or self.settings.model,
            purpose="background",
            json_mode=self.settings.json_mode if json_mode is None else json_mode,
        )
        async with contextlib.aclosing(stream) as events:
            async for event in events:
                if isinstance(event, Done):
                    done = event
        if done.incomplete:
            raise ModelError("the model stopped sending mid-answer", code="model_timeout")
        return done

    async def aclose(self) -> None:
        """Close the HTTP connections (one no call built yet is built closed: ``raw`` says so)."""
        if self.configured:
            await self._require().close()

    async def _open_with_retries(
        self, client: Provider, body: dict[str, Any], started: float
    ) -> tuple[ChatStream, _Progress, str]:
        """Send the request and wait for the first text, retrying what is safe to retry."""
        s = self.settings
        attempt = 0
        while True:
            state: dict[str, Any] = {}
            wait = min(
                s.first_token_timeout, time_left(started, anyio.current_time(), s.reply_seconds)
            )
            try:
                with anyio.fail_after(wait):
                    return await self._open(client, body, state)
            except (TimeoutError, OversizedLine, ProviderError) as err:
                await _close(state.get("stream"))
                if isinstance(err, TimeoutError):
                    message = f"no answer from the model within {wait:g} s"
                    raise ModelError(message, code="model_timeout") from None
                if isinstance(err, OversizedLine):
                    _log.warning("model.line_too_long", cap_bytes=s.line_bytes)
                    message = "the model provider sent an oversized line"
                    raise ModelError(message, code="model_error") from None
                failure = _classify(err, began="stream" in state)
                delay = self._retry_delay(failure, attempt)
                if delay is None:
                    raise failure.error from (
                        None if failure.error.code == "model_auth_failed" else err
                    )
                attempt += 1
                _log.info(
                    "model.retry",
                    code=failure.error.code,
                    status=failure.error.status,
                    attempt=attempt,
                    delay_s=round(delay, 3),
                )
                await anyio.sleep(delay)

    async def _open(
        self, client: Provider, body: dict[str, Any], state: dict[str, Any]
    ) -> tuple[ChatStream, _Progress, str]:
        from xtyserver.model.request import post_chat

        s = self.settings
        stream = await post_chat(client, body, line_bytes=s.line_bytes)
        state["stream"] = stream
        progress = _Progress(ReplyCap(s.reply_chars))
        while True:
            try:
                chunk = await stream.__anext__()
            except StopAsyncIteration:
                if not progress.finished:
                    raise ProviderConnection("stream ended before any text") from None
                return stream, progress, ""
            piece = progress.take(chunk)
            if piece or progress.cap.reached:
                return stream, progress, piece

    async def _next(self, stream: ChatStream, wait: float) -> RawChunk | None:
        """The next chunk within ``wait`` seconds (else _Silent), ``None`` at the end."""
        try:
            with anyio.fail_after(wait):
                return await stream.__anext__()
        except StopAsyncIteration:
            return None
        except (TimeoutError, ProviderTimeout):
            raise _Silent from None
        except ProviderConnection as err:
            raise ModelError(
                "the model's reply broke off before it was finished", code="model_stream_cut"
            ) from err
        except ProviderError as err:
            raise ModelError("the model provider failed mid-reply") from err

    def _retry_delay(self, failure: _Failure, attempt: int) -> float | None:
        """Seconds to wait before the next attempt, or ``None`` to give up."""
        s = self.settings
        if not failure.retryable or attempt >= s.max_retries:
            return None
        retry_after = failure.error.retry_after
        if retry_after is not None:
            # Waiting longer than the cap would hang the turn; give up and say so.
            return retry_after if retry_after <= s.retry_after_cap else None
        return float(min(s.backoff_cap, s.backoff_base * 2**attempt))


class _Silent(Exception):
    """No chunk came within the wait (idle timeout or the reply's last seconds)."""


async def _close(stream: ChatStream | None) -> None:
    """Release an HTTP stream, even while being cancelled, without hanging."""
    if stream is not None:
        with anyio.move_on_after(1.0, shield=True), contextlib.suppress(Exception):
            await stream.close()
