"""What the player sets in the browser (issue 19 §3): stored choices and the provider key.

The backend of the page's settings view (the view itself is the page's). Its API:

* :class:`KeyStore` keeps the provider key in the operating system's credential
  store through ``keyring`` (Windows Credential Manager, macOS Keychain, Secret
  Service). Where none exists (a headless Linux box: keyring's ``fail`` or
  ``null`` backend, or a backend that refuses), it keeps it in
  ``<data_dir>/model-key``, owner-only (0600), and every status says so in
  ``warning``. Never in the TOML, never in the database, never in a log line:
  what leaves this module is :func:`mask` (``sk-…7890`` at most).
* :class:`PlayerSettings` keeps the other choices (:data:`EDITABLE`) in
  ``<data_dir>/settings.json`` (0600) and builds the effective
  :class:`~xtyserver.config.Settings` afresh on each :meth:`PlayerSettings.effective`
  call: defaults, then the stored choices and key, then the TOML file, the
  environment and flags, which win (:meth:`PlayerSettings.view` says which
  keys they pin). A running server takes a change for its next turn with
  :meth:`xtyserver.server.Server.apply_settings`, without a restart.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from xtyserver import log
from xtyserver.config import Settings, load_settings, pinned_keys
from xtyserver.errors import UsageError
from xtyserver.files import private_dir

if TYPE_CHECKING:
    import keyring.backend

SERVICE = "XiaoTangYuan"
KEY_FILE = "model-key"
# Beside the key file: "the key is in the credential store". Without it no
# start asks keyring (importing it and finding the backend cost ~0.2 s).
MARKER_FILE = "model-key.in-keyring"
SETTINGS_FILE = "settings.json"
KEY_SETTING = "model.api_key"

# What the page may store: the model choice, the daily token budget and the trash
# window, which a
# running server takes for its next turn (Server.apply_settings). The key goes
# through set_api_key, never set(). The rest still needs a restart to count;
# extend this list together with apply_settings.
EDITABLE: tuple[str, ...] = (
    "model.daily_token_budget",
    "memory.trash_hours",
    "model.base_url",
    "model.model",
    "model.vision",
    "model.extraction_model",
    "models.vision.base_url",
    "models.vision.model",
    "models.vision.vision",
)


def mask(key: str | None) -> str:
    """How a key may be shown: its first 3 and last 4 characters at most (``sk-…7890``)."""
    if not key:
        return ""
    if len(key) < 12:
        return "…" + key[-2:] if len(key) > 4 else "…"
    return f"{key[:3]}…{key[-4:]}"


class KeyStatus(msgspec.Struct, frozen=True):
    """Where the effective key comes from, as the page may show it.

    Attributes:
        source: ``"env"`` (XTY_MODEL_API_KEY), ``"config"`` (the TOML file),
            ``"keyring"``, ``"file"`` (the owner-only fallback) or ``"none"``.
        shown: :func:`mask` of the effective key ("" without one).
        pinned: The environment or the TOML sets it: what the page stores is not used.
        warning: Set when the stored key lives in the fallback file.
        backend: The keyring backend's name (``"Windows Credential Manager"`` ...).
    """

    source: str
    shown: str
    pinned: bool
    warning: str | None = None
    backend: str = ""


# keyring's backends for the operating systems' own credential stores. Chosen
# automatically, only these count: keyrings.alt's plaintext file (which a
# developer's test tools bring) is no credential store.
_OS_STORES = (
    "keyring.backends.Windows",
    "keyring.backends.macOS",
    "keyring.backends.SecretService",
    "keyring.backends.libsecret",
    "keyring.backends.kwallet",
)


def _priority(backend: keyring.backend.KeyringBackend) -> float:
    try:
        return float(backend.priority)
    except Exception:
        return 0.0


def _usable(backend: keyring.backend.KeyringBackend, *, chosen: bool) -> bool:
    """Whether ``backend`` keeps keys: any working one passed in, an OS store if automatic."""
    name = type(backend).__module__
    if name.startswith(("keyring.backends.fail", "keyring.backends.null")):
        return False
    if name.startswith("keyring.backends.chainer"):
        inner = sorted(getattr(backend, "backends", []), key=_priority, reverse=True)
        return bool(inner) and _usable(inner[0], chosen=chosen)
    if _priority(backend) <= 0:
        return False
    return chosen or name.startswith(_OS_STORES)


class KeyStore:
    """The provider key of one data folder, in the credential store or the 0600 file.

    Args:
        data_dir: The data folder (the fallback file and the keyring user name).
        backend: The keyring backend; None: keyring's choice for this machine, used
            only when it is the OS's credential store (else the 0600 file).
    """

    def __init__(
        self, data_dir: Path, *, backend: keyring.backend.KeyringBackend | None = None
    ) -> None:
        self.data_dir = data_dir
        self._chosen = backend is not None
        self._backend = backend
        self.file = data_dir / KEY_FILE
        # One entry per data folder, so two folders (two players) keep two keys.
        self.user = f"model-key:{data_dir.resolve()}"
        self._log = log.get("xtyserver.keys")

    @property
    def backend(self) -> keyring.backend.KeyringBackend:
        """The keyring backend, looked up on first use (it loads the OS's backends)."""
        if self._backend is None:
            import keyring

            self._backend = keyring.get_keyring()
        return self._backend

    @property
    def uses_keyring(self) -> bool:
        return _usable(self.backend, chosen=self._chosen)

    @property
    def marker(self) -> Path:
        return self.data_dir / MARKER_FILE

    def _in_keyring(self) -> str | None:
        """The key from the credential store, asked only when one was put there."""
        if not (self._chosen or self.marker.exists()) or not self.uses_keyring:
            return None
        from keyring.errors import KeyringError

        try:
            return self.backend.get_password(SERVICE, self.user) or None
        except KeyringError:
            return None

    def warning(self) -> str | None:
        if not self.file.exists():
            return None
        return (
            "no credential store on this machine: the key is kept in a file only you"
            f" can read ({self.file})"
        )

    def get(self) -> str | None:
        """The stored key, or None."""
        found = self._in_keyring()
        if found:
            return found
        try:
            return self.file.read_text(encoding="utf-8").strip() or None
        except FileNotFoundError:
            return None

    def where(self) -> str:
        """``"keyring"``, ``"file"`` or ``"none"``: where the stored key is."""
        if self._in_keyring():
            return "keyring"
        return "file" if self.file.exists() else "none"

    def set(self, key: str) -> str:
        """Store ``key`` (replacing any); return ``"keyring"`` or ``"file"``."""
        key = key.strip()
        if not key or any(c in key for c in "\r\n\0"):
            raise UsageError("the key is empty or holds a line break")
        private_dir(self.data_dir)
        if self.uses_keyring:
            from keyring.errors import KeyringError

            try:
                self.backend.set_password(SERVICE, self.user, key)
            except KeyringError as exc:
                self._log.warning(
                    "keys.keyring_refused", backend=_name(self.backend), error=type(exc).__name__
                )
            else:
                _write_private(self.marker, _name(self.backend).encode("utf-8"))
                with contextlib.suppress(FileNotFoundError):
                    self.file.unlink()  # an older fallback copy must not linger
                self._log.info("keys.stored", where="keyring", backend=_name(self.backend))
                return "keyring"
        _write_private(self.file, key.encode("utf-8"))
        with contextlib.suppress(FileNotFoundError):
            self.marker.unlink()
        self._log.warning("keys.stored_in_file", path=str(self.file))
        return "file"

    def delete(self) -> None:
        """Forget the stored key (both places)."""
        if (self._chosen or self.marker.exists()) and self.uses_keyring:
            from keyring.errors import KeyringError

            with contextlib.suppress(KeyringError):
                self.backend.delete_password(SERVICE, self.user)
        for path in (self.file, self.marker):
            with contextlib.suppress(FileNotFoundError):
                path.unlink()


def _write_private(path: Path, data: bytes) -> None:
    """Write ``data`` owner-only (0600), atomically."""
    tmp = path.with_name(f".{path.name}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def _name(backend: keyring.backend.KeyringBackend) -> str:
    return str(getattr(backend, "name", type(backend).__name__))


class SettingsView(msgspec.Struct, frozen=True):
    """The page's settings view: each editable value, who pins it, and the key's status.

    Attributes:
        values: Effective value of every :data:`EDITABLE` key (dotted).
        stored: What the player stored (dotted keys), pinned or not.
        pinned: Dotted key -> ``"env"`` or ``"config"`` for keys the player cannot change here.
        key: The provider key's status (never the key).
    """

    values: dict[str, Any]
    stored: dict[str, Any]
    pinned: dict[str, str]
    key: KeyStatus


class PlayerSettings:
    """The stored choices and key of one data folder, merged under TOML, environment, flags.

    Args:
        data_dir: The data folder.
        config: The TOML file the server was started with, or None.
        env: The environment (``XTY_*``).
        overrides: The command line's dotted keys.
        keys: The key store; None: :class:`KeyStore` with this machine's keyring.
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        config: Path | None = None,
        env: Mapping[str, str] = os.environ,
        overrides: Mapping[str, Any] | None = None,
        keys: KeyStore | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.config = config
        self.env = dict(env)
        self.overrides = {k: v for k, v in (overrides or {}).items() if v is not None}
        self.keys = keys if keys is not None else KeyStore(data_dir)
        self.file = data_dir / SETTINGS_FILE

    def stored(self) -> dict[str, Any]:
        """The player's stored choices (dotted keys); {} when none or unreadable."""
        try:
            doc = json.loads(self.file.read_text(encoding="utf-8"))
        except (FileNotFoundError, ValueError):
            return {}
        if not isinstance(doc, dict):
            return {}
        return {k: v for k, v in doc.items() if k in EDITABLE}

    def pinned(self) -> dict[str, str]:
        found = pinned_keys(self.config, self.env)
        found.update({k: "flag" for k in self.overrides})
        return found

    def effective(self) -> Settings:
        """The settings to run with now (read afresh: a change counts from the next call)."""
        stored: dict[str, Any] = dict(self.stored())
        # A key from the environment or the TOML wins: no credential store lookup then.
        key = None if KEY_SETTING in self.pinned() else self.keys.get()
        if key:
            stored[KEY_SETTING] = key
        return load_settings(self.config, env=self.env, overrides=self.overrides, stored=stored)

    def set(self, dotted: str, value: Any) -> SettingsView:
        """Store one choice (None removes it); validated as the TOML would be.

        Raises:
            UsageError: not an editable key, or an invalid value (the message names the key).
        """
        if dotted == KEY_SETTING:
            raise UsageError("the key is stored with set_api_key, never as a setting")
        if dotted not in EDITABLE:
            raise UsageError(f"{dotted} cannot be set here")
        choices = self.stored()
        if value is None:
            choices.pop(dotted, None)
        else:
            choices[dotted] = value
        load_settings(None, env={}, stored=choices)  # refuses a bad value, naming the key
        private_dir(self.data_dir)
        _write_private(self.file, json.dumps(choices, ensure_ascii=False, indent=2).encode("utf-8"))
        return self.view()

    def set_api_key(self, key: str) -> KeyStatus:
        self.keys.set(key)
        return self.key_status()

    def clear_api_key(self) -> KeyStatus:
        self.keys.delete()
        return self.key_status()

    def key_status(self) -> KeyStatus:
        pinned = self.pinned().get(KEY_SETTING)
        where = self.keys.where()
        backend = _name(self.keys.backend) if where == "keyring" else ""
        if pinned is not None:
            key = self.effective().model.api_key
            return KeyStatus(source=pinned, shown=mask(key), pinned=True, backend=backend)
        warning = self.keys.warning() if where == "file" else None
        return KeyStatus(
            source=where,
            shown=mask(self.keys.get()),
            pinned=False,
            warning=warning,
            backend=backend,
        )

    def view(self) -> SettingsView:
        settings = msgspec.to_builtins(self.effective())
        values: dict[str, Any] = {}
        for dotted in EDITABLE:
            node: Any = settings
            for part in dotted.split("."):
                node = node.get(part) if isinstance(node, dict) else None
            values[dotted] = node
        pinned = {k: v for k, v in self.pinned().items() if k in EDITABLE}
        return SettingsView(
            values=values, stored=self.stored(), pinned=pinned, key=self.key_status()
        )
