"""How to reach the model provider: one frozen settings Struct (docs/configuration.md).

Pure data, so the core and the config loader can name it without importing the
``openai`` client.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal

import msgspec

from xtyserver.memory.tokens import DEFAULT_LOW_SHARE

_Positive = Annotated[float, msgspec.Meta(gt=0)]
_NonNegative = Annotated[float, msgspec.Meta(ge=0)]


class ModelSettings(msgspec.Struct, frozen=True, kw_only=True):
    """How to reach the model provider.

    Attributes:
        base_url: OpenAI-compatible base URL, e.g. ``https://api.deepseek.com/v1``
            (DeepSeek, Doubao/Ark, Qwen, OpenAI, Ollama, vLLM, ...).
        api_key: The provider key (``XTY_MODEL_API_KEY``). Never logged, never
            shown (not by ``repr`` either); may be empty for a local server.
        model: Chat model name.
        vision: Whether the model takes image parts; false: the image is dropped
            (and logged). A provider that refuses an image turns it off for the
            process by itself.
        first_token_timeout: Seconds from sending the request to the first text token.
        idle_timeout: Longest gap in seconds between two chunks once text flows.
        max_retries: Retries of a failed request before any text was shown.
        backoff_base: First backoff in seconds; doubled per retry.
        backoff_cap: Longest backoff in seconds.
        retry_after_cap: Longest ``Retry-After`` honoured; a longer one fails at once.
        extraction_model: Model for background calls (:meth:`ModelClient.complete_done`);
            unset: ``model``. A ``[models.quick]`` route replaces it.
        context_window: Tokens the model accepts; a small window shrinks the
            history and the memory block (``memory.tokens.budget_for``).
        daily_token_budget: Tokens all calls may use per local day; unset: no limit.
        budget_low_share: Share of the daily budget left at which background jobs stop.
        preset: The provider preset that fills what the table does not set itself:
            ``base_url``, ``model``, ``vision``, ``json_mode`` (docs/configuration.md "Providers").
        max_tokens: Tokens a chat answer may have (sent as ``token_field``; the
            persona asks for three sentences).
        background_max_tokens: Tokens a background answer (extraction, summary,
            fold) may have.
        token_field: Which body key carries the limit: ``max_tokens``,
            ``max_completion_tokens`` (OpenAI's newer models) or ``both``.
        json_mode: Ask for ``response_format: {"type": "json_object"}`` on
            background calls (off for unknown providers; ``xtyserver doctor`` tells).
        max_concurrency: Calls the provider takes at once; unset: 1 for a loopback
            base URL (a local server), 4 otherwise.
        reply_chars: Server cap: characters of one answer, at most 8,000 (the
            rest is not read).
        reply_seconds: Server cap: seconds of one answer, request to last chunk,
            at most 60.
        line_bytes: Server cap: bytes of one SSE line from the provider, at most 64 KiB.
    """

    base_url: str = ""
    api_key: str = ""
    model: str = ""
    vision: bool = True
    first_token_timeout: _Positive = 20.0
    idle_timeout: _Positive = 30.0
    max_retries: Annotated[int, msgspec.Meta(ge=0, le=10)] = 2
    backoff_base: _NonNegative = 0.5
    backoff_cap: _NonNegative = 8.0
    retry_after_cap: _NonNegative = 10.0
    extraction_model: str | None = None
    context_window: Annotated[int, msgspec.Meta(ge=2048)] = 32_768
    daily_token_budget: Annotated[int, msgspec.Meta(ge=0)] | None = None
    budget_low_share: Annotated[float, msgspec.Meta(ge=0, le=1)] = DEFAULT_LOW_SHARE
    preset: str = ""
    max_tokens: Annotated[int, msgspec.Meta(ge=16, le=32_768)] = 400
    background_max_tokens: Annotated[int, msgspec.Meta(ge=16, le=32_768)] = 300
    token_field: Literal["max_tokens", "max_completion_tokens", "both"] = "max_tokens"
    json_mode: bool = False
    max_concurrency: Annotated[int, msgspec.Meta(ge=1, le=64)] | None = None
    reply_chars: Annotated[int, msgspec.Meta(ge=1, le=8_000)] = 8_000
    reply_seconds: Annotated[float, msgspec.Meta(gt=0, le=60)] = 60.0
    line_bytes: Annotated[int, msgspec.Meta(ge=1024, le=65_536)] = 65_536

    def __post_init__(self) -> None:
        # msgspec checks the Meta bounds only when decoding; direct construction is checked here.
        for name in ("first_token_timeout", "idle_timeout"):
            value = getattr(self, name)
            if not (value > 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a positive number of seconds")
        for name in ("backoff_base", "backoff_cap", "retry_after_cap"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be a non-negative number of seconds")
        if not 0 <= self.max_retries <= 10:
            raise ValueError("max_retries must be between 0 and 10")
        if self.context_window < 2048:
            raise ValueError("context_window must be at least 2048 tokens")
        if self.daily_token_budget is not None and self.daily_token_budget < 0:
            raise ValueError("daily_token_budget must be >= 0")
        if not 0 <= self.budget_low_share <= 1:
            raise ValueError("budget_low_share must be between 0 and 1")
        if not (0 < self.reply_seconds <= 60 and math.isfinite(self.reply_seconds)):
            raise ValueError("reply_seconds must be more than 0 and at most 60")
        if not 1 <= self.reply_chars <= 8_000:
            raise ValueError("reply_chars must be between 1 and 8000")

    def __repr__(self) -> str:
        # The key stays out of every repr (and so out of logs and tracebacks).
        key = "<set>" if self.api_key else "<empty>"
        fields = ", ".join(
            f"{name}={key if name == 'api_key' else repr(getattr(self, name))}"
            for name in self.__struct_fields__
        )
        return f"ModelSettings({fields})"

    __str__ = __repr__

    @property
    def configured(self) -> bool:
        """Whether a base URL and a model name are both given."""
        return bool(self.base_url.strip() and self.model.strip())
