"""Issue 18 section 5: ``xtyserver doctor`` against the scripted model over loopback."""

from __future__ import annotations

import json
import os
import re
import socket
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from xtyserver.model.doctor import check_routing, render_table
from xtyserver.model.doctor_codes import (
    DETAILS,
    HINTS,
    ZH_DETAILS,
    ZH_HINTS,
    chinese,
    shown_model,
)
from xtyserver.model.routing import ModelRoutes, resolve
from xtyserver.model.settings import ModelSettings
from xtyserver.testing import FakeModelServer, Reply, ToolCallScript

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def statuses(report: Any) -> dict[str, str]:
    return {c.name: c.status for c in report.routes[0].checks}


def script_all_good(fake: FakeModelServer) -> None:
    fake.enqueue(
        Reply(text="hello"),
        Reply(tool_calls=[ToolCallScript(name="xiaotangyuan_ping", arguments={"word": "pong"})]),
        Reply(text='{"ok": true}'),
        Reply(text="green"),
    )


async def test_a_good_provider_passes_every_check() -> None:
    async with FakeModelServer() as fake:
        script_all_good(fake)
        settings = ModelSettings(base_url=fake.base_url, model="fake-vl", json_mode=True)
        report = await check_routing(resolve(settings, ModelRoutes(), {}))
        requests = [r.json for r in fake.chat_requests]
    assert report.ok
    assert statuses(report) == {
        "reachable": "ok",
        "model": "ok",
        "streaming": "ok",
        "usage": "ok",
        "tools": "ok",
        "json_mode": "ok",
        "image": "ok",
        "latency": "ok",
    }
    assert report.routes[0].first_token_ms is not None
    assert [r.get("max_tokens") for r in requests] == [32, 32, 64, 32], "every call bounded"
    assert requests[1]["tools"][0]["function"]["name"] == "xiaotangyuan_ping"
    assert requests[2]["response_format"] == {"type": "json_object"}
    assert "chat route can answer: yes" in render_table(report)


async def test_a_text_only_model_is_told_to_turn_vision_off() -> None:
    async with FakeModelServer(vision=False) as fake:
        script_all_good(fake)
        settings = ModelSettings(base_url=fake.base_url, model="fake-vl")
        report = await check_routing(resolve(settings, ModelRoutes(), {}))
    image = report.routes[0].check("image")
    assert report.ok and image is not None and image.status == "fail"
    assert "model.vision = false" in image.hint
    assert (image.detail_code, image.hint_code, image.params) == (
        "image_refused",
        "vision_off",
        {"setting": "model"},
    )
    json_mode = report.routes[0].check("json_mode")
    assert json_mode is not None and json_mode.hint == "set model.json_mode = true"
    assert (json_mode.detail_code, json_mode.hint_code) == ("supported_off", "json_mode_on")


async def test_a_model_that_does_not_call_tools_is_a_warning_with_the_reason() -> None:
    async with FakeModelServer() as fake:
        fake.enqueue(Reply(text="hello"), Reply(text="pong!"), Reply(text="{}"), Reply(text="x"))
        settings = ModelSettings(base_url=fake.base_url, model="fake-vl")
        report = await check_routing(resolve(settings, ModelRoutes(), {}))
    tools = report.routes[0].check("tools")
    assert tools is not None and tools.status == "warn" and "tools" in tools.hint


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_the_command_exits_1_with_the_setting_to_change_when_chat_cannot_answer(
    tmp_path: Any,
) -> None:
    env = {
        **os.environ,
        "XTY_MODEL_BASE_URL": f"http://127.0.0.1:{closed_port()}/v1",
        "XTY_MODEL": "qwen2.5vl",
        "XTY_DATA_DIR": str(tmp_path),
    }
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [sys.executable, "-m", "xtyserver", "doctor", "--json"], env=env, check=False
        )
    assert done.returncode == 1
    report = json.loads(done.stdout)
    checks = {c["name"]: c for c in report["routes"][0]["checks"]}
    assert report["ok"] is False
    reachable = checks["reachable"]
    assert reachable["status"] == "fail" and "model.base_url" in reachable["hint"]
    # the English keeps the address; the codes and their parameters never carry it
    assert env["XTY_MODEL_BASE_URL"] in reachable["hint"]
    assert (reachable["detail_code"], reachable["hint_code"]) == (
        "cannot_connect",
        "check_base_url_at",
    )
    assert reachable["params"] == {"setting": "model"}
    assert checks["streaming"]["status"] == "fail"
    assert checks["streaming"]["detail_code"] == "error"


async def test_the_command_prints_a_table_and_exits_0_for_a_good_provider(tmp_path: Any) -> None:
    async with FakeModelServer() as fake:
        script_all_good(fake)
        env = {
            **os.environ,
            "XTY_MODEL_BASE_URL": fake.base_url,
            "XTY_MODEL": "fake-vl",
            "XTY_DATA_DIR": str(tmp_path),
            "XTY_LANG": "en",
        }
        with anyio.fail_after(60):
            done = await anyio.run_process(
                [sys.executable, "-m", "xtyserver", "doctor"], env=env, check=False
            )
    out = done.stdout.decode()
    assert done.returncode == 0, out
    assert "streaming  ok" in out and "chat route can answer: yes" in out


async def test_an_unconfigured_route_names_the_settings() -> None:
    report = await check_routing(resolve(ModelSettings(), ModelRoutes(), {}))
    reachable = report.routes[0].check("reachable")
    assert not report.ok and reachable is not None and "base_url" in reachable.hint
    assert (reachable.detail, reachable.hint) == (
        "no model is configured",
        "set model.base_url (or XTY_MODEL_BASE_URL / XTY_MODEL, or a preset)",
    )
    assert (reachable.detail_code, reachable.hint_code) == ("not_configured", "set_missing")
    assert reachable.params == {"setting": "model", "missing": "base_url"}


UI = Path(__file__).resolve().parents[2] / "xtyserver" / "manage" / "ui" / "i18n.js"


def page_codes(language: str, table: str) -> set[str]:
    """The codes ``table`` (doctorSeen or doctorChange) of ``language`` in i18n.js renders."""
    text = UI.read_text(encoding="utf-8")
    start = text.index(f"\n  {language}: {{")
    block = text[text.index(f"{table}: {{", start) :]
    block = block[: block.index("\n    },")]
    return set(re.findall(r"(\w+): \(", block))


def test_the_console_has_every_doctor_code_in_chinese() -> None:
    assert set(ZH_DETAILS) == set(DETAILS) and set(ZH_HINTS) == set(HINTS)
    params = {"setting": "models.quick", "missing": "model", "http": 401, "model": "m"}
    params |= {"url": "https://x.example/v1", "models": "a, b", "chars": 3, "ms": 5}
    for code in ZH_DETAILS:
        assert chinese(ZH_DETAILS, code, {**params, "error": "model_timeout"})
    for code in ZH_HINTS:
        assert "{" not in chinese(ZH_HINTS, code, params), code
    assert chinese(ZH_HINTS, "check_model", {"setting": "model", "model": "m"}).startswith(
        "检查记忆页「设置」里的「聊天模型」"
    )


def test_an_unreachable_host_blames_the_network_unless_it_is_local() -> None:
    from xtyserver.model.doctor import _unreachable_hint

    assert _unreachable_hint("https://api.deepseek.com/v1") == "check_network"
    assert _unreachable_hint("https://api.example.com/v1") == "check_network_or_url"
    assert _unreachable_hint("http://127.0.0.1:11434/v1") == "check_base_url_at"
    assert _unreachable_hint("http://192.168.1.20:1234/v1") == "check_base_url_at"


def test_the_page_has_every_doctor_code_in_both_languages() -> None:
    for language in ("zh", "en"):
        assert page_codes(language, "doctorSeen") == set(DETAILS), language
        assert page_codes(language, "doctorChange") == set(HINTS), language


def test_a_model_file_path_is_shown_by_its_name_only() -> None:
    assert shown_model("/home/me/models/qwen2.5-7b.gguf") == "qwen2.5-7b.gguf"
    assert shown_model("C:\\Users\\me\\models\\q.gguf") == "q.gguf"
    assert shown_model("Qwen/Qwen2.5-VL-7B-Instruct") == "Qwen/Qwen2.5-VL-7B-Instruct"
