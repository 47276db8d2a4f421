"""What ``xtyserver doctor`` saw and what to change, as stable codes with their English.

Each :class:`~xtyserver.model.doctor.Check` carries ``detail_code`` and
``hint_code`` (keys of :data:`DETAILS` and :data:`HINTS`) with ``params``; its
``detail`` and ``hint`` are the English below filled from those (the command
line's table and ``--json``). The memory page renders the same codes in its
own language (``doctorSeen`` and ``doctorChange`` in ``manage/ui/i18n.js``;
``tests/model/test_doctor.py`` checks both languages have every code).

``params`` hold only what a player may see on the page: the setting's prefix
(``setting``: ``model``, ``models.vision``), a model name, an HTTP status (``http``), an
error code or class name, counts. Never a key and never a file path; the base
URL only in the English (``{url}``), the page shows it in its caption.
"""

from __future__ import annotations

from collections.abc import Mapping

DETAILS: dict[str, str] = {
    "not_configured": "no model is configured",
    "no_answer": "no answer",
    "key_refused": "the key was refused (HTTP {http})",
    "models_not_served": "/models not served (HTTP {http})",
    "cannot_connect": "cannot connect",
    "error": "{error}",
    "model": "{model}",
    "one_model": "the one model served: {model}",
    "not_listed": "{model} not listed",
    "chat_answers": "the chat endpoint answers",
    "streaming_failed": "streaming failed",
    "timeout": "no answer in time",
    "empty": "the answer was empty",
    "reasoning_only": "the answer was empty (reasoning only)",
    "chars": "{chars} chars",
    "no_usage": "no usage in the stream",
    "no_text": "no text came",
    "first_token": "first token after {ms} ms",
    "no_tool_call": "the model answered without calling the tool",
    "refused": "refused",
    "not_json": "accepted, but the answer was no JSON object",
    "supported": "supported",
    "supported_off": "supported (not enabled)",
    "image_refused": "the model refused the image",
    "no_vision": "no vision (as configured)",
    "no_vision_failed": "no vision (as configured); an image part failed: {error}",
    "accepted": "accepted",
}
"""What a check saw, by code."""

HINTS: dict[str, str] = {
    "set_missing": "set {setting}.{missing} (or XTY_MODEL_BASE_URL / XTY_MODEL, or a preset)",
    "check_base_url": "check {setting}.base_url; is the server running?",
    "check_base_url_at": "check {setting}.base_url ({url}); is the server running?",
    "check_key": "check the API key (XTY_MODEL_API_KEY or the route's api_key_env)",
    "check_model": "check {setting}.model ({model})",
    "check_url_and_model": "check {setting}.base_url and {setting}.model",
    "pick_model": "set {setting}.model to one the provider serves, e.g. {models}",
    "raise_max_tokens": "raise {setting}.max_tokens, or choose a model that answers directly",
    "no_bill": "the token bill stays empty",
    "raise_first_token_timeout": "raise {setting}.first_token_timeout",
    "need_tools": "memory tools need tool calling: choose a model that has it",
    "need_tool_calls": 'memory tools ("你记得我什么") need a model that calls tools',
    "json_mode_off": "set {setting}.json_mode = false",
    "json_mode_on": "set {setting}.json_mode = true",
    "vision_off": "set {setting}.vision = false, or name a vision model (see README Providers)",
    "vision_off_or_route": "set {setting}.vision = false, or name a vision model",
    "vision_on": "set {setting}.vision = true to send screenshots",
}
"""What to change, by code."""


def english(table: Mapping[str, str], code: str, values: Mapping[str, object]) -> str:
    """The English of ``code`` in ``table`` filled from ``values`` ("" for no code)."""
    return table[code].format_map(values) if code else ""


def shown_model(name: str) -> str:
    """A provider's model id as the page may show it: a file path cut to its file name.

    llama.cpp lists the model file it was started with (``/home/me/models/q.gguf``).
    """
    if name.startswith(("/", "~")) or "\\" in name:
        name = name.replace("\\", "/").rsplit("/", 1)[-1]
    return name[:80]
