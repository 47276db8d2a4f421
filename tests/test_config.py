"""Settings: OS data folders, TOML, environment overrides, refusals naming the key."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from xtyserver.config import default_data_dir, load_settings
from xtyserver.errors import UsageError


def data_dir_in(platform: str, **env: str) -> Path:
    """The default data folder a fresh process computes for ``platform`` under ``env``."""
    probe = f"from xtyserver.config import default_data_dir as d; print(d({platform!r}))"
    base = {k: v for k, v in os.environ.items() if k not in ("XDG_DATA_HOME", "HOME")}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**base, **env},
    )
    return Path(done.stdout.strip())


def test_default_data_dir_follows_each_os_convention() -> None:
    mac = data_dir_in("darwin", HOME="/Users/p")
    assert mac == Path("/Users/p/Library/Application Support/XiaoTangYuan")
    assert data_dir_in("linux", HOME="/home/p") == Path("/home/p/.local/share/xiaotangyuan")
    linux = data_dir_in("linux", HOME="/home/p", XDG_DATA_HOME="/data")
    assert linux == Path("/data/xiaotangyuan")


@pytest.mark.skipif(sys.platform != "win32", reason="platformdirs asks Windows itself (ctypes)")
def test_default_data_dir_on_windows_is_local_app_data() -> None:
    assert default_data_dir() == Path(os.environ["LOCALAPPDATA"]) / "XiaoTangYuan"


def test_settings_come_from_toml_then_environment_then_flags(tmp_path: Path) -> None:
    config = tmp_path / "xty.toml"
    config.write_text(
        'profile = "alice"\n[server]\nport = 9000\n[model]\nmodel = "from-toml"\n'
        'base_url = "http://toml/v1"\n',
        encoding="utf-8",
    )
    env = {"XTY_MODEL": "from-env", "XTY_MODEL_API_KEY": "sk-x", "XTY_DATA_DIR": str(tmp_path)}
    settings = load_settings(config, env=env, overrides={"server.port": 0})
    assert settings.profile == "alice"
    assert settings.model.model == "from-env"  # environment beats the file
    assert settings.model.base_url == "http://toml/v1"
    assert settings.server.port == 0  # flags beat both
    assert settings.data_path == tmp_path
    assert "sk-x" not in repr(settings.model)


def test_settings_refuse_an_unknown_key_naming_it(tmp_path: Path) -> None:
    config = tmp_path / "xty.toml"
    config.write_text("[server]\nprot = 1\n", encoding="utf-8")
    with pytest.raises(UsageError, match="prot"):
        load_settings(config, env={})


def test_defaults_are_the_documented_limits() -> None:
    settings = load_settings(None, env={})
    assert settings.server.host == "127.0.0.1"
    assert settings.server.hello_timeout == 10.0
    assert settings.server.stale_after == 5.0 and settings.server.drop_after == 30.0
    assert settings.images.max_decoded_bytes == 8 * 1024 * 1024
    assert settings.images.max_side == 1568
    assert settings.memory.soft_cap == 300
    assert settings.memory.budget.total_chars == 1200
