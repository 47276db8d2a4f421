"""Model routing (pure): which model does which call; keys only by variable name."""

from __future__ import annotations

from pathlib import Path

import pytest

from xtyserver.config import load_settings
from xtyserver.errors import UsageError
from xtyserver.model.router import ModelRouter
from xtyserver.model.routing import ModelRoute, ModelRoutes, Routing, origin, resolve
from xtyserver.model.settings import ModelSettings

BASE = ModelSettings(base_url="http://a/v1", api_key="base-key", model="chat", vision=False)


def for_turn(routing: Routing, *, image: bool) -> ModelSettings:
    """The route the server's router sends a chat turn to."""
    return ModelRouter(routing).route_for(image=image)


def test_with_one_model_every_role_is_it() -> None:
    r = resolve(BASE, ModelRoutes(), {})
    assert r.chat is BASE and r.vision is BASE and r.quick is BASE
    assert for_turn(r, image=True) is BASE


def test_extraction_model_is_the_quick_model_when_no_route_names_one() -> None:
    base = ModelSettings(base_url="http://a/v1", model="chat", extraction_model="small")
    r = resolve(base, ModelRoutes(), {})
    assert r.quick.model == "small" and r.chat.model == "chat"


def test_routes_read_their_keys_from_the_named_variables_and_fall_back_to_model() -> None:
    routes = ModelRoutes(
        vision=ModelRoute(model="vl", vision=True, api_key_env="VL_KEY", context_window=8192),
        quick=ModelRoute(model="q", base_url="http://b/v1"),
    )
    r = resolve(BASE, routes, {"VL_KEY": "vision-key"})
    assert (r.vision.model, r.vision.api_key, r.vision.base_url) == (
        "vl",
        "vision-key",
        BASE.base_url,
    )
    assert r.vision.context_window == 8192
    # another provider without its own variable gets no key: [model]'s is for http://a only
    assert (r.quick.model, r.quick.api_key, r.quick.base_url) == ("q", "", "http://b/v1")
    assert r.quick.context_window == BASE.context_window
    assert for_turn(r, image=True) is r.vision
    assert for_turn(r, image=False) is r.chat
    missing = resolve(BASE, routes, {})
    assert missing.vision.api_key == ""


def test_the_model_key_goes_only_to_routes_at_the_same_origin() -> None:
    def key_at(url: str) -> str:
        routes = ModelRoutes(quick=ModelRoute(model="q", base_url=url))
        return resolve(BASE, routes, {}).quick.api_key

    assert key_at("http://A:80/other/path") == "base-key"  # same scheme, host and port
    for elsewhere in ("http://a:8080/v1", "https://a/v1", "http://b/v1", "http://a.evil/v1", ""):
        assert key_at(elsewhere) == ("base-key" if elsewhere == "" else ""), elsewhere
    assert origin("https://user:pw@API.example.com/v1?x=1") == "https://api.example.com:443"
    assert origin("http://[::1]:9/v1") == "http://[::1]:9"
    assert origin("ftp://a/") == origin("not a url") == origin("http://a:99999/") == ""


def test_a_vision_route_that_takes_no_images_is_not_used_for_image_turns() -> None:
    r = resolve(BASE, ModelRoutes(vision=ModelRoute(model="blind")), {})
    assert for_turn(r, image=True) is r.chat


def test_config_names_routes_but_never_their_keys(tmp_path: Path) -> None:
    good = tmp_path / "good.toml"
    good.write_text(
        '[model]\nmodel = "chat"\ncontext_window = 4096\ndaily_token_budget = 50000\n'
        '[models.quick]\nmodel = "q"\napi_key_env = "Q_KEY"\n',
        encoding="utf-8",
    )
    settings = load_settings(good, env={})
    assert settings.models.quick is not None and settings.models.quick.api_key_env == "Q_KEY"
    assert settings.model.context_window == 4096 and settings.model.daily_token_budget == 50000
    bad = tmp_path / "bad.toml"
    bad.write_text('[models.quick]\nmodel = "q"\napi_key = "sk-secret"\n', encoding="utf-8")
    with pytest.raises(UsageError):
        load_settings(bad, env={})


@pytest.mark.parametrize(
    "key",
    [
        "model.context_window=2047",
        "model.daily_token_budget=-1",
        "model.budget_low_share=1.5",
    ],
)
def test_limits_are_checked(key: str) -> None:
    name, value = key.split("=")
    with pytest.raises(UsageError):
        load_settings(None, env={}, overrides={name: value})


def test_limits_accept_their_edges() -> None:
    s = load_settings(
        None,
        env={},
        overrides={
            "model.context_window": 2048,
            "model.daily_token_budget": 0,
            "model.budget_low_share": 1,
        },
    )
    assert s.model.context_window == 2048 and s.model.daily_token_budget == 0
