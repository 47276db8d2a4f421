"""The settings backend: the key in the credential store or a 0600 file,
never in the TOML, the database or a log; env and TOML win; a change counts next turn.

Real keyring backends: keyring's own ``fail`` backend (what a headless Linux box
has) and keyrings.alt's ``PlaintextKeyring`` (a real backend writing its own
file, standing in for Windows Credential Manager / Keychain / Secret Service,
which this machine does not have).
"""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from keyring.backends.fail import Keyring as FailKeyring
from keyrings.alt.file import PlaintextKeyring

from tests.conftest import chat, running
from xtyserver.errors import UsageError
from xtyserver.serve.player_settings import KeyStore, PlayerSettings, mask

pytestmark = pytest.mark.anyio
KEY = "sk-test-0123456789abcdef7890"
ROOT = Path(__file__).resolve().parents[2]
PROVIDER = "https://api.deepseek.com/v1"


@pytest.fixture
def credential_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PlaintextKeyring:
    """A real keyring backend whose file lives in this test's folder (via XDG_DATA_HOME)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    return PlaintextKeyring()


def test_mask_shows_at_most_the_first_3_and_last_4_characters() -> None:
    assert mask(KEY) == "sk-…7890"
    assert mask("short-key") == "…ey"
    assert mask("abc") == "…"
    assert mask("") == mask(None) == ""


def test_without_a_credential_store_the_key_goes_to_an_owner_only_file_with_a_warning(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    player = PlayerSettings(data, env={}, keys=KeyStore(data, backend=FailKeyring()))
    player.set("model.base_url", PROVIDER)
    status = player.set_api_key(KEY)
    assert (status.source, status.shown, status.pinned) == ("file", "sk-…7890", False)
    assert status.warning is not None and "model-key" in status.warning
    path = data / "model-key"
    assert path.read_text(encoding="utf-8") == KEY
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert player.effective().model.api_key == KEY
    assert KEY not in repr(player.view()) and KEY not in repr(player.effective())

    assert player.clear_api_key().source == "none"
    assert not path.exists() and player.effective().model.api_key == ""


def test_with_a_credential_store_the_key_lives_there_and_nowhere_in_the_data_folder(
    tmp_path: Path, credential_store: PlaintextKeyring
) -> None:
    data = tmp_path / "data"
    keys = KeyStore(data, backend=credential_store)
    player = PlayerSettings(data, env={}, keys=keys)
    player.set_many({"model.model": "deepseek-chat", "model.base_url": PROVIDER})
    status = player.set_api_key(KEY)
    assert (status.source, status.warning) == ("keyring", None)
    assert status.backend == "file PlaintextKeyring"
    assert player.effective().model.api_key == KEY
    for path in data.rglob("*"):
        if path.is_file():
            assert KEY.encode() not in path.read_bytes(), path
    assert credential_store.get_password("XiaoTangYuan", keys.user) == KEY
    # Another data folder (another player) has its own entry.
    assert KeyStore(tmp_path / "other", backend=credential_store).get() is None
    assert (data / "model-key.in-keyring").exists()  # so a start knows to ask the store
    player.clear_api_key()
    assert credential_store.get_password("XiaoTangYuan", keys.user) is None
    assert not (data / "model-key.in-keyring").exists()


def test_the_environment_and_the_toml_win_over_what_the_page_stored(tmp_path: Path) -> None:
    data = tmp_path / "data"
    config = tmp_path / "xty.toml"
    config.write_text('[model]\nmodel = "from-toml"\n', encoding="utf-8")
    keys = KeyStore(data, backend=FailKeyring())
    env = {"XTY_MODEL_API_KEY": "sk-from-env-000000001111"}
    player = PlayerSettings(data, config=config, env=env, keys=keys)
    player.set("model.model", "from-page")
    player.set("model.base_url", "https://api.deepseek.com/v1")
    player.set_api_key(KEY)
    settings = player.effective()
    assert settings.model.model == "from-toml"  # TOML wins
    assert settings.model.base_url == "https://api.deepseek.com/v1"  # stored, not pinned
    assert settings.model.api_key == "sk-from-env-000000001111"  # env wins over the stored key
    view = player.view()
    assert view.pinned == {"model.model": "config"}
    assert view.stored["model.model"] == "from-page"
    assert (view.key.source, view.key.pinned, view.key.shown) == ("env", True, "sk-…1111")


def test_a_key_from_the_environment_goes_only_to_the_provider_it_was_used_with(
    tmp_path: Path,
) -> None:
    """The page may change the base URL: an environment key stays with its first provider."""
    env = {"XTY_MODEL_API_KEY": "sk-from-env-000000001111"}
    player = PlayerSettings(tmp_path, env=env, keys=KeyStore(tmp_path, backend=FailKeyring()))
    player.set("model.base_url", PROVIDER)
    assert player.effective().model.api_key == "sk-from-env-000000001111"
    player.set("model.base_url", "http://127.0.0.1:9/v1")  # another origin, set on the page
    assert player.effective().model.api_key == ""
    status = player.view().key
    assert (status.source, status.applies, status.shown) == ("env", False, "sk-…1111")
    player.set("model.base_url", PROVIDER + "/other")  # the same origin again
    assert player.effective().model.api_key == "sk-from-env-000000001111"
    # a new key in the environment is the player's act: bound to the provider in use now
    new = {"XTY_MODEL_API_KEY": "sk-new-env-key-000000002222"}
    moved = PlayerSettings(tmp_path, env=new, keys=player.keys)
    assert moved.effective().model.api_key == "sk-new-env-key-000000002222"
    moved.set("model.base_url", "http://127.0.0.1:9/v1")
    assert moved.effective().model.api_key == ""
    # with the base URL set beside it (not by the page), the key is simply used
    both = {**env, "XTY_MODEL_BASE_URL": "http://127.0.0.1:7/v1"}
    assert PlayerSettings(tmp_path, env=both, keys=player.keys).effective().model.api_key


def test_only_the_editable_keys_are_stored_and_bad_values_are_refused(tmp_path: Path) -> None:
    player = PlayerSettings(tmp_path, env={}, keys=KeyStore(tmp_path, backend=FailKeyring()))
    with pytest.raises(UsageError, match="set_api_key"):
        player.set("model.api_key", KEY)
    with pytest.raises(UsageError, match="cannot be set here"):
        player.set("server.host", "0.0.0.0")
    with pytest.raises(UsageError, match="vision"):
        player.set("model.vision", "maybe")
    assert player.stored() == {}
    path = tmp_path / "settings.json"
    player.set("model.vision", False)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert player.effective().model.vision is False


def test_the_automatic_choice_trusts_only_an_os_credential_store(
    tmp_path: Path, credential_store: PlaintextKeyring
) -> None:
    """keyrings.alt's plaintext file is keyring's pick here; it is not a credential store."""
    import keyring

    keyring.set_keyring(credential_store)
    try:
        keys = KeyStore(tmp_path)
        assert not keys.uses_keyring
        assert keys.set(KEY) == "file"
        assert credential_store.get_password("XiaoTangYuan", keys.user) is None
    finally:
        keyring.set_keyring(FailKeyring())


def test_a_start_without_a_key_in_the_credential_store_does_not_ask_keyring(
    tmp_path: Path,
) -> None:
    """Importing keyring and finding its backend cost ~0.2 s of every start: only with a key."""
    script = (
        "import sys; from pathlib import Path\n"
        "from xtyserver.serve.player_settings import PlayerSettings\n"
        "PlayerSettings(Path(sys.argv[1]), env={}).effective()\n"
        "print('keyring' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path)],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert done.stdout.strip() == "False"


def test_storing_a_key_never_logs_it(tmp_path: Path) -> None:
    """A real process with JSON logs at debug: the key is in no output, only its file."""
    script = (
        "import sys; from pathlib import Path\n"
        "from xtyserver import log; log.configure(json=True, level='debug')\n"
        "from keyring.backends.fail import Keyring\n"
        "from xtyserver.serve.player_settings import KeyStore, PlayerSettings\n"
        "d = Path(sys.argv[1])\n"
        "p = PlayerSettings(d, env={}, keys=KeyStore(d, backend=Keyring()))\n"
        "p.set('model.base_url', 'https://api.deepseek.com/v1')\n"
        "print(p.set_api_key(sys.argv[2])); print(p.view())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path), KEY],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
    )
    assert "sk-…7890" in done.stdout and "keys.stored_in_file" in done.stderr
    assert KEY not in done.stdout + done.stderr


async def test_a_key_and_model_saved_while_running_count_from_the_next_turn(
    tmp_path: Path,
) -> None:
    async with running(tmp_path, model=False) as h, h.adapter() as ws:
        _, error = await chat(ws, "你好", "c1")
        assert error["code"] == "model_not_configured"

        player = PlayerSettings(
            h.settings.data_path, env={}, keys=KeyStore(h.settings.data_path, backend=FailKeyring())
        )
        player.set("model.base_url", h.fake.base_url)
        player.set("model.model", "fake-from-page")
        player.set_api_key(KEY)
        await h.server.apply_settings(player.effective(), env={})

        deltas, done = await chat(ws, "你好", "c2")
        assert deltas  # same connection, no restart
        assert done["type"] == "chat.done", done
        request = h.turn_request()
        assert request.json["model"] == "fake-from-page"
        assert request.headers["authorization"] == f"Bearer {KEY}"
    # The key is in neither the database nor the injection log.
    for path in tmp_path.rglob("*"):
        if path.is_file() and path.name != "model-key":
            assert KEY.encode() not in path.read_bytes(), path
