"""Issue 18 section 5: provider presets fill a route in one config line."""

from __future__ import annotations

from pathlib import Path

import pytest

from xtyserver.config import load_settings
from xtyserver.errors import UsageError
from xtyserver.model.presets import PRESETS, preset_name
from xtyserver.model.routing import resolve


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "xtyserver.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_every_named_provider_has_a_preset() -> None:
    assert set(PRESETS) == {
        "deepseek",
        "qwen",
        "doubao",
        "ollama",
        "lmstudio",
        "llamacpp",
        "openai",
    }
    assert preset_name("DashScope") == "qwen" and preset_name("llama.cpp") == "llamacpp"
    assert preset_name("LM-Studio") == "lmstudio" and preset_name("nope") is None


def test_one_line_fills_base_url_model_and_capabilities(tmp_path: Path) -> None:
    settings = load_settings(write(tmp_path, '[model]\npreset = "ollama"\n'), env={})
    m = settings.model
    assert (m.base_url, m.model, m.vision, m.json_mode) == (
        "http://127.0.0.1:11434/v1",
        "qwen2.5vl",
        True,
        True,
    )
    assert m.preset == "ollama"


def test_deepseek_is_text_only_and_openai_wants_max_completion_tokens(tmp_path: Path) -> None:
    deepseek = load_settings(None, env={"XTY_MODEL_PRESET": "deepseek"}).model
    assert deepseek.model == "deepseek-chat" and deepseek.vision is False
    openai = load_settings(write(tmp_path, '[model]\npreset = "openai"\n'), env={}).model
    assert openai.token_field == "max_completion_tokens" and openai.vision


def test_what_the_file_and_the_environment_set_wins_over_the_preset(tmp_path: Path) -> None:
    path = write(tmp_path, '[model]\npreset = "ollama"\nmodel = "llava"\nvision = false\n')
    settings = load_settings(path, env={"XTY_MODEL_BASE_URL": "http://127.0.0.1:9999/v1"})
    assert settings.model.model == "llava" and settings.model.vision is False
    assert settings.model.base_url == "http://127.0.0.1:9999/v1"


def test_a_route_takes_a_preset_too(tmp_path: Path) -> None:
    text = '[model]\npreset = "deepseek"\n\n[models.vision]\npreset = "qwen"\napi_key_env = "QK"\n'
    settings = load_settings(write(tmp_path, text), env={})
    routing = resolve(settings.model, settings.models, {"QK": "sk-q"})
    assert routing.chat.model == "deepseek-chat" and not routing.chat.vision
    assert routing.vision.model == "qwen-vl-plus" and routing.vision.vision
    assert (
        routing.vision.base_url.startswith("https://dashscope") and routing.vision.api_key == "sk-q"
    )


def test_an_unknown_preset_is_refused_naming_the_known_ones(tmp_path: Path) -> None:
    with pytest.raises(UsageError) as caught:
        load_settings(write(tmp_path, '[model]\npreset = "gemini"\n'), env={})
    assert "gemini" in caught.value.message and "ollama" in caught.value.message
