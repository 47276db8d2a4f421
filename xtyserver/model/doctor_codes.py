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
    "check_network": (
        "the address is the provider's own: check this PC's network or proxy (VPN, firewall)"
    ),
    "check_network_or_url": "check this PC's network or proxy, then {setting}.base_url ({url})",
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


ZH_DETAILS: dict[str, str] = {
    "not_configured": "还没有设置模型",
    "no_answer": "没有回应",
    "key_refused": "密钥被拒绝（HTTP {http}）",
    "models_not_served": "这个服务不提供模型列表（HTTP {http}）",
    "cannot_connect": "连不上",
    "error": "{error_name}",
    "model": "{model}",
    "one_model": "服务只有一个模型 {model}：填的名字不在列表里，也会由它回答",
    "not_listed": "模型列表里没有 {model}",
    "chat_answers": "聊天接口有回应",
    "streaming_failed": "流式回答失败，没有测",
    "timeout": "没有按时回答",
    "empty": "回答是空的",
    "reasoning_only": "回答是空的（只有思考过程）",
    "chars": "回答了 {chars} 个字符",
    "no_usage": "回答里没有用量数据",
    "no_text": "没有收到文字",
    "first_token": "{ms} 毫秒后收到第一个字",
    "no_tool_call": "模型没有调用工具就回答了",
    "refused": "被拒绝",
    "not_json": "接受了，但回答不是 JSON 对象",
    "supported": "支持",
    "supported_off": "支持（没有开启）",
    "image_refused": "模型拒绝了图片",
    "no_vision": "不看图（按设置）",
    "no_vision_failed": "不看图（按设置）；发图片失败：{error_name}",
    "accepted": "接受图片",
}
"""The console's Chinese of :data:`DETAILS` (the page's is ``doctorSeen`` in i18n.js)."""

ZH_HINTS: dict[str, str] = {
    "set_missing": "填写{missing_field}（或选一个服务商）",
    "check_base_url": "检查{base_url_field}；那边的服务在运行吗？",
    "check_base_url_at": "检查{base_url_field}（{url}）；那边的服务在运行吗？",
    "check_network": "这是服务商自己的地址：请检查这台电脑的网络或代理（VPN、防火墙）",
    "check_network_or_url": "先检查这台电脑的网络或代理，再检查{base_url_field}（{url}）",
    "check_key": "检查 API 密钥（在记忆页的「设置」里重新粘贴一次）",
    "check_model": "检查{model_field}（{model}）",
    "check_url_and_model": "检查{base_url_field}和{model_field}",
    "pick_model": "把{model_field}改成服务商提供的模型，例如 {models}",
    "raise_max_tokens": "调大配置文件里的 {setting}.max_tokens，或者换一个直接回答的模型",
    "no_bill": "token 用量统计会是空的",
    "raise_first_token_timeout": "调大配置文件里的 {setting}.first_token_timeout",
    "need_tools": "记忆工具需要能调用工具的模型：换一个支持工具调用的模型",
    "need_tool_calls": "记忆工具（“你记得我什么”）需要会调用工具的模型",
    "json_mode_off": "在配置文件里设置 {setting}.json_mode = false",
    "json_mode_on": "在配置文件里设置 {setting}.json_mode = true",
    "vision_off": "取消勾选「设置」里的「聊天模型能看图片（截图）」，或者填一个看图模型",
    "vision_off_or_route": "在配置文件里设置 {setting}.vision = false，或者换一个能看图的模型",
    "vision_on": "勾选「设置」里的「聊天模型能看图片（截图）」，就会发送截图",
}
"""The console's Chinese of :data:`HINTS` (the page's is ``doctorChange`` in i18n.js)."""

ZH_ERRORS: dict[str, str] = {
    "model_auth_failed": "密钥被拒绝",
    "model_rate_limited": "请求太频繁，被限流",
    "model_unavailable": "服务暂时不可用",
    "model_bad_request": "请求被拒绝（参数不对）",
    "model_timeout": "超时",
    "model_stream_cut": "回答中途断了",
    "model_error": "模型服务出错",
    "timeout": "超时",
}

_PAGE_FIELDS = {
    "model.base_url": "记忆页「设置」里的「接口地址」",
    "model.model": "记忆页「设置」里的「聊天模型」",
    "models.vision.base_url": "记忆页「设置」里的「看图模型的接口地址」",
    "models.vision.model": "记忆页「设置」里的「看图模型」",
}


def chinese(table: Mapping[str, str], code: str, values: Mapping[str, object]) -> str:
    """The Chinese of ``code`` in :data:`ZH_DETAILS` or :data:`ZH_HINTS` ("" for no code).

    A setting the page has is named by its field there, any other by its dotted
    key in the configuration file.
    """
    if not code:
        return ""
    setting = str(values.get("setting", "model"))

    def field(name: object) -> str:
        dotted = f"{setting}.{name}"
        return _PAGE_FIELDS.get(dotted, f"配置文件里的 {dotted}")

    error = str(values.get("error", ""))
    filled = {
        **values,
        "setting": setting,
        "base_url_field": field("base_url"),
        "model_field": field("model"),
        "missing_field": field(values.get("missing", "model")),
        "error_name": ZH_ERRORS.get(error, error),
    }
    return table[code].format_map(filled)


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
