"""The provider key of one data folder: the OS credential store, or an owner-only file.

Through ``keyring`` (Windows Credential Manager, macOS Keychain, Secret Service);
where none exists (a headless Linux box), ``<data_dir>/model-key`` (0600), which
the key status's ``warning`` says. Never in the TOML, the database or a log line.
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import TYPE_CHECKING

from xtyserver import log
from xtyserver.errors import UsageError
from xtyserver.files import private_dir, replace_private

if TYPE_CHECKING:
    import keyring.backend

SERVICE = "XiaoTangYuan"
KEY_FILE = "model-key"
# "The key is in the credential store": without it no start imports keyring (slow).
MARKER_FILE = "model-key.in-keyring"
# The OS credential stores among keyring's backends: chosen automatically, only these
# count (keyrings.alt's plaintext file, which test tools bring, is none).
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
                    "keys.keyring_refused",
                    backend=backend_name(self.backend),
                    error=type(exc).__name__,
                )
            else:
                replace_private(self.marker, backend_name(self.backend).encode("utf-8"))
                with contextlib.suppress(FileNotFoundError):
                    self.file.unlink()  # an older fallback copy must not linger
                self._log.info("keys.stored", where="keyring", backend=backend_name(self.backend))
                return "keyring"
        replace_private(self.file, key.encode("utf-8"))
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


def backend_name(backend: keyring.backend.KeyringBackend) -> str:
    return str(getattr(backend, "name", type(backend).__name__))
